"""Numba kernels of the batched static solve on CPU threads (`_batch.solve_static_batch`).

One `prange` over the B items; each item runs what `solve_static(method="shooting")` runs for
it (`_shooting._solve_shooting`), on the single-shooting kernels of `_static_kernels`:
direct Newton when the load is small (or from a warm start), load continuation from the
unloaded robot otherwise or when Newton fails, and the same constants, so every item lands on
the equilibrium `solve_static` finds. Items whose load would need multiple shooting
(bending angle above `_MULTI_SHOOT_ANGLE`) are not solved: they come back with status
`STATUS_NEEDS_MULTIPLE_SHOOTING` and NaN outputs, never with a single-shooting answer that may sit
on a looped branch.

Packed per-robot arrays (`model_par`):
    geo : `RodModel.kernel_geometry`; base : `RodModel.kernel_base`.
    node_point_mass (n_nodes,) [kg]; straight (n_nodes, 3) unloaded straight centreline [m];
    tendon_k (n_t,) [N/m]; tendon_rest (n_t,) [m]; pcc_l0 (n_t,) [m], pcc_A (n_t, n_t) [m/N]
    (constant-curvature tendon lengths l = l0 + A tau, the cold start under length control).
    scales = (moment_scale [N m], tension_scale [N], total_length [m]).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from softrod.rods._pcc import _pcc_tensions_kernel
from softrod.rods._static_kernels import (
    _distal_loads,
    _distal_moments_on_shape,
    _evaluate,
    _newton,
)

# The strategy constants are `_shooting`'s (imported, not copied, so the two cannot drift).
from softrod.rods._shooting import (  # isort: skip
    _DIRECT_LOAD_ANGLE,
    _MAX_CONTINUATION_SOLVES,
    _MIN_LOAD_STEP,
    _MULTI_SHOOT_ANGLE,
    _ROUND_OFF_RESIDUAL,
)

__all__: list[str] = []

#: Item status beyond `_newton`'s 0-3: the load needs multiple shooting (not solved here).
STATUS_NEEDS_MULTIPLE_SHOOTING = 5


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
    return (np.zeros(3), np.zeros((n_nodes, 3)), np.zeros((n_seg, 3)), -1)


@njit(cache=True)
def _run(x, lam, iters, length_mode, tau, L_cmd, force, model_par, rtol, Y, X, counters):
    """`_shooting`'s `run`: Newton on x (in place) at load level lam; returns the status."""
    geo, base, node_point_mass, _, tendon_k, tendon_rest, _, _, scales = model_par
    n_steps = geo[1].shape[0]
    n_t = tau.shape[0]
    N_end = np.empty((n_steps, 3))
    q_step = np.empty((n_steps, 3))
    _loads_at(geo, node_point_mass, force, lam, N_end, q_step)
    node_moment = np.zeros((n_steps + 1, 3))
    tau_scale = np.ones((n_steps, n_t))  # no tendon friction in the batch
    tau_lam = np.empty(n_t)
    L_lam = np.zeros(n_t)
    for j in range(n_t):
        tau_lam[j] = lam * tau[j]
        if length_mode:
            L_lam[j] = tendon_rest[j] + lam * (L_cmd[j] - tendon_rest[j])
    M_tip = lam * force[1]
    bc = (M_tip, L_lam, tendon_k, scales[0], scales[1])
    return _newton(
        x,
        length_mode,
        tau_lam,
        base,
        geo,
        (N_end, q_step, node_moment, tau_scale, _no_field(geo)),
        bc,
        rtol,
        iters,
        Y,
        X,
        counters,
    )


@njit(cache=True)
def _continuation(
    dlam, dlam_max, length_mode, tau, L_cmd, force, model_par, rtol, Y, X, counters, x_out
):
    """`_shooting`'s `continuation`: ramp every load from the unloaded robot with adaptive
    increments (the branch a physical robot follows). x_out receives the unknowns at the last
    load level reached; returns (load level reached, status)."""
    n = x_out.shape[0]
    lam = 0.0
    x_lam = np.zeros(n)
    x_prev = np.zeros(n)
    has_prev = False
    lam_prev = 0.0
    solves = 0
    st = 0
    while lam < 1.0 and solves < _MAX_CONTINUATION_SOLVES:
        trial = min(1.0, lam + dlam)
        x = x_lam.copy()
        if has_prev and lam > lam_prev:
            # Secant predictor along the load path.
            x += (x_lam - x_prev) * (trial - lam) / (lam - lam_prev)
        st = _run(x, trial, 12, length_mode, tau, L_cmd, force, model_par, rtol, Y, X, counters)
        solves += 1
        if st == 0:
            x_prev[:] = x_lam
            has_prev = True
            lam_prev = lam
            x_lam[:] = x
            lam = trial
            dlam = min(2.0 * dlam, dlam_max)
        else:
            dlam *= 0.5
            if dlam < _MIN_LOAD_STEP:
                break
    x_out[:] = x_lam
    if lam < 1.0:
        # Leave Y/X describing the last converged load level.
        _run(x_lam.copy(), lam, 0, length_mode, tau, L_cmd, force, model_par, rtol, Y, X, counters)
        return lam, (st if st != 0 else 1)
    return 1.0, 0


@njit(cache=True)
def _tip_jacobian(x, length_mode, tau, L_cmd, force, model_par, jac_out):
    """d tip / d actuation (3, n_t) at converged unknowns x, as `_sensitivity.tip_jacobian`:
    the implicit function theorem on the shooting residual (exact RK4 sensitivities)."""
    geo, base, node_point_mass, _, tendon_k, _, _, _, scales = model_par
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
        False,
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
def _solve_item(
    length_mode,
    act,
    force,
    warm,
    has_warm,
    model_par,
    rtol,
    max_iter,
    jacobian,
    x_out,
    tau_out,
    Y,
    X,
    stats_out,
    jac_out,
):
    """One static solve, as `_shooting._solve_shooting` runs it (guess: the unknowns `warm`).

    act : (n_t,) tensions [N] or commanded lengths [m]; force : (4, 3) as in `_loads_at`.
    Writes x_out (n_unk,) unknowns, tau_out (n_t,) tensions [N], Y (n_nodes, 15 + n_t) and
    X (n_nodes, 6) node arrays, stats_out = (status, residual, iterations, load level), and
    jac_out (3, n_t) when `jacobian`.
    """
    geo, _, node_point_mass, straight, tendon_k, tendon_rest, pcc_l0, pcc_A, scales = model_par
    m_scale, length = scales[0], scales[2]
    n_steps = geo[1].shape[0]
    n_t = act.shape[0]
    n_unk = x_out.shape[0]
    tau = np.zeros(n_t) if length_mode else act
    L_cmd = act if length_mode else np.zeros(n_t)
    counters = np.zeros(3)
    # Load number ~ P L^2 / EI (`_inputs._load_number`) and the loads' base moment on the
    # straight robot (the cold start).
    N_end = np.empty((n_steps, 3))
    q_step = np.empty((n_steps, 3))
    _loads_at(geo, node_point_mass, force, 1.0, N_end, q_step)
    moments = np.empty((n_steps + 1, 3))
    _distal_moments_on_shape(
        straight, geo[0], N_end, q_step, np.zeros((n_steps + 1, 3)), force[1], moments
    )
    straight_moment = np.sqrt(moments[0, 0] ** 2 + moments[0, 1] ** 2 + moments[0, 2] ** 2)
    force_max = 0.0
    for k in range(n_steps):
        for a in range(3):
            force_max = max(force_max, abs(N_end[k, a]))
    load_angle = max(straight_moment, force_max * length) / m_scale
    if load_angle > _MULTI_SHOOT_ANGLE:
        # solve_static would switch to multiple shooting here: not solved, never guessed.
        stats_out[0] = STATUS_NEEDS_MULTIPLE_SHOOTING
        stats_out[1] = np.nan
        stats_out[2] = 0.0
        stats_out[3] = 0.0
        x_out[:] = np.nan
        tau_out[:] = np.nan
        Y[:, :] = np.nan
        return
    # Starting point: the warm unknowns, or the straight-robot moment (and PCC tensions).
    x = np.zeros(n_unk)
    if has_warm:
        x[:] = warm
    else:
        x[:3] = moments[0]
        if length_mode and n_t > 0:
            _pcc_tensions_kernel(pcc_l0, pcc_A, tendon_k, L_cmd, x[3:])
    # A cold start under a large external load goes straight to continuation.
    if not has_warm and load_angle > _DIRECT_LOAD_ANGLE:
        step = _DIRECT_LOAD_ANGLE / load_angle
        lam, status = _continuation(
            step, step, length_mode, tau, L_cmd, force, model_par, rtol, Y, X, counters, x
        )
    else:
        lam = 1.0
        status = _run(
            x, 1.0, max_iter, length_mode, tau, L_cmd, force, model_par, rtol, Y, X, counters
        )
        # A stall at round-off keeps the full-load answer; any other failure ramps the load.
        if status != 0 and not (status == 2 and counters[2] <= _ROUND_OFF_RESIDUAL):
            lam, status = _continuation(
                0.25, 0.5, length_mode, tau, L_cmd, force, model_par, rtol, Y, X, counters, x
            )
    # Tensions; a slack tendon carries exactly none (Newton leaves ~1e-27 of round-off).
    for j in range(n_t):
        if length_mode:
            L_lam = tendon_rest[j] + lam * (L_cmd[j] - tendon_rest[j])
            tau_out[j] = 0.0 if Y[n_steps, 15 + j] <= L_lam else x[3 + j]
        else:
            tau_out[j] = lam * tau[j]
    x_out[:] = x
    stats_out[0] = status
    stats_out[1] = counters[2]
    stats_out[2] = counters[0]
    stats_out[3] = lam
    if jacobian:
        if status == 0:
            # tip_jacobian differentiates at (base moment, tensions) of the result.
            xj = x.copy()
            if length_mode:
                xj[3:] = tau_out
            _tip_jacobian(xj, length_mode, tau, L_cmd, force, model_par, jac_out)
        else:
            jac_out[:, :] = np.nan


@njit(cache=True, parallel=True)
def _solve_batch(length_mode, inputs, robot, rtol, max_iter, jacobian, shapes, outs):
    """B solves on numba's threads, one item per iteration (no Python per item).

    inputs = (actuation (B, n_t), forces (B, 4, 3) as in `_loads_at`, warm (B, n_unk) unknowns
    used where has_warm (B,), has_warm); robot = `_batch._model_arrays` (`model_par`'s arrays,
    flat). outs = unknowns_out (B, n_unk), tension_out (B, n_t) [N],
    tip_out (B, 3) [m], rotation_out (B, 3, 3), stats_out (B, 4) (status, residual, iterations,
    load level), jac_out (B, 3, n_t) when `jacobian`, positions_out (B, n_nodes, 3) [m] when
    `shapes`.
    """
    # Flat tuples (numba's parallel loops take no nested ones): inputs, robot, outputs.
    actuation, forces, warm, has_warm = inputs
    (
        node_s, step_seg, seg_par, tendon, cosserat, base_p, base_R, node_point_mass,
        straight, tendon_k, tendon_rest, pcc_l0, pcc_A, scales,
    ) = robot  # fmt: skip
    unknowns_out, tension_out, tip_out, rotation_out, stats_out, jac_out, positions_out = outs
    n_items = actuation.shape[0]
    n_t = actuation.shape[1]
    n_nodes = node_s.shape[0]
    for i in prange(n_items):
        model_par = (
            (node_s, step_seg, seg_par, tendon, cosserat),
            (base_p, base_R),
            node_point_mass,
            straight,
            tendon_k,
            tendon_rest,
            pcc_l0,
            pcc_A,
            scales,
        )
        Y = np.empty((n_nodes, 15 + n_t))
        X = np.empty((n_nodes, 6))
        _solve_item(
            length_mode,
            actuation[i],
            forces[i],
            warm[i],
            has_warm[i],
            model_par,
            rtol,
            max_iter,
            jacobian,
            unknowns_out[i],
            tension_out[i],
            Y,
            X,
            stats_out[i],
            jac_out[i],
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
