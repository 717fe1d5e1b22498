"""A stateful observer loop for one model (issue 19 item 4): `observer_update` without the
per-call Python.

`observer_update` validates the inputs in general (`check_inputs`), assembles the loads
(`_inputs._problem`), hands ~30 arrays to the kernel and builds a new `ObserverState` on every
call: ~0.1 ms of Python around a 0.1-0.15 ms kernel on the SoftManiSim robot. `ObserverLoop`
does all of that once: the model's kernel arrays, the load layout and the work buffers are
built at construction; a step writes the new inputs into preallocated arrays (checked for
shape and finiteness only) and runs `_loop_step`: one small kernel checks the inputs and
assembles the loads, `_observer._observer_steps` (prediction, bounded updates, zero-lag
shape) runs in place, and another small kernel carries the state.
The arithmetic is `observer_update`'s: the same kernels on the same numbers, so the answers
are equal to the last bit (tests/test_observer_fast.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from softrod.rods._inputs import (
    StaticLoads,
    _actuation_counts,
    _magnetic,
    _problem,
    _tension_scale,
    check_inputs,
)
from softrod.rods._model import RodModel
from softrod.rods._observer import (
    ObserverGains,
    ObserverState,
    _observer_steps,
    _observer_update,
    _plain_residual,
    _x_scale,
)
from softrod.rods._observer_kernels import _coarse_fill, _coarse_keep
from softrod.rods._static_kernels import _distal_loads

__all__ = ["ObserverLoop"]


@njit(cache=True)
def _loop_prepare(const, work, u, st, info_out):
    """Before `_observer_steps`: check the inputs u, assemble the loads and the unknowns.

    const, work, u, st: see `_loop_step`. Returns False (info_out[0] = -1: the caller names
    the bad field) for a non-finite input, a negative tension or a length <= 0."""
    length_mode, geo, node_point_mass = const[0], const[2], const[3]
    rest_length, scale = const[8], const[11]
    node_force, N_end, q_step, L_cmd, x = work[0], work[1], work[2], work[3], work[4]
    tau, lengths, F_tip, M_tip, f_dist, grav = u
    xs, flags, defect = st[0], st[2], st[5]
    # The inputs' checks: finite, tensions >= 0 or lengths > 0.
    total = 0.0
    for v in u:
        for i in range(v.shape[0]):
            total += v[i]
    bad = not np.isfinite(total)
    for j in range(tau.shape[0]):
        bad = bad or (lengths[j] <= 0.0 if length_mode else tau[j] < 0.0)
    if bad:
        info_out[0] = -1.0
        return False
    # The loads as `_inputs._loads_at` at level 1 (same operations, so the same bits).
    for k in range(node_force.shape[0]):
        for a in range(3):
            node_force[k, a] = node_point_mass[k] * grav[a]
    _distal_loads(geo[0], geo[1], node_force, geo[2], F_tip, f_dist, grav, N_end, q_step)
    if length_mode:
        for j in range(L_cmd.shape[0]):
            L_cmd[j] = rest_length[j] + 1.0 * (lengths[j] - rest_length[j])
    for i in range(x.shape[0]):
        x[i] = xs[i] * scale[i]
    if flags[1] == 0:
        defect[:] = 0.0
    return True


@njit(cache=True)
def _loop_finish(work, st, Y, info_out):
    """After `_observer_steps`: the carried state as `observer_update` carries it."""
    defect_out = work[5]
    flags, positions, defect = st[2], st[3], st[5]
    status = info_out[0]
    if status == 1.0:
        # The first integration failed: the state stays as it was (nothing was written).
        return
    if status != 0.0:
        # A later integration failed: the updated estimate, without shape or defect.
        flags[0] = 0
        flags[1] = 0
        return
    for k in range(positions.shape[0]):
        for a in range(3):
            positions[k, a] = Y[k, a]
    defect[:] = defect_out
    flags[0] = 1
    flags[1] = 1


@njit(cache=True)
def _tip_prepare(const, work, u, st, keep, tip_work, info_out):
    """`_loop_prepare`, then the predictor grid's loads (`tip_only`): its steps' distal forces
    and line loads from the full grid's (kept nodes keep (n_keep,)), and the tip moment the
    predictor grid's residual is taken against, shifted by the full-grid correction.

    tip_work = (N_end (n_keep - 1, 3) [N], q (n_keep - 1, 3) [N/m], M_tip (3,) [N m] out,
    dm (3,) [N m]: full-grid minus predictor-grid end moment at the last refresh)."""
    if not _loop_prepare(const, work, u, st, info_out):
        return False
    N_end, q_step = work[1], work[2]
    Ne_c, q_c, M_tip, dm = tip_work
    for j in range(keep.shape[0] - 1):
        k = keep[j]
        e = keep[j + 1] - 1
        for a in range(3):
            q_c[j, a] = q_step[k, a]
            Ne_c[j, a] = N_end[e, a]
    tip_moment = u[3]
    # The full grid's end moment is the predictor grid's + dm: its residual M(L) - M_tip is
    # the predictor grid's against M_tip - dm.
    for a in range(3):
        M_tip[a] = tip_moment[a] - dm[a]
    return True


def _loop_step(const, work, u, st, Y, X, tau_out, info_out) -> None:
    """One observer call of `ObserverLoop`: the loads from the inputs u, then
    `_observer_steps` on the state st, updated in place (three kernel calls: calling
    `_observer_steps` from a kernel would compile it and every integration kernel a second
    time, ~16 s on a fresh numba cache).

    const = (length_mode, base, geo, node_point_mass (n_nodes,) [kg], node_moment (n_nodes, 3),
    tension_scale (n_steps, n_t), magnetic, k_t (n_t,) [N/m], rest_length (n_t,) [m], m_scale,
    t_scale, scale (n,), gains (dt, Q, V, max_step), max_updates, tol, broyden, zero_lag,
    stride, problem) with problem the `_inputs._problem` tuple on the buffers below.
    work = (node_force (n_nodes, 3), N_end, q_step (n_steps, 3), L_cmd (n_t,), x (n,),
    defect_out (n,)). u = (tensions (n_t,) [N], lengths (n_t,) [m], tip_force, tip_moment,
    distributed_force, gravity (3,)). st = (x_scaled (n,), P (n, n), flags (2,) int64
    (has a previous shape, has a defect), positions (n_nodes, 3) [m], load_moment (3,) [N m],
    defect (n,)). Writes Y, X, tau_out (n_t,) and info_out = (status, residual) as
    `_observer_steps` (status -1: a bad input, nothing run).
    """
    if not _loop_prepare(const, work, u, st, info_out):
        return
    xs, P, flags, positions, load_moment, defect = st
    _observer_steps(
        work[4],
        const[11],
        P,
        bool(flags[0]),
        positions,
        load_moment,
        const[18],
        const[2][0],
        const[12],
        const[13],
        const[14],
        const[15],
        const[16],
        const[17],
        defect,
        Y,
        X,
        xs,
        P,
        tau_out,
        load_moment,
        work[5],
        info_out,
    )
    _loop_finish(work, st, Y, info_out)


class ObserverLoop:
    """`observer_update` as a stateful loop for one model: build once, then `step` per sample.

    Everything that does not change between calls (the model's kernel arrays, the load layout,
    the work buffers) is built here once; each `step` writes the new inputs into preallocated
    arrays, checks them for shape and finiteness, and runs one kernel call. The answers are
    those of `observer_update(model, inp, state, gains, zero_lag, rtol)` called in a loop,
    to the last bit.

    model : a `RodModel` with straight tendon routing, without chambers or moment actuators
        (those need `observer_update`'s input assembly); its base pose and extensions are
        fixed (a moving base: `observer_update` with `with_pose_and_lengths`).
    gains : observer gains (default `ObserverGains()`; `state.gains` when a state is given).
    state : an `ObserverState` to continue from (None: a cold start at the first step, as
        `observer_update` with state None).
    length_control : True for tendon length inputs (`lengths`), False for tensions.
    zero_lag, rtol : as `observer_update`.
    tip_only : False (default): every step integrates the full grid for the shape and the
        residual, as `observer_update` (its answers to the last bit). True (tension inputs,
        `gains.predictor_stride` >= 2, zero_lag): no full-grid integration per step. The
        whole observer (prediction, updates, shape) runs on the predictor grid, `node_s`:
        every stride-th node plus every node where a load or segment changes under any of
        the loop's inputs (so its loads are exact between nodes). Every `defect_every` steps
        one full-grid plain integration at the new estimate gives the full-grid minus
        predictor-grid state at the kept nodes, dY; until the next refresh, its end moment
        shifts the tip moment the residual is taken against (so the estimate tracks the
        full grid's equilibrium) and dY is added to the shape `step` returns. `step` then
        returns the shape at `node_s` (its last row the tip; exactly the full grid's there
        on a refresh step), the residual is the predictor grid's so corrected, and `shape()`
        integrates the full grid on request; `state` carries no shape (a new loop or
        `observer_update` continuing from it starts without the prediction). Not
        bit-identical to `observer_update`: on the fast-input case with predictor_stride 4
        and defect_every 5 its tip is within 5.4e-6 m of converged shooting
        (docs/validation.md "The observer on fast inputs").
    defect_every : with `tip_only`, steps between the full-grid refreshes (>= 1; 1 refreshes
        every step: the full grid's answer at the kept nodes, at about the default's cost).

    Inputs per step: tensions (n_t,) [N] (>= 0) or lengths (n_t,) [m] (> 0), tip_force,
    tip_moment [N, N m], distributed_force [N/m], gravity [m/s^2] (3,), None = zero; point
    loads, pressures, moments and fields are not taken (use `observer_update`).

    Example
    -------
    >>> loop = ObserverLoop(model, ObserverGains(max_updates=3, rtol=1e-4, broyden=True))
    >>> Y, tau, residual, ok = loop.step(tensions=[1.0, 0, 0, 0], tip_force=[0, 0, -0.5])
    """

    def __init__(
        self,
        model: RodModel,
        gains: ObserverGains | None = None,
        state: ObserverState | None = None,
        length_control: bool = False,
        zero_lag: bool = True,
        rtol: float | None = None,
        tip_only: bool = False,
        defect_every: int = 10,
    ) -> None:
        model.require_straight_routing("softrod.rods.ObserverLoop")
        plain, n_moments = _actuation_counts(model)
        if not plain or n_moments or model.n_internal_tendons:
            raise ValueError(
                "ObserverLoop takes robots without chambers or moment actuators; "
                "use observer_update for them"
            )
        if length_control and np.isnan(model.tendon_stiffness).any():
            raise ValueError("length control needs every tendon's stiffness [N/m]")
        self.model = model
        self.gains = gains or (state.gains if state is not None else ObserverGains())
        self.length_control = bool(length_control)
        self.zero_lag = bool(zero_lag)
        self.rtol = rtol
        self.tip_only = bool(tip_only)
        if not (isinstance(defect_every, int) and defect_every >= 1):
            raise ValueError(f"defect_every must be an integer >= 1, got {defect_every!r}")
        self.defect_every = defect_every
        if self.tip_only and (
            self.length_control or not self.zero_lag or self.gains.predictor_stride < 2
        ):
            raise ValueError(
                "tip_only takes tension inputs with zero_lag and gains.predictor_stride >= 2, "
                f"got length_control={self.length_control}, zero_lag={self.zero_lag}, "
                f"predictor_stride={self.gains.predictor_stride}"
            )
        n_t = model.n_tendons
        n = 3 + (n_t if length_control else 0)
        self._n_t = n_t
        self._n = n
        gains_ = self.gains
        tol = gains_.rtol if rtol is None else float(rtol)
        # The inputs as views of one buffer (what `_loop_step` reads as u).
        self._ubuf = np.zeros(2 * n_t + 12)
        ub = self._ubuf
        self._u = (
            ub[:n_t],
            ub[n_t : 2 * n_t],
            ub[2 * n_t : 2 * n_t + 3],
            ub[2 * n_t + 3 : 2 * n_t + 6],
            ub[2 * n_t + 6 : 2 * n_t + 9],
            ub[2 * n_t + 9 :],
        )
        self._u[1][:] = model.tendon_rest_length
        # The kernels' constant arguments, as `_inputs._problem` builds them per call.
        zero = StaticLoads(None, None, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
        n_steps = model.step_seg.shape[0]
        self._const: tuple[Any, ...] = (
            self.length_control,
            model.kernel_base,
            model.kernel_geometry,
            model.node_point_mass,
            np.zeros((model.n_nodes, 3)),
            _tension_scale(model, zero),
            _magnetic(model, zero, 1.0),
            model.tendon_k,
            model.tendon_rest_length,
            model.moment_scale,
            model.tension_scale,
            _x_scale(model, n),
            (gains_.dt, gains_.Q, gains_.V, gains_.max_step),
            gains_.max_updates,
            tol,
            gains_.broyden,
            self.zero_lag,
            gains_.predictor_stride,
        )
        self._work = (
            np.empty((model.n_nodes, 3)),
            np.empty((n_steps, 3)),
            np.empty((n_steps, 3)),
            np.zeros(n_t),
            np.empty(n),
            np.empty(n),
        )
        c, w = self._const, self._work
        # `_observer_steps`'s problem tuple on the buffers that `_loop_prepare` fills.
        problem: tuple[Any, ...] = (c[0], self._u[0], c[1], c[2], (w[1], w[2], c[4], c[5], c[6]))
        problem += ((self._u[3], w[3], c[7], c[9], c[10]),)
        self._const = (*c, problem)
        self._st = (
            np.empty(n),
            np.empty((n, n)),
            np.zeros(2, dtype=np.int64),
            np.zeros((model.n_nodes, 3)),
            np.zeros(3),
            np.zeros(n),
        )
        self._info = np.empty(2)
        self._cold = True
        #: The arc lengths [m] of the rows of the shape `step` returns.
        self.node_s = model.node_s
        if self.tip_only:
            self._build_tip()
        if state is not None:
            self._load_state(state)

    def _build_tip(self) -> None:
        """`tip_only`'s predictor grid and its problem tuple (built once: the kept nodes are
        those `_coarse_keep` keeps under zero and under unit loads of every input the loop
        takes, so the loads between them are exact for any of them)."""
        model, c, w = self.model, self._const, self._work
        stride = self.gains.predictor_stride
        kept: set[int] = set()
        for unit in (0.0, 1.0):
            ones = np.full(3, unit)
            inp = check_inputs(
                model, tip_force=ones, tip_moment=ones, distributed_force=ones, gravity=ones
            )
            pb = _problem(model, inp)
            keep_all = np.empty(model.n_nodes, dtype=np.int64)
            n_keep = _coarse_keep(stride, pb.geo, pb.ld, keep_all)
            kept.update(keep_all[:n_keep].tolist())
        keep = np.array(sorted(kept), dtype=np.int64)
        n_keep = keep.shape[0]
        geo, ld = c[2], c[18][4]
        # The fixed parts (geometry, node moments, tension profile, dipoles) once.
        ns_c, seg_c = np.empty(n_keep), np.empty(n_keep - 1, dtype=np.int64)
        Ne_c, q_c = np.zeros((n_keep - 1, 3)), np.zeros((n_keep - 1, 3))
        nm_c, nd_c = np.empty((n_keep, 3)), np.empty((n_keep, 3))
        ts_c = np.empty((n_keep - 1, model.n_tendons))
        _coarse_fill(keep, geo, ld, ns_c, seg_c, Ne_c, q_c, nm_c, ts_c, nd_c)
        mag = ld[4]
        M_tip = np.zeros(3)
        self._keep = keep
        self._tip_work = (Ne_c, q_c, M_tip, np.zeros(3))
        self.node_s = ns_c
        self._tip_problem = (
            False,
            self._u[0],
            c[1],
            (ns_c, seg_c, geo[2], geo[3], geo[4]),
            (Ne_c, q_c, nm_c, ts_c, (mag[0], nd_c, mag[2], mag[3])),
            (M_tip, w[3], c[7], c[9], c[10]),
        )
        n, n_t = self._n, self._n_t
        # The predictor grid's carried shape, and the unused defect (the shift does its work).
        self._st = (*self._st[:3], np.zeros((n_keep, 3)), self._st[4], np.zeros(n))
        self._tip_defect = np.zeros(n)
        #: Full-grid minus predictor-grid state at the kept nodes at the last refresh.
        self._dY = np.zeros((n_keep, 15 + n_t))
        self._full = (
            np.empty((model.n_nodes, 15 + n_t)),
            np.empty((model.n_nodes, 6)),
            np.empty(15 + n_t),
            np.empty(n),
        )
        self._since_refresh = self.defect_every

    def reset(self, state: ObserverState | None = None) -> None:
        """Continue from `state` (None: a cold start at the next step, as `observer_update`
        with state None). ValueError for a state with another number of unknowns."""
        if state is None:
            self._cold = True
            return
        self._load_state(state)

    def _load_state(self, state: ObserverState) -> None:
        if state.x_scaled.shape != (self._n,):
            raise ValueError(
                f"observer state has {state.x_scaled.shape[0]} unknowns, this loop needs {self._n}"
            )
        xs, P, flags, positions, load_moment, defect = self._st
        xs[:] = state.x_scaled
        P[:, :] = state.P
        self._cold = False
        if self.tip_only:
            # A shape on another grid: no prediction at the next step, and a defect refresh.
            flags[:] = 0
            self._since_refresh = self.defect_every
            return
        has_prev = state.positions is not None and state.load_moment is not None
        flags[0] = 1 if has_prev else 0
        if has_prev:
            positions[:, :] = state.positions
            load_moment[:] = state.load_moment
        flags[1] = 1 if state.defect is not None else 0
        if state.defect is not None:
            defect[:] = state.defect
        self._cold = False

    @property
    def state(self) -> ObserverState | None:
        """The observer state now (a copy; None before the first step of a cold start)."""
        if self._cold:
            return None
        xs, P, flags, positions, load_moment, defect = self._st
        if self.tip_only:
            # The carried shape lies on the predictor grid: the unknowns and covariance only.
            return ObserverState(xs.copy(), P.copy(), self.gains)
        has_prev = bool(flags[0])
        return ObserverState(
            xs.copy(),
            P.copy(),
            self.gains,
            positions.copy() if has_prev else None,
            load_moment.copy() if has_prev else None,
            defect.copy() if flags[1] else None,
        )

    @staticmethod
    def _write(dst: np.ndarray, name: str, value: Any) -> None:
        """Copy one input into its preallocated array (None: zero); ValueError on a shape."""
        if value is None:
            dst[:] = 0.0
            return
        if type(value) is np.ndarray and value.shape == dst.shape:
            dst[:] = value
            return
        arr = np.asarray(value, dtype=float)
        if arr.shape != dst.shape:
            raise ValueError(f"{name} must have shape {dst.shape}, got {arr.shape}")
        dst[:] = arr

    def step(
        self,
        tensions: Any = None,
        lengths: Any = None,
        tip_force: Any = None,
        tip_moment: Any = None,
        distributed_force: Any = None,
        gravity: Any = None,
    ) -> tuple[np.ndarray, np.ndarray, float, bool]:
        """One observer call (as `observer_update`) with this sample's inputs.

        Returns (Y (n_nodes, 15 + n_t) the zero-lag shape and state (positions Y[:, :3] [m];
        with `tip_only` (len(node_s), 15 + n_t) at the predictor grid's nodes `node_s`),
        tensions (n_t,) [N], scaled boundary residual, ok). ValueError naming the field for
        an input of the wrong shape, a non-finite value, a negative tension, a length <= 0,
        or the other control's input given."""
        t, L, F, M, f, g = self._u
        if self.length_control:
            if tensions is not None:
                raise ValueError("this ObserverLoop takes lengths (length_control=True)")
            if lengths is None:
                raise ValueError("lengths must be given (length_control=True)")
            self._write(L, "lengths", lengths)
        else:
            if lengths is not None:
                raise ValueError("this ObserverLoop takes tensions (length_control=False)")
            self._write(t, "tensions", tensions)
        self._write(F, "tip_force", tip_force)
        self._write(M, "tip_moment", tip_moment)
        self._write(f, "distributed_force", distributed_force)
        self._write(g, "gravity", gravity)
        if self._cold:
            return self._cold_step()
        if self.tip_only:
            return self._tip_step()
        Y = np.empty((self.model.n_nodes, 15 + self._n_t))
        X = np.empty((self.model.n_nodes, 6))
        tau = np.empty(self._n_t)
        info = self._info
        _loop_step(self._const, self._work, self._u, self._st, Y, X, tau, info)
        status = info[0]
        if status == 0.0:
            return Y, tau, float(info[1]), True
        if status == -1.0:
            self._reject()
        return Y, t.copy(), math.inf, False

    def _reject(self) -> None:
        """Raise the ValueError naming the first bad input (the kernel found one)."""
        names = ("tensions", "lengths", "tip_force", "tip_moment", "distributed_force", "gravity")
        for name, arr in zip(names, self._u, strict=True):
            bad = np.flatnonzero(~np.isfinite(arr))
            if bad.size:
                raise ValueError(f"{name}[{bad[0]}] must be finite, got {arr[bad[0]]}")
        t, L = self._u[0], self._u[1]
        if self.length_control:
            i = int(np.argmin(L))
            raise ValueError(f"lengths[{i}] must be > 0 [m], got {L[i]}")
        i = int(np.argmin(t))
        raise ValueError(f"tensions[{i}] must be >= 0 (tendons only pull), got {t[i]}")

    def _cold_step(self) -> tuple[np.ndarray, np.ndarray, float, bool]:
        """The first step of a cold start: `observer_update`'s own (it seeds the unknowns
        from the straight robot), then the loop carries its state."""
        t, L, F, M, f, g = self._u
        inp = check_inputs(
            self.model,
            tensions=None if self.length_control else t.copy(),
            lengths=L.copy() if self.length_control else None,
            tip_force=F.copy(),
            tip_moment=M.copy(),
            distributed_force=f.copy(),
            gravity=g.copy(),
        )
        new_state, Y, _, tau, res, ok = _observer_update(
            self.model, inp, None, self.gains, self.zero_lag, self.rtol
        )
        self._load_state(new_state)
        if self.tip_only:
            # The full grid's shape at the predictor grid's nodes (`step`'s rows).
            return Y[self._keep], tau, res, ok
        return Y, tau, res, ok

    def _tip_step(self) -> tuple[np.ndarray, np.ndarray, float, bool]:
        """One `tip_only` step: the observer on the predictor grid (`_observer_steps` with
        its problem), then, every `defect_every` steps, one full-grid plain integration at
        the new estimate that refreshes the tip-moment defect."""
        n_keep = self._keep.shape[0]
        Y = np.empty((n_keep, 15 + self._n_t))
        X = np.empty((n_keep, 6))
        tau = np.empty(self._n_t)
        info = self._info
        c, w, st = self._const, self._work, self._st
        if not _tip_prepare(c, w, self._u, st, self._keep, self._tip_work, info):
            self._reject()
        xs, P, flags, positions, load_moment, _ = st
        defect = self._tip_defect
        _observer_steps(
            w[4],
            c[11],
            P,
            bool(flags[0]),
            positions,
            load_moment,
            self._tip_problem,
            self.node_s,
            c[12],
            c[13],
            c[14],
            c[15],
            True,
            1,
            defect,
            Y,
            X,
            xs,
            P,
            tau,
            load_moment,
            w[5],
            info,
        )
        _loop_finish(w, st, Y, info)
        if info[0] != 0.0:
            # A failed integration: the next successful step refreshes the defect.
            self._since_refresh = self.defect_every
            return Y, self._u[0].copy(), math.inf, False
        self._since_refresh += 1
        if self._since_refresh >= self.defect_every:
            Yf, Xf, z, r = self._full
            pb = c[18]
            x = xs * c[11]
            if _plain_residual(x, pb[0], pb[1], pb[2], pb[3], pb[4], pb[5], Yf, Xf, z, r):
                # Full-grid minus predictor-grid state at the kept nodes, at the same unknowns
                # and loads: its end moment shifts the residual, all of it the shape.
                Y_full = Yf[self._keep]
                np.subtract(Y_full, Y, out=self._dY)
                self._tip_work[3][:] = self._dY[-1, 12:15]
                self._since_refresh = 0
                return Y_full, tau, float(info[1]), True
        Y += self._dY
        return Y, tau, float(info[1]), True

    def shape(self) -> np.ndarray:
        """The full grid's shape and state Y (n_nodes, 15 + n_t) (positions Y[:, :3] [m]) at
        the current estimate under the last step's loads: one plain integration, on request
        (with `tip_only`; without it `step` returns it). ValueError before the first step or
        when the integration fails."""
        if self._cold:
            raise ValueError("shape() needs a step first (the loop has no estimate yet)")
        n_t = self._n_t
        Y = np.empty((self.model.n_nodes, 15 + n_t))
        X = np.empty((self.model.n_nodes, 6))
        z, r = np.empty(15 + n_t), np.empty(self._n)
        c, w = self._const, self._work
        # The last step's loads (its inputs are still in the buffers) and unknowns x.
        if not _loop_prepare(c, w, self._u, self._st, self._info):
            raise ValueError("shape(): the last step's inputs were rejected; step again first")
        pb = c[18]
        if not _plain_residual(w[4], pb[0], pb[1], pb[2], pb[3], pb[4], pb[5], Y, X, z, r):
            raise ValueError("shape(): the integration at the current estimate failed")
        return Y
