"""Jacobian trajectory tracking (SoftManiSim eq. 6-7; ALGORITHMS.md A.3).

The configuration q stacks the robot's actuation: tendon tensions [N] (n_t), then segment
extensions [m] (one per extensible segment), then the translation of a mobile base [m] (3) when
enabled. The tip follows from a static solve of the rod (warm-started shooting). The tip
Jacobian is either central finite differences (eq. 7, 2 n_q solves per step) or analytic: the
tendon columns from the shooting sensitivities (implicit function theorem), the base columns
exactly the identity, the extension columns by central differences.
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
#: `loads` keywords a batched solve takes (others: the finite differences solve one by one).
_BATCH_LOADS = ("tip_force", "tip_moment", "distributed_force", "gravity")


@dataclass
class TendonRobotPlant:
    """Forward model tip(q) of a tendon robot with optional extensions and mobile base.

    robot : RobotSpec or RodModel. tension_max : upper tension limit [N].
    mobile_base : add a 3-DoF translating base to q. loads : extra solve_static keywords
    (gravity, tip_force, ...), held constant.
    """

    robot: RobotSpec | RodModel
    tension_max: float = 5.0
    mobile_base: bool = True
    base_range: float = 1.0
    loads: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model: RodModel = as_model(self.robot)
        spec = self.model.spec
        self.n_t = self.model.n_tendons
        self.ext_segments = [
            j for j, s in enumerate(spec.segments) if s.extension_range is not None
        ]
        self.n_ext = len(self.ext_segments)
        self.n_base = 3 if self.mobile_base else 0
        self.n_q = self.n_t + self.n_ext + self.n_base
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
        self.q_min = np.array(lo)
        self.q_max = np.array(hi)
        # Scale of each input for the damped pseudo-inverse (makes units comparable).
        self.q_scale = np.concatenate(
            [
                np.full(self.n_t, self.tension_max),
                np.full(self.n_ext, 0.03),
                np.full(self.n_base, 0.3),
            ]
        )
        self._last: StaticResult | None = None

    def split(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        tau = q[: self.n_t]
        ext = None
        if self.n_ext:
            ext = np.zeros(self.model.seg_length.shape[0])
            ext[self.ext_segments] = q[self.n_t : self.n_t + self.n_ext]
        base = self.base0 + q[self.n_t + self.n_ext :] if self.n_base else None
        return tau, ext, base

    def _model_at(self, q: np.ndarray) -> tuple[RodModel, np.ndarray]:
        tau, ext, base = self.split(q)
        return with_pose_and_lengths(self.model, base, None, ext), tau

    def solve(self, q: np.ndarray, warm: StaticResult | None = None) -> StaticResult:
        """Static solve at configuration q; raises if it fails (a controller must not go on
        with a wrong tip)."""
        model, tau = self._model_at(q)
        sol = solve_static(model, tensions=tau, guess=warm, **self.loads)
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
        does not take this plant's loads or robot (the caller then solves one by one)."""
        if not pairs or set(self.loads) - set(_BATCH_LOADS):
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
        """Tip Jacobian (3, n_q) at q."""
        J = np.empty((3, self.n_q))
        warm = current or self.solve(q, self._last)
        steps = np.concatenate(
            [np.full(self.n_t, FD_STEP_TENSION), np.full(self.n_ext + self.n_base, FD_STEP_LENGTH)]
        )
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
            J[:, : self.n_t] = tip_jacobian(model, warm)
            if self.n_base:
                J[:, self.n_t + self.n_ext :] = np.eye(3)
        elif mode != "fd":
            raise ValueError(f"jacobian mode must be 'fd' or 'analytic', got {mode!r}")
        return J


@dataclass
class ResolvedRateController:
    """qdot = J_w^+ (xdot_d + Kp (x_d - x)) + (I - J_w^+ J_w) k_null (q_nom - q), q += dt qdot.

    J_w = J diag(q_scale) is the Jacobian in scaled inputs, so the damped pseudo-inverse
    J_w^+ = J_w^T (J_w J_w^T + lambda^2 I)^-1 trades tensions, extensions and base motion on
    comparable terms. Inputs at a limit that the law would push further out are frozen and the
    rate recomputed without them (active set), so saturation does not corrupt the other
    inputs. The null-space term pulls the redundant inputs back toward `q_nom` (default: the
    middle of each range for the robot, zero base offset). kp, k_null : [1/s]; damping :
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
        q = np.clip(q + dt * qdot, plant.q_min, plant.q_max)
        cur = plant.solve(q, cur)
    mse = np.mean((actual - x_d) ** 2, axis=0)
    return TrackingResult(t, x_d, actual, qs, mse, float(mse.mean()), time.perf_counter() - start)
