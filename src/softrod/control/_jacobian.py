"""Jacobian trajectory tracking (SoftManiSim eq. 6-7; ALGORITHMS.md A.3).

The configuration q stacks the robot's actuation, in this order: tendon tensions [N] (n_t),
segment extensions [m] (one per extensible segment), the translation of a mobile base [m] (3)
when enabled, then the inputs named in `controls` beyond tensions: chamber pressures [Pa]
(n_pressures), the uniform field B [T] (3), moment-actuator inputs (n_moments). The tip follows
from a static solve of the rod (warm-started shooting). The tip Jacobian is either central
finite differences (eq. 7, 2 n_q solves per step) or analytic: the tendon, pressure, field and
moment columns from `tip_jacobian` (implicit function theorem), the base columns exactly the
identity, the extension columns by central differences.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from softrod.description import RobotSpec
from softrod.rods import (
    RodModel,
    StaticResult,
    as_model,
    solve_static,
    solve_static_batch,
    tip_jacobian,
)
from softrod.sim import with_pose_and_lengths

__all__ = ["TendonRobotPlant", "ResolvedRateController", "TrackingResult", "track"]

#: Finite-difference steps (central): tensions [N], extensions and base translation [m].
#: 1e-4 m follows A.3; 1e-3 N moves a soft robot's tip by ~1e-5 m, far above round-off.
FD_STEP_TENSION = 1e-3
FD_STEP_LENGTH = 1e-4
#: Pressures, field and moment inputs: this fraction of the input's scale (its bound), so the
#: tip moves ~1e-4 L per step: truncation ~1e-8 and round-off ~1e-7 relative.
FD_STEP_RELATIVE = 1e-3
#: `loads` keywords a batched solve takes (others: the finite differences solve one by one).
_BATCH_LOADS = ("tip_force", "tip_moment", "distributed_force", "gravity")
#: Models kept for the latest poses and extensions (`_model_at`).
_MODEL_CACHE = 16
#: Inputs `controls` may name; q holds them after tensions, extensions and base in this order.
CONTROL_KINDS = ("tensions", "pressures", "field", "moments")


@dataclass
class TendonRobotPlant:
    """Forward model tip(q) of a continuum robot steered by its tensions, extensions, mobile
    base, pressures, field and moment inputs.

    robot : RobotSpec or RodModel. tension_max : upper tension limit [N].
    mobile_base : add a 3-DoF translating base to q. loads : extra solve_static keywords
    (gravity, tip_force, and the inputs that are not controls: e.g. a constant `field`), held
    constant.
    controls : the actuation kinds in q, a subset of ("tensions", "pressures", "field",
        "moments"); default ("tensions",) (extensions and base come with the robot and
        `mobile_base` as before). Tensions left out are held at `loads["tensions"]` (or 0).
    pressure_range : (min, max) [Pa] for every chamber; default each chamber's
        `pressure_range` from the description (required where a chamber has none).
    b_max : bound on the field |B| <= b_max [T] (each component within +-b_max, and `project`
        scales B back onto the ball).
    moment_max : bound on each moment input |tau| <= moment_max (the actuator's unit).
    """

    robot: RobotSpec | RodModel
    tension_max: float = 5.0
    mobile_base: bool = True
    base_range: float = 1.0
    loads: dict[str, Any] = field(default_factory=dict)
    controls: tuple[str, ...] = ("tensions",)
    pressure_range: tuple[float, float] | None = None
    b_max: float = 0.02
    moment_max: float | None = None

    def __post_init__(self) -> None:
        self.model: RodModel = as_model(self.robot)
        spec = self.model.spec
        self.controls = tuple(self.controls)
        self._check_controls(spec)
        self.n_t = self.model.n_tendons if "tensions" in self.controls else 0
        self.ext_segments = [
            j for j, s in enumerate(spec.segments) if s.extension_range is not None
        ]
        self.n_ext = len(self.ext_segments)
        self.n_base = 3 if self.mobile_base else 0
        # The new kinds' sizes and bounds, in q order after the base.
        extra: list[tuple[str, int, list[float], list[float], list[float]]] = []
        if "pressures" in self.controls:
            lo_p, hi_p = self._pressure_bounds(spec)
            scale_p = [max(abs(a), abs(b)) for a, b in zip(lo_p, hi_p, strict=True)]
            extra.append(("pressures", spec.n_pressures, lo_p, hi_p, scale_p))
        if "field" in self.controls:
            extra.append(("field", 3, [-self.b_max] * 3, [self.b_max] * 3, [self.b_max] * 3))
        if "moments" in self.controls:
            m = float(self.moment_max)  # type: ignore[arg-type]
            n_m = spec.n_moments
            extra.append(("moments", n_m, [-m] * n_m, [m] * n_m, [m] * n_m))
        first = self.n_t + self.n_ext + self.n_base
        #: Where each kind sits in q: {"tensions": slice, ..., "pressures": slice, ...}.
        self.index: dict[str, slice] = {
            "tensions": slice(0, self.n_t),
            "extensions": slice(self.n_t, self.n_t + self.n_ext),
            "base": slice(self.n_t + self.n_ext, first),
        }
        for kind, n, *_ in extra:
            self.index[kind] = slice(first, first + n)
            first += n
        self.n_q = first
        self.base0 = self.model.base_position.copy()
        lo = [0.0] * self.n_t
        hi = [self.tension_max] * self.n_t
        for j in self.ext_segments:
            rng = spec.segments[j].extension_range
            assert rng is not None
            lo.append(rng[0])
            hi.append(rng[1])
        lo += [-self.base_range] * self.n_base
        hi += [self.base_range] * self.n_base
        for _, _, lo_k, hi_k, _ in extra:
            lo += lo_k
            hi += hi_k
        self.q_min = np.array(lo)
        self.q_max = np.array(hi)
        # Scale of each input for the damped pseudo-inverse (makes units comparable).
        self.q_scale = np.concatenate(
            [
                np.full(self.n_t, self.tension_max),
                np.full(self.n_ext, 0.03),
                np.full(self.n_base, 0.3),
                *[np.asarray(sc, dtype=float) for *_, sc in extra],
            ]
        )
        self._last: StaticResult | None = None
        self._models: dict[bytes, RodModel] = {}

    def _check_controls(self, spec: RobotSpec) -> None:
        """One ValueError naming the bad control, the missing actuator or bound."""
        bad = [c for c in self.controls if c not in CONTROL_KINDS]
        if bad or len(set(self.controls)) != len(self.controls) or not self.controls:
            raise ValueError(
                f"controls must be distinct names among {list(CONTROL_KINDS)}, got "
                f"{list(self.controls)}"
            )
        have = {"pressures": spec.n_pressures > 0, "field": spec.is_magnetic,
                "moments": spec.n_moments > 0, "tensions": True}  # fmt: skip
        what = {"pressures": "chambers", "field": "magnets or magnetization",
                "moments": "moment_actuators"}  # fmt: skip
        for c in self.controls:
            if not have[c]:
                raise ValueError(f"controls {c!r}: the robot {spec.name!r} has no {what[c]}")
            if c in self.loads:
                raise ValueError(f"{c!r} is a control and cannot also be a constant load")
        if not (np.isfinite(self.b_max) and self.b_max > 0):
            raise ValueError(f"b_max must be a positive field bound [T], got {self.b_max}")
        if "moments" in self.controls and not (
            self.moment_max is not None and np.isfinite(self.moment_max) and self.moment_max > 0
        ):
            raise ValueError(f"controls 'moments' needs moment_max > 0, got {self.moment_max}")

    def _pressure_bounds(self, spec: RobotSpec) -> tuple[list[float], list[float]]:
        """Per-chamber (min, max) [Pa]: `pressure_range` given here, else the description's."""
        lo, hi = [], []
        chambers = [(j, c) for j, s in enumerate(spec.segments) for c in s.chambers]
        for k, (j, c) in enumerate(chambers):
            rng = self.pressure_range or c.pressure_range
            if rng is None or not (np.isfinite(rng[0]) and np.isfinite(rng[1])
                                   and rng[0] < rng[1]):  # fmt: skip
                raise ValueError(
                    f"controls 'pressures': pressures[{k}] (segments[{j}].chambers) needs a "
                    f"pressure_range min < max [Pa], in the description or given, got {rng}"
                )
            lo.append(float(rng[0]))
            hi.append(float(rng[1]))
        return lo, hi

    def split(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(tensions, extensions per segment or None, base position or None) of q."""
        tau = q[: self.n_t]
        if "tensions" not in self.controls:
            tau = np.asarray(self.loads.get("tensions", np.zeros(self.model.n_tendons)), float)
        ext = None
        if self.n_ext:
            ext = np.zeros(self.model.seg_length.shape[0])
            ext[self.ext_segments] = q[self.index["extensions"]]
        base = self.base0 + q[self.index["base"]] if self.n_base else None
        return tau, ext, base

    def inputs(self, q: np.ndarray) -> dict[str, Any]:
        """The pressures, field and moments of q as solve_static keywords (the controlled ones)."""
        return {k: q[self.index[k]] for k in CONTROL_KINDS[1:] if k in self.controls}

    def project(self, q: np.ndarray) -> np.ndarray:
        """q within its limits: each input clipped to [q_min, q_max], the field scaled back
        onto |B| <= b_max."""
        q = np.clip(q, self.q_min, self.q_max)
        if "field" in self.controls:
            b = q[self.index["field"]]
            norm = float(np.linalg.norm(b))
            if norm > self.b_max:
                q[self.index["field"]] = b * (self.b_max / norm)
        return q

    def _model_at(self, q: np.ndarray) -> tuple[RodModel, np.ndarray]:
        tau, ext, base = self.split(q)
        # One model object per pose and extensions: a solve that refined its grid leaves the
        # finer grid on that object, which tip_jacobian needs to find again.
        key = q[self.n_t : self.n_t + self.n_ext + self.n_base].tobytes()
        model = self._models.pop(key, None)
        if model is None:
            model = with_pose_and_lengths(self.model, base, None, ext)
        self._models[key] = model
        while len(self._models) > _MODEL_CACHE:
            del self._models[next(iter(self._models))]
        return model, tau

    def solve(self, q: np.ndarray, warm: StaticResult | None = None) -> StaticResult:
        """Static solve at configuration q; raises if it fails (a controller must not go on
        with a wrong tip)."""
        model, tau = self._model_at(q)
        loads = {k: v for k, v in self.loads.items() if k != "tensions"}
        sol = solve_static(model, tensions=tau, guess=warm, **self.inputs(q), **loads)
        if not sol.success:
            raise RuntimeError(f"static solve failed at q={q.tolist()}: {sol.message}")
        return sol

    def tip(self, q: np.ndarray) -> np.ndarray:
        self._last = self.solve(q, self._last)
        return self._last.tip_position.copy()

    def _fd_pair(self, q: np.ndarray, i: int, step: float) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi): q moved by -/+ step / 2 in input i, one-sided at a limit (tensions stay
        pull-only, extensions within range)."""
        dq = np.zeros(self.n_q)
        dq[i] = 0.5 * step
        return np.maximum(q - dq, self.q_min), np.minimum(q + dq, self.q_max)

    def _batched_tips(
        self, pairs: list[tuple[np.ndarray, np.ndarray]], warm: StaticResult
    ) -> np.ndarray | None:
        """Tips (2 k, 3) [m] at (hi, lo) of each pair (configurations that differ from the
        warm start's only in tensions) from one `solve_static_batch` warm-started at `warm`
        (items it does not solve: `solve`, which raises when they fail); None when the batch
        does not take this plant's loads, controls or robot (the caller then solves one by
        one)."""
        if not pairs or set(self.loads) - set(_BATCH_LOADS) or self.controls != ("tensions",):
            return None
        configs = [c for lo, hi in pairs for c in (hi, lo)]
        model, _ = self._model_at(configs[0])
        try:
            batch = solve_static_batch(
                model, tensions=np.array([c[: self.n_t] for c in configs]), guess=warm,
                **self.loads,
            )  # fmt: skip
        except ValueError:
            return None
        tips = batch.tip_position.copy()
        for k in np.flatnonzero(~batch.success).tolist():
            tips[k] = self.solve(configs[k], warm).tip_position
        return tips

    def jacobian(
        self,
        q: np.ndarray,
        mode: Literal["fd", "analytic"] = "analytic",
        current: StaticResult | None = None,
    ) -> np.ndarray:
        """Tip Jacobian (3, n_q) at q [m per unit of each input]."""
        if mode not in ("fd", "analytic"):
            raise ValueError(f"jacobian mode must be 'fd' or 'analytic', got {mode!r}")
        J = np.empty((3, self.n_q))
        warm = current or self.solve(q, self._last)
        n_old = self.n_t + self.n_ext + self.n_base
        steps = np.concatenate(
            [np.full(self.n_t, FD_STEP_TENSION), np.full(self.n_ext + self.n_base, FD_STEP_LENGTH),
             FD_STEP_RELATIVE * self.q_scale[n_old:]]
        )  # fmt: skip
        fd_cols = range(self.n_q) if mode == "fd" else range(self.n_t, self.n_t + self.n_ext)
        pairs = [self._fd_pair(q, i, steps[i]) for i in fd_cols]
        # The tension columns change only the tensions of one robot: one batched solve.
        tips = self._batched_tips([p for i, p in zip(fd_cols, pairs, strict=True)
                                   if i < self.n_t], warm)  # fmt: skip
        for i, (lo, hi) in zip(fd_cols, pairs, strict=True):
            if i < self.n_t and tips is not None:
                tip_hi, tip_lo = tips[2 * i], tips[2 * i + 1]
            else:
                tip_hi = self.solve(hi, warm).tip_position
                tip_lo = self.solve(lo, warm).tip_position
            J[:, i] = (tip_hi - tip_lo) / (hi[i] - lo[i])
        if mode == "analytic":
            model, _ = self._model_at(q)
            kinds = self.inputs(q)
            # tip_jacobian's columns: tendons, then pressures, field, moments (those asked).
            cols = tip_jacobian(model, warm, pressures="pressures" in kinds,
                                field="field" in kinds, moments="moments" in kinds)  # fmt: skip
            n_rt = self.model.n_tendons
            J[:, : self.n_t] = cols[:, : self.n_t]
            at = n_rt
            for kind in CONTROL_KINDS[1:]:
                if kind in kinds:
                    sl = self.index[kind]
                    J[:, sl] = cols[:, at : at + sl.stop - sl.start]
                    at += sl.stop - sl.start
            if self.n_base:
                J[:, self.index["base"]] = np.eye(3)
        return J


@dataclass
class ResolvedRateController:
    """qdot = J_w^+ (xdot_d + Kp (x_d - x)) + (I - J_w^+ J_w) k_null (q_nom - q), q += dt qdot.

    J_w = J diag(q_scale) is the Jacobian in scaled inputs, so the damped pseudo-inverse
    J_w^+ = J_w^T (J_w J_w^T + lambda^2 I)^-1 trades tensions, extensions and base motion on
    comparable terms. Inputs at a limit that the law would push further out are frozen and the
    rate recomputed without them (active set), so saturation does not corrupt the other
    inputs. The null-space term pulls the redundant inputs back toward `q_nom` (default: the
    middle of each range for the robot, zero base offset; pressures, field and moment inputs
    at the value of least effort, zero or the bound nearest it). kp, k_null : [1/s]; damping :
    lambda in scaled units.
    """

    plant: TendonRobotPlant
    kp: float = 10.0
    damping: float = 1e-3
    k_null: float = 1.0
    jacobian_mode: Literal["fd", "analytic"] = "analytic"
    q_nom: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.kp < 0 or self.damping < 0 or self.k_null < 0:
            raise ValueError(
                f"kp, damping and k_null must be >= 0, got {self.kp}, {self.damping}, {self.k_null}"
            )
        if self.q_nom is None:
            p = self.plant
            nom = 0.5 * (p.q_min + p.q_max)
            nom[p.n_t :] = np.where(np.arange(p.n_q - p.n_t) >= p.n_ext, 0.0, nom[p.n_t :])
            nom[: p.n_t] = 0.1 * p.tension_max  # a little pretension keeps tendons taut
            # Pressures, field and moments: the least effort (zero, or a bound nearest zero).
            n_old = p.n_t + p.n_ext + p.n_base
            nom[n_old:] = np.clip(0.0, p.q_min[n_old:], p.q_max[n_old:])
            self.q_nom = nom

    def rate(
        self,
        q: np.ndarray,
        x: np.ndarray,
        x_d: np.ndarray,
        xdot_d: np.ndarray,
        current: StaticResult | None = None,
        dt: float = 0.0,
    ) -> np.ndarray:
        """Input rate qdot (n_q,) for the current tip x and the desired x_d, xdot_d."""
        p = self.plant
        assert self.q_nom is not None
        J = p.jacobian(q, self.jacobian_mode, current)
        v = xdot_d + self.kp * (x_d - x)
        free = np.ones(p.n_q, dtype=bool)
        qdot_s = np.zeros(p.n_q)
        for _ in range(p.n_q):
            Jw = J * (p.q_scale * free)[None, :]
            A = Jw @ Jw.T + self.damping**2 * np.eye(3)
            pinv = Jw.T @ np.linalg.inv(A)
            null = np.diag(free.astype(float)) - pinv @ Jw
            qdot_s = pinv @ v + null @ (self.k_null * (self.q_nom - q) / p.q_scale)
            qdot = p.q_scale * qdot_s
            # Freeze inputs that the step would push past a limit.
            nxt = q + dt * qdot
            push = free & (((nxt < p.q_min) & (qdot < 0)) | ((nxt > p.q_max) & (qdot > 0)))
            if not push.any():
                break
            free &= ~push
        return p.q_scale * qdot_s


@dataclass(frozen=True)
class TrackingResult:
    """t (k,) [s]; desired, actual (k, 3) [m]; q (k, n_q); mse (3,) per axis [m^2];
    mse_mean [m^2]; wall_time_s."""

    t: np.ndarray
    desired: np.ndarray
    actual: np.ndarray
    q: np.ndarray
    mse: np.ndarray
    mse_mean: float
    wall_time_s: float

    def plot(self, path: Any, title: str = "") -> Any:
        """Desired vs actual path (3-D and per axis) as PNG."""
        import matplotlib

        matplotlib.use("Agg")
        from pathlib import Path

        import matplotlib.pyplot as plt

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig = plt.figure(figsize=(11, 4.5))
        ax = fig.add_subplot(1, 2, 1, projection="3d")
        d, a = self.desired * 1e3, self.actual * 1e3
        # Equal scaling on all axes, so a flat path looks flat.
        both = np.vstack([d, a])
        mid = 0.5 * (both.max(axis=0) + both.min(axis=0))
        half = 0.5 * max(float(np.ptp(both, axis=0).max()), 1e-3)
        ax.set_xlim(mid[0] - half, mid[0] + half)
        ax.set_ylim(mid[1] - half, mid[1] + half)
        ax.set_zlim(mid[2] - half, mid[2] + half)
        ax.plot(d[:, 0], d[:, 1], d[:, 2], "k--", lw=1.2, label="desired")
        ax.plot(a[:, 0], a[:, 1], a[:, 2], "C0", lw=1.5, label="actual")
        ax.set_xlabel("x [mm]")
        ax.set_ylabel("y [mm]")
        ax.set_zlabel("z [mm]")
        ax.legend()
        ax.set_title(title)
        ax2 = fig.add_subplot(1, 2, 2)
        err = (self.actual - self.desired) * 1e3
        for i, n in enumerate("xyz"):
            ax2.plot(self.t, err[:, i], label=f"{n} (MSE {self.mse[i]:.2e} m$^2$)")
        ax2.set_xlabel("t [s]")
        ax2.set_ylabel("tip error [mm]")
        ax2.grid(alpha=0.3)
        ax2.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path


def track(
    controller: ResolvedRateController,
    t: np.ndarray,
    x_d: np.ndarray,
    xdot_d: np.ndarray,
    q0: np.ndarray | None = None,
    progress: bool = False,
) -> TrackingResult:
    """Run the closed loop along a sampled trajectory; errors are measured at every sample.

    xdot_d is kept for reference; the discrete law feeds forward (x_d[k+1] - x_d[k]) / dt.
    """
    plant = controller.plant
    q = np.zeros(plant.n_q) if q0 is None else np.asarray(q0, dtype=float).copy()
    dt = float(t[1] - t[0])
    actual = np.empty_like(x_d)
    qs = np.empty((t.shape[0], plant.n_q))
    start = time.perf_counter()
    iterator: Any = range(t.shape[0])
    if progress:
        from rich.progress import track as rich_track

        iterator = rich_track(iterator, description="tracking")
    cur = plant.solve(q)
    for k in iterator:
        actual[k] = cur.tip_position
        qs[k] = q
        if k + 1 == t.shape[0]:
            break
        # Discrete resolved rate: feed forward the reference's step over this period and
        # correct today's error, so a tracked reference leaves no dt * velocity lag.
        v_ff = (x_d[k + 1] - x_d[k]) / dt
        qdot = controller.rate(q, cur.tip_position, x_d[k], v_ff, cur, dt)
        q = plant.project(q + dt * qdot)
        cur = plant.solve(q, cur)
    mse = np.mean((actual - x_d) ** 2, axis=0)
    return TrackingResult(t, x_d, actual, qs, mse, float(mse.mean()), time.perf_counter() - start)
