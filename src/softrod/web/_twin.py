"""The browser twin's model and state, without any web library (unit-testable).

`RobotTwin` holds one robot, the inputs the page's sliders set (tendon tensions or lengths, tip
force and moment, gravity) and the models it shows; `solve()` runs every shown model from its
last converged state (warm start) and returns a `TwinFrame`: per model the backbone, the
success flag and message, the solve time, the tip and the tendon tensions. A failed solve is
returned as failed (its own shape, or none), never as the previous shape.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from softrod.description import RobotSpec, find_robot, load_robot
from softrod.rods import RodModel, StaticResult, compile_model, robot_properties, solve_static

__all__ = [
    "GRAVITY",
    "MODEL_NAMES",
    "ModelView",
    "RobotTwin",
    "TwinFrame",
    "disk_circles",
    "tendon_paths",
    "tube_mesh",
]

#: The models the page offers: exact shooting (Kirchhoff or Cosserat as the description says),
#: constant curvature, and the MuJoCo rigid-link chain.
MODEL_NAMES = ("exact", "pcc", "mujoco")
#: Gravity when switched on [m/s^2], world -z.
GRAVITY = (0.0, 0.0, -9.81)
#: Slider range of each tendon as a multiple of the tension that bends its segment by 90 deg.
TENSION_RANGE_FACTOR = 1.5
#: Jacobian-drag steps per handle move, their time step [s] and the controller gain [1/s]:
#: kp dt = 0.5 halves the tip error per step, so 8 steps leave under 1 % of a move.
DRAG_STEPS = 8
DRAG_DT = 0.05
DRAG_KP = 10.0


@dataclass(frozen=True)
class ModelView:
    """One model's answer to the current inputs.

    name : "exact", "pcc" or "mujoco". success, message : the solver's verdict.
    positions : (n, 3) backbone points [m] (empty (0, 3) when the solver gave no shape).
    rotations : (n, 3, 3) body frames (MuJoCo chain: the link frames and the tip site's).
    tip_position : (3,) [m] (NaN when no shape). solve_time : wall time of the solve [s].
    tendon_tension : (n_t,) [N]. stable : StaticResult.stable (None when not tested).
    arc_length : (n,) arc length of each backbone point [m], or None (MuJoCo chain).
    """

    name: str
    success: bool
    message: str
    positions: np.ndarray
    rotations: np.ndarray | None
    tip_position: np.ndarray
    solve_time: float
    tendon_tension: np.ndarray
    stable: bool | None = None
    arc_length: np.ndarray | None = None


@dataclass(frozen=True)
class TwinFrame:
    """Every shown model's view for one set of inputs; `tip_distance[(a, b)]` [m] between the
    tips of each pair of shown models (NaN when one failed)."""

    views: dict[str, ModelView]
    tip_distance: dict[tuple[str, str], float] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)


class RobotTwin:
    """A robot, the page's inputs and the models shown (no web library involved).

    robot : RobotSpec, dict, path or shipped name. models : shown models (subset of
    MODEL_NAMES; the first is the primary one that the tendon paths and disks follow).
    links : MuJoCo chain size N. control : "tension" (sliders set tensions [N]) or "length"
    (commanded tendon lengths [m]; every tendon needs a `stiffness`).
    """

    def __init__(
        self,
        robot: RobotSpec | dict | str,
        models: Sequence[str] = ("exact",),
        links: int = 20,
        control: Literal["tension", "length"] = "tension",
    ) -> None:
        if isinstance(robot, str):
            robot = str(find_robot(robot))
        self.spec: RobotSpec = load_robot(robot)
        self.model: RodModel = compile_model(self.spec)
        self.properties = robot_properties(self.model)
        self.n_tendons = self.properties.n_tendons
        if control not in ("tension", "length"):
            raise ValueError(f"control must be 'tension' or 'length', got {control!r}")
        if control == "length" and any(t.stiffness is None for t in self.properties.tendons):
            raise ValueError("control='length' needs a stiffness on every tendon")
        self.control = control
        # Input ranges: tensions up to a bend past 90 deg; lengths from rest to the shortening
        # that such a bend needs (geometric offset * angle plus the tendon's stretch).
        t90 = np.array([t.tension_90deg for t in self.properties.tendons])
        self.tension_max = np.maximum(TENSION_RANGE_FACTOR * t90, 1e-6)
        rest = np.array([t.rest_length for t in self.properties.tendons])
        stretch = np.array(
            [t.tension_90deg / t.stiffness if t.stiffness else 0.0 for t in self.properties.tendons]
        )
        offset = np.array([t.offset for t in self.properties.tendons])
        self.length_max = rest
        self.length_min = rest - TENSION_RANGE_FACTOR * (offset * np.pi / 2 + stretch)
        self.tensions = np.zeros(self.n_tendons)
        self.lengths = rest.copy()
        self.tip_force = np.zeros(3)
        self.tip_moment = np.zeros(3)
        self.gravity = False
        self.links = self._check_links(links)
        self.models: tuple[str, ...] = ()
        self.set_models(models)
        self._warm: dict[str, Any] = {}
        self._chain: Any = None
        self.last: TwinFrame | None = None

    # -- inputs ---------------------------------------------------------------------------------
    @staticmethod
    def _check_links(links: int) -> int:
        if not 1 <= int(links) <= 300:
            raise ValueError(f"links must be in [1, 300], got {links}")
        return int(links)

    def set_models(self, models: Sequence[str]) -> None:
        """Show these models (each in MODEL_NAMES, at least one; the first is the primary)."""
        models = tuple(dict.fromkeys(models))
        bad = [m for m in models if m not in MODEL_NAMES]
        if bad or not models:
            raise ValueError(f"models must be a non-empty subset of {MODEL_NAMES}, got {models}")
        if "mujoco" in models and self.control == "length":
            raise ValueError("the MuJoCo chain is shown under tension control only")
        self.models = models

    def set_links(self, links: int) -> None:
        """Rebuild the MuJoCo chain with N links on the next solve."""
        links = self._check_links(links)
        if links != self.links:
            self.links = links
            self._chain = None
            self._warm.pop("mujoco", None)

    def set_tension(self, k: int, value: float) -> None:
        """Tendon k's tension [N], clipped to [0, tension_max[k]]; ValueError if not finite."""
        _check_finite(f"tension {k}", value)
        self.tensions[k] = float(np.clip(value, 0.0, self.tension_max[k]))

    def set_length(self, k: int, value: float) -> None:
        """Tendon k's commanded length [m], clipped to [length_min[k], length_max[k]]."""
        _check_finite(f"length {k}", value)
        self.lengths[k] = float(np.clip(value, self.length_min[k], self.length_max[k]))

    def set_tip_load(
        self, force: Sequence[float] | None = None, moment: Sequence[float] | None = None
    ) -> None:
        """World-frame tip force [N] and moment [N m] (finite (3,) vectors)."""
        for name, value in (("force", force), ("moment", moment)):
            if value is None:
                continue
            arr = np.asarray(value, dtype=float)
            if arr.shape != (3,) or not np.all(np.isfinite(arr)):
                raise ValueError(f"tip {name} must be 3 finite numbers, got {value!r}")
            if name == "force":
                self.tip_force = arr.copy()
            else:
                self.tip_moment = arr.copy()

    def inputs(self) -> dict[str, Any]:
        """The current inputs as plain lists (what the readout and the tests look at)."""
        return {
            "control": self.control,
            "tensions": self.tensions.tolist(),
            "lengths": self.lengths.tolist(),
            "tip_force": self.tip_force.tolist(),
            "tip_moment": self.tip_moment.tolist(),
            "gravity": self.gravity,
            "models": list(self.models),
            "links": self.links,
        }

    # -- solving --------------------------------------------------------------------------------
    def solve(self) -> TwinFrame:
        """Solve every shown model at the current inputs, each from its last converged state."""
        views = {name: self._solve_one(name) for name in self.models}
        dist: dict[tuple[str, str], float] = {}
        names = list(views)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                ok = views[a].success and views[b].success
                d = np.linalg.norm(views[a].tip_position - views[b].tip_position)
                dist[(a, b)] = float(d) if ok else float("nan")
        self.last = TwinFrame(views, dist, self.inputs())
        return self.last

    def _rod_loads(self) -> dict[str, Any]:
        loads: dict[str, Any] = {"tip_force": self.tip_force, "tip_moment": self.tip_moment}
        if self.gravity:
            loads["gravity"] = GRAVITY
        if self.control == "length":
            loads["lengths"] = self.lengths
        else:
            loads["tensions"] = self.tensions
        return loads

    def _solve_one(self, name: str) -> ModelView:
        if name == "mujoco":
            return self._solve_chain()
        method = "shooting" if name == "exact" else "pcc"
        t0 = time.perf_counter()
        try:
            sol: StaticResult = solve_static(
                self.model, method=method, guess=self._warm.get(name), **self._rod_loads()
            )
        except (ValueError, RuntimeError, FloatingPointError) as exc:
            return _failed(name, str(exc), time.perf_counter() - t0, self.n_tendons)
        elapsed = time.perf_counter() - t0
        finite = bool(np.all(np.isfinite(sol.positions)))
        # Warm start only from a converged state: a failed one would lead the next solve astray.
        if sol.success and finite:
            self._warm[name] = sol
        return ModelView(
            name=name,
            success=bool(sol.success and finite),
            message=sol.message,
            positions=sol.positions if finite else np.zeros((0, 3)),
            rotations=sol.rotations if finite else None,
            tip_position=sol.tip_position if finite else np.full(3, np.nan),
            solve_time=elapsed,
            tendon_tension=np.asarray(sol.tendon_tension, dtype=float).reshape(-1)[
                : self.n_tendons
            ],
            stable=sol.stable,
            arc_length=sol.s if finite else None,
        )

    def _build_chain(self) -> Any:
        import mujoco

        from softrod.mujoco import build_spec, chain_info

        model = build_spec(self.spec, links=self.links).compile()
        info = chain_info(self.spec, links=self.links)
        tip_body, tip_point = info.body_point(model, self.spec.total_length)
        bodies = [model.body(b).id for b in info.link_bodies]
        return (
            model,
            mujoco.MjData(model),
            bodies,
            model.site(info.tip_site).id,
            tip_body,
            tip_point,
        )

    def _solve_chain(self) -> ModelView:
        from softrod.mujoco import PointLoad, static_equilibrium

        t0 = time.perf_counter()
        if self._chain is None:
            self._chain = self._build_chain()
        model, data, bodies, tip_site, tip_body, tip_point = self._chain
        model.opt.gravity[:] = GRAVITY if self.gravity else (0.0, 0.0, 0.0)
        data.ctrl[: self.n_tendons] = self.tensions
        loads = []
        if np.any(self.tip_force) or np.any(self.tip_moment):
            loads = [PointLoad(tip_body, tip_point, self.tip_force, self.tip_moment)]
        # Warm start: the last converged qpos and its Jacobian (a few residuals per drag step).
        warm = self._warm.get("mujoco")
        res = static_equilibrium(
            model,
            data,
            loads,
            qpos0=None if warm is None else warm.qpos,
            jacobian0=None if warm is None else warm.jacobian,
        )
        elapsed = time.perf_counter() - t0
        positions = np.vstack([data.xpos[bodies], data.site_xpos[tip_site][None, :]])
        # Link frames (body z along the backbone, as in the rod) draw the tube without twist.
        rotations = np.concatenate(
            [data.xmat[bodies].reshape(-1, 3, 3), data.site_xmat[tip_site].reshape(1, 3, 3)]
        )
        finite = bool(np.all(np.isfinite(positions)))
        if res.success and finite:
            self._warm["mujoco"] = res
        tension = np.array(data.actuator_force[: self.n_tendons], dtype=float)
        return ModelView(
            name="mujoco",
            success=bool(res.success and finite),
            message=res.message,
            positions=positions if finite else np.zeros((0, 3)),
            rotations=rotations if finite else None,
            tip_position=positions[-1].copy() if finite else np.full(3, np.nan),
            solve_time=elapsed,
            tendon_tension=np.abs(tension),
            stable=None,
        )

    # -- tip dragging ---------------------------------------------------------------------------
    def drag_tip(self, target: Sequence[float] | np.ndarray, steps: int = DRAG_STEPS) -> TwinFrame:
        """Move the exact model's tip toward `target` (3,) [m] with the resolved-rate Jacobian
        controller (softrod.control; tensions within [0, tension_max]), then solve every shown
        model at the tensions it reached. Tension control only."""
        from softrod.control import ResolvedRateController, TendonRobotPlant

        if self.control != "tension":
            raise ValueError("tip dragging needs tension control")
        x_d = np.asarray(target, dtype=float)
        if x_d.shape != (3,) or not np.all(np.isfinite(x_d)):
            raise ValueError(f"target must be 3 finite numbers, got {target!r}")
        loads = {k: v for k, v in self._rod_loads().items() if k != "tensions"}
        plant = TendonRobotPlant(
            self.model, tension_max=float(self.tension_max.min()), mobile_base=False, loads=loads
        )
        # Per-tendon limits (the plant takes one bound): the controller's active set uses these.
        plant.q_max = self.tension_max.copy()
        plant.q_scale = self.tension_max.copy()
        ctrl = ResolvedRateController(plant, kp=DRAG_KP, k_null=0.1)
        q = self.tensions.copy()
        current = self._warm.get("exact") or plant.solve(q)
        for _ in range(steps):
            qdot = ctrl.rate(q, current.tip_position, x_d, np.zeros(3), current=current, dt=DRAG_DT)
            q_new = np.clip(q + DRAG_DT * qdot, 0.0, self.tension_max)
            try:
                current = plant.solve(q_new, current)
            except RuntimeError:
                break  # keep the last reachable tensions; solve() below reports the state
            q = q_new
            if np.linalg.norm(current.tip_position - x_d) < 1e-5:
                break
        self.tensions = q
        return self.solve()


def _check_finite(name: str, value: float) -> None:
    if not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")


def _failed(name: str, message: str, elapsed: float, n_t: int) -> ModelView:
    return ModelView(
        name=name,
        success=False,
        message=message,
        positions=np.zeros((0, 3)),
        rotations=None,
        tip_position=np.full(3, np.nan),
        solve_time=elapsed,
        tendon_tension=np.full(n_t, np.nan),
    )


# -- geometry for drawing ---------------------------------------------------------------------


def _frames_along(positions: np.ndarray) -> np.ndarray:
    """(n, 3, 3) frames with z along the polyline's tangent (for shapes without rotations)."""
    tangent = np.gradient(positions, axis=0)
    tangent /= np.maximum(np.linalg.norm(tangent, axis=1, keepdims=True), 1e-12)
    frames = np.empty((len(positions), 3, 3))
    ref = np.array([1.0, 0.0, 0.0])
    for i, t in enumerate(tangent):
        x = ref - t * (ref @ t)
        if np.linalg.norm(x) < 1e-6:
            x = np.array([0.0, 1.0, 0.0]) - t * t[1]
        x /= np.linalg.norm(x)
        frames[i] = np.column_stack([x, np.cross(t, x), t])
        ref = x  # parallel transport keeps the tube from twisting
    return frames


def tube_mesh(
    positions: np.ndarray, radius: float, rotations: np.ndarray | None = None, sides: int = 10
) -> tuple[np.ndarray, np.ndarray]:
    """A closed-side tube around a backbone: vertices (n * sides, 3) [m] and faces
    (2 (n - 1) sides, 3) int32. positions : (n, 3) [m]; rotations : (n, 3, 3) or None."""
    frames = _frames_along(positions) if rotations is None else rotations
    ang = 2 * np.pi * np.arange(sides) / sides
    ring = radius * np.stack([np.cos(ang), np.sin(ang), np.zeros(sides)], axis=1)
    vertices = positions[:, None, :] + np.einsum("nij,kj->nki", frames, ring)
    n = len(positions)
    i = np.arange(n - 1)[:, None] * sides
    k = np.arange(sides)[None, :]
    a, b = i + k, i + (k + 1) % sides
    c, d = a + sides, b + sides
    faces = np.concatenate(
        [np.stack([a, b, d], -1).reshape(-1, 3), np.stack([a, d, c], -1).reshape(-1, 3)]
    )
    return vertices.reshape(-1, 3), faces.astype(np.int32)


def _frames_at(s: np.ndarray, positions: np.ndarray, rotations: np.ndarray, s_query: np.ndarray):
    """Points (m, 3) interpolated at arc lengths s_query, frames of the nearest node."""
    pts = np.stack([np.interp(s_query, s, positions[:, j]) for j in range(3)], axis=1)
    idx = np.clip(np.searchsorted(s, s_query), 0, len(s) - 1)
    return pts, rotations[idx]


def _disk_arcs(twin: RobotTwin) -> tuple[np.ndarray, np.ndarray]:
    """Arc lengths (m,) [m] of every disk (evenly spaced, the last at each segment's end) and
    each disk's segment index (m,)."""
    arcs, seg = [], []
    for sp in twin.properties.segments:
        for j in range(sp.disks):
            arcs.append(sp.s_start + (j + 1) * sp.length / sp.disks)
            seg.append(sp.index)
    return np.array(arcs), np.array(seg, dtype=int)


def disk_circles(twin: RobotTwin, view: ModelView, sides: int = 16) -> np.ndarray:
    """Line segments (m * sides, 2, 3) [m] drawing every spacer disk's rim on `view`'s shape
    (empty when the view has no frames)."""
    arcs, seg = _disk_arcs(twin)
    if view.rotations is None or view.arc_length is None or len(arcs) == 0:
        return np.zeros((0, 2, 3))
    pts, frames = _frames_at(view.arc_length, view.positions, view.rotations, arcs)
    # A disk without a radius is drawn just outside its segment's outermost tendon.
    outer = max((t.offset for t in twin.properties.tendons), default=0.0)
    radius = np.array(
        [twin.properties.segments[j].disk_radius or 1.2 * max(outer, 1e-3) for j in seg]
    )
    ang = 2 * np.pi * np.arange(sides + 1) / sides
    ring = np.stack([np.cos(ang), np.sin(ang), np.zeros_like(ang)], axis=1)
    rim = pts[:, None, :] + radius[:, None, None] * np.einsum("mij,kj->mki", frames, ring)
    return np.stack([rim[:, :-1], rim[:, 1:]], axis=2).reshape(-1, 2, 3)


def tendon_paths(twin: RobotTwin, view: ModelView) -> np.ndarray:
    """Line segments (k, 2, 3) [m]: each tendon straight from its base hole through every disk
    hole up to the end of its segment (empty when the view has no frames)."""
    if view.rotations is None or view.arc_length is None:
        return np.zeros((0, 2, 3))
    arcs, _ = _disk_arcs(twin)
    s = view.arc_length
    out = []
    for t in twin.properties.tendons:
        end = twin.properties.segments[t.segment].s_end
        s_holes = np.concatenate([[0.0], arcs[arcs <= end + 1e-12]])
        pts, frames = _frames_at(s, view.positions, view.rotations, s_holes)
        a = np.deg2rad(t.angle_deg)
        hole = t.offset * np.array([np.cos(a), np.sin(a), 0.0])
        path = pts + frames @ hole
        out.append(np.stack([path[:-1], path[1:]], axis=1))
    return np.concatenate(out) if out else np.zeros((0, 2, 3))
