"""3-D drawings of a robot's equilibrium shape: backbone, spacer disks and tendons.

Geometry helpers are pure numpy (SI units, world frame); drawing helpers take a Matplotlib 3-D
axes and plot in millimetres. No pyplot: figures are `matplotlib.figure.Figure` objects that
render through the Agg canvas, so nothing here touches a GUI backend or global state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from mpl_toolkits.mplot3d.art3d import Poly3DCollection

from softrod.description import RobotSpec
from softrod.rods import RodModel, StaticResult, compile_model

__all__ = [
    "MM",
    "disk_circles",
    "disk_nodes",
    "draw_base",
    "draw_robot",
    "method_label",
    "plot_shape",
    "set_axes_equal",
    "style",
    "tendon_paths",
]

#: Drawings are in millimetres: metres times this factor.
MM = 1e3
#: Points on each drawn disk circle.
_CIRCLE_POINTS = 48
#: Colour of slack tendons and spacer disks.
_GREY = "0.55"


def _as_model(robot: RobotSpec | RodModel) -> RodModel:
    return robot if isinstance(robot, RodModel) else compile_model(robot)


def disk_nodes(model: RodModel, result: StaticResult) -> np.ndarray:
    """Index into `result.s` of every disk, (n_disks,) int (disks are integration nodes)."""
    if model.disk_s.size == 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.searchsorted(result.s, model.disk_s)
    idx = np.clip(idx, 1, result.s.shape[0] - 1)
    # Nearest of the two neighbours (exact match up to round-off).
    left_closer = np.abs(result.s[idx - 1] - model.disk_s) < np.abs(result.s[idx] - model.disk_s)
    return np.where(left_closer, idx - 1, idx).astype(np.int64)


def _disk_radius(model: RodModel, seg: int) -> float:
    radius = model.spec.segments[seg].disk_radius
    if radius is not None:
        return float(radius)
    # A disk without a given radius is drawn a few backbone radii wide.
    return 4.0 * model.spec.segment_backbone(seg).outer_radius


def disk_circles(
    model: RodModel, result: StaticResult, n_points: int = _CIRCLE_POINTS
) -> np.ndarray:
    """Outline of every disk in its section plane, (n_disks, n_points + 1, 3) [m], closed."""
    idx = disk_nodes(model, result)
    theta = np.linspace(0.0, 2.0 * np.pi, n_points + 1)
    local = np.stack([np.cos(theta), np.sin(theta)], axis=1)  # (n_points + 1, 2)
    out = np.empty((idx.size, n_points + 1, 3))
    for d, k in enumerate(idx):
        radius = _disk_radius(model, int(model.disk_seg[d]))
        axes_xy = result.rotations[k][:, :2]  # body x and y in world
        out[d] = result.positions[k] + radius * local @ axes_xy.T
    return out


def tendon_paths(model: RodModel, result: StaticResult) -> list[np.ndarray]:
    """World-frame path of each tendon in input order, from the base through every disk hole
    up to its anchoring disk: a list of (n_holes + 1, 3) arrays [m]."""
    idx = disk_nodes(model, result)
    paths = []
    for i in range(model.n_tendons):
        through = idx[model.disk_seg <= model.tendon_seg[i]]
        nodes = np.concatenate([[0], through])
        holes = result.positions[nodes] + np.einsum(
            "nab,b->na", result.rotations[nodes], model.tendon_r[i]
        )
        paths.append(holes)
    return paths


def set_axes_equal(ax: Any, points: np.ndarray, margin: float = 0.08) -> None:
    """Equal scaling on a 3-D axes: a cube around `points` (n, 3) (already in plot units)."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    center = 0.5 * (lo + hi)
    half = 0.5 * float(np.max(hi - lo)) * (1.0 + margin)
    half = max(half, 1e-9)
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_zlim(center[2] - half, center[2] + half)
    ax.set_box_aspect((1.0, 1.0, 1.0))


def draw_base(ax: Any, model: RodModel, radius: float | None = None) -> np.ndarray:
    """A grey plate in the base plane (the clamp); returns its outline (n, 3) in mm."""
    if radius is None:
        radii = [_disk_radius(model, j) for j in range(model.seg_length.shape[0])]
        radius = 1.4 * max(radii)
    theta = np.linspace(0.0, 2.0 * np.pi, _CIRCLE_POINTS + 1)
    local = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    ring = model.base_position + radius * local @ model.base_rotation[:, :2].T
    ring_mm = MM * ring
    ax.add_collection3d(
        Poly3DCollection([ring_mm], facecolors="0.8", edgecolors="0.45", linewidths=0.8, alpha=0.6)
    )
    return ring_mm


def draw_robot(
    ax: Any,
    model: RodModel,
    result: StaticResult,
    *,
    color: Any = "C0",
    label: str | None = None,
    linestyle: str = "-",
    linewidth: float = 2.2,
    disks: bool = True,
    tendons: bool = True,
    alpha: float = 1.0,
    disk_alpha: float = 0.55,
) -> np.ndarray:
    """Draw one equilibrium on a 3-D axes in mm: backbone, disks (thin circles in their section
    planes, in the backbone's colour at `disk_alpha`) and tendons (polylines through the disk
    holes; tensioned ones in the backbone's colour, slack ones grey).

    Returns every drawn point (n, 3) [mm] for `set_axes_equal`."""
    pos = MM * result.positions
    drawn = [pos]
    ax.plot(
        pos[:, 0],
        pos[:, 1],
        pos[:, 2],
        color=color,
        lw=linewidth,
        ls=linestyle,
        label=label,
        alpha=alpha,
        solid_capstyle="round",
        zorder=3,
    )
    ax.scatter(*pos[-1], color=color, s=14, alpha=alpha, depthshade=False, zorder=4)
    if disks:
        for circle in MM * disk_circles(model, result):
            ax.plot(
                circle[:, 0],
                circle[:, 1],
                circle[:, 2],
                color=color,
                lw=0.6,
                alpha=disk_alpha * alpha,
            )
            drawn.append(circle)
    if tendons:
        tension = result.tendon_tension
        for i, path in enumerate(tendon_paths(model, result)):
            path_mm = MM * path
            pulled = tension[i] > 0
            ax.plot(
                path_mm[:, 0],
                path_mm[:, 1],
                path_mm[:, 2],
                color=color if pulled else _GREY,
                lw=1.1 if pulled else 0.5,
                alpha=(0.9 if pulled else 0.6) * alpha,
            )
            drawn.append(path_mm)
    return np.concatenate(drawn, axis=0)


def _label_axes(ax: Any) -> None:
    """Axis labels in mm, at most 5 ticks per axis, light panes."""
    for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y"), (ax.zaxis, "z")):
        axis.set_major_locator(MaxNLocator(5))
        axis.set_label_text(f"{name} [mm]")
        axis.set_pane_color((0.97, 0.97, 0.97, 1.0))
    ax.tick_params(labelsize=8, pad=0)


#: Matplotlib settings of every softrod figure: light grid, paper-sized fonts.
STYLE: dict[str, Any] = {
    "grid.color": "0.85",
    "grid.linewidth": 0.5,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "savefig.facecolor": "white",
}


def style() -> Any:
    """Context manager applying `STYLE` (figures read most settings when they are built)."""
    return rc_context(STYLE)  # type: ignore[arg-type]  # keys are checked at run time


def plot_shape(
    robot: RobotSpec | RodModel,
    results: StaticResult | Sequence[StaticResult],
    labels: Sequence[str] | None = None,
    *,
    reference: StaticResult | None = None,
    reference_label: str = "constant curvature (PCC)",
    tip_force: Sequence[float] | np.ndarray | None = None,
    title: str | None = None,
    colors: Sequence[Any] | None = None,
    disks: bool = True,
    tendons: bool = True,
    view: tuple[float, float] = (22.0, -58.0),
    figsize: tuple[float, float] = (6.0, 5.6),
    ax: Any = None,
) -> Figure:
    """Figure of one or more equilibrium shapes of `robot` (3-D, mm, equal axis scaling).

    Parameters
    ----------
    robot : the RobotSpec or compiled RodModel the results belong to.
    results : one StaticResult or several (drawn in `colors`, default the tab10 cycle).
    labels : legend entry per result (default: the solver method).
    reference : another result (typically `method="pcc"`) drawn as a dashed black backbone;
        its legend entry gives the tip distance to the first result [mm].
    tip_force : (3,) [N] drawn as an arrow at the first result's tip, labelled with |F|.
    title : axes title. view : (elevation, azimuth) [deg].
    ax : an existing 3-D axes to draw into (its figure is returned).

    Returns
    -------
    matplotlib.figure.Figure (not attached to pyplot; save with `fig.savefig`).
    """
    res_list = [results] if isinstance(results, StaticResult) else list(results)
    if not res_list:
        raise ValueError("results must hold at least one StaticResult, got none")
    if labels is not None and len(labels) != len(res_list):
        raise ValueError(f"labels must have {len(res_list)} entries, got {len(labels)}")
    with style():
        return _plot_shape(
            _as_model(robot),
            res_list,
            labels,
            reference,
            reference_label,
            tip_force,
            title,
            colors,
            disks,
            tendons,
            view,
            figsize,
            ax,
        )


def _plot_shape(
    model: RodModel,
    res_list: list[StaticResult],
    labels: Sequence[str] | None,
    reference: StaticResult | None,
    reference_label: str,
    tip_force: Sequence[float] | np.ndarray | None,
    title: str | None,
    colors: Sequence[Any] | None,
    disks: bool,
    tendons: bool,
    view: tuple[float, float],
    figsize: tuple[float, float],
    ax: Any,
) -> Figure:
    if ax is None:
        fig = Figure(figsize=figsize, layout="constrained")
        ax = fig.add_subplot(projection="3d")
    else:
        fig = ax.figure
    palette = list(colors) if colors is not None else [f"C{i % 10}" for i in range(len(res_list))]

    # Base plate, then every result, then the reference on top.
    points = [draw_base(ax, model)]
    for i, res in enumerate(res_list):
        label = labels[i] if labels is not None else method_label(model, res.method)
        points.append(
            draw_robot(
                ax,
                model,
                res,
                color=palette[i % len(palette)],
                label=label,
                disks=disks,
                tendons=tendons,
            )
        )
    if reference is not None:
        err_mm = MM * float(np.linalg.norm(reference.tip_position - res_list[0].tip_position))
        points.append(
            draw_robot(
                ax,
                model,
                reference,
                color="black",
                linestyle="--",
                linewidth=1.4,
                label=f"{reference_label}, tip error {err_mm:.1f} mm",
                disks=False,
                tendons=False,
            )
        )
    if tip_force is not None:
        points.append(
            _draw_tip_force(ax, res_list[0], np.asarray(tip_force, dtype=float), model.total_length)
        )

    set_axes_equal(ax, np.concatenate(points, axis=0))
    ax.view_init(elev=view[0], azim=view[1])
    _label_axes(ax)
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", frameon=False)
    return fig


def _draw_tip_force(ax: Any, result: StaticResult, force: np.ndarray, length: float) -> np.ndarray:
    """Arrow along `force` at the tip, a quarter of the robot long; returns its ends [mm]."""
    magnitude = float(np.linalg.norm(force))
    if magnitude == 0.0:
        return MM * result.tip_position[None, :]
    tip = MM * result.tip_position
    vec = 0.25 * MM * length * force / magnitude
    ax.quiver(*tip, *vec, color="tab:red", lw=1.5, arrow_length_ratio=0.25)
    ax.text(*(tip + 1.1 * vec), f"{magnitude:.3g} N", color="tab:red", fontsize=8)
    return np.stack([tip, tip + vec])


def method_label(model: RodModel, method: str) -> str:
    """Legend text for a static method on `model` ("Kirchhoff rod (shooting)", ...)."""
    if method == "pcc":
        return "constant curvature (PCC)"
    rod = "Cosserat rod" if model.cosserat else "Kirchhoff rod"
    return f"{rod} ({method})"
