"""Numba kernels of the implicit variational step (issue 21, docs/dynamics.md "Implicit step").

Private. Same model / loads / damping / state / record tuples as `_lgvi_kernels` (its module
docstring). The discrete Lagrangian of one step q^j -> q^{j+1} is

    L_d = sum_a [m_a |dp_a|^2 / (2 dt) + tr((I - F_a) J_d,a) / dt]
          - dt [4 beta V_el(e_mid) + (1 - 4 beta) (V_el(e^j) + V_el(e^{j+1})) / 2]
          - dt (U(q^j) + U(q^{j+1})) / 2,

e the discrete strains minus their rest values (element shear-stretch strains, spring Cayley
strains), e_mid = (e(q^j) + e(q^{j+1})) / 2, V_el = 1/2 e^T W e the elastic energy (quadratic
in the strains), U the applied potentials (gravity, uniform and tip loads, tendons, magnets).
The elastic part is a weighted mix of the midpoint and trapezoidal rules *in the strains*
(beta = 1/4: the midpoint rule; the default `_integrate.IMPLICIT_NEWMARK_BETA` = 1/2), the
applied part the trapezoidal rule (Stern & Grinspun's IMEX split). Damping (viscous,
Kelvin-Voigt) enters the residual with the step's velocity / strain rate; an optional
projection damps the stiff modes (`_integrate.IMPLICIT_DAMPING`).
Its discrete Euler-Lagrange equations at q^j are the explicit LGVI's with the elastic force
-B(q^j)^T W (beta e^{j-1} + (1 - 2 beta) e^j + beta e^{j+1}) (B = de/dq), implicit in
q^{j+1} through e^{j+1}; for a linear rod they are Newmark's rule (gamma = 1/2) with that beta:
unconditionally stable for beta >= 1/4, conserving KE + V_el(e_mid) + (beta - 1/4) / 2
(e^{j+1} - e^j)^T W (e^{j+1} - e^j) (= KE + (V_el(e^j) + V_el(e^{j+1})) / 2 at 1/2). Newton's
matrix M + beta dt^2 B(q^j)^T W B(q^{j+1}) is banded
(block tridiagonal in the node-interleaved layout of the Kelvin-Voigt solve), assembled at the
iterate and factored by a banded LU (`_newton_matrix`, `_band_lu_solve`).

Strain rows: the n_el (or 2 n_el, symmetric shear) shear-stretch strains first (element i, side
0 then 1), then the n_spr spring strains.
"""

from __future__ import annotations

import math

import numba

from softrod.dynamics._lgvi_kernels import (
    STATUS_NONFINITE,
    STATUS_OK,
    _applied_forces,
    _body_of,
    _cayinv_rel,
    _kinetic,
    _kv_add_block,
    _kv_assemble,
    _kv_correct,
    _magnetic_forces,
    _tendon_forces,
    _turn_frames,
    _world_of,
)

#: Status of a step whose Newton iteration did not converge (`_lgvi_kernels` has 0-2).
STATUS_IMPLICIT_NEWTON = 3

#: Weight beta of the implicit step's strain average beta e^{j-1} + (1 - 2 beta) e^j + beta
#: e^{j+1}, from the discrete Lagrangian's elastic part 4 beta V((e^j + e^{j+1}) / 2) +
#: (1 - 4 beta) (V(e^j) + V(e^{j+1})) / 2 (Newmark's beta with gamma = 1/2 for a linear rod).
#: 1/4 (the midpoint rule) conserves KE + V(mid-step strain), which does not bound the strains
#: themselves: a mode far above the step (the node frames' shear and bending rotations, whose
#: inertia is ~1e-12 kg m^2) aliases to the Nyquist rate with its strain amplitude amplified by
#: omega dt / 2, and a sudden tendon load made it grow linearly until the run diverged. At 1/2
#: the conserved energy is KE + (V(e^j) + V(e^{j+1})) / 2, which bounds every strain; the
#: bending modes' period error is 5 (omega dt)^2 / 24 (docs/dynamics.md "Implicit step").
IMPLICIT_NEWMARK_BETA = 0.5
#: Newton iterations allowed per step before the step is declared failed.
IMPLICIT_MAX_ITER = 30
#: Newton stops when every correction is below this fraction of the step's largest increment
#: (plus a round-off floor of 1e-15 L in positions and 1e-15 rad in rotations).
IMPLICIT_TOL = 1e-10


@numba.njit(cache=True)
def _strains(p, O, base_R, kb, elastic, e_out):
    """Discrete strains minus rest values at (p, O) into e_out (n_s, 3); returns V_el [J].

    Shear-stretch rows: g = O_c^T (p_b - p_a) / l - g0; spring rows: c = cay^-1(O_i^T O_j)
    - c0 (frame -1: row kb of base_R).
    """
    elem_len, elem_C1, elem_g0a, elem_g0b, shear_mode, spr_i, spr_j, spr_K, spr_c0 = elastic
    n_el = elem_len.shape[0]
    n_side = 1 if shear_mode == 0 else 2
    V = 0.0
    # Shear-stretch strains, weight w l C1.
    for i in range(n_el):
        a = i
        b = i + 1
        l = elem_len[i]
        dx = p[b, 0] - p[a, 0]
        dy = p[b, 1] - p[a, 1]
        dz = p[b, 2] - p[a, 2]
        w = 1.0 if shear_mode == 0 else 0.5
        for side in range(n_side):
            c = a if side == 0 else b
            g0 = elem_g0a if side == 0 else elem_g0b
            qx, qy, qz = _body_of(O, c, dx, dy, dz)
            r = n_side * i + side
            e_out[r, 0] = qx / l - g0[i, 0]
            e_out[r, 1] = qy / l - g0[i, 1]
            e_out[r, 2] = qz / l - g0[i, 2]
            for k in range(3):
                V += 0.5 * w * l * elem_C1[i, k] * e_out[r, k] * e_out[r, k]
    # Bending-torsion springs, weight K.
    r0 = n_side * n_el
    for k in range(spr_i.shape[0]):
        i = spr_i[k]
        j = spr_j[k]
        if i < 0:
            cx, cy, cz = _cayinv_rel(base_R, kb, O, j)
        else:
            cx, cy, cz = _cayinv_rel(O, i, O, j)
        e_out[r0 + k, 0] = cx - spr_c0[k, 0]
        e_out[r0 + k, 1] = cy - spr_c0[k, 1]
        e_out[r0 + k, 2] = cz - spr_c0[k, 2]
        for c in range(3):
            V += 0.5 * spr_K[k, c] * e_out[r0 + k, c] * e_out[r0 + k, c]
    return V


@numba.njit(cache=True)
def _strain_energy(elastic, e):
    """V_el = 1/2 e^T W e [J] of strains e (n_s, 3)."""
    elem_len, elem_C1, _, _, shear_mode, spr_i, _, spr_K, _ = elastic
    n_el = elem_len.shape[0]
    n_side = 1 if shear_mode == 0 else 2
    w = 1.0 if shear_mode == 0 else 0.5
    V = 0.0
    for i in range(n_el):
        for side in range(n_side):
            r = n_side * i + side
            for k in range(3):
                V += 0.5 * w * elem_len[i] * elem_C1[i, k] * e[r, k] * e[r, k]
    r0 = n_side * n_el
    for k in range(spr_i.shape[0]):
        for c in range(3):
            V += 0.5 * spr_K[k, c] * e[r0 + k, c] * e[r0 + k, c]
    return V


@numba.njit(cache=True)
def _step_energy(elastic, e0, e1, beta, e_work):
    """Elastic part [J] of the energy that the step conserves for a linear rod, between strains
    e0 and e1 (n_s, 3): V((e0 + e1) / 2) + (beta - 1/4) / 2 d^T W d with d = e1 - e0; at
    beta = 1/2 it is (V(e0) + V(e1)) / 2. e_work (n_s, 3) scratch."""
    for q in range(e0.shape[0]):
        for c in range(3):
            e_work[q, c] = 0.5 * (e0[q, c] + e1[q, c])
    V = _strain_energy(elastic, e_work)
    # The jump's share, 1/2 d^T W d weighted by beta - 1/4.
    for q in range(e0.shape[0]):
        for c in range(3):
            e_work[q, c] = e1[q, c] - e0[q, c]
    return V + (beta - 0.25) * _strain_energy(elastic, e_work)


@numba.njit(cache=True)
def _applied(p, O, model, loads, k, f_out, tau_out):
    """Applied (non-elastic) forces at (p, O), loads row k, into f_out / tau_out (overwritten);
    returns their potential U [J] (gravity, uniform and tip loads, tendons, magnets)."""
    _, inertia, tendon, magnet = model
    gravity, dist_force, tip_force, tip_moment, tension, field_B, field_G, _, base_R = loads
    kb = k if base_R.shape[0] > 1 else 0
    kd = k if dist_force.shape[0] > 1 else 0
    kt = k if tip_force.shape[0] > 1 else 0
    km = k if tip_moment.shape[0] > 1 else 0
    kn = k if tension.shape[0] > 1 else 0
    kf = k if field_B.shape[0] > 1 else 0
    n = p.shape[0]
    for a in range(n):
        for c in range(3):
            f_out[a, c] = 0.0
            tau_out[a, c] = 0.0
    # Each sub-kernel adds to the forces and to the energy.
    U = _applied_forces(p, O, inertia, gravity, dist_force, kd, tip_force, kt, tip_moment, km,
                        0.0, f_out, tau_out)  # fmt: skip
    U = _tendon_forces(p, O, base_R, kb, tendon, tension, kn, U, f_out, tau_out)
    return _magnetic_forces(p, O, magnet, field_B, field_G, kf, U, f_out, tau_out)


@numba.njit(cache=True, inline="always")
def _new_frames(O, fr, rot_free, base_R, kb, O_out):
    """O_out <- O Cay0(fr) at the free frames, the base frame (row kb) at the others."""
    # The explicit step's in-place turn (`_turn_frames`) on a copy: one Cayley map for both.
    for a in range(O.shape[0]):
        src = O[a] if rot_free[a] else base_R[kb]
        for r in range(3):
            for c in range(3):
                O_out[a, r, c] = src[r, c]
    _turn_frames(O_out, fr, rot_free)


@numba.njit(cache=True, inline="always")
def _fixed_cayley(O, O_new, a, fr):
    """fr[a] <- no-half Cayley parameter of O[a]^T O_new[a] (a prescribed frame's step)."""
    r00 = O[a, 0, 0] * O_new[a, 0, 0] + O[a, 1, 0] * O_new[a, 1, 0] + O[a, 2, 0] * O_new[a, 2, 0]
    r11 = O[a, 0, 1] * O_new[a, 0, 1] + O[a, 1, 1] * O_new[a, 1, 1] + O[a, 2, 1] * O_new[a, 2, 1]
    r22 = O[a, 0, 2] * O_new[a, 0, 2] + O[a, 1, 2] * O_new[a, 1, 2] + O[a, 2, 2] * O_new[a, 2, 2]
    r21 = O[a, 0, 2] * O_new[a, 0, 1] + O[a, 1, 2] * O_new[a, 1, 1] + O[a, 2, 2] * O_new[a, 2, 1]
    r12 = O[a, 0, 1] * O_new[a, 0, 2] + O[a, 1, 1] * O_new[a, 1, 2] + O[a, 2, 1] * O_new[a, 2, 2]
    r02 = O[a, 0, 0] * O_new[a, 0, 2] + O[a, 1, 0] * O_new[a, 1, 2] + O[a, 2, 0] * O_new[a, 2, 2]
    r20 = O[a, 0, 2] * O_new[a, 0, 0] + O[a, 1, 2] * O_new[a, 1, 0] + O[a, 2, 2] * O_new[a, 2, 0]
    r10 = O[a, 0, 1] * O_new[a, 0, 0] + O[a, 1, 1] * O_new[a, 1, 0] + O[a, 2, 1] * O_new[a, 2, 0]
    r01 = O[a, 0, 0] * O_new[a, 0, 1] + O[a, 1, 0] * O_new[a, 1, 1] + O[a, 2, 0] * O_new[a, 2, 1]
    s = 1.0 / (1.0 + r00 + r11 + r22)
    fr[a, 0] = s * (r21 - r12)
    fr[a, 1] = s * (r02 - r20)
    fr[a, 2] = s * (r10 - r01)


@numba.njit(cache=True, inline="always")
def _skew_kinetic(Jd, a, fx, fy, fz):
    """(F J_d - J_d F^T)^v with F = Cay0(f): the body angular momentum of a step (x dt)."""
    s = 2.0 / (1.0 + fx * fx + fy * fy + fz * fz)
    F01 = s * (-fz + fx * fy)
    F02 = s * (fy + fx * fz)
    F10 = s * (fz + fx * fy)
    F12 = s * (-fx + fy * fz)
    F20 = s * (-fy + fx * fz)
    F21 = s * (fx + fy * fz)
    J1 = Jd[a, 0]
    J2 = Jd[a, 1]
    J3 = Jd[a, 2]
    return F21 * J2 - J3 * F12, F02 * J3 - J1 * F20, F10 * J1 - J2 * F01


@numba.njit(cache=True)
def _run_implicit(state, model, loads, damping, num_beta, beta, dt, step0, n_steps, every, rec,
                  work, imp):  # fmt: skip
    """Advance the implicit variational step n_steps steps from global step step0.

    Per step j (module docstring): applied forces at q^j, then Newton on (p^{j+1}, F^j) for
      m (p^{j+1} - 2 p^j + p^{j-1}) = dt^2 (f_app + f_damp - B_p^T W ebar),
      (F^j J_d - J_d F^{jT})^v - (J_d F^{j-1} - F^{j-1,T} J_d)^v = dt^2 (tau_app + tau_damp
      - B_eta^T W ebar),
    ebar = beta e^{j-1} + (1 - 2 beta) e^j + beta e^{j+1} (beta: the strain weight,
    `_integrate.IMPLICIT_NEWMARK_BETA`), B at q^j; corrections from (M + beta dt^2 B(q^j)^T W
    B(q^{j+1})) delta = -r in the velocity layout (translation, body rotation angle ~ 2 f).
    Viscous and Kelvin-Voigt damping (kv_beta) are in the residual with the step's velocity
    and strain rate (e^{j+1} - e^j) / dt. num_beta > 0 [s] then projects the step's velocity
    as `_run`'s Kelvin-Voigt correction does (numerical damping of the stiff modes).

    imp = (e_prev, e_cur, e_new, e_bar (n_s, 3), O_new (n, 3, 3), A (n_q, n_q), r (n_q,),
    Jw (6, 3, 3), init (1,) int64, refresh (1,) int64, iters (1,) int64): strains of q^{j-1},
    q^j, q^{j+1}, their mix, the new frames, Newton's banded LU factor, the residual, scratch;
    init[0] = 1 recomputes e_prev / e_cur from the state (first call of a run; the previous
    frames are O Cay0(fr)^T and the base row 0); refresh[0] Newton iterations between
    refactorisations (1: Newton); iters[0] accumulates Newton iterations. The work tuple is
    `_run`'s (kv_L, kv_u, kv_J serve the num_beta projection). Returns (status, steps done).
    """
    p, p_prev, O, fr = state
    elastic, inertia, _, _ = model
    node_mass, _, node_Jd, node_J, pos_free, rot_free = inertia
    base_p, base_R = loads[7], loads[8]
    node_c, node_cw, kv_beta, dof_p, dof_r, bw, kv_every = damping
    rec_p, rec_O, rec_E, _ = rec
    ke_prev, work_f, work_tau, work_p, kv_L, kv_u, kv_J = work
    e_prev, e_cur, e_new, e_bar, O_new, A, r, Jw, init, refresh, iters = imp
    n = p.shape[0]
    inv_dt = 1.0 / dt
    dt2 = dt * dt
    # Round-off floor of the position corrections: 1e-15 of the rod's length.
    tol_p = 1e-15 * elastic[0].sum()
    if init[0] != 0:
        # Strains of the last two configurations (the previous frames undo the stored step).
        for a in range(n):
            for c in range(3):
                fr[a, c] = -fr[a, c]
        _new_frames(O, fr, rot_free, base_R, 0, O_new)
        for a in range(n):
            for c in range(3):
                fr[a, c] = -fr[a, c]
        _strains(p_prev, O_new, base_R, 0, elastic, e_prev)
        _strains(p, O, base_R, 0, elastic, e_cur)
        init[0] = 0
    for k in range(n_steps):
        j = step0 + k
        kp1 = k + 1 if base_p.shape[0] > 1 else 0
        kb = k if base_R.shape[0] > 1 else 0
        kb1 = k + 1 if base_R.shape[0] > 1 else 0
        sample = j % every == 0
        if sample:
            row = j // every
            for a in range(n):
                for c in range(3):
                    rec_p[row, a, c] = p[a, c]
                    for d in range(3):
                        rec_O[row, a, c, d] = O[a, c, d]
        # Applied forces at j (the damping forces are implicit, in the residual).
        U = _applied(p, O, model, loads, k, work_f, work_tau)
        # Predictor: the last step repeated.
        for a in range(n):
            if pos_free[a]:
                for c in range(3):
                    work_p[a, c] = 2.0 * p[a, c] - p_prev[a, c]
            else:
                for c in range(3):
                    work_p[a, c] = base_p[kp1, c]
        # The last step's momenta (J_d F^{j-1} - F^{j-1,T} J_d)^v = -(F J_d - J_d F^T)^v of
        # F^{j-1,T} = Cay0(-f), kept in kv_u's rotation slots (fr becomes the iterate).
        for a in range(n):
            if dof_r[a] >= 0:
                ux, uy, uz = _skew_kinetic(node_Jd, a, -fr[a, 0], -fr[a, 1], -fr[a, 2])
                kv_u[dof_r[a]] = -ux
                kv_u[dof_r[a] + 1] = -uy
                kv_u[dof_r[a] + 2] = -uz
        ok = False
        for _it in range(IMPLICIT_MAX_ITER):
            _new_frames(O, fr, rot_free, base_R, kb1, O_new)
            _strains(work_p, O_new, base_R, kb1, elastic, e_new)
            for q in range(e_bar.shape[0]):
                for c in range(3):
                    e_bar[q, c] = (
                        beta * (e_prev[q, c] + e_new[q, c]) + (1.0 - 2.0 * beta) * e_cur[q, c]
                    )
                    e_bar[q, c] += kv_beta * inv_dt * (e_new[q, c] - e_cur[q, c])
            # Residual: applied + damping forces (work_*) plus the mixed elastic stress at j.
            _residual(p, p_prev, O, work_p, fr, work_f, work_tau, node_mass, node_Jd, dof_p,
                      dof_r, base_R, kb, elastic, e_bar, dt2, kv_u, r)  # fmt: skip
            # Viscous damping with the step's velocity (backward Euler: it also damps the
            # stiff modes, which the step aliases to near its Nyquist rate).
            for a in range(n):
                if dof_p[a] >= 0:
                    for c in range(3):
                        r[dof_p[a] + c] += dt * node_c[a, c] * (work_p[a, c] - p[a, c])
                if dof_r[a] >= 0:
                    for c in range(3):
                        r[dof_r[a] + c] += 2.0 * dt * node_cw[a, c] * fr[a, c]
            # Newton's matrix M + beta dt^2 B(q^j)^T W B(q^{j+1}) at the iterate; kept while the
            # iteration contracts fast (the Jacobian moves with q^{j+1} only).
            if _it % refresh[0] == 0:
                _newton_matrix(p, O, work_p, O_new, base_R, kb, kb1, model, dof_p, dof_r,
                               beta * dt2 + dt * kv_beta, dt, node_c, node_cw, bw, A,
                               Jw)  # fmt: skip
            _band_lu_solve(A, bw, r)
            # Corrections: positions, and body rotations eta (f += (I + f^ + f f^T) eta / 2).
            dp_max = 0.0
            inc_p = 0.0
            dr_max = 0.0
            inc_r = 0.0
            for a in range(n):
                if dof_p[a] >= 0:
                    for c in range(3):
                        d = r[dof_p[a] + c]
                        work_p[a, c] -= d
                        dp_max = max(dp_max, abs(d))
                        inc_p = max(inc_p, abs(work_p[a, c] - p[a, c]))
                if dof_r[a] >= 0:
                    ex = r[dof_r[a]]
                    ey = r[dof_r[a] + 1]
                    ez = r[dof_r[a] + 2]
                    fx = fr[a, 0]
                    fy = fr[a, 1]
                    fz = fr[a, 2]
                    fe = fx * ex + fy * ey + fz * ez
                    fr[a, 0] -= 0.5 * (ex + (fy * ez - fz * ey) + fe * fx)
                    fr[a, 1] -= 0.5 * (ey + (fz * ex - fx * ez) + fe * fy)
                    fr[a, 2] -= 0.5 * (ez + (fx * ey - fy * ex) + fe * fz)
                    dr_max = max(dr_max, abs(ex), abs(ey), abs(ez))
                    inc_r = max(inc_r, 2.0 * (abs(fr[a, 0]) + abs(fr[a, 1]) + abs(fr[a, 2])))
            iters[0] += 1
            # max() drops NaNs: test the corrections' sum.
            if not math.isfinite(r.sum()):
                return STATUS_NONFINITE, k
            if dp_max <= IMPLICIT_TOL * inc_p + tol_p and dr_max <= IMPLICIT_TOL * inc_r + 1e-15:
                ok = True
                break
        if not ok:
            return STATUS_IMPLICIT_NEWTON, k
        # Numerical damping of the aliased stiff modes: the step's velocity projected with
        # (M + dt beta_n B^T W B) u = M u_pred (backward Euler, dissipative in the M norm).
        if num_beta > 0.0:
            if k == 0 or j % kv_every == 0:
                _kv_assemble(p, O, base_R, kb, model, dof_p, dof_r, num_beta, dt, bw, kv_L,
                             kv_J)  # fmt: skip
            _kv_correct(p, work_p, fr, node_mass, node_J, dof_p, dof_r, kv_L, bw, dt, kv_u)
        # The final strains of q^{j+1}.
        _new_frames(O, fr, rot_free, base_R, kb1, O_new)
        _strains(work_p, O_new, base_R, kb1, elastic, e_new)
        # Energy at j: kinetic and elastic energy of the steps j -+ 1/2 averaged (the quantity
        # the scheme conserves for a linear rod, `_step_energy`), applied potential at j.
        ke = _kinetic(work_p, p, fr, node_mass, node_J, pos_free, rot_free, dt)
        if sample:
            v_m = _step_energy(elastic, e_prev, e_cur, beta, e_bar)
            v_p = _step_energy(elastic, e_cur, e_new, beta, e_bar)
            rec_E[j // every] = 0.5 * (ke + ke_prev[0] + v_m + v_p) + U
        ke_prev[0] = ke
        # Prescribed frames: their step parameter; shift the state.
        for a in range(n):
            if not rot_free[a]:
                _fixed_cayley(O, O_new, a, fr)
            for c in range(3):
                p_prev[a, c] = p[a, c]
                p[a, c] = work_p[a, c]
                for d in range(3):
                    O[a, c, d] = O_new[a, c, d]
        for q in range(e_bar.shape[0]):
            for c in range(3):
                e_prev[q, c] = e_cur[q, c]
                e_cur[q, c] = e_new[q, c]
    return STATUS_OK, n_steps


@numba.njit(cache=True)
def _residual(p, p_prev, O, p_new, fr, f_app, tau_app, node_mass, node_Jd, dof_p, dof_r,
              base_R, kb, elastic, e_bar, dt2, mom_prev, r_out):  # fmt: skip
    """Residual of the step's equations in the velocity layout into r_out (n_q,).

    Translation rows m (p_new - 2 p + p_prev) - dt^2 f, rotation rows (F J_d - J_d F^T)^v -
    mom_prev - dt^2 tau, f / tau the applied forces plus -B(p, O)^T W e_bar. mom_prev (n_q,)
    holds the previous step's (J_d F - F^T J_d)^v at the rotation slots.
    """
    n = p.shape[0]
    # Inertia and applied rows; the elastic forces of the mixed strains (Jacobian at q^j) after.
    for a in range(n):
        da = dof_p[a]
        if da >= 0:
            for c in range(3):
                r_out[da + c] = node_mass[a] * (p_new[a, c] - 2.0 * p[a, c] + p_prev[a, c])
                r_out[da + c] -= dt2 * f_app[a, c]
        dr = dof_r[a]
        if dr >= 0:
            ux, uy, uz = _skew_kinetic(node_Jd, a, fr[a, 0], fr[a, 1], fr[a, 2])
            r_out[dr] = ux - mom_prev[dr] - dt2 * tau_app[a, 0]
            r_out[dr + 1] = uy - mom_prev[dr + 1] - dt2 * tau_app[a, 1]
            r_out[dr + 2] = uz - mom_prev[dr + 2] - dt2 * tau_app[a, 2]
    _strain_forces_rows(p, O, base_R, kb, elastic, e_bar, dof_p, dof_r, -dt2, r_out)


@numba.njit(cache=True)
def _strain_forces_rows(p, O, base_R, kb, elastic, e, dof_p, dof_r, scale, r_out):
    """r_out += scale * (-B(p, O)^T W e) in the velocity layout (rows of free dofs only)."""
    elem_len, elem_C1, _, _, shear_mode, spr_i, spr_j, spr_K, _ = elastic
    n_el = elem_len.shape[0]
    n_side = 1 if shear_mode == 0 else 2
    w = 1.0 if shear_mode == 0 else 0.5
    for i in range(n_el):
        a = i
        b = i + 1
        dx = p[b, 0] - p[a, 0]
        dy = p[b, 1] - p[a, 1]
        dz = p[b, 2] - p[a, 2]
        for side in range(n_side):
            c = a if side == 0 else b
            row = n_side * i + side
            nx = elem_C1[i, 0] * e[row, 0]
            ny = elem_C1[i, 1] * e[row, 1]
            nz = elem_C1[i, 2] * e[row, 2]
            qx, qy, qz = _body_of(O, c, dx, dy, dz)
            wx, wy, wz = _world_of(O, c, w * nx, w * ny, w * nz)
            if dof_p[a] >= 0:
                r_out[dof_p[a]] += scale * wx
                r_out[dof_p[a] + 1] += scale * wy
                r_out[dof_p[a] + 2] += scale * wz
            if dof_p[b] >= 0:
                r_out[dof_p[b]] -= scale * wx
                r_out[dof_p[b] + 1] -= scale * wy
                r_out[dof_p[b] + 2] -= scale * wz
            if dof_r[c] >= 0:
                r_out[dof_r[c]] += scale * w * (qy * nz - qz * ny)
                r_out[dof_r[c] + 1] += scale * w * (qz * nx - qx * nz)
                r_out[dof_r[c] + 2] += scale * w * (qx * ny - qy * nx)
    r0 = n_side * n_el
    for k in range(spr_i.shape[0]):
        i = spr_i[k]
        j = spr_j[k]
        if i < 0:
            cx, cy, cz = _cayinv_rel(base_R, kb, O, j)
        else:
            cx, cy, cz = _cayinv_rel(O, i, O, j)
        kx = spr_K[k, 0] * e[r0 + k, 0]
        ky = spr_K[k, 1] * e[r0 + k, 1]
        kz = spr_K[k, 2] * e[r0 + k, 2]
        xx = cy * kz - cz * ky
        xy = cz * kx - cx * kz
        xz = cx * ky - cy * kx
        ck = 0.25 * (cx * kx + cy * ky + cz * kz)
        if dof_r[j] >= 0:
            r_out[dof_r[j]] -= scale * (kx - 0.5 * xx + ck * cx)
            r_out[dof_r[j] + 1] -= scale * (ky - 0.5 * xy + ck * cy)
            r_out[dof_r[j] + 2] -= scale * (kz - 0.5 * xz + ck * cz)
        if i >= 0 and dof_r[i] >= 0:
            r_out[dof_r[i]] += scale * (kx + 0.5 * xx + ck * cx)
            r_out[dof_r[i] + 1] += scale * (ky + 0.5 * xy + ck * cy)
            r_out[dof_r[i] + 2] += scale * (kz + 0.5 * xz + ck * cz)


@numba.njit(cache=True, inline="always")
def _shear_jacobians(p, O, a, b, c, l, sg, Jw, off):
    """Jw[off + 0..2] <- the strain Jacobians of g = O_c^T (p_b - p_a) / l with respect to
    p_a, p_b (world) and the body rotation of frame c, times sg."""
    dx = p[b, 0] - p[a, 0]
    dy = p[b, 1] - p[a, 1]
    dz = p[b, 2] - p[a, 2]
    qx, qy, qz = _body_of(O, c, dx, dy, dz)
    for r in range(3):
        for s in range(3):
            Jw[off + 1, r, s] = sg * O[c, s, r] / l
            Jw[off, r, s] = -Jw[off + 1, r, s]
    h = sg / l
    Jw[off + 2, 0, 0] = 0.0
    Jw[off + 2, 0, 1] = -qz * h
    Jw[off + 2, 0, 2] = qy * h
    Jw[off + 2, 1, 0] = qz * h
    Jw[off + 2, 1, 1] = 0.0
    Jw[off + 2, 1, 2] = -qx * h
    Jw[off + 2, 2, 0] = -qy * h
    Jw[off + 2, 2, 1] = qx * h
    Jw[off + 2, 2, 2] = 0.0


@numba.njit(cache=True, inline="always")
def _spring_jacobians(cx, cy, cz, Jw, off):
    """Jw[off] <- dc/d eta_i = -(I - c^/2 + c c^T/4), Jw[off + 1] <- dc/d eta_j = I + c^/2 +
    c c^T/4 of the Cayley strain c = cay^-1(O_i^T O_j)."""
    cc = (cx, cy, cz)
    for r in range(3):
        for s in range(3):
            v = 0.25 * cc[r] * cc[s] + (1.0 if r == s else 0.0)
            Jw[off + 1, r, s] = v
            Jw[off, r, s] = -v
    for m in range(2):
        Jw[off + m, 0, 1] -= 0.5 * cz
        Jw[off + m, 0, 2] += 0.5 * cy
        Jw[off + m, 1, 0] += 0.5 * cz
        Jw[off + m, 1, 2] -= 0.5 * cx
        Jw[off + m, 2, 0] -= 0.5 * cy
        Jw[off + m, 2, 1] += 0.5 * cx


@numba.njit(cache=True)
def _newton_matrix(p0, O0, p1, O1, base_R, kb0, kb1, model, dof_p, dof_r, h, dt, node_c,
                   node_cw, bw, A_out, Jw):  # fmt: skip
    """Newton's matrix A = M + dt C + h B(p0, O0)^T W B(p1, O1) of the implicit step (C the
    viscous damping node_c, node_cw (n, 3), h = beta dt^2 + dt beta_kv), LU-factored in
    place (banded, no pivoting: A is a small perturbation of a symmetric positive definite
    matrix). B is the strain Jacobian (generalised velocity layout: dof_p, dof_r (n,)), W the
    strain stiffnesses, M = diag(node_mass, node_J); base frame rows kb0 / kb1 of base_R.
    A_out (n_q, n_q) (band of half width bw used); Jw (6, 3, 3) scratch."""
    elastic, inertia, _, _ = model
    elem_len, elem_C1, _, _, shear_mode, spr_i, spr_j, spr_K, _ = elastic
    node_mass, _, _, node_J, _, _ = inertia
    n_q = A_out.shape[0]
    for r in range(n_q):
        for c in range(max(0, r - bw), min(n_q, r + bw + 1)):
            A_out[r, c] = 0.0
    n = p0.shape[0]
    # Kinetic part (lumped).
    for a in range(n):
        if dof_p[a] >= 0:
            for k in range(3):
                A_out[dof_p[a] + k, dof_p[a] + k] = node_mass[a] + dt * node_c[a, k]
        if dof_r[a] >= 0:
            for k in range(3):
                A_out[dof_r[a] + k, dof_r[a] + k] = node_J[a, k] + dt * node_cw[a, k]
    # Shear-stretch strains: slots (p_a, p_b, eta_c), left Jacobians at q0, right at q1.
    n_side = 1 if shear_mode == 0 else 2
    for i in range(elem_len.shape[0]):
        a = i
        b = i + 1
        l = elem_len[i]
        for side in range(n_side):
            c = a if side == 0 else b
            w = h * (1.0 if shear_mode == 0 else 0.5) * l
            _shear_jacobians(p0, O0, a, b, c, l, 1.0, Jw, 0)
            _shear_jacobians(p1, O1, a, b, c, l, 1.0, Jw, 3)
            for u in range(3):
                du = dof_p[a] if u == 0 else (dof_p[b] if u == 1 else dof_r[c])
                if du < 0:
                    continue
                for v in range(3):
                    dv = dof_p[a] if v == 0 else (dof_p[b] if v == 1 else dof_r[c])
                    if dv < 0:
                        continue
                    _kv_add_block(A_out, du, dv, Jw[u], Jw[3 + v], w * elem_C1[i, 0],
                                  w * elem_C1[i, 1], w * elem_C1[i, 2])  # fmt: skip
    # Bending-torsion springs: slots (eta_i, eta_j).
    for k in range(spr_i.shape[0]):
        i = spr_i[k]
        j = spr_j[k]
        if i < 0:
            cx, cy, cz = _cayinv_rel(base_R, kb0, O0, j)
        else:
            cx, cy, cz = _cayinv_rel(O0, i, O0, j)
        _spring_jacobians(cx, cy, cz, Jw, 0)
        if i < 0:
            cx, cy, cz = _cayinv_rel(base_R, kb1, O1, j)
        else:
            cx, cy, cz = _cayinv_rel(O1, i, O1, j)
        _spring_jacobians(cx, cy, cz, Jw, 3)
        for u in range(2):
            du = (dof_r[i] if i >= 0 else -1) if u == 0 else dof_r[j]
            if du < 0:
                continue
            for v in range(2):
                dv = (dof_r[i] if i >= 0 else -1) if v == 0 else dof_r[j]
                if dv < 0:
                    continue
                _kv_add_block(A_out, du, dv, Jw[u], Jw[3 + v], h * spr_K[k, 0],
                              h * spr_K[k, 1], h * spr_K[k, 2])  # fmt: skip
    # Banded LU without pivoting, in place (unit lower factor below the diagonal).
    for k in range(n_q):
        piv = A_out[k, k]
        for i in range(k + 1, min(n_q, k + bw + 1)):
            m = A_out[i, k] / piv
            A_out[i, k] = m
            if m != 0.0:
                for c in range(k + 1, min(n_q, k + bw + 1)):
                    A_out[i, c] -= m * A_out[k, c]


@numba.njit(cache=True)
def _band_lu_solve(LU, bw, u):
    """Solve A x = u in place with the banded LU factor of `_newton_matrix`."""
    n_q = u.shape[0]
    for i in range(n_q):
        s = u[i]
        for k in range(max(0, i - bw), i):
            s -= LU[i, k] * u[k]
        u[i] = s
    for i in range(n_q - 1, -1, -1):
        s = u[i]
        for k in range(i + 1, min(n_q, i + bw + 1)):
            s -= LU[i, k] * u[k]
        u[i] = s / LU[i, i]
