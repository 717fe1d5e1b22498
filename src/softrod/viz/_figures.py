"""Multi-panel figures: loaded rod vs constant curvature, and tendon-pull fans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from softrod.description import RobotSpec
from softrod.rods import RodModel, StaticResult, compile_model
from softrod.viz._shape import (
    MM,
    _label_axes,
    draw_base,
    draw_robot,
    method_label,
    set_axes_equal,
    style,
)

__all__ = ["TendonPanel", "plot_pcc_comparison", "plot_tendon_panels"]


def _as_model(robot: RobotSpec | RodModel) -> RodModel:
    return robot if isinstance(robot, RodModel) else compile_model(robot)


def plot_pcc_comparison(
    robot: RobotSpec | RodModel,
    loaded: Sequence[StaticResult],
    force_magnitude: Sequence[float] | np.ndarray,
    force_angle_deg: Sequence[float] | np.ndarray,
    pcc: StaticResult,
    *,
    title: str | None = None,
    view: tuple[float, float] = (20.0, -60.0),
) -> Figure:
    """Loaded rod vs the constant-curvature (load-free) prediction.

    Left: 3-D shapes at the largest tip force for each force direction, and with no tip force,
    over the PCC shape (dashed). Right: PCC tip error [mm] against the tip-force magnitude [N],
    one line per direction.

    Parameters
    ----------
    robot : RobotSpec or RodModel of the results.
    loaded : (n,) results under load (same tendon tensions as `pcc`).
    force_magnitude : (n,) tip-force magnitude of each result [N].
    force_angle_deg : (n,) direction of each result's tip force about world z [deg].
    pcc : the `method="pcc"` result for the same tendon input.
    """
    mag = np.asarray(force_magnitude, dtype=float)
    ang = np.asarray(force_angle_deg, dtype=float)
    if not (len(loaded) == mag.shape[0] == ang.shape[0]):
        raise ValueError(
            "loaded, force_magnitude and force_angle_deg must have equal lengths, got "
            f"{len(loaded)}, {mag.shape[0]}, {ang.shape[0]}"
        )
    with style():
        return _plot_pcc_comparison(_as_model(robot), list(loaded), mag, ang, pcc, title, view)


def _plot_pcc_comparison(
    model: RodModel,
    loaded: list[StaticResult],
    mag: np.ndarray,
    ang: np.ndarray,
    pcc: StaticResult,
    title: str | None,
    view: tuple[float, float],
) -> Figure:
    err = np.array([MM * np.linalg.norm(r.tip_position - pcc.tip_position) for r in loaded])
    angles = sorted(set(ang.tolist()))
    colors = {a: f"C{i % 10}" for i, a in enumerate(angles)}

    fig = Figure(figsize=(11.0, 4.9), layout="constrained")
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")
    ax2 = fig.add_subplot(1, 2, 2)

    # (a) shapes: no tip force, the largest force per direction, and PCC.
    points = [draw_base(ax3, model)]
    zero = np.flatnonzero(mag == 0.0)
    if zero.size:
        points.append(
            draw_robot(
                ax3,
                model,
                loaded[int(zero[0])],
                color="0.25",
                linewidth=1.8,
                label="no tip force",
                tendons=False,
            )
        )
    f_max = float(mag.max())
    for a in angles:
        k = np.flatnonzero((ang == a) & (mag == f_max))
        if k.size and f_max > 0:
            points.append(
                draw_robot(
                    ax3,
                    model,
                    loaded[int(k[0])],
                    color=colors[a],
                    label=f"{f_max:g} N at {a:g}°",
                    tendons=False,
                )
            )
    points.append(
        draw_robot(
            ax3,
            model,
            pcc,
            color="black",
            linestyle="--",
            linewidth=1.4,
            label=method_label(model, "pcc"),
            disks=False,
            tendons=False,
        )
    )
    set_axes_equal(ax3, np.concatenate(points, axis=0))
    ax3.view_init(elev=view[0], azim=view[1])
    _label_axes(ax3)
    ax3.legend(loc="upper left", frameon=False)
    ax3.set_title("(a) equilibrium shapes")

    # (b) tip error vs force magnitude.
    for a in angles:
        sel = np.flatnonzero(ang == a)
        order = sel[np.argsort(mag[sel])]
        ax2.plot(mag[order], err[order], "o-", color=colors[a], ms=4, lw=1.5, label=f"{a:g}°")
    ax2.set_xlabel("tip force magnitude |F| [N]")
    ax2.set_ylabel("PCC tip position error [mm]")
    ax2.set_xlim(left=0.0)
    ax2.set_ylim(bottom=0.0)
    ax2.grid(True, lw=0.5, alpha=0.5)
    ax2.legend(frameon=False, title="tip force direction (about z)", title_fontsize=8)
    ax2.set_title(
        f"(b) constant-curvature tip error (robot length {MM * model.total_length:.0f} mm)"
    )
    if title:
        fig.suptitle(title)
    return fig


@dataclass(frozen=True)
class TendonPanel:
    """One panel of `plot_tendon_panels`: a title, results in increasing pull, their labels,
    and optionally the PCC prediction of the last result (dashed)."""

    title: str
    results: Sequence[StaticResult]
    labels: Sequence[str]
    pcc: StaticResult | None = None


def plot_tendon_panels(
    robot: RobotSpec | RodModel,
    panels: Sequence[TendonPanel],
    *,
    title: str | None = None,
    ncols: int = 2,
    view: tuple[float, float] = (18.0, -60.0),
    cmap: str = "viridis",
) -> Figure:
    """Grid of 3-D panels, each a fan of shapes under increasing tendon pull (colour = pull).

    Disks are drawn on every shape, tendons only on the strongest pull (tensioned tendons in
    colour, slack ones grey). All panels share one length scale so they compare directly.
    """
    if not panels:
        raise ValueError("panels must hold at least one TendonPanel, got none")
    for p, panel in enumerate(panels):
        if len(panel.labels) != len(panel.results):
            raise ValueError(
                f"panels[{p}].labels must have {len(panel.results)} entries, "
                f"got {len(panel.labels)}"
            )
    with style():
        return _plot_tendon_panels(_as_model(robot), list(panels), title, ncols, view, cmap)


def _plot_tendon_panels(
    model: RodModel,
    panels: list[TendonPanel],
    title: str | None,
    ncols: int,
    view: tuple[float, float],
    cmap: str,
) -> Figure:
    n = len(panels)
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    fig = Figure(figsize=(4.6 * ncols, 4.4 * nrows), layout="constrained")
    colormap = colormaps[cmap]

    axes = []
    all_points = []
    for p, panel in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, p + 1, projection="3d")
        points = [draw_base(ax, model)]
        n_res = len(panel.results)
        for i, (res, label) in enumerate(zip(panel.results, panel.labels, strict=True)):
            color = colormap(0.1 + 0.8 * i / max(n_res - 1, 1))
            points.append(
                draw_robot(
                    ax,
                    model,
                    res,
                    color=color,
                    label=label,
                    linewidth=1.8,
                    tendons=(i == n_res - 1),
                )
            )
        if panel.pcc is not None:
            points.append(
                draw_robot(
                    ax,
                    model,
                    panel.pcc,
                    color="black",
                    linestyle="--",
                    linewidth=1.2,
                    label="PCC (strongest pull)",
                    disks=False,
                    tendons=False,
                )
            )
        ax.set_title(f"({chr(ord('a') + p)}) {panel.title}")
        ax.legend(loc="upper left", frameon=False)
        axes.append(ax)
        all_points.append(np.concatenate(points, axis=0))

    # One cube size for every panel, centred on each panel's own shapes.
    half = max(0.5 * float(np.max(pts.max(axis=0) - pts.min(axis=0))) for pts in all_points)
    for ax, pts in zip(axes, all_points, strict=True):
        center = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
        set_axes_equal(ax, np.stack([center - half, center + half]))
        ax.view_init(elev=view[0], azim=view[1])
        _label_axes(ax)
    if title:
        fig.suptitle(title)
    return fig
