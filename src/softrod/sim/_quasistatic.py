"""Quasi-static time simulation: a sequence of static equilibria under time-varying inputs.

Each step solves the rod for that instant's inputs (tendon tensions or lengths, chamber
pressures, moment-actuator inputs, a magnetic field and its gradient, segment extensions, base
pose, external loads), either with warm-started shooting (exact at every step) or with one
SoftManiSim observer update per step (ALGORITHMS.md A.2), and records the shape history.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from softrod.description import RobotSpec
from softrod.rods import (
    DEFAULT_RTOL,
    ObserverGains,
    ObserverLoop,
    ObserverState,
    RodModel,
    StaticResult,
    as_model,
    check_inputs,
    observer_update,
    solve_static,
    with_pose_and_lengths,
)
from softrod.rods.so3 import quat_to_matrix

__all__ = ["QuasiStaticSim", "QuasiStaticHistory", "with_pose_and_lengths"]

_INPUT_KEYS = (
    "tensions",
    "lengths",
    "tip_force",
    "tip_moment",
    "distributed_force",
    "gravity",
    "base_position",
    "base_rotation",
    "base_quaternion",
    "extensions",
    "pressures",
    "moments",
    "field",
    "field_gradient",
)
_INPUT_SET = frozenset(_INPUT_KEYS)
#: Inputs whose constant value is a matrix: a time series of them has 3 dimensions.
_MATRIX_INPUTS = frozenset({"base_rotation", "field_gradient"})
#: Inputs `ObserverLoop` takes (the observer's fast path); a step with any other input given
#: (pressures, moments, a field, a moving base, extensions) runs `observer_update`.
_LOOP_INPUTS = frozenset(
    {"tensions", "lengths", "tip_force", "tip_moment", "distributed_force", "gravity"}
)


@dataclass(frozen=True)
class QuasiStaticHistory:
    """Recorded simulation. t : (k,) [s]; tip_position : (k, 3) [m]; positions :
    (k, n, 3) [m] or None; residual : (k,) scaled boundary residual; converged : (k,) bool;
    tendon_tension : (k, n_t) [N]; solve_time : (k,) [s]; method : solver used.
    message : one line on the steps not converged (or re-solved after an observer jump), ""
    when every step converged plainly."""

    t: np.ndarray
    tip_position: np.ndarray
    positions: np.ndarray | None
    residual: np.ndarray
    converged: np.ndarray
    tendon_tension: np.ndarray
    solve_time: np.ndarray
    method: str
    robot: str
    message: str = ""

    def to_npz(self, path: str | Path) -> Path:
        """Save every array to a NumPy .npz archive."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, Any] = {
            k: v for k, v in dataclasses.asdict(self).items() if isinstance(v, np.ndarray)
        }
        arrays.update(
            method=np.array(self.method), robot=np.array(self.robot), message=np.array(self.message)
        )
        np.savez_compressed(path, **arrays)
        return path

    def to_csv(self, path: str | Path) -> Path:
        """Save time, tip position, residual and tensions as CSV (one row per step)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        n_t = self.tendon_tension.shape[1]
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(
                ["t", "tip_x", "tip_y", "tip_z", "residual", "converged"]
                + [f"tension_{i}" for i in range(n_t)]
            )
            for k in range(self.t.shape[0]):
                w.writerow(
                    [
                        f"{self.t[k]:.6g}",
                        *(f"{v:.9g}" for v in self.tip_position[k]),
                        f"{self.residual[k]:.3e}",
                        int(self.converged[k]),
                        *(f"{v:.6g}" for v in self.tendon_tension[k]),
                    ]
                )
        return path

    def plot(self, path: str | Path) -> Path:
        """Tip trajectory (3-D) and boundary residual over time, as PNG."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig = plt.figure(figsize=(10, 4.5))
        ax = fig.add_subplot(1, 2, 1, projection="3d")
        tp = self.tip_position * 1e3
        ax.plot(tp[:, 0], tp[:, 1], tp[:, 2], lw=1.5)
        ax.set_xlabel("x [mm]")
        ax.set_ylabel("y [mm]")
        ax.set_zlabel("z [mm]")
        ax.set_title(f"{self.robot}: tip path ({self.method})")
        ax2 = fig.add_subplot(1, 2, 2)
        ax2.semilogy(self.t, np.maximum(self.residual, 1e-17))
        ax2.set_xlabel("t [s]")
        ax2.set_ylabel("scaled boundary residual")
        ax2.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path


def _at_nodes(model: RodModel, sol: StaticResult) -> np.ndarray:
    """sol's positions (n_nodes, 3) [m] at the model's nodes: an answer the tip error estimate
    refined lies on a finer grid, which holds them."""
    if sol.s.shape[0] == model.n_nodes:
        return sol.positions.copy()
    return np.stack([np.interp(model.node_s, sol.s, sol.positions[:, c]) for c in range(3)], 1)


class QuasiStaticSim:
    """Advance a robot through time with per-step inputs; each step is a static equilibrium.

    Parameters
    ----------
    robot : RobotSpec or RodModel (load a dict or path with `softrod.load_robot`).
    method : "shooting" (warm-started Newton, exact every step) or "observer" (one observer
        update per step: cheaper, converges over a few steps after a jump). An observer step
        whose tip moves more than `gains.max_tip_move` of the length (`solve_static`'s
        continuation step rule) is a branch jump: that step is re-solved by shooting (the
        equilibrium reached gradually from rest) and the observer restarts from it; the step
        is reported converged only if that solve converged, and `message` / the history's
        `message` say so.
    dt : time step [s] (also the observer's update interval).
    gains : observer gains (default `ObserverGains(dt=dt)`).
    record_shape : keep the whole backbone per step (else only the tip).

    The observer runs through `softrod.rods.ObserverLoop` (buffers built once, no per-step
    input assembly in Python) on every step whose inputs it takes: tensions or lengths, tip
    force and moment, distributed force and gravity, on a robot with straight routing and
    without chambers or moment actuators, its base and extensions not moved; other steps
    run `observer_update`, and the observer state passes between the two. The answers are
    `observer_update`'s to the last bit either way (tests/test_observer_fast.py).

    Example
    -------
    >>> robot = softrod.load_robot("examples/robots/tdcr3.yaml")  # doctest: +SKIP
    >>> sim = QuasiStaticSim(robot, method="observer")  # doctest: +SKIP
    >>> hist = sim.run({"tensions": np.linspace(0, 2, 100)[:, None] * np.eye(9)[0]})  # +SKIP
    """

    def __init__(
        self,
        robot: RobotSpec | RodModel,
        method: Literal["shooting", "observer"] = "shooting",
        dt: float = 0.01,
        gains: ObserverGains | None = None,
        record_shape: bool = True,
        steps: int | None = None,
        rtol: float = DEFAULT_RTOL,
    ) -> None:
        if method not in ("shooting", "observer"):
            raise ValueError(f"method must be 'shooting' or 'observer', got {method!r}")
        if not dt > 0:
            raise ValueError(f"dt must be > 0 [s], got {dt!r}")
        self.model = as_model(robot, steps)
        self.method = method
        self.dt = float(dt)
        self.gains = gains or ObserverGains(dt=self.dt)
        self.record_shape = record_shape
        self.rtol = rtol
        self.reset()

    def reset(self) -> None:
        """Forget the warm start / observer state; time back to 0."""
        self.t = 0.0
        self._prev: StaticResult | None = None
        #: The observer state when `_loop` does not hold it (`_obs` reads whichever does).
        self._obs_state: ObserverState | None = None
        #: The observer's fast path for this model and gains (None: not built yet / refused).
        self._loop: ObserverLoop | None = None
        #: Whether `_loop` holds the current observer state.
        self._loop_live = False
        #: (gains, length control) for which `ObserverLoop` refused this model.
        self._loop_refused: set[tuple[ObserverGains, bool]] = set()
        #: The last step's tip in its base frame [m] (the step rule's reference).
        self._tip: np.ndarray | None = None
        #: The last StaticResult of an observer step under a field gradient (or a re-solve).
        self._last: StaticResult | None = None
        #: What the last step reports beyond its outputs ("" when it converged plainly).
        self.message = ""

    @property
    def _obs(self) -> ObserverState | None:
        """The observer state now (the fast loop's, when it holds it)."""
        if self._loop_live and self._loop is not None:
            return self._loop.state
        return self._obs_state

    @_obs.setter
    def _obs(self, state: ObserverState | None) -> None:
        self._obs_state = state
        self._loop_live = False

    def step(self, **inputs: Any) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, float, bool]:
        """Advance one step with this instant's inputs.

        Keys: tensions (n_t,) [N] or lengths (n_t,) [m]; tip_force, tip_moment,
        distributed_force, gravity (3,); base_position (3,) [m] and base_rotation (3, 3) or
        base_quaternion (4,); extensions (n_seg,) [m]; pressures (n_c,) [Pa], moments
        (n_moments,) [-], field (3,) [T] and field_gradient (3, 3) [T/m] as in `solve_static`
        (docs/actuators.md). Returns (tip (3,), positions (n, 3) or None, tensions (n_t,),
        residual, converged).

        The observer takes pressures, moments and a uniform field in its update; a nonzero
        field_gradient (whose forces follow the shape) runs `solve_static(method="observer")`,
        which holds the forces at the last shape and repeats updates until they settle.
        """
        if not _INPUT_SET.issuperset(inputs):
            unknown = set(inputs) - _INPUT_SET
            raise ValueError(
                f"unknown input {sorted(unknown)[0]!r}; expected one of {list(_INPUT_KEYS)}"
            )
        if self.method == "observer":
            fast = self._fast_step(inputs)
            if fast is not None:
                return fast
        rot = inputs.pop("base_rotation", None)
        quat = inputs.pop("base_quaternion", None)
        if quat is not None:
            rot = quat_to_matrix(quat)
        model = with_pose_and_lengths(
            self.model, inputs.pop("base_position", None), rot, inputs.pop("extensions", None)
        )
        self.message = ""
        if self.method == "shooting":
            sol = solve_static(model, guess=self._prev, rtol=self.rtol, **inputs)
            self._prev = sol if sol.success else None
            if not sol.success:
                self.message = sol.message
            out = (
                sol.tip_position.copy(),
                _at_nodes(model, sol) if self.record_shape else None,
                sol.tendon_tension,
                sol.residual,
                sol.success,
            )
        else:
            out = self._observer_step(model, inputs)
        # The tip in the base frame (a moving base moves it without any bending).
        local = (out[0] - model.base_position) @ model.base_rotation
        self._tip = local if math.isfinite(local.sum()) else None
        self.t += self.dt
        return out

    def _fast_loop(self, inputs: dict[str, Any]) -> ObserverLoop | None:
        """The `ObserverLoop` for this step's inputs, holding the current observer state; None
        where the step needs `observer_update` (an input the loop does not take, a robot it
        refuses, tensions and lengths both given)."""
        if not _LOOP_INPUTS.issuperset(inputs):
            return None
        lengths = inputs.get("lengths") is not None
        if lengths and inputs.get("tensions") is not None:
            return None
        loop = self._loop
        if loop is None or loop.gains is not self.gains or loop.length_control != lengths:
            if (self.gains, lengths) in self._loop_refused:
                return None
            state = self._obs
            try:
                loop = ObserverLoop(self.model, self.gains, length_control=lengths)
            except ValueError:
                # A robot the loop does not take (or a length law without stiffness): the
                # general path, which names the problem where there is one.
                self._loop_refused.add((self.gains, lengths))
                return None
            self._loop = loop
            self._obs = state
        if not self._loop_live:
            try:
                loop.reset(self._obs_state)
            except ValueError:
                return None
            self._loop_live = True
        return loop

    def _fast_step(
        self, inputs: dict[str, Any]
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, float, bool] | None:
        """One observer step through `ObserverLoop` (the same answers as `_observer_step`);
        None where the step needs the general path (then nothing has changed)."""
        loop = self._fast_loop(inputs)
        if loop is None:
            return None
        try:
            Y, tau, res, ok = loop.step(**inputs)
        except ValueError:
            # A bad input (the state is untouched): the general path raises check_inputs'
            # error for it, or, for an input the loop is stricter about, runs the step.
            return None
        self.message = ""
        model = self.model
        if not ok:
            self._obs = None
            self.message = "observer update failed: the integration produced non-finite values"
        tip = Y[-1, :3].copy()
        # The tip in the base frame (the step rule's reference and the next step's).
        local = (tip - model.base_position) @ model.base_rotation
        move = self._tip_move(local, ok)
        if move > self.gains.max_tip_move * model.total_length:
            # A branch jump: `_observer_step`'s re-solve (the loop's state is dropped).
            self._obs = None
            out = self._resolve_jump(model, dict(inputs), move)
            local = (out[0] - model.base_position) @ model.base_rotation
        else:
            out = (
                tip,
                Y[:, :3].copy() if self.record_shape else None,
                tau,
                res,
                ok and res <= self.rtol,
            )
        self._tip = local if math.isfinite(local.sum()) else None
        self.t += self.dt
        return out

    def _tip_move(self, local: np.ndarray, ok: bool) -> float:
        """How far the tip moved since the last step in the base frame [m] (the step rule's
        measure; 0 on the first step or after a failed update). local : (3,) tip in the base
        frame."""
        if self._tip is None or not ok:
            return 0.0
        d = local - self._tip
        return math.sqrt(d @ d)

    def _observer_step(
        self, model: RodModel, inputs: dict[str, Any]
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, float, bool]:
        """One observer update; a tip jump beyond the step rule is re-solved by shooting."""
        inp = check_inputs(model, **inputs)
        if model.is_magnetic and inp.field_gradient.any():
            Y, tau, res, ok = self._held_gradient_update(model, inputs)
        else:
            self._obs, Y, _, tau, res, ok = observer_update(model, inp, self._obs, self.gains)
        if not ok:
            self._obs = None
            self.message = "observer update failed: the integration produced non-finite values"
        tip = Y[-1, :3].copy()
        bound = self.gains.max_tip_move * model.total_length
        move = self._tip_move((tip - model.base_position) @ model.base_rotation, ok)
        if move <= bound:
            return (
                tip,
                Y[:, :3].copy() if self.record_shape else None,
                np.asarray(tau, float).copy(),
                res,
                ok and res <= self.rtol,
            )
        return self._resolve_jump(model, inputs, move)

    def _resolve_jump(
        self, model: RodModel, inputs: dict[str, Any], move: float
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, float, bool]:
        """A branch jump: the equilibrium reached gradually from rest (branch-safe shooting),
        and the observer restarts from it."""
        bound = self.gains.max_tip_move * model.total_length
        sol = solve_static(model, rtol=self.rtol, **inputs)
        what = (
            f"t = {self.t:.6g} s: the observer's tip moved {1e3 * move:.1f} mm in one step, "
            f"more than the step rule allows ({self.gains.max_tip_move:g} L = "
            f"{1e3 * bound:.1f} mm: a branch jump)"
        )
        self._last = sol
        if sol.success:
            self._obs = ObserverState.from_result(model, sol, self.gains)
            self.message = f"{what}; re-solved by shooting from rest, the observer restarts there"
        else:
            self._obs = None
            self.message = f"{what}; shooting from rest did not converge either: {sol.message}"
        return (
            sol.tip_position.copy(),
            _at_nodes(model, sol) if self.record_shape else None,
            sol.tendon_tension.copy(),
            sol.residual,
            sol.success,
        )

    def _held_gradient_update(
        self, model: RodModel, inputs: dict[str, Any]
    ) -> tuple[np.ndarray, np.ndarray, float, bool]:
        """Observer updates under a field gradient: `observer_update` cannot follow its forces,
        so each update is a `solve_static(method="observer")` call, which holds them at the
        last shape; up to `gains.max_updates` of them while the residual exceeds rtol (a cold
        start has the observer's default gains). Returns (Y[:, :3] (n, 3), tensions,
        residual, ok)."""
        # The last result carries the shape; its observer state is the one carried on since.
        guess = self._last
        if guess is not None and guess.warm is not None and self._obs is not None:
            guess = dataclasses.replace(
                guess, warm=dataclasses.replace(guess.warm, observer=self._obs)
            )
        for _ in range(self.gains.max_updates):
            # The sim reports no tip error: its estimate (~40 % of an update) is skipped.
            sol = solve_static(
                model,
                method="observer",
                guess=guess,
                rtol=self.rtol,
                error_estimate=False,
                **inputs,
            )
            guess = sol
            ok = bool(np.all(np.isfinite(sol.positions)))
            if not ok or sol.residual <= self.rtol:
                break
        self._obs = sol.warm.observer if sol.warm is not None else None
        self._last = sol
        return _at_nodes(model, sol), sol.tendon_tension.copy(), sol.residual, ok

    def run(
        self, inputs: Mapping[str, Any], n_steps: int | None = None, progress: bool = False
    ) -> QuasiStaticHistory:
        """Run a whole input sequence. Each value is an array with a leading time axis, or a
        constant (broadcast to every step). Returns the recorded history."""
        seq = {k: np.asarray(v, dtype=float) for k, v in inputs.items()}
        # A time axis is one dimension more than the constant's (a vector, or a matrix).
        lead = {k: v.shape[0] for k, v in seq.items() if v.ndim > (2 if k in _MATRIX_INPUTS else 1)}
        if n_steps is None:
            if not lead:
                raise ValueError("give n_steps or at least one input with a time axis")
            n_steps = max(lead.values())
        bad = {k: n for k, n in lead.items() if n != n_steps}
        if bad:
            k = next(iter(bad))
            raise ValueError(f"input {k!r} has {bad[k]} steps, expected {n_steps}")
        tips = np.empty((n_steps, 3))
        shapes = np.empty((n_steps, self.model.n_nodes, 3)) if self.record_shape else None
        res = np.empty(n_steps)
        conv = np.empty(n_steps, dtype=bool)
        taus = np.empty((n_steps, self.model.n_tendons))
        times = np.empty(n_steps)
        ts = self.t + self.dt * np.arange(n_steps)
        iterator: Any = range(n_steps)
        if progress:
            from rich.progress import track

            iterator = track(iterator, description=f"quasi-static ({self.method})")
        notes: list[str] = []
        for k in iterator:
            kw = {key: (v[k] if key in lead else v) for key, v in seq.items()}
            t0 = time.perf_counter()
            tip, pos, tau, r, ok = self.step(**kw)
            times[k] = time.perf_counter() - t0
            if self.message:
                notes.append(f"step {k}: {self.message}")
            tips[k] = tip
            if shapes is not None and pos is not None:
                shapes[k] = pos
            res[k] = r
            conv[k] = ok
            taus[k] = tau
        message = ""
        if notes:
            message = f"{len(notes)} of {n_steps} steps reported (first: {notes[0]})"
        return QuasiStaticHistory(
            ts, tips, shapes, res, conv, taus, times, self.method, self.model.spec.name, message
        )
