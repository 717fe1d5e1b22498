"""Numba kernels of the batched static solve on CPU threads (`_batch.solve_static_batch`).

One `prange` over the B items; each item runs what `solve_static(method="shooting")` runs for
it (`_shooting._solve_once`), on the single-shooting kernels of `_static_kernels`, with the
same constants and path rules: direct Newton (bounded steps) when the change of inputs bends
the robot little (external loads and tendons, `_direct_ok`), else continuation from rest or
from the guess's inputs whose steps are accepted only while the tip stays on the branch
(`_tip_step_ok`; status 5 when the smallest step still jumps), so every item lands on the
equilibrium `solve_static` finds or fails with its status. Continuation's step rule is
`solve_static`'s too (`_static_kernels._next_load_step`: sized from how much of the tip
check's bounds the last step used; intermediate equilibria converged to `_STEP_RTOL` only),
so both take the same path. Converged tension-controlled items
are checked for stability (`_stability`'s kernels; status 7 when unstable). Items whose load
would need multiple shooting (bending angle above `_MULTI_SHOOT_ANGLE`) are not solved: they
come back with status `STATUS_NEEDS_MULTIPLE_SHOOTING` and NaN outputs, never with a
single-shooting answer that may sit on a looped branch.

Packed per-robot arrays (`model_par`):
    geo : `RodModel.kernel_geometry`; base : `RodModel.kernel_base`.
    node_point_mass (n_nodes,) [kg]; straight (n_nodes, 3) unloaded straight centreline [m];
    tendon_k (n_t,) [N/m]; tendon_rest (n_t,) [m]; pcc_l0 (n_t,) [m], pcc_A (n_t, n_t) [m/N]
    (constant-curvature tendon lengths l = l0 + A tau, the cold start under length control).
    scales = (moment_scale [N m], tension_scale [N], total_length [m]);
    tendon_r (n_t, 3) [m], tendon_seg (n_t,), seg_length (n_seg,) [m], K_bt (n_seg, 3)
    [N m^2] (the tendons' bending number, `_shooting._tendon_bending`);
    coarse = (node_s (m,) [m], step_seg (m - 1,), fine index of each node (m,), (ratio,)): the
    grid of twice the step of the tip error estimate (`_shooting._coarse_model`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from softrod.rods._pcc import _pcc_tensions_kernel
from softrod.rods._stability import STATUS_UNSTABLE, _second_variation_inertia
from softrod.rods._stability_kernels import _checkpoints, _interval_maps
from softrod.rods._static_kernels import (
    _BROYDEN_DEFER,
    _DEFERRED,
    _FIRST_STEP_ANGLE,
    _JACOBIAN_AT,
    _STEP_RTOL,
    _deferred_tip,
    _distal_loads,
    _distal_moments_on_shape,
    _evaluate,
    _newton,
    _next_load_step,
    _tip_step_use,
)

# The strategy constants are `_shooting`'s (imported, not copied, so the two cannot drift).
from softrod.rods._shooting import (  # isort: skip
    _CONTINUATION_STEP_BOUND,
    _MIN_COARSE_RATIO,
    _DIRECT_BENDING_ANGLE,
    _DIRECT_LOAD_ANGLE,
    _DIRECT_STEP_BOUND,
    _MAX_CONTINUATION_SOLVES,
    _MIN_LOAD_STEP,
    _MULTI_SHOOT_ANGLE,
    _ROUND_OFF_RESIDUAL,
    _newton_with_maps,
    _tendon_bending,
)

__all__: list[str] = []

#: Item status beyond `_shooting`'s (0-3 Newton, 5 a jump, 6 the time budget) and
#: `_stability`'s 7 (unstable): the load needs multiple shooting (not solved here).
STATUS_NEEDS_MULTIPLE_SHOOTING = 8


@njit(cache=True)
def _loads_at(geo, node_point_mass, force, lam, N_end_out, q_out):
    """Kernel loads at load level lam (`_inputs._loads_at` without point loads).

    force : (4, 3) tip force [N], tip moment [N m], distributed force [N/m], gravity [m/s^2].
    """
    node_s, step_seg, seg_par = geo[0], geo[1], geo[2]
    n_nodes = node_s.shape[0]
    node_force = np.empty((n_nodes, 3))
    for k in range(n_nodes):
        for a in range(3):
            node_force[k, a] = lam * node_point_mass[k] * force[3, a]
    _distal_loads(
        node_s,
        step_seg,
        node_force,
        seg_par,
        lam * force[0],
        lam * force[2],
        lam * force[3],
        N_end_out,
        q_out,
    )


@njit(cache=True)
def _no_field(geo):
    """The kernels' magnetic tuple without a field (the batch takes no field)."""
    n_nodes, n_seg = geo[0].shape[0], geo[2].shape[0]
    # np.int64, not the literal -1: the solver kernels then share `solve_static`'s compiled code.
    return (np.zeros(3), np.zeros((n_nodes, 3)), np.zeros((n_seg, 3)), np.int64(-1))


@njit(cache=True)
def _item_ld(geo, node_point_mass, force, n_t):
    """The kernels' load tuple (`_integrate`'s ld) of the inputs force (4, 3) (`_loads_at`):
    no point moments, no tendon friction, no field."""
    n_steps = geo[1].shape[0]
    N_end = np.empty((n_steps, 3))
    q_step = np.empty((n_steps, 3))
    _loads_at(geo, node_point_mass, force, 1.0, N_end, q_step)
    return (
        N_end,
        q_step,
        np.zeros((n_steps + 1, 3)),
        np.ones((n_steps, n_t)),
        _no_field(geo),
    )


@njit(cache=True)
def _run(x, act, force, iters, bound, length_mode, model_par, rtol, Y, X, counters):
    """`_shooting`'s `run`: Newton on x (in place) at the inputs (act, force) (tensions [N]
    or commanded lengths [m] by `length_mode`; force (4, 3) as in `_loads_at`), every step
    bounded by `bound` in the scaled unknowns; returns the status. counters: Newton's [nit,
    nfev, residual, defer] and, when long enough, its kept Jacobian (`_static_kernels._newton`)."""
    geo, base, node_point_mass, _, tendon_k, _, _, _, scales, _, _, _, _ = model_par
    n_t = act.shape[0]
    ld = _item_ld(geo, node_point_mass, force, n_t)
    tau = np.zeros(n_t) if length_mode else act.copy()
    L_cmd = act.copy() if length_mode else np.zeros(n_t)
    bc = (force[1].copy(), L_cmd, tendon_k, scales[0], scales[1])
    return _newton(x, length_mode, tau, base, geo, ld, bc, rtol, iters, Y, X, counters, bound)


@njit(cache=True)
def _target_newton(x, act, tip_moment, iters, bound, length_mode, model_par, rtol, Y, X,
                   counters, final):  # fmt: skip
    """Newton on x (in place) at the item's own inputs (act, tip_moment (3,) [N m]) as
    `solve_static` runs its target's solve (`_shooting._newton_with_maps`, one compiled call):
    with `final`'s check flag, a predicted-converged last iterate is evaluated with the
    stability test's maps (the IVP chained through its checkpoints); when it converged, the
    tip error estimate's coarse tip, corrected with Newton's last Jacobian (counters must hold
    it: `_JACOBIAN_AT`), goes to final's tip_c. final = (ld, checked, nodes, maps, geo_c, ld_c,
    estimate, tip_c) (`_solve_item`). Returns (status, m: maps[:m - 1] across nodes[:m] when
    m > 0, whether tip_c was filled)."""
    geo, base, _, _, tendon_k, _, _, _, scales, _, _, _, _ = model_par
    ld, checked, nodes, maps, geo_c, ld_c, estimate, tip_c = final
    n_t = act.shape[0]
    tau = np.zeros(n_t) if length_mode else act.copy()
    L_cmd = act.copy() if length_mode else np.zeros(n_t)
    bc = (tip_moment.copy(), L_cmd, tendon_k, scales[0], scales[1])
    counters[3] = 1.0 if checked else 0.0
    st, m, ok = _newton_with_maps(
        x, length_mode, tau, base, geo, ld, bc, rtol, iters, Y, X, counters, bound, nodes, maps,
        geo_c, ld_c, estimate, tip_c,
    )  # fmt: skip
    counters[3] = 0.0
    return st, m, ok


@njit(cache=True)
def _coarse_problem(geo, ld, coarse):
    """The tip error estimate's grid of twice the step (`_shooting._coarse_problem`): its
    kernel geometry and the load tuple ld's arrays at its steps (as `_coarse_problem` slices
    them; no point moments, friction or field in a batch). coarse = (node_s (m,) [m],
    step_seg (m - 1,), fine index of each coarse node (m,), (ratio,))."""
    node_s_c, step_seg_c, idx = coarse[0], coarse[1], coarse[2]
    m = node_s_c.shape[0]
    n_t = ld[3].shape[1]
    N_c = np.empty((m - 1, 3))
    q_c = np.empty((m - 1, 3))
    for k in range(m - 1):
        N_c[k] = ld[0][idx[k + 1] - 1]
        q_c[k] = ld[1][idx[k]]
    geo_c = (node_s_c, step_seg_c, geo[2], geo[3], geo[4])
    return geo_c, (N_c, q_c, np.zeros((m, 3)), np.ones((m - 1, n_t)), _no_field(geo_c))


@njit(cache=True)
def _blend_into(act0, force0, act1, force1, mu, act_out, force_out):
    """(1 - mu) start + mu target of the inputs (`_inputs._blend`)."""
    for j in range(act0.shape[0]):
        act_out[j] = (1.0 - mu) * act0[j] + mu * act1[j]
    for a in range(4):
        for c in range(3):
            force_out[a, c] = (1.0 - mu) * force0[a, c] + mu * force1[a, c]


@njit(cache=True)
def _load_angle(geo, node_point_mass, straight, force, m_scale, length, moment_out):
    """`_inputs._load_number` of the loads `force` (4, 3) [rad]; moment_out (3,) receives
    their base moment on the straight robot [N m] (the cold start)."""
    n_steps = geo[1].shape[0]
    N_end = np.empty((n_steps, 3))
    q_step = np.empty((n_steps, 3))
    _loads_at(geo, node_point_mass, force, 1.0, N_end, q_step)
    moments = np.empty((n_steps + 1, 3))
    _distal_moments_on_shape(
        straight, geo[0], N_end, q_step, np.zeros((n_steps + 1, 3)), force[1], moments
    )
    moment_out[:] = moments[0]
    straight_moment = np.sqrt(moments[0, 0] ** 2 + moments[0, 1] ** 2 + moments[0, 2] ** 2)
    force_max = 0.0
    for k in range(n_steps):
        for a in range(3):
            force_max = max(force_max, abs(N_end[k, a]))
    return max(straight_moment, force_max * length) / m_scale


@njit(cache=True)
def _tendon_angle(act0, act1, length_mode, model_par):
    """`_shooting._tendon_number` of the tendons' change from act0 to act1 (tensions, or their
    constant-curvature estimate under length control) [rad]."""
    _, _, _, _, tendon_k, _, pcc_l0, pcc_A, _, tendon_r, tendon_seg, seg_length, K_bt = model_par
    n_t = act0.shape[0]
    if n_t == 0:
        return 0.0
    dtau = np.empty(n_t)
    if length_mode:
        t0 = np.empty(n_t)
        _pcc_tensions_kernel(pcc_l0, pcc_A, tendon_k, act0, t0)
        _pcc_tensions_kernel(pcc_l0, pcc_A, tendon_k, act1, dtau)
        dtau -= t0
    else:
        dtau[:] = act1 - act0
    return _tendon_bending(tendon_r, tendon_seg, dtau, seg_length, K_bt)


@njit(cache=True)
def _path_angles(act0, force0, act1, force1, length_mode, model_par):
    """(external, total) bending angle [rad] of the change of inputs from start to target:
    `_inputs._load_number` of the load change and that plus the tendons' (`_bending_number`)."""
    geo, _, node_point_mass, straight, _, _, _, _, scales, _, _, _, _ = model_par
    dforce = force1 - force0
    moment = np.empty(3)
    external = _load_angle(geo, node_point_mass, straight, dforce, scales[0], scales[2], moment)
    return external, external + _tendon_angle(act0, act1, length_mode, model_par)


@njit(cache=True)
def _direct_ok(act0, force0, act1, force1, length_mode, model_par):
    """`_shooting._direct_ok`: Newton may go from the equilibrium at the start to the target."""
    external, total = _path_angles(act0, force0, act1, force1, length_mode, model_par)
    return external <= _DIRECT_LOAD_ANGLE and total <= _DIRECT_BENDING_ANGLE


@njit(cache=True)
def _follow(
    act0,
    force0,
    act1,
    force1,
    x_start,
    tip_start,
    dmu,
    length_mode,
    model_par,
    rtol,
    Y,
    X,
    counters,
    final,
    x_out,
):
    """`_shooting`'s `follow`: move the inputs from the start (an equilibrium at x_start) to
    the target with adaptive increments and a secant predictor; a step is kept only when
    Newton converged with bounded steps and the tip stayed on the branch (`_tip_step_use`),
    each next increment from `_next_load_step` (one rule with `solve_static`). tip_start (3,):
    the start's tip [m] when known (`_rest_tip`: the same numbers), else NaN (integrated
    here). A step to the target itself (its inputs are the target's, 0 a + 1 b = b) is
    `_target_newton` with `final` (the maps and the tip error estimate in its Newton call, as
    `solve_static`'s continuation). x_out receives the unknowns at the last level reached;
    returns (the fraction of the way reached, status: 0, 5 for a jump within the smallest
    step, else Newton's; m and whether tip_c was filled, of the last step to the target)."""
    length = model_par[8][2]
    n = x_out.shape[0]
    act = np.empty(act0.shape[0])
    force = np.empty((4, 3))
    mu = 0.0
    mu_prev = 0.0
    x_mu = x_start.copy()
    x_prev = np.zeros(n)
    has_prev = False
    # Iteration counts as np.int64, not literals: one compiled `_run` / `_newton` for all calls.
    it0, it_c = np.int64(0), np.int64(12)
    # The starting shape (its tip is the first step's reference).
    last = Y.shape[0] - 1
    tip_mu = tip_start.copy()
    if np.isnan(tip_start[0]):
        _run(x_mu.copy(), act0, force0, it0, np.inf, length_mode, model_par, rtol, Y, X, counters)
        tip_mu[:] = Y[last, 0:3]
    tip_prev = np.zeros(3)
    tip = np.empty(3)  # the step's corrected tip
    dmu_max = max(dmu, 0.5)
    used = np.zeros(2)
    solves = 0
    st = 0
    m, ok = np.int64(-1), False
    while mu < 1.0 and solves < _MAX_CONTINUATION_SOLVES:
        trial = min(1.0, mu + dmu)
        ratio = (trial - mu) / (mu - mu_prev) if has_prev and mu > mu_prev else 0.0
        x = x_mu.copy()
        if has_prev:
            # Secant predictor along the input path.
            x += (x_mu - x_prev) * ratio
        _blend_into(act0, force0, act1, force1, trial, act, force)
        # Intermediate equilibria only carry the path: converged to `_STEP_RTOL`, the last to rtol.
        tol = rtol if trial >= 1.0 else max(rtol, _STEP_RTOL)
        if trial >= 1.0:
            st, m, ok = _target_newton(
                x, act1, force1[1], it_c, _CONTINUATION_STEP_BOUND, length_mode, model_par, tol,
                Y, X, counters, final,
            )  # fmt: skip
            tip[:] = Y[last, 0:3]
        else:
            # An intermediate equilibrium predicted to converge is taken unevaluated, its tip
            # corrected to first order (`_deferred_tip`): no confirming evaluation (where
            # counters have room for the deferred step); from a secant predictor, the first
            # Newton step's iterate without sensitivities, with Broyden's update
            # (`_BROYDEN_DEFER`; the first increment's Newton starts too far for it).
            room = counters.shape[0] >= _JACOBIAN_AT + n * (n + 4)
            counters[3] = (_BROYDEN_DEFER if has_prev else 1.0) if room else 0.0
            st = _run(
                x, act, force, it_c, _CONTINUATION_STEP_BOUND, length_mode, model_par, tol, Y, X,
                counters,
            )  # fmt: skip
            counters[3] = 0.0
            if st == _DEFERRED:
                st = 0
                counters[0] += 1
                _deferred_tip(Y, counters, n, tip)
            else:
                tip[:] = Y[last, 0:3]
        solves += 1
        if st == 0 and not _tip_step_use(tip, tip_mu, tip_prev, has_prev, ratio, length,
                                         used):  # fmt: skip
            st = 5
        # The next increment from how much of the tip bounds this one used (one rule with
        # `solve_static`'s continuation).
        dmu = _next_load_step(dmu, used, st, dmu_max)
        if st == 0:
            x_prev[:] = x_mu
            tip_prev[:] = tip_mu
            has_prev = True
            mu_prev = mu
            x_mu[:] = x
            mu = trial
            tip_mu[:] = tip
        elif dmu < _MIN_LOAD_STEP:
            break
    if mu < 1.0:
        # Leave Y/X describing the last equilibrium reached, converged to rtol.
        _blend_into(act0, force0, act1, force1, mu, act, force)
        _run(x_mu, act, force, it_c, _CONTINUATION_STEP_BOUND, length_mode, model_par, rtol, Y,
             X, counters)  # fmt: skip
        x_out[:] = x_mu
        return mu, (st if st != 0 else 1), np.int64(-1), False
    x_out[:] = x_mu
    return 1.0, 0, m, ok


@njit(cache=True)
def _tip_jacobian(x, length_mode, tau, L_cmd, force, model_par, jac_out):
    """d tip / d actuation (3, n_t) at converged unknowns x, as `_sensitivity.tip_jacobian`:
    the implicit function theorem on the shooting residual (exact RK4 sensitivities)."""
    geo, base, node_point_mass, _, tendon_k, _, _, _, scales, _, _, _, _ = model_par
    m_scale, t_scale = scales[0], scales[1]
    n_steps = geo[1].shape[0]
    n_t = tau.shape[0]
    ny = 15 + n_t
    n_dir = 3 + n_t
    N_end = np.empty((n_steps, 3))
    q_step = np.empty((n_steps, 3))
    _loads_at(geo, node_point_mass, force, 1.0, N_end, q_step)
    node_moment = np.zeros((n_steps + 1, 3))
    tau_scale = np.ones((n_steps, n_t))  # no tendon friction in the batch
    tau_eval = x[3:].copy() if length_mode else tau.copy()
    Y = np.empty((n_steps + 1, ny))
    X = np.empty((n_steps + 1, 6))
    z = np.empty(ny * (1 + n_dir))
    ok = _evaluate(
        x[:3].copy(),
        tau_eval,
        n_dir,
        base,
        geo,
        (N_end, q_step, node_moment, tau_scale, _no_field(geo)),
        np.bool_(False),  # not a literal: numba compiles `_evaluate` once for both
        Y,
        X,
        z,
    )
    if not ok:
        jac_out[:, :] = np.nan
        return
    # S[d] = d y(L) / d direction d: M0 (3), then the tensions.
    S = np.empty((n_dir, ny))
    for d in range(n_dir):
        for a in range(ny):
            S[d, a] = z[ny * (1 + d) + a]
    d_tip_d_M0 = S[:3, 0:3].T.copy()
    d_tip_d_tau = S[3:, 0:3].T.copy()
    if not length_mode:
        # r = (M(L) - M_tip) / m: dM0/dtau = -(dM/dM0)^-1 dM/dtau.
        dM0 = -np.linalg.solve(S[:3, 12:15].T.copy(), S[3:, 12:15].T.copy())
        jac_out[:, :] = d_tip_d_M0 @ dM0 + d_tip_d_tau
        return
    n = 3 + n_t
    J = np.zeros((n, n))
    dr_dL = np.zeros((n, n_t))
    for a in range(3):
        for d in range(n):
            J[a, d] = S[d, 12 + a] / m_scale
    for j in range(n_t):
        active = z[15 + j] - L_cmd[j] > 0.0
        for d in range(n):
            J[3 + j, d] = -tendon_k[j] * S[d, 15 + j] / t_scale if active else 0.0
        J[3 + j, 3 + j] += 1.0 / t_scale
        if active:
            dr_dL[3 + j, j] = tendon_k[j] / t_scale
    dx = -np.linalg.solve(J, dr_dL)
    jac_out[:, :] = d_tip_d_M0 @ dx[:3].copy() + d_tip_d_tau @ dx[3:].copy()


@njit(cache=True)
def _grouped_stable(Y, tau, geo, ld, nodes, maps, m):
    """`_stability.is_stable` of an equilibrium (node states Y (n_nodes, 15 + n_t), tensions
    tau (n_t,) [N], the kernels' geo and ld): no negative direction of the second variation,
    on the transfer maps across the test's checkpoints. m > 0: maps[:m - 1] and nodes[:m]
    already hold them (`_target_newton`); 0: integrated here (nodes (n_nodes,), maps
    (n_nodes - 1, 6, 6) work arrays). False also where the integration fails."""
    if m == 0:
        m = _checkpoints(Y, tau, geo, ld, nodes)
        no_strains = np.empty((0, 6))
        if _interval_maps(Y, tau, geo, ld, nodes[:m], maps, np.bool_(False), no_strains) < 0:
            return False
    return _second_variation_inertia(maps[: m - 1]) == 0


@njit(cache=True)
def _solve_item(
    length_mode,
    act,
    force,
    warm,
    start_act,
    start_force,
    flags,
    model_par,
    coarse,
    rest_tip,
    rtol,
    max_iter,
    jacobian,
    x_out,
    tau_out,
    Y,
    X,
    stats_out,
    jac_out,
    balanced_act_out,
    balanced_force_out,
):
    """One static solve, as `_shooting._solve_once` runs it (guess: the unknowns `warm`,
    in equilibrium with the inputs (start_act, start_force) when known).

    act : (n_t,) tensions [N] or commanded lengths [m]; force : (4, 3) as in `_loads_at`.
    flags : (has_warm, has_start, check_stability). rest_tip (3,) [m]: the unloaded robot's
    tip (`_rest_tip`), where continuation from rest starts. Writes x_out (n_unk,) unknowns, tau_out
    (n_t,) tensions [N], Y (n_nodes, 15 + n_t) and X (n_nodes, 6) node arrays, stats_out =
    (status, residual, iterations, fraction of the way reached, 1 if the path started at the
    guess's inputs else 0, stable: 1 / 0 / NaN not checked, estimated tip error [m]: NaN when
    not converged or not available), jac_out (3, n_t) when `jacobian`,
    and the inputs the returned equilibrium balances (balanced_act_out, balanced_force_out).
    """
    geo, _, node_point_mass, straight, tendon_k, tendon_rest, pcc_l0, pcc_A, scales = (
        model_par[0], model_par[1], model_par[2], model_par[3], model_par[4], model_par[5],
        model_par[6], model_par[7], model_par[8],
    )  # fmt: skip
    has_warm, has_start, check = flags[0], flags[1], flags[2]
    m_scale, length = scales[0], scales[2]
    n_steps = geo[1].shape[0]
    n_t = act.shape[0]
    n_unk = x_out.shape[0]
    # Newton's [nit, nfev, residual, defer], its last Jacobian with the tip's sensitivities
    # and a deferred step (`_static_kernels._newton`, `_JACOBIAN_AT`): the tip error
    # estimate's correction and continuation's deferred steps (`_deferred_tip`) read them.
    counters = np.zeros(_JACOBIAN_AT + n_unk * (n_unk + 4))
    stats_out[4] = 0.0
    stats_out[5] = np.nan
    stats_out[6] = np.nan
    # Load number ~ P L^2 / EI (`_inputs._load_number`) and the loads' base moment on the
    # straight robot (the cold start).
    moment = np.empty(3)
    load_angle = _load_angle(geo, node_point_mass, straight, force, m_scale, length, moment)
    if load_angle > _MULTI_SHOOT_ANGLE:
        # solve_static would switch to multiple shooting here: not solved, never guessed.
        stats_out[0] = STATUS_NEEDS_MULTIPLE_SHOOTING
        stats_out[1] = np.nan
        stats_out[2] = 0.0
        stats_out[3] = 0.0
        x_out[:] = np.nan
        tau_out[:] = np.nan
        Y[:, :] = np.nan
        balanced_act_out[:] = np.nan
        balanced_force_out[:, :] = np.nan
        return
    # The unloaded robot in the same input mode (`_inputs._zero_inputs`).
    zero_act = tendon_rest.copy() if length_mode else np.zeros(n_t)
    zero_force = np.zeros((4, 3))
    # Starting point: the warm unknowns, or the straight-robot moment (and PCC tensions).
    x = np.zeros(n_unk)
    if has_warm:
        x[:] = warm
    else:
        x[:3] = moment
        if length_mode and n_t > 0:
            _pcc_tensions_kernel(pcc_l0, pcc_A, tendon_k, act, x[3:])
    from_start = has_warm and has_start
    origin_act = start_act if from_start else zero_act
    origin_force = start_force if from_start else zero_force
    x_origin = warm.copy() if from_start else np.zeros(n_unk)
    # The origin's tip: the unloaded robot's is the batch's (`_rest_tip`), a guess's is not known.
    origin_tip = rest_tip.copy() if not from_start else np.full(3, np.nan)
    # The target's load arrays, built once: the solve of the target, the tip error estimate and
    # the stability test read them.
    ld = _item_ld(geo, node_point_mass, force, n_t)
    # The stability test's checkpoints and maps: built in Newton's last evaluation when it is
    # predicted to converge (as `solve_static` does), else by the test itself.
    checked = check and not length_mode
    nodes = np.empty(n_steps + 1 if checked else 0, dtype=np.int64)
    maps = np.empty((n_steps if checked else 0, 6, 6))
    n_maps = 0
    # The tip error estimate's coarse problem: its corrected tip comes out of the target's
    # Newton call (`_target_newton`), as in `solve_static` (none where the grid of twice the
    # step is hardly coarser: the front end then refines the item).
    geo_c, ld_c = _coarse_problem(geo, ld, coarse)
    ratio = coarse[3][0]
    tip_c = np.empty(3)
    final = (ld, checked, nodes, maps, geo_c, ld_c, ratio >= _MIN_COARSE_RATIO, tip_c)
    estimated = False
    # How far the inputs move (external loads and tendon bending): a long path goes through
    # continuation; a guess without the inputs it balances is only a starting point. From
    # rest the external angle is the load angle above (`_path_angles` of the same loads).
    direct = has_warm and not has_start
    tendon_angle = 0.0
    if not direct:
        tendon_angle = _tendon_angle(zero_act, act, length_mode, model_par)
        direct = (
            load_angle <= _DIRECT_LOAD_ANGLE and load_angle + tendon_angle <= _DIRECT_BENDING_ANGLE
        )
    if not direct and from_start:
        direct = _direct_ok(start_act, start_force, act, force, length_mode, model_par)
    if not direct:
        bending = load_angle + tendon_angle
        if from_start:
            _, bending = _path_angles(origin_act, origin_force, act, force, length_mode,
                                      model_par)  # fmt: skip
        step = _FIRST_STEP_ANGLE / max(bending, 1e-12)
        lam, status, n_maps, estimated = _follow(
            origin_act, origin_force, act, force, x_origin, origin_tip, step, length_mode,
            model_par, rtol, Y, X, counters, final, x,
        )  # fmt: skip
    else:
        lam = 1.0
        status, n_maps, estimated = _target_newton(
            x, act, force[1], max_iter, _DIRECT_STEP_BOUND, length_mode, model_par, rtol, Y, X,
            counters, final,
        )  # fmt: skip
        # A stall at round-off keeps the full-load answer; any other failure follows the path.
        if status != 0 and not (status == 2 and counters[2] <= _ROUND_OFF_RESIDUAL):
            lam, status, n_maps, estimated = _follow(
                origin_act, origin_force, act, force, x_origin, origin_tip, 0.25, length_mode,
                model_par, rtol, Y, X, counters, final, x,
            )  # fmt: skip
    # A failed march from the guess (not a jump) falls back to the ramp from the unloaded robot.
    if status != 0 and status != 5 and from_start:
        from_start = False
        origin_act = zero_act
        origin_force = zero_force
        lam, status, n_maps, estimated = _follow(
            zero_act, zero_force, act, force, np.zeros(n_unk), rest_tip, 0.25, length_mode,
            model_par, rtol, Y, X, counters, final, x,
        )  # fmt: skip
    _blend_into(origin_act, origin_force, act, force, lam, balanced_act_out, balanced_force_out)
    # Tensions; a slack tendon carries exactly none (Newton leaves ~1e-27 of round-off).
    for j in range(n_t):
        if length_mode:
            tau_out[j] = 0.0 if Y[n_steps, 15 + j] <= balanced_act_out[j] else x[3 + j]
        else:
            tau_out[j] = balanced_act_out[j]
    if status == 0 and estimated:
        # The tip error estimate (`_shooting._richardson`): the corrected coarse tip lands
        # `ratio` times further from the exact tip; where it exceeds the bound (or is missing)
        # the front end refines the item's grid as `solve_static` does.
        d = 0.0
        for a in range(3):
            d += (tip_c[a] - Y[n_steps, a]) ** 2
        stats_out[6] = np.sqrt(d) / (ratio - 1.0)
    if status == 0 and checked:
        # Stability (`_stability.is_stable`): the inertia of the energy's second variation
        # on the maps across its checkpoints (from the last evaluation, or integrated here).
        stable = _grouped_stable(Y, act, geo, ld, nodes, maps, max(n_maps, np.int64(0)))
        stats_out[5] = 1.0 if stable else 0.0
        if not stable:
            status = STATUS_UNSTABLE
    x_out[:] = x
    stats_out[0] = status
    stats_out[1] = counters[2]
    stats_out[2] = counters[0]
    stats_out[3] = lam
    stats_out[4] = 1.0 if from_start else 0.0
    if jacobian:
        if status == 0:
            # tip_jacobian differentiates at (base moment, tensions) of the result.
            xj = x.copy()
            if length_mode:
                xj[3:] = tau_out
            tau = np.zeros(n_t) if length_mode else act
            L_cmd = act if length_mode else np.zeros(n_t)
            _tip_jacobian(xj, length_mode, tau, L_cmd, force, model_par, jac_out)
        else:
            jac_out[:, :] = np.nan


@njit(cache=True, parallel=True)
def _solve_batch(length_mode, inputs, robot, rtol, max_iter, jacobian, shapes, outs):
    """B solves on numba's threads, one item per `prange` iteration (`_solve_one`)."""
    rest_tip = _rest_tip(length_mode, robot, inputs[2].shape[1], rtol)
    for i in prange(inputs[0].shape[0]):
        _solve_one(i, length_mode, inputs, robot, rest_tip, rtol, max_iter, jacobian, shapes,
                   outs)  # fmt: skip


@njit(cache=True)
def _solve_batch_serial(length_mode, inputs, robot, rtol, max_iter, jacobian, shapes, outs):
    """`_solve_batch` on the calling thread: the same items, compiled without numba's
    parallel pass (used for one thread; its first compile is much cheaper)."""
    rest_tip = _rest_tip(length_mode, robot, inputs[2].shape[1], rtol)
    for i in range(inputs[0].shape[0]):
        _solve_one(i, length_mode, inputs, robot, rest_tip, rtol, max_iter, jacobian, shapes,
                   outs)  # fmt: skip


@njit(cache=True)
def _model_par(robot):
    """`model_par` (module doc) of the flat robot tuple (`_batch._model_arrays`)."""
    (
        node_s, step_seg, seg_par, tendon, cosserat, base_p, base_R, node_point_mass,
        straight, tendon_k, tendon_rest, pcc_l0, pcc_A, scales,
        tendon_r, tendon_seg, seg_length, K_bt, _, _, _, _,
    ) = robot  # fmt: skip
    return (
        (node_s, step_seg, seg_par, tendon, cosserat),
        (base_p, base_R),
        node_point_mass,
        straight,
        tendon_k,
        tendon_rest,
        pcc_l0,
        pcc_A,
        scales,
        tendon_r,
        tendon_seg,
        seg_length,
        K_bt,
    )


@njit(cache=True)
def _rest_tip(length_mode, robot, n_unk, rtol):
    """Tip (3,) [m] of the unloaded robot in the batch's input mode, as every item's
    continuation from rest integrates it first (`_follow`'s start: the same call, so the same
    numbers): once per batch instead of once per continued item."""
    model_par = _model_par(robot)
    n_nodes = model_par[0][0].shape[0]
    n_t = model_par[4].shape[0]
    Y = np.empty((n_nodes, 15 + n_t))
    X = np.empty((n_nodes, 6))
    zero_act = model_par[5].copy() if length_mode else np.zeros(n_t)
    _run(np.zeros(n_unk), zero_act, np.zeros((4, 3)), np.int64(0), np.inf, length_mode,
         model_par, rtol, Y, X, np.zeros(4))  # fmt: skip
    return Y[n_nodes - 1, 0:3].copy()


@njit(cache=True)
def _solve_one(i, length_mode, inputs, robot, rest_tip, rtol, max_iter, jacobian, shapes, outs):
    """Item i of a batch (no Python per item).

    inputs = (actuation (B, n_t), forces (B, 4, 3) as in `_loads_at`, warm (B, n_unk) unknowns,
    start_act (B, n_t) and start_forces (B, 4, 3) the inputs they balance, flags (B, 3) int
    (has_warm, has_start, check_stability)); robot = `_batch._model_arrays` (`model_par`'s
    arrays, flat). outs = unknowns_out (B, n_unk), tension_out (B, n_t) [N], tip_out (B, 3)
    [m], rotation_out (B, 3, 3), stats_out (B, 7) (`_solve_item`), jac_out (B, 3, n_t) when
    `jacobian`, positions_out (B, n_nodes, 3) [m] when `shapes`, balanced_act_out (B, n_t),
    balanced_force_out (B, 4, 3).
    """
    # The flat tuples (numba's parallel loops take no nested ones): inputs, robot, outputs.
    actuation, forces, warm, start_act, start_forces, flags = inputs
    coarse_s, coarse_seg, coarse_idx, coarse_ratio = robot[18], robot[19], robot[20], robot[21]
    (
        unknowns_out, tension_out, tip_out, rotation_out, stats_out, jac_out, positions_out,
        balanced_act_out, balanced_force_out,
    ) = outs  # fmt: skip
    n_t = actuation.shape[1]
    model_par = _model_par(robot)
    n_nodes = model_par[0][0].shape[0]
    Y = np.empty((n_nodes, 15 + n_t))
    X = np.empty((n_nodes, 6))
    _solve_item(
        length_mode,
        actuation[i],
        forces[i],
        warm[i],
        start_act[i],
        start_forces[i],
        (flags[i, 0] != 0, flags[i, 1] != 0, flags[i, 2] != 0),
        model_par,
        (coarse_s, coarse_seg, coarse_idx, coarse_ratio),
        rest_tip,
        rtol,
        max_iter,
        jacobian,
        unknowns_out[i],
        tension_out[i],
        Y,
        X,
        stats_out[i],
        jac_out[i],
        balanced_act_out[i],
        balanced_force_out[i],
    )
    last = n_nodes - 1
    for a in range(3):
        tip_out[i, a] = Y[last, a]
        for c in range(3):
            rotation_out[i, a, c] = Y[last, 3 + 3 * a + c]
    if shapes:
        for k in range(n_nodes):
            for a in range(3):
                positions_out[i, k, a] = Y[k, a]
