"""The SoftManiSim observer (ALGORITHMS.md A.2) as a static method: one update per call.

The observer treats the unknown base values of the shooting problem as a slowly varying state
estimated by a discrete Kalman filter driven by the boundary residual (A.2.2 (b), with the
[FIX] items: forward Riccati, sensitivities from the exact variational equations, the load
integral over [s, L]). softrod's residual is the model's own boundary condition, so the
observer works with the exact tendon model: for tension inputs the tip wrench balance
(unknowns M(0)), for length inputs also the elastic tendon law (unknowns M(0) and tensions).

Unknowns are scaled (M0 / moment_scale, tau / tension_scale) so the default gains need no
tuning per robot: with P0 = 1e3, Q = 1e2, V = 1e10 (dt = 0.01 s) the update is a near
Gauss-Newton step (A.2.2, "our prototype").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from softrod.rods._inputs import (
    StaticLoads,
    _base_moment_on_shape,
    _loads_at,
    _problem,
    _with_chambers,
    with_moment_inputs,
)
from softrod.rods._model import RodModel
from softrod.rods._observer_kernels import _coarse_fill, _coarse_keep
from softrod.rods._pcc import _pcc_tensions
from softrod.rods._result import StaticResult, _assemble
from softrod.rods._shooting import (
    _DEFAULT_TIP_TOL,
    _MAX_TIP_MOVE,
    _coarse_problem,
    _corrected_tip,
    _finer_model,
    _richardson,
)
from softrod.rods._static_kernels import _distal_moments_on_shape, _evaluate, _residual

__all__ = ["ObserverGains", "ObserverState", "observer_update"]

#: `StaticResult.status` of an observer update whose tip moved more than `solve_static`'s
#: continuation step rule allows (`_shooting._MAX_TIP_MOVE` of the length) from the guess's
#: tip: a branch jump (or a snap-through), as status 5 of a continuation.
STATUS_JUMP = 5


@dataclass(frozen=True)
class ObserverGains:
    """Observer gains in scaled units (identity multiples) and its time step.

    P0 : initial estimate covariance. Q : process noise (how fast the unknowns may drift,
    per second). V : measurement weight (inverse residual noise). dt : update interval [s].
    Large Q and V make each update a Gauss-Newton step; small Q smooths but lags (A.2.2).
    """

    P0: float = 1e3
    Q: float = 1e2
    V: float = 1e10
    dt: float = 0.01
    #: Largest update of the scaled unknowns per step (a trust region, ~ rad of bending):
    #: keeps the first updates after a large jump in load from leaping to another branch.
    max_step: float = 0.5
    #: Most updates per call: after the first, another runs while the scaled boundary residual
    #: exceeds `rtol` (1 = the paper's single update; a few keep up with fast inputs).
    max_updates: int = 1
    #: How the updates after the first get their Jacobian. False: each residual check is an
    #: integration with sensitivities at the updated estimate (a fresh Jacobian). True: the
    #: check is one plain integration (also the zero-lag shape when it passes) and the first
    #: update's Jacobian is corrected by Broyden's rank-one formula: about one plain
    #: integration per extra update, for `max_updates` > 1 with an `rtol` that most steps
    #: meet after one update (docs/validation.md "The observer on fast inputs").
    broyden: bool = False
    #: Scaled boundary residual below which no extra update runs (the solver's DEFAULT_RTOL).
    rtol: float = 1e-10
    #: Largest tip motion per step, as a fraction of the length, that is reported converged:
    #: `solve_static`'s continuation step rule (`_shooting._MAX_TIP_MOVE`); a larger motion is
    #: a branch jump or snap-through (status 5 / not converged, with a message).
    max_tip_move: float = _MAX_TIP_MOVE
    #: The updates' grid: 1 = the model's grid (the paper); k > 1 = every k-th node plus
    #: every node where a load, segment or tension profile changes (the loads between them
    #: are exact), with the full-grid residual carried as a defect correction; the shape and
    #: the reported residual stay a full-grid integration at the final estimate
    #: (docs/validation.md "The observer on fast inputs").
    predictor_stride: int = 1

    def __post_init__(self) -> None:
        for name in ("P0", "Q", "V", "dt", "max_step", "rtol", "max_tip_move"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"observer gain {name} must be > 0, got {value!r}")
        if not isinstance(self.broyden, bool):
            raise ValueError(f"observer broyden must be True or False, got {self.broyden!r}")
        if not (isinstance(self.max_updates, int) and self.max_updates >= 1):
            raise ValueError(
                f"observer max_updates must be an integer >= 1, got {self.max_updates!r}"
            )
        if not (isinstance(self.predictor_stride, int) and self.predictor_stride >= 1):
            raise ValueError(
                f"observer predictor_stride must be an integer >= 1, got {self.predictor_stride!r}"
            )


@dataclass(frozen=True)
class ObserverState:
    """What an observer carries between updates: unknowns x (scaled), covariance P, and the
    last shape (n_nodes, 3) with the base moment of the loads on it [N m] (for the
    known-input prediction); with `ObserverGains.predictor_stride` > 1 also the full-grid
    minus predictor-grid scaled residual at the last estimate, `defect` (n,) (None: zero)."""

    x_scaled: np.ndarray
    P: np.ndarray
    gains: ObserverGains = field(default_factory=ObserverGains)
    positions: np.ndarray | None = None
    load_moment: np.ndarray | None = None
    defect: np.ndarray | None = None

    @classmethod
    def from_result(
        cls, model: RodModel, result: StaticResult, gains: ObserverGains | None = None
    ) -> ObserverState:
        """A fresh observer state (covariance P0) at the unknowns of a converged result of
        `model` (its base moment, and tensions under length control)."""
        gains = gains or ObserverGains()
        n_unk = 3 + (model.n_tendons if result.inputs.lengths is not None else 0)
        x = np.concatenate([result.base_moment, result.tendon_tension])[:n_unk]
        return cls(x / _x_scale(model, n_unk), gains.P0 * np.eye(n_unk), gains)


@njit(cache=True)
def _kalman_update(xs, P, J, r, dt, Q, V, max_step, xs_out, P_out):
    """Discrete Kalman / RLS form (A.2.2 (b)) on scaled unknowns; unconditionally stable.
    The update is clipped to `max_step` in the max-norm (trust region)."""
    n = xs.shape[0]
    Pm = P + dt * Q * np.eye(n)
    S = J @ Pm @ J.T + np.eye(n) / (dt * V)
    G = np.linalg.solve(S.T, (Pm @ J.T).T).T  # G = Pm J^T S^-1
    dx = -(G @ r)
    big = np.max(np.abs(dx))
    if big > max_step:
        dx *= max_step / big
    xs_out[:] = xs + dx
    P_out[:, :] = (np.eye(n) - G @ J) @ Pm


@njit(cache=True)
def _plain_residual(x, length_mode, tau_fixed, base, geo, ld, bc, Y_out, X_out, z, r_out):
    """The scaled residual r_out (n,) of `_static_kernels._residual` at unknowns x (n,) = (M0
    [N m], [tau [N]]) from one integration without sensitivities (its shape in Y_out, X_out;
    z (15 + n_t,) its end state). False when the integration fails."""
    M_tip, L_cmd, k_t, m_scale, t_scale = bc
    tau = x[3:].copy() if length_mode else tau_fixed.copy()
    store = np.bool_(True)
    if not _evaluate(x[:3].copy(), tau, np.int64(0), base, geo, ld, store, Y_out, X_out, z):
        return False
    for a in range(3):
        r_out[a] = (z[12 + a] - M_tip[a]) / m_scale
    if length_mode:
        for j in range(tau_fixed.shape[0]):
            r_out[3 + j] = (x[3 + j] - k_t[j] * max(z[15 + j] - L_cmd[j], 0.0)) / t_scale
    return True


@njit(cache=True)
def _observer_steps(
    x,
    scale,
    P,
    has_prev,
    prev_positions,
    prev_load_moment,
    problem,
    node_s,
    gains,
    max_updates,
    tol,
    broyden,
    zero_lag,
    stride,
    defect,
    Y,
    X,
    xs_out,
    P_out,
    tau_out,
    load_moment_out,
    defect_out,
    info_out,
):
    """One observer call in one kernel (`observer_update` is its Python front): the
    known-input prediction, one integration with sensitivities and a Kalman step, then, while
    the residual at the update exceeds `tol`, up to `max_updates` - 1 more Kalman steps; the
    zero-lag re-integration (none when the last residual check passed: its shape is the
    zero-lag one) and the loads' base moment on the new shape. The residual checks integrate
    with sensitivities (a fresh Jacobian for the next update), or with `broyden` plainly,
    the Jacobian then corrected by Broyden's rank-one formula.

    With `stride` > 1 (and `zero_lag`) the updates run on the coarse predictor grid
    (`_observer_kernels._coarse_keep`), their residuals corrected by `defect` (n,) (full-grid
    minus coarse residual at the last estimate, zero on a cold start); the shape and the
    reported residual are then always a full-grid integration at the final estimate, and
    defect_out the new defect (one more coarse plain integration there when no coarse check
    ran at it). With stride 1, defect_out = defect.

    x : (n,) unknowns [N m, N] of the state; scale : (n,) their scales; P : (n, n) covariance.
    has_prev, prev_positions (n_nodes, 3) [m], prev_load_moment (3,) [N m]: the last shape
    and the loads' base moment on it (the prediction). problem = (length_mode, tau_fixed,
    base, geo, ld, bc) as `_inputs._problem`; gains = (dt, Q, V, max_step). Writes Y, X, the
    new scaled unknowns xs_out and covariance P_out, tau_out (n_t,) [N], load_moment_out (3,)
    and info_out = (status, residual max-norm): status 0 ok, 1 the first integration failed
    (state unchanged), 2 a later one failed (xs_out, P_out updated), 3 the zero-lag one failed.
    """
    length_mode, tau_fixed, base, geo, ld, bc = problem
    dt, Q, V, max_step = gains
    n = x.shape[0]
    n_nodes = Y.shape[0]
    ny = Y.shape[1]
    N_end, q_step, node_moment = ld[0], ld[1], ld[2]
    M_tip = bc[0]
    xp = x.copy()
    moments = np.empty((n_nodes, 3))
    defect_out[:] = defect
    # Known-input prediction: the change of the loads' base moment on the last shape.
    if has_prev:
        _distal_moments_on_shape(prev_positions, node_s, N_end, q_step, node_moment, M_tip, moments)
        for a in range(3):
            xp[a] += moments[0, a] - prev_load_moment[a]
    # The predictor grid: the full one, or its kept nodes (loads exact between them).
    keep = np.empty(n_nodes, dtype=np.int64)
    n_keep = n_nodes
    if stride > 1 and zero_lag:
        n_keep = _coarse_keep(stride, geo, ld, keep)
    coarse = n_keep < n_nodes
    geo_p = geo
    ld_p = ld
    Yp = Y
    Xp = X
    if coarse:
        mag = ld[4]
        ns_c = np.empty(n_keep)
        seg_c = np.empty(n_keep - 1, dtype=np.int64)
        Ne_c = np.empty((n_keep - 1, 3))
        q_c = np.empty((n_keep - 1, 3))
        nm_c = np.empty((n_keep, 3))
        ts_c = np.empty((n_keep - 1, ld[3].shape[1]))
        nd_c = np.empty((n_keep, 3))
        _coarse_fill(keep[:n_keep], geo, ld, ns_c, seg_c, Ne_c, q_c, nm_c, ts_c, nd_c)
        geo_p = (ns_c, seg_c, geo[2], geo[3], geo[4])
        ld_p = (Ne_c, q_c, nm_c, ts_c, (mag[0], nd_c, mag[2], mag[3]))
        Yp = np.empty((n_keep, ny))
        Xp = np.empty((n_keep, 6))
    z = np.empty(ny * (1 + n))
    r = np.empty(n)
    J = np.empty((n, n))
    Js = np.empty((n, n))
    info_out[0] = 0.0
    info_out[1] = np.inf
    # np.bool_, not the literal True: numba compiles the kernels once for both values.
    store = np.bool_(True)
    if not _residual(xp, length_mode, tau_fixed, base, geo_p, ld_p, bc, store, Yp, Xp, z, r, J):
        info_out[0] = 1.0
        return
    if coarse:
        for i in range(n):
            r[i] += defect[i]
    xs = xp / scale
    Pc = P.copy()
    xs_new = np.empty(n)
    P_new = np.empty((n, n))
    x_new = xp.copy()
    r_new = np.empty(n)
    dxs = np.empty(n)
    z0 = np.empty(ny)
    res = np.max(np.abs(r))
    # The Jacobian in the scaled unknowns (refreshed or Broyden-corrected after each check).
    for i in range(n):
        for j in range(n):
            Js[i, j] = J[i, j] * scale[j]
    fresh = False
    for k in range(max_updates):
        _kalman_update(xs, Pc, Js, r, dt, Q, V, max_step, xs_new, P_new)
        for i in range(n):
            dxs[i] = xs_new[i] - xs[i]
        xs[:] = xs_new
        Pc[:, :] = P_new
        if k + 1 == max_updates:
            break
        # The residual at the update: with `broyden` from one plain integration, else from
        # one with sensitivities (the next update's Jacobian); either is the zero-lag shape
        # when no further update is needed.
        x_new = xs * scale
        if broyden:
            ok = _plain_residual(
                x_new, length_mode, tau_fixed, base, geo_p, ld_p, bc, Yp, Xp, z0, r_new
            )
        else:
            ok = _residual(
                x_new, length_mode, tau_fixed, base, geo_p, ld_p, bc, store, Yp, Xp, z, r_new, J
            )
        if not ok:
            xs_out[:] = xs
            P_out[:, :] = Pc
            info_out[0] = 2.0
            return
        if coarse:
            for i in range(n):
                r_new[i] += defect[i]
        res = np.max(np.abs(r_new))
        fresh = res <= tol
        if fresh:
            break
        if broyden:
            # Broyden's rank-one correction: J dx reproduces the observed change of residual.
            dd = 0.0
            for i in range(n):
                dd += dxs[i] * dxs[i]
            if dd > 0.0:
                for i in range(n):
                    miss = r_new[i] - r[i]
                    for j in range(n):
                        miss -= Js[i, j] * dxs[j]
                    for j in range(n):
                        Js[i, j] += miss * dxs[j] / dd
        else:
            for i in range(n):
                for j in range(n):
                    Js[i, j] = J[i, j] * scale[j]
        r[:] = r_new
    xs_out[:] = xs
    P_out[:, :] = Pc
    tau = x_new[3:].copy() if length_mode else tau_fixed.copy()
    if coarse:
        # The coarse residual at the final estimate (defect-corrected), for the new defect.
        x_new = xs * scale
        if not fresh and not _plain_residual(
            x_new, length_mode, tau_fixed, base, geo_p, ld_p, bc, Yp, Xp, z0, r_new
        ):
            info_out[0] = 3.0
            return
        if not fresh:
            for i in range(n):
                r_new[i] += defect[i]
        r[:] = r_new
        fresh = False
    if zero_lag and not fresh:
        # Re-integrate at the update (no sensitivities) and report its residual.
        x_new = xs * scale
        tau = x_new[3:].copy() if length_mode else tau_fixed.copy()
        if not _plain_residual(x_new, length_mode, tau_fixed, base, geo, ld, bc, Y, X, z0, r_new):
            info_out[0] = 3.0
            return
        res = np.max(np.abs(r_new))
        if coarse:
            # Full-grid minus coarse residual at the final estimate: the next call's defect.
            for i in range(n):
                defect_out[i] = defect[i] + r_new[i] - r[i]
    tau_out[:] = tau
    positions = Y[:, 0:3].copy()
    _distal_moments_on_shape(positions, node_s, N_end, q_step, node_moment, M_tip, moments)
    load_moment_out[:] = moments[0]
    info_out[1] = res


def _x_scale(model: RodModel, n_unk: int) -> np.ndarray:
    return np.concatenate([np.full(3, model.moment_scale), np.full(n_unk - 3, model.tension_scale)])


def _observer_inputs(model: RodModel, inp: StaticLoads) -> tuple[RodModel, StaticLoads]:
    """The model and loads the observer's kernels run on, assembled as `solve_static` does
    (docs/actuators.md): moment-actuator inputs folded into the rest curvature
    (`with_moment_inputs`), chambers as internal tendons at -p A_eff(p) (`_with_chambers`).
    A uniform field needs nothing: the kernels carry the dipole torques. Idempotent (a kernel
    model from `solve_static` passes unchanged). ValueError for what the observer cannot take:
    pressures with length control, and a field gradient whose forces are not held at a shape
    (`StaticLoads.magnet_forces`; `solve_static(method="observer")` holds them)."""
    gradient = model.is_magnetic and inp.magnet_forces is None and inp.field_gradient.any()
    if inp.moments is None and inp.pressures is None and not gradient:
        return model, inp
    if gradient:
        raise ValueError(
            "observer_update cannot take a field_gradient: its forces (grad B)^T R m follow "
            "the shape; use solve_static(..., method='observer'), which holds them at the "
            "last shape, or give them held (StaticLoads.magnet_forces)"
        )
    if inp.lengths is not None and inp.pressures is not None and inp.pressures.any():
        raise ValueError(
            "observer_update cannot take pressures with length control (lengths): the "
            "length law around the chambers needs method 'shooting'; give tensions"
        )
    return _with_chambers(with_moment_inputs(model, inp), inp)


def observer_update(
    model: RodModel,
    inp: StaticLoads,
    state: ObserverState | None,
    gains: ObserverGains | None = None,
    zero_lag: bool = True,
    rtol: float | None = None,
) -> tuple[ObserverState, np.ndarray, np.ndarray, np.ndarray, float, bool]:
    """One observer update (or up to `gains.max_updates`) of `model` under `inp`
    (`check_inputs`), actuators included: pressures (chambers), moment-actuator inputs and a
    uniform field act as in `solve_static`. Returns (new state, Y (n_nodes, 15 + n_t),
    X (n_nodes, 6), tensions (n_t,), scaled residual, ok) with n_t the robot's tendons (the
    chambers' internal tendons left out); see `_observer_update`. ValueError for pressures
    with length control, a field gradient (`_observer_inputs`) and general tendon routing.
    """
    n_t = model.n_tendons
    kmodel, kinp = _observer_inputs(model, inp)
    new_state, Y, X, tau, res, ok = _observer_update(kmodel, kinp, state, gains, zero_lag, rtol)
    if kmodel.n_tendons == n_t:
        return new_state, Y, X, tau, res, ok
    return new_state, Y[:, : 15 + n_t], X, tau[:n_t], res, ok


def _observer_update(
    model: RodModel,
    inp: StaticLoads,
    state: ObserverState | None,
    gains: ObserverGains | None = None,
    zero_lag: bool = True,
    rtol: float | None = None,
) -> tuple[ObserverState, np.ndarray, np.ndarray, np.ndarray, float, bool]:
    """One observer update (or up to `gains.max_updates`): one integration with sensitivities
    and one Kalman step, then more while the residual exceeds `rtol`.

    Returns (new state, Y (n_nodes, ny), X (n_nodes, 6), tensions (n_t,), scaled residual
    max-norm of the shape in Y, ok). With `zero_lag` the shape is re-integrated at the
    updated estimate (no sensitivities); otherwise it is the shape the update started from.
    Extra updates run while the residual at the updated estimate exceeds `rtol` (default
    `gains.rtol`); each costs one integration with sensitivities at the updated estimate
    (which is also its residual check), or with `gains.broyden` one plain integration and a
    Broyden correction of the first update's Jacobian. A moving base or extended segments
    come in through `model` (see `softrod.sim.with_pose_and_lengths`). Raises ValueError for
    general tendon routing (not supported here yet).
    """
    model.require_straight_routing("softrod.rods.observer_update")
    n_t = model.n_tendons
    pb = _problem(model, inp)
    n_unk = pb.n_unknowns
    gains = gains or (state.gains if state is not None else ObserverGains())
    tol = gains.rtol if rtol is None else float(rtol)
    scale = _x_scale(model, n_unk)
    if state is None:
        # Paper: start from zero curvature; here from the straight robot's load moment.
        x0 = np.zeros(n_unk)
        x0[:3] = _base_moment_on_shape(model, pb.loads, None)
        if inp.lengths is not None:
            x0[3:] = _pcc_tensions(model, inp.lengths)
        state = ObserverState(x0 / scale, gains.P0 * np.eye(n_unk), gains)
    elif state.x_scaled.shape != (n_unk,):
        raise ValueError(
            f"observer state has {state.x_scaled.shape[0]} unknowns, this problem needs {n_unk}"
        )
    Y = np.empty((model.n_nodes, 15 + n_t))
    X = np.empty((model.n_nodes, 6))
    xs = np.empty(n_unk)
    P = np.empty((n_unk, n_unk))
    tau = np.empty(n_t)
    load_moment = np.empty(3)
    defect = np.empty(n_unk)
    info = np.empty(2)
    has_prev = state.positions is not None and state.load_moment is not None
    # One kernel call (`_observer_steps`): no Python per update.
    _observer_steps(
        state.x_scaled * scale,
        scale,
        state.P,
        has_prev,
        np.ascontiguousarray(state.positions) if has_prev else np.zeros((model.n_nodes, 3)),
        state.load_moment if has_prev else load_moment,
        (pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc),
        model.node_s,
        (gains.dt, gains.Q, gains.V, gains.max_step),
        gains.max_updates,
        tol,
        gains.broyden,
        zero_lag,
        gains.predictor_stride,
        state.defect if state.defect is not None else np.zeros(n_unk),
        Y,
        X,
        xs,
        P,
        tau,
        load_moment,
        defect,
        info,
    )
    status = int(info[0])
    if status == 1:
        return state, Y, X, pb.tau_fixed, float("inf"), False
    if status == 2:
        return ObserverState(xs, P, gains), Y, X, pb.tau_fixed, float("inf"), False
    if status == 3:
        return ObserverState(xs, P, gains), Y, X, tau, float("inf"), False
    new_state = ObserverState(xs, P, gains, Y[:, :3].copy(), load_moment, defect)
    return new_state, Y, X, tau, float(info[1]), True


def jump_message(model: RodModel, move: float, fraction: float = _MAX_TIP_MOVE) -> str:
    """What an observer step whose tip moved `move` [m] (above the step rule) reports."""
    bound = fraction * model.total_length
    return (
        f"observer update jumps: the tip moved {1e3 * move:.1f} mm in one update, more than "
        f"the continuation step rule allows ({fraction:g} L = {1e3 * bound:.1f} mm): a "
        "branch change or snap-through, not the equilibrium reached gradually (use smaller "
        "input steps or method='shooting')"
    )


def _observer_tip_error(
    model: RodModel, inp: StaticLoads, x: np.ndarray, tip: np.ndarray, converged: bool
) -> float | None:
    """Estimated tip error [m] of an observer result: its shape is `model`'s integration under
    `inp` (the kernel model and loads, `_observer_inputs`) from the unknowns x (n,) (the
    `_residual` layout: M0 [N m], [tensions [N]]), with tip `tip` (3,) [m].

    The sum of two parts (a bound by the triangle inequality):
    - convergence: |tip_1 - tip|, tip_1 the tip after one Newton step from x on the model's
      grid (`_shooting._corrected_tip`): how far the update is from the grid's equilibrium.
      Zero when `converged` (boundary residual within rtol, where shooting counts none either:
      ~rtol of the length);
    - discretisation: the grid equilibrium's distance to the exact rod's, by shooting's
      Richardson (`_shooting._coarse_tip_error`): the tip after one Newton step on the grid
      of twice the step, |tip_2h - tip_1| / (ratio - 1); where that grid is hardly coarser
      (every step ends at a disk), 16/15 |tip_h/2 - tip_1| on a grid of half the step.
    None where an integration fails or a Jacobian is singular. Cost: one integration with
    sensitivities on the coarse grid (on the half-step grid in the fallback), one more on the
    model's grid when not converged."""
    pb = _problem(model, inp)
    x = np.ascontiguousarray(x, dtype=float)
    mode, tau_fixed, base, bc = pb.length_mode, pb.tau_fixed, pb.base, pb.bc
    tip_1 = np.empty(3)
    converge = 0.0
    if converged:
        tip_1[:] = tip
    else:
        if not _corrected_tip(x, mode, tau_fixed, base, pb.geo, pb.ld, bc, tip_1):
            return None
        converge = float(np.linalg.norm(tip_1 - tip))
    other = np.empty(3)
    found = _coarse_problem(model, inp, pb)
    if found is not None:
        geo_c, ld_c, ratio = found
        if not _corrected_tip(x, mode, tau_fixed, base, geo_c, ld_c, bc, other):
            return None
        return converge + _richardson(other, tip_1, ratio)
    # Every step ends at a disk: step doubling (RK4, O(h^4): the error is 16/15 the change).
    extra = tuple(p[0] for p in inp.point_loads)
    pf = _problem(_finer_model(model, 2 * model.step_seg.shape[0], extra), inp)
    if not _corrected_tip(x, mode, tau_fixed, pf.base, pf.geo, pf.ld, pf.bc, other):
        return None
    return converge + 16.0 / 15.0 * float(np.linalg.norm(other - tip_1))


def _solve_observer(
    model: RodModel,
    inp: StaticLoads,
    guess: StaticResult | None,
    rtol: float,
    max_iter: int,
    error_estimate: bool = True,
    tol: float | None = None,
) -> StaticResult:
    """method="observer": one update from the observer state carried in `guess`, with a tip
    error estimate (`error_estimate`, on by default; a `tol` [m] turns it on) in `tip_error`
    (`_observer_tip_error`: the update's convergence part plus the grid's discretisation
    part). The grid is not refined (the observer's state lives on it): where the estimate
    exceeds `tol` (default shooting's `_DEFAULT_TIP_TOL` of the length) the message says so."""
    if tol is not None and not (isinstance(tol, int | float) and tol > 0 and np.isfinite(tol)):
        raise ValueError(f"tol must be a positive tip error [m], got {tol!r}")
    if not isinstance(error_estimate, bool):
        raise ValueError(f"error_estimate must be True or False, got {error_estimate!r}")
    model.require_straight_routing("method='observer'")
    state = None
    if guess is not None:
        state = guess.warm.observer if guess.warm is not None else None
        if state is None:
            # A result of another method: seed the observer with its unknowns.
            n_t = model.n_tendons
            n_unk = 3 + (n_t if inp.lengths is not None else 0)
            x = np.concatenate([guess.base_moment, guess.tendon_tension])[:n_unk]
            gains = ObserverGains()
            state = ObserverState(x / _x_scale(model, n_unk), gains.P0 * np.eye(n_unk), gains)
    new_state, Y, X, tau, res_norm, ok = observer_update(model, inp, state, rtol=rtol)
    loads = _loads_at(model, inp, 1.0)
    move = (
        float(np.linalg.norm(Y[-1, :3] - guess.tip_position)) if guess is not None and ok else 0.0
    )
    if not ok:
        status, message = 3, "observer update failed: the integration produced non-finite values"
    elif move > new_state.gains.max_tip_move * model.total_length:
        status = STATUS_JUMP
        message = jump_message(model, move, new_state.gains.max_tip_move)
    elif res_norm <= rtol:
        status, message = 0, "observer update; boundary residual within rtol"
    else:
        status = 4
        message = (
            f"observer update; boundary residual {res_norm:.2e} above rtol {rtol:.0e} "
            "(call again with guess=this result to continue converging)"
        )
    tip_error = None
    if ok and (error_estimate or tol is not None):
        kmodel, kinp = _observer_inputs(model, inp)
        n_unk = new_state.x_scaled.shape[0]
        x = new_state.x_scaled * _x_scale(kmodel, n_unk)
        tip_error = _observer_tip_error(kmodel, kinp, x, Y[-1, :3], res_norm <= rtol)
        bound = float(tol) if tol is not None else _DEFAULT_TIP_TOL * model.total_length
        if tip_error is None:
            message += "; no tip error estimate (a corrected integration failed)"
        elif tip_error > bound:
            message += (
                f"; estimated tip error {tip_error:.2e} m above tol {bound:.2e} m (the "
                "observer keeps its grid; more updates, or method='shooting' with tol, "
                "reduce it)"
            )
    return _assemble(
        model,
        "observer",
        Y,
        X,
        tau,
        loads,
        status,
        message,
        res_norm,
        1,
        2 if ok else 1,
        1.0,
        inputs=inp,
        balanced_loads=None,
        observer=new_state,
        tip_error=tip_error,
    )
