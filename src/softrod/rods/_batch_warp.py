"""Batched exact statics on NVIDIA Warp: `solve_static(method="shooting")` for B load cases at
once, one thread per item, float64, on a GPU or on Warp's CPU device.

The physics is `_static_kernels` ported to Warp: RK4 of the Kirchhoff/Cosserat rod with exact
tendon coupling (Rucker & Webster), the section balance solved by Newton at every stage, forward
sensitivities of the base moment M0, and damped Newton shooting on M0 with the same scaled
residual (M(L) - M_tip) / moment_scale and tolerance. Load continuation follows `_shooting`
(direct Newton up to `_DIRECT_LOAD_ANGLE`, else or on failure an adaptive ramp from the unloaded
robot with a secant predictor), each thread running its own ramp, so no host synchronisation
happens inside a solve. Items whose load number exceeds `_MULTI_SHOOT_ANGLE` (where
`solve_static` switches to multiple shooting) are not solved: success=False, values NaN.

Path rules (issue 19) as the CPU back end (`_batch_kernels`) applies them: direct Newton only
when the loads and the tendons together bend the robot little (`_DIRECT_BENDING_ANGLE`, the
tendons' bending number computed on the host), Newton steps bounded in the scaled unknowns,
and continuation steps kept only while the tip stays on the branch (`_tip_step_ok`: at most
`_MAX_TIP_MOVE` L per step, within `_MAX_TIP_DEVIATION` L of the secant prediction), else
halved; status 5 when the smallest step still jumps. Stability: the numba batch's test
(`_stability_kernels`' checkpoints and interval maps, `_stability._second_variation_inertia`)
runs on the device in the final pass at each converged answer: six more directions restarted
at each checkpoint give the interval maps, streamed into the block LDL^T (status 7 and success
False where unstable). Only items whose LDL^T meets an exactly zero leading minor (where the CPU
test takes eigenvalues) go to the CPU test (`_stability_on_cpu`). With
`check_stability=False`, `stable` is None (not checked).

Tip Jacobians are exact: one more integration at the converged M0 carries the sensitivities to
every tension, and the implicit function theorem on the shooting residual gives
d tip / d tau = dp/dM0 (-(dM/dM0)^-1 dM/dtau) + dp/dtau (as `tip_jacobian`).

Tip error estimate (`StaticResult.tip_error`, the CPU batch's): the final pass first integrates
each converged answer once on the grid of twice the step (`_shooting._coarse_model`, the state
only), corrects that tip by one Newton step with the solve's last Jacobian and tip
sensitivities, and returns |difference| / (ratio - 1) (`_shooting._richardson`); the front end
(`_batch._refine_warp`) refines items above the bound on the CPU as the CPU batch does.

The integrated state (position, rotation, section moment; 15 values, no tendon lengths: tension
control reads none), its RK4 stage input and stage sum are registers. The sensitivity
directions' RK4 state, stage input and stage sum live in global arrays laid out (component,
item) so that neighbouring threads read neighbouring words. Newton evaluates a full step that
is predicted to converge without directions first (as `_static_kernels._newton`).

No `from __future__ import annotations` here: Warp reads the kernel signatures' types at
definition time.
"""

# mypy: ignore-errors
# (Warp kernel signatures are calls such as wp.array2d(dtype=...), not static types.)
# ruff: noqa: UP018
# (Warp treats a bare literal as a constant; int(0) declares a variable a loop may change.)

import time

import numpy as np
import warp as wp
from numba import njit, prange

from softrod.rods._batch_kernels import _grouped_stable, _loads_at, _no_field
from softrod.rods._batch_types import BatchArrays, BatchLoads
from softrod.rods._model import RodModel
from softrod.rods._shooting import (
    _CONTINUATION_STEP_BOUND,
    _DIRECT_BENDING_ANGLE,
    _DIRECT_LOAD_ANGLE,
    _DIRECT_STEP_BOUND,
    _MAX_CONTINUATION_SOLVES,
    _MAX_TIP_DEVIATION,
    _MAX_TIP_MOVE,
    _MIN_COARSE_RATIO,
    _MIN_LOAD_STEP,
    _MULTI_SHOOT_ANGLE,
    _ROUND_OFF_RESIDUAL,
    _coarse_model,
)
from softrod.rods._stability import STATUS_UNSTABLE
from softrod.rods._stability_kernels import _GROUP_ANGLE
from softrod.rods._static_kernels import (
    _PREDICTED_FRACTION,
    _SECTION_MAX_ITER,
    _SECTION_XTOL,
    _evaluate,
)

__all__ = ["bench_batch_warp", "random_loads", "solve_batch_warp"]

#: Newton iterations per continuation step (as `_shooting`'s continuation).
_STEP_ITER = 12
#: Scratch memory [bytes] one launch may use; larger batches run in chunks of this size.
_SCRATCH_BYTES = 4 << 30
#: Status codes beside `_shooting`'s (0 converged, 1 max_iter, 2 stall, 3 non-finite): a load
#: that needs multiple shooting (`_batch_kernels.STATUS_NEEDS_MULTIPLE_SHOOTING`).
_STATUS_HEAVY = 8
#: `_final_kernel`'s stability verdicts beside 1 (stable) and 0 (not): left to the CPU test
#: (a zero leading minor, where `_negative_count3` takes eigenvalues), and not checked.
_UNDECIDED = -1
_NOT_CHECKED = -2
#: The tip error estimate's correction refuses a Jacobian of this condition number or more
#: (`_shooting._tip_corrected_by`'s bound on np.linalg.cond, the 2-norm's, here from svd3).
_MAX_COND = 1e14

f64 = wp.float64
#: Components of the integrated state: position, rotation (row-major), section moment. The
#: tendon lengths of `_static_kernels` are left out (tension control: nothing reads them).
_NY = 15
#: sqrt(3), as `_stability_kernels._checkpoints` writes it (np.sqrt(3.0)).
_SQRT3 = float(np.sqrt(3.0))

# Forward solves only: no adjoint code (it would double the compile time).
wp.set_module_options({"enable_backward": False})


@wp.struct
class _Rod:
    """The model's arrays (see `RodModel`) plus per-step load coefficients: the total distal
    force at the end of step k is F_tip + f_dist * dist_len[k] + g * mass_distal[k]. The node
    and step arrays hold the solve's grid (n_steps steps, nodes 0..n_steps) followed by the
    tip error estimate's grid of twice the step (`_shooting._coarse_model`, n_steps_c steps,
    its nodes from n_steps + 1 on, its steps from n_steps on, loads sliced from the fine
    grid's as `_batch_kernels._coarse_problem` slices them); ratio: its RK4 error ratio
    (`_MIN_COARSE_RATIO` or more, else 0: no estimate)."""

    node_s: wp.array(dtype=wp.float64)
    step_seg: wp.array(dtype=wp.int32)
    seg_par: wp.array2d(dtype=wp.float64)
    tendon: wp.array2d(dtype=wp.float64)
    dist_len: wp.array(dtype=wp.float64)
    mass_distal: wp.array(dtype=wp.float64)
    base_p: wp.vec3d
    base_R: wp.mat33d
    n_t: int
    n_steps: int
    n_steps_c: int
    ratio: wp.float64
    cosserat: int
    m_scale: wp.float64
    length: wp.float64


@wp.struct
class _Items:
    """Per-item loads: tensions (B, n_t) [N], tip force/moment, distributed force, gravity,
    and the tensions' bending number (B,) [rad]."""

    tau: wp.array2d(dtype=wp.float64)
    force: wp.array(dtype=wp.vec3d)
    moment: wp.array(dtype=wp.vec3d)
    dist: wp.array(dtype=wp.float64, ndim=2)
    grav: wp.array(dtype=wp.float64, ndim=2)
    #: The tensions' bending number [rad] (`_shooting._tendon_bending`, computed on the host).
    bend: wp.array(dtype=wp.float64)


@wp.struct
class _Scratch:
    """Per-thread work arrays, (component, item): RK4 state Z, stage input ZT, stage sum KA,
    each `_NY` * (1 + directions)."""

    Z: wp.array2d(dtype=wp.float64)
    ZT: wp.array2d(dtype=wp.float64)
    KA: wp.array2d(dtype=wp.float64)


@wp.func
def _ld3(A: wp.array2d(dtype=wp.float64), o: int, tid: int):
    return wp.vec3d(A[o, tid], A[o + 1, tid], A[o + 2, tid])


@wp.func
def _ldm(A: wp.array2d(dtype=wp.float64), o: int, tid: int):
    # Row-major 3x3 block starting at o.
    return wp.mat33d(
        A[o, tid],
        A[o + 1, tid],
        A[o + 2, tid],
        A[o + 3, tid],
        A[o + 4, tid],
        A[o + 5, tid],
        A[o + 6, tid],
        A[o + 7, tid],
        A[o + 8, tid],
    )


@wp.func
def _row3(A: wp.array2d(dtype=wp.float64), i: int):
    return wp.vec3d(A[i, 0], A[i, 1], A[i, 2])


@wp.func
def _put(sc: _Scratch, a: int, tid: int, d: wp.float64, stage: int, h: wp.float64):
    # RK4 bookkeeping for one component: stage sum K1 + 2 K2 + 2 K3 + K4, next stage input;
    # after the last stage the step's end state, also the next step's first stage input (no
    # separate update and copy passes: 15 global accesses per component and step, not 18).
    if stage == 0:
        sc.KA[a, tid] = d
        sc.ZT[a, tid] = sc.Z[a, tid] + f64(0.5) * h * d
    elif stage == 1:
        sc.KA[a, tid] = sc.KA[a, tid] + f64(2.0) * d
        sc.ZT[a, tid] = sc.Z[a, tid] + f64(0.5) * h * d
    elif stage == 2:
        sc.KA[a, tid] = sc.KA[a, tid] + f64(2.0) * d
        sc.ZT[a, tid] = sc.Z[a, tid] + h * d
    else:
        z = sc.Z[a, tid] + h / f64(6.0) * (sc.KA[a, tid] + d)
        sc.Z[a, tid] = z
        sc.ZT[a, tid] = z


@wp.func
def _put3(sc: _Scratch, o: int, tid: int, v: wp.vec3d, stage: int, h: wp.float64):
    _put(sc, o, tid, v[0], stage, h)
    _put(sc, o + 1, tid, v[1], stage, h)
    _put(sc, o + 2, tid, v[2], stage, h)


@wp.func
def _putm(sc: _Scratch, o: int, tid: int, m: wp.mat33d, stage: int, h: wp.float64):
    for a in range(3):
        for c in range(3):
            _put(sc, o + 3 * a + c, tid, m[a, c], stage, h)


@wp.func
def _amax3(v: wp.vec3d):
    return wp.max(wp.max(wp.abs(v[0]), wp.abs(v[1])), wp.abs(v[2]))


@wp.func
def _cols(c0: wp.vec3d, c1: wp.vec3d, c2: wp.vec3d):
    # The 3x3 matrix with these columns.
    return wp.mat33d(c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2])


@wp.func
def _stab_reset(sc: _Scratch, tid: int, o: int, ny: int, R: wp.mat33d):
    """Start the stability test's six directions at a checkpoint of frame R
    (`_static_kernels._evaluate_interval` with rot_dirs): dR = R [e_d]x (d = 0-2), dM = e_d."""
    zero = f64(0.0)
    I3 = wp.identity(n=3, dtype=wp.float64)
    for d in range(6):
        od = o + ny * d
        for a in range(ny):
            val = zero
            if d < 3 and a >= 3 and a < 12:
                dR = R @ wp.skew(I3[d])
                val = dR[(a - 3) // 3, (a - 3) % 3]
            elif d >= 3 and a == 12 + d - 3:
                val = f64(1.0)
            # Z and the next stage input ZT (`_put` reads the stage input from ZT).
            sc.Z[od + a, tid] = val
            sc.ZT[od + a, tid] = val


@wp.func
def _end_rotation(sc: _Scratch, tid: int, od: int, R1: wp.mat33d):
    # World rotation vee(dR R1^T) of a direction's end frame change dR (at offset od).
    W = _ldm(sc.Z, od + 3, tid) @ wp.transpose(R1)
    half = f64(0.5)
    return wp.vec3d(
        half * (W[2, 1] - W[1, 2]), half * (W[0, 2] - W[2, 0]), half * (W[1, 0] - W[0, 1])
    )


@wp.func
def _interval_map(
    sc: _Scratch,
    tid: int,
    o: int,
    ny: int,
    R0: wp.mat33d,
    M0: wp.vec3d,
    R1: wp.mat33d,
    M1: wp.vec3d,
):
    """`_stability_kernels._interval_maps` for one interval: its transfer map of (eta, p) as
    blocks (a, b; c, d) [eta rows, p rows], from the six directions at offset o started at the
    checkpoint (frame R0, moment M0 [N m]) and read at the next (R1, M1)."""
    half = f64(0.5)
    e0 = _end_rotation(sc, tid, o, R1)
    e1 = _end_rotation(sc, tid, o + ny, R1)
    e2 = _end_rotation(sc, tid, o + 2 * ny, R1)
    e3 = _end_rotation(sc, tid, o + 3 * ny, R1)
    e4 = _end_rotation(sc, tid, o + 4 * ny, R1)
    e5 = _end_rotation(sc, tid, o + 5 * ny, R1)
    Xe = _cols(e0, e1, e2)
    Xm = _cols(e3, e4, e5)
    Ye = _cols(
        _ld3(sc.Z, o + 12, tid), _ld3(sc.Z, o + ny + 12, tid), _ld3(sc.Z, o + 2 * ny + 12, tid)
    )
    Ym = _cols(
        _ld3(sc.Z, o + 3 * ny + 12, tid),
        _ld3(sc.Z, o + 4 * ny + 12, tid),
        _ld3(sc.Z, o + 5 * ny + 12, tid),
    )
    # World-frame start rotations, then the symplectic momenta p = dM - eta x M / 2 at both
    # ends: (eta, p)_1 = T(M1) W T(M0)^-1 (eta, p)_0, T(M) = [[I, 0], [[M / 2]x, I]].
    S0 = wp.skew(half * M0)
    S1 = wp.skew(half * M1)
    Wee = Xe @ wp.transpose(R0) - Xm @ S0
    Wpe = Ye @ wp.transpose(R0) - Ym @ S0
    return Wee, Xm, Wpe + S1 @ Wee, Ym + S1 @ Xm


@wp.func
def _neg_count3(D: wp.mat33d):
    """`_stability._negative_count3` of a symmetric D: its negative eigenvalues from the signs
    of the leading-minor ratios; -1 when D is singular, -2 when a leading minor is exactly 0
    (the CPU falls back to eigenvalues there: left to it)."""
    zero = f64(0.0)
    m1 = D[0, 0]
    m2 = D[0, 0] * D[1, 1] - D[0, 1] * D[1, 0]
    m3 = (
        D[0, 0] * (D[1, 1] * D[2, 2] - D[1, 2] * D[2, 1])
        - D[0, 1] * (D[1, 0] * D[2, 2] - D[1, 2] * D[2, 0])
        + D[0, 2] * (D[1, 0] * D[2, 1] - D[1, 1] * D[2, 0])
    )
    cnt = int(0)
    if m3 == zero:
        cnt = -1
    elif m1 == zero or m2 == zero:
        cnt = -2
    else:
        if m1 < zero:
            cnt += 1
        if m2 / m1 < zero:
            cnt += 1
        if m3 / m2 < zero:
            cnt += 1
    return cnt


@wp.func
def _inertia_step(
    a: wp.mat33d,
    b: wp.mat33d,
    c: wp.mat33d,
    d: wp.mat33d,
    D: wp.mat33d,
    C: wp.mat33d,
    Dinv: wp.mat33d,
    k: int,
    last: int,
):
    """Iteration k of `_stability._second_variation_inertia`'s block LDL^T, streamed: with
    map k = (a, b; c, d) (last = 0), or the closing pivot after the last map (last = 1, k = n).
    D, C, Dinv carry the pivot being built, the coupling and the last pivot's inverse.
    Returns (negative count of the pivot finished here, or -1 singular / -2 undecided, D, C,
    Dinv)."""
    half = f64(0.5)
    zero = f64(0.0)
    cnt = int(0)
    E00 = D
    E01 = C
    E11 = D
    if last == 0:
        if wp.determinant(b) == zero:
            cnt = -1
        else:
            bi = wp.inverse(b)
            t1 = bi @ a
            t2 = d @ t1
            E11r = d @ bi
            # E = [[b^-1 a, -b^-1], [c - d b^-1 a, d b^-1]]: its symmetric part.
            E00 = half * (t1 + wp.transpose(t1))
            E01 = half * (-bi + wp.transpose(c) - wp.transpose(t2))
            E11 = half * (E11r + wp.transpose(E11r))
    if cnt == 0 and k > 0:
        # Finish node k's pivot: the left step's E11 (in D), the right step's E00, minus the
        # elimination of node k - 1.
        if last == 0:
            D = D + E00
        if k > 1:
            D = D - wp.transpose(C) @ (Dinv @ C)
        D = half * (D + wp.transpose(D))
        cnt = _neg_count3(D)
        if cnt >= 0:
            Dinv = wp.inverse(D)
    if last == 0:
        C = E01
        D = E11
    return cnt, D, C, Dinv


@wp.func
def _add_count(neg: int, cnt: int):
    # The first -1 (singular: not stable) or -2 (undecided) sticks, as the CPU test returns.
    out = neg
    if neg >= 0:
        if cnt < 0:
            out = cnt
        else:
            out = neg + cnt
    return out


@wp.func
def _integrate(
    rod: _Rod,
    it: _Items,
    sc: _Scratch,
    tid: int,
    lam: wp.float64,
    M0: wp.vec3d,
    n_dir: int,
    n_stab: int,
    store: int,
    pos: wp.array3d(dtype=wp.float64),
    k_node: int,
    k_step: int,
    n_steps: int,
):
    """RK4 over the grid from base moment M0 at load level lam (every load and tension scaled);
    the final augmented state is left in sc.Z. Directions 0-2 are M0, 3 + j tension j (of
    n_dir); with n_stab = 6, six more directions carry the stability test's transfer maps
    (`_stability_kernels._interval_maps`: three rotations of the frame and three moment
    changes at the last checkpoint, restarted at each one) into the streamed inertia count
    (`_inertia_step`). With store, node positions go to pos[tid]. The grid: n_steps steps
    from node k_node and step k_step of rod's arrays (0, 0, n_steps: the solve's; the estimate's
    coarse grid: n_steps + 1, n_steps, n_steps_c).
    Returns (ok: 1, or 0 on a non-finite state; neg: the number of negative directions of
    the energy's second variation (`_second_variation_inertia`), -1 where a block is
    singular, -2 where a leading minor is exactly 0 (the CPU test decides), 0 unless n_stab)."""
    n_t = rod.n_t
    ny = _NY
    n_all = n_dir + n_stab
    nz = ny * (1 + n_all)
    zero = f64(0.0)
    one = f64(1.0)
    # The state itself in registers: (zp, zR, zM), its stage input (tR, tM: no derivative reads
    # the position) and stage sum (kp, kR, kM), the same RK4 arithmetic as `_put`; the
    # directions in sc (global).
    zp = rod.base_p
    zR = rod.base_R
    zM = M0
    tR = zR
    tM = zM
    kp = zp
    kR = zR
    kM = zM
    for a in range(ny, nz):
        sc.Z[a, tid] = zero
    for d in range(wp.min(n_dir, 3)):
        sc.Z[ny * (1 + d) + 12 + d, tid] = one
    if n_stab != 0:
        _stab_reset(sc, tid, ny * (1 + n_dir), ny, rod.base_R)
    # The first stage input (later ones, and the next steps' first, come from `_put`).
    for a in range(ny, nz):
        sc.ZT[a, tid] = sc.Z[a, tid]
    F = lam * it.force[tid]
    fd = lam * wp.vec3d(it.dist[tid, 0], it.dist[tid, 1], it.dist[tid, 2])
    g = lam * wp.vec3d(it.grav[tid, 0], it.grav[tid, 1], it.grav[tid, 2])
    e3 = wp.vec3d(zero, zero, one)
    I3 = wp.identity(n=3, dtype=wp.float64)
    # Section strains, warm-started along the rod; factors of the section Jacobian.
    v = e3
    u = wp.vec3d(zero, zero, zero)
    Ai = I3
    Bm = I3 * zero
    Si = I3
    Ci = I3
    unsettled = int(0)
    # The stability test's checkpoints (`_stability_kernels._checkpoints`) and the streamed
    # block LDL^T of its condensed second variation (`_second_variation_inertia`).
    neg = int(0)
    n_maps = int(0)
    # (Not named C: the section Newton's moment block is C.)
    piv_D = I3 * zero
    piv_C = I3 * zero
    piv_Dinv = I3 * zero
    stiff = rod.seg_par[0, 0]
    pull = zero
    start = int(0)
    omega = zero
    R_cp = rod.base_R
    M_cp = M0
    if n_stab != 0:
        for j in range(rod.seg_par.shape[0]):
            for a in range(3):
                stiff = wp.min(stiff, rod.seg_par[j, a])
        for i in range(n_t):
            pull = pull + wp.abs(lam * it.tau[tid, i])
    for k in range(n_steps):
        seg = rod.step_seg[k_step + k]
        sa = rod.node_s[k_node + k]
        sb = rod.node_s[k_node + k + 1]
        h = sb - sa
        kb = wp.vec3d(rod.seg_par[seg, 0], rod.seg_par[seg, 1], rod.seg_par[seg, 2])
        ks = wp.vec3d(rod.seg_par[seg, 3], rod.seg_par[seg, 4], rod.seg_par[seg, 5])
        us = wp.vec3d(rod.seg_par[seg, 6], rod.seg_par[seg, 7], rod.seg_par[seg, 8])
        Ne = F + fd * rod.dist_len[k_step + k] + g * rod.mass_distal[k_step + k]
        q = fd + g * rod.seg_par[seg, 9]
        loaded = int(0)
        for i in range(n_t):
            if int(rod.tendon[i, 3]) >= seg and it.tau[tid, i] != zero:
                loaded = 1
        if store != 0:
            for a in range(3):
                pos[tid, k, a] = zp[a]
        M_k = zM
        for stage in range(4):
            s = sa
            if stage == 1 or stage == 2:
                s = sa + f64(0.5) * h
            elif stage == 3:
                s = sb
            # Total distal force N(s) and body-frame section loads.
            N = Ne + q * (sb - s)
            R = tR
            M = tM
            nb = wp.transpose(R) @ N
            mb = wp.transpose(R) @ M
            # Section balance for (v, u):
            #   K_se (v - e3) + sum tau t = R^T N,  K_bt (u - u*) + sum tau r x t = R^T M
            if loaded == 0:
                u = us + wp.cw_div(mb, kb)
                if rod.cosserat != 0:
                    v = e3 + wp.cw_div(nb, ks)
            else:
                settled = int(0)
                for _it in range(_SECTION_MAX_ITER):
                    gv = wp.cw_mul(ks, v - e3) - nb
                    gu = wp.cw_mul(kb, u - us) - mb
                    A = wp.diag(ks)
                    Bm = I3 * zero
                    C = wp.diag(kb)
                    for i in range(n_t):
                        ti = lam * it.tau[tid, i]
                        if int(rod.tendon[i, 3]) >= seg and ti != zero:
                            r = _row3(rod.tendon, i)
                            w = v + wp.cross(u, r)
                            nw = wp.length(w)
                            t = w / nw
                            gv = gv + ti * t
                            gu = gu + ti * wp.cross(r, t)
                            # dt/dw = P = tau/|w| (I - t t^T); dw/dv = I, dw/du = -[r]x.
                            P = (ti / nw) * (I3 - wp.outer(t, t))
                            Sk = wp.skew(r)
                            Q = P @ Sk
                            A = A + P
                            Bm = Bm - Q
                            C = C - Sk @ Q
                    dv = wp.vec3d(zero, zero, zero)
                    du = dv
                    if rod.cosserat != 0:
                        # Block elimination of the symmetric positive definite 6x6 Jacobian.
                        Ai = wp.inverse(A)
                        Si = wp.inverse(C - wp.transpose(Bm) @ Ai @ Bm)
                        du = Si @ (-gu + wp.transpose(Bm) @ (Ai @ gv))
                        dv = Ai @ (-gv - Bm @ du)
                    else:
                        Ci = wp.inverse(C)
                        du = -(Ci @ gu)
                    # The CPU kernels' step limit (`_static_kernels._integrate`): no loaded
                    # tendon's direction w = v + u x r moves by more than |w| / 2, so a step
                    # from far away cannot cross the fold w = 0 and cycle there.
                    alpha = one
                    for i in range(n_t):
                        if int(rod.tendon[i, 3]) >= seg and lam * it.tau[tid, i] != zero:
                            r = _row3(rod.tendon, i)
                            nw = wp.length(v + wp.cross(u, r))
                            ndw = wp.length(dv + wp.cross(du, r))
                            if ndw > f64(0.5) * nw:
                                alpha = wp.min(alpha, f64(0.5) * nw / ndw)
                    v = v + alpha * dv
                    u = u + alpha * du
                    dmax = wp.max(_amax3(dv), _amax3(du))
                    xmax = wp.max(one, wp.max(_amax3(v), _amax3(u)))
                    if dmax <= f64(_SECTION_XTOL) * xmax:
                        settled = 1
                        break
                if settled == 0:
                    # No section balance (a tendon folding back): the integration fails, as
                    # the CPU kernels' does.
                    unsettled = 1
            # p' = R v ; R' = R [u]x ; M' = -p' x N ; l_i' = |v + u x r_i|
            pd = R @ v
            Rd = R @ wp.skew(u)
            Md = -wp.cross(pd, N)
            if stage == 0:
                kp = pd
                kR = Rd
                kM = Md
                tR = zR + f64(0.5) * h * Rd
                tM = zM + f64(0.5) * h * Md
            elif stage == 1:
                kp = kp + f64(2.0) * pd
                kR = kR + f64(2.0) * Rd
                kM = kM + f64(2.0) * Md
                tR = zR + f64(0.5) * h * Rd
                tM = zM + f64(0.5) * h * Md
            elif stage == 2:
                kp = kp + f64(2.0) * pd
                kR = kR + f64(2.0) * Rd
                kM = kM + f64(2.0) * Md
                tR = zR + h * Rd
                tM = zM + h * Md
            else:
                zp = zp + h / f64(6.0) * (kp + pd)
                zR = zR + h / f64(6.0) * (kR + Rd)
                zM = zM + h / f64(6.0) * (kM + Md)
                tR = zR
                tM = zM
            # Sensitivities: linearize every line above, one direction at a time.
            for d in range(n_all):
                o = ny * (1 + d)
                E = _ldm(sc.ZT, o + 3, tid)
                dM = _ld3(sc.ZT, o + 12, tid)
                # d(R^T N) = dR^T N ; d(R^T M) = dR^T M + R^T dM
                bv = wp.transpose(E) @ N
                bu = wp.transpose(E) @ M + wp.transpose(R) @ dM
                if d >= 3 and d < n_dir:
                    j = d - 3
                    if int(rod.tendon[j, 3]) >= seg:
                        # Minus dg/dtau_j: tendon j's force and moment on the section (its
                        # unit tangent t = w / |w|, w = v + u x r_j, at the stage's strains).
                        r = _row3(rod.tendon, j)
                        w = v + wp.cross(u, r)
                        t = w / wp.length(w)
                        bv = bv - t
                        bu = bu - wp.cross(r, t)
                # J dx = b with the section Jacobian at the converged strains.
                dv = wp.vec3d(zero, zero, zero)
                du = dv
                if loaded == 0:
                    du = wp.cw_div(bu, kb)
                    if rod.cosserat != 0:
                        dv = wp.cw_div(bv, ks)
                elif rod.cosserat != 0:
                    du = Si @ (bu - wp.transpose(Bm) @ (Ai @ bv))
                    dv = Ai @ (bv - Bm @ du)
                else:
                    du = Ci @ bu
                dp = E @ v + R @ dv
                _put3(sc, o, tid, dp, stage, h)
                _putm(sc, o + 3, tid, E @ wp.skew(u) + R @ wp.skew(du), stage, h)
                _put3(sc, o + 12, tid, -wp.cross(dp, N), stage, h)
        if n_stab != 0:
            # `_checkpoints`: the Jacobi equation's largest wavenumber over step k (its distal
            # force at both ends, the moment at both nodes); node k + 1 closes the interval
            # when the next step would take the phase past `_GROUP_ANGLE` (or at the tip).
            fa = Ne + q * h
            n_end = wp.sqrt(wp.max(wp.dot(fa, fa), wp.dot(Ne, Ne)))
            M_k1 = zM
            mom = wp.max(_amax3(M_k), _amax3(M_k1))
            wk = wp.sqrt((n_end + pull) / stiff) + f64(_SQRT3) * mom / stiff
            omega = wp.max(omega, wk)
            close = int(0)
            if k + 1 == n_steps:
                close = 1
            elif (rod.node_s[k_node + k + 2] - rod.node_s[k_node + start]) * omega > f64(
                _GROUP_ANGLE
            ):
                close = 1
            if close != 0:
                o = ny * (1 + n_dir)
                R1 = zR
                a_m, b_m, c_m, d_m = _interval_map(sc, tid, o, ny, R_cp, M_cp, R1, M_k1)
                cnt, piv_D, piv_C, piv_Dinv = _inertia_step(
                    a_m, b_m, c_m, d_m, piv_D, piv_C, piv_Dinv, n_maps, 0
                )
                neg = _add_count(neg, cnt)
                n_maps += 1
                start = k + 1
                omega = zero
                R_cp = R1
                M_cp = M_k1
                if k + 1 < n_steps:
                    _stab_reset(sc, tid, o, ny, R1)
    if n_stab != 0:
        # The last node's pivot (`_second_variation_inertia` at k = n).
        cnt, piv_D, piv_C, piv_Dinv = _inertia_step(
            I3, I3, I3, I3, piv_D, piv_C, piv_Dinv, n_maps, 1
        )
        neg = _add_count(neg, cnt)
    # The state's end where the callers read it (tip, moment, finiteness).
    for a in range(3):
        sc.Z[a, tid] = zp[a]
        sc.Z[12 + a, tid] = zM[a]
        for c in range(3):
            sc.Z[3 + 3 * a + c, tid] = zR[a, c]
    ok = int(1)
    if unsettled != 0:
        ok = 0
    for a in range(nz):
        if not wp.isfinite(sc.Z[a, tid]):
            ok = 0
    if store != 0:
        for a in range(3):
            pos[tid, n_steps, a] = zp[a]
    return ok, neg


@wp.func
def _shoot(
    rod: _Rod,
    it: _Items,
    sc: _Scratch,
    tid: int,
    lam: wp.float64,
    x: wp.vec3d,
    n_dir: int,
    pos: wp.array3d(dtype=wp.float64),
):
    """Scaled residual (M(L) - M_tip) / moment_scale, its Jacobian and the tip's sensitivities
    d p(L) / d M0 [m / (N m)] at base moment x (with n_dir = 3; with 0 the state alone is
    integrated and both are meaningless)."""
    ok, _neg = _integrate(rod, it, sc, tid, lam, x, n_dir, 0, 0, pos, 0, 0, rod.n_steps)
    ny = _NY
    r = (_ld3(sc.Z, 12, tid) - lam * it.moment[tid]) / rod.m_scale
    c0 = _ld3(sc.Z, ny + 12, tid)
    c1 = _ld3(sc.Z, 2 * ny + 12, tid)
    c2 = _ld3(sc.Z, 3 * ny + 12, tid)
    J = wp.mat33d(c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2]) / rod.m_scale
    P = _cols(_ld3(sc.Z, ny, tid), _ld3(sc.Z, 2 * ny, tid), _ld3(sc.Z, 3 * ny, tid))
    return ok, r, J, P


@wp.func
def _newton(
    rod: _Rod,
    it: _Items,
    sc: _Scratch,
    tid: int,
    lam: wp.float64,
    x_in: wp.vec3d,
    tol: wp.float64,
    max_iter: int,
    bound: wp.float64,
    pos: wp.array3d(dtype=wp.float64),
):
    """Damped Newton on the base moment (`_static_kernels._newton`): full steps halved down to
    1/64 until the residual norm drops. Returns (status, x, final residual norm, iterations,
    the last Jacobian Newton computed and the tip's sensitivities d p(L) / d M0 of the same
    evaluation: of the final x or of the iterate before it, as `_newton` keeps them at
    `_JACOBIAN_AT` for the tip error estimate).
    Every step is shortened to at most `bound` in the scaled unknowns (M0 / moment_scale), as
    `_static_kernels._newton`'s `max_step`: only residual decreases near the iterate count.
    One call site of the integrator (the first pass evaluates x_in): Warp inlines every call,
    so each extra site costs compile time and registers."""
    x = x_in
    x_try = x_in
    step = x_in
    r = x_in
    J = wp.identity(n=3, dtype=wp.float64)
    P = J
    norm = f64(0.0)
    norm_prev = f64(0.0)
    alpha = f64(1.0)
    nit = int(0)
    first = int(1)
    status = int(-1)
    # A full step that quadratic convergence predicts to land below tol (`_static_kernels.
    # _newton`'s `_PREDICTED_FRACTION`) is evaluated without sensitivities first: converged,
    # it ends the solve; missed, the same trial is evaluated again with them. The iterates are
    # the same either way (the state does not depend on the directions).
    predicted = int(0)
    while status < 0:
        n_dir = int(3)
        if predicted != 0:
            n_dir = 0
        ok, r_t, J_t, P_t = _shoot(rod, it, sc, tid, lam, x_try, n_dir, pos)
        norm_t = _amax3(r_t)
        accepted = int(0)
        if predicted != 0:
            predicted = 0
            if ok != 0 and norm_t < norm and norm_t <= tol:
                x = x_try
                r = r_t
                norm = norm_t
                nit += 1
                status = 0
        elif first != 0:
            first = 0
            if ok == 0:
                status = 3
            accepted = 1
        elif ok != 0 and norm_t < norm:
            accepted = 1
            nit += 1
        if status < 0 and n_dir != 0:
            if accepted != 0:
                if first == 0 and nit > 0:
                    norm_prev = norm
                x = x_try
                r = r_t
                J = J_t
                P = P_t
                norm = norm_t
                if norm <= tol:
                    status = 0
                elif nit >= max_iter:
                    status = 1
                else:
                    step = -(wp.inverse(J) @ r)
                    big = _amax3(step) / rod.m_scale
                    if big > bound:
                        step = step * (bound / big)
                    elif (
                        norm * norm * norm < f64(_PREDICTED_FRACTION) * tol * norm_prev * norm_prev
                    ):
                        predicted = 1
                    if not (wp.isfinite(step[0]) and wp.isfinite(step[1]) and wp.isfinite(step[2])):
                        status = 3
                        predicted = 0
                    alpha = f64(1.0)
            else:
                alpha = alpha * f64(0.5)
                if alpha < f64(1.0 / 64.0):
                    nit += 1
                    status = 2
            x_try = x + alpha * step
    return status, x, norm, nit, J, P


@wp.func
def _tip_step_ok(
    tip: wp.vec3d,
    tip_cur: wp.vec3d,
    tip_prev: wp.vec3d,
    has_prev: int,
    ratio: wp.float64,
    length: wp.float64,
):
    """`_shooting._tip_step_ok`: the corrected tip moved at most `_MAX_TIP_MOVE` L from the
    last equilibrium's and lies within `_MAX_TIP_DEVIATION` L of the secant prediction (1 / 0)."""
    ok = int(1)
    if not (wp.isfinite(tip[0]) and wp.isfinite(tip[1]) and wp.isfinite(tip[2])):
        ok = 0
    if wp.length(tip - tip_cur) > f64(_MAX_TIP_MOVE) * length:
        ok = 0
    dev = wp.length(tip - tip_cur - ratio * (tip_cur - tip_prev))
    if has_prev != 0 and dev > f64(_MAX_TIP_DEVIATION) * length:
        ok = 0
    return ok


@wp.func
def _drive(
    rod: _Rod,
    it: _Items,
    sc: _Scratch,
    tid: int,
    x0: wp.vec3d,
    direct: int,
    bending: wp.float64,
    tol: wp.float64,
    max_iter: int,
    pos: wp.array3d(dtype=wp.float64),
):
    """`_batch_kernels._solve_item`'s path rules (those of `_shooting`) for one item. Direct
    Newton from x0 at the full load, steps bounded by `_DIRECT_STEP_BOUND` (a warm start, or
    inputs that bend the robot little: `direct`); a stall at round-off keeps that answer. Any
    other failure, or a long path, ramps every load and tension from the unloaded robot with
    adaptive increments (first `_DIRECT_LOAD_ANGLE` / bending, where bending [rad] counts the
    loads and the tendons, or 0.25 after a failed direct solve) and a secant predictor; each
    step's Newton is bounded by `_CONTINUATION_STEP_BOUND` and kept only while the tip stays
    on the branch (`_tip_step_ok`), else halved; status 5 when the smallest step still jumps.
    Returns (status, x, load level reached, norm, Newton iterations, and the last Newton
    Jacobian and tip sensitivities of the solve that reached x (`_newton`))."""
    zero = f64(0.0)
    one = f64(1.0)
    dlam = f64(0.25)
    if direct == 0:
        dlam = f64(_DIRECT_LOAD_ANGLE) / wp.max(bending, f64(1e-12))
    dlam_max = wp.max(dlam, f64(0.5))
    lam = zero
    x_lam = wp.vec3d(zero, zero, zero)
    x_prev = x_lam
    tip_lam = x_lam
    tip_prev = x_lam
    J_lam = wp.identity(n=3, dtype=wp.float64)
    P_lam = J_lam
    has_prev = int(0)
    lam_prev = zero
    solves = int(0)
    st = int(0)
    norm = zero
    nit = int(0)
    # 1: direct Newton; 2: the unloaded robot (the first step's tip); 0: continuation.
    phase = int(2)
    if direct != 0:
        phase = 1
    done = int(0)
    while done == 0:
        trial = one
        x = x0
        iters = max_iter
        bound = f64(_DIRECT_STEP_BOUND)
        ratio = zero
        if phase == 2:
            trial = zero
            x = x_lam
            iters = 0
        elif phase == 0:
            trial = wp.min(one, lam + dlam)
            x = x_lam
            iters = _STEP_ITER
            bound = f64(_CONTINUATION_STEP_BOUND)
            if has_prev != 0 and lam > lam_prev:
                # Secant predictor along the load path.
                ratio = (trial - lam) / (lam - lam_prev)
                x = x + (x_lam - x_prev) * ratio
        st, x_new, norm, nit_new, J_new, P_new = _newton(
            rod, it, sc, tid, trial, x, tol, iters, bound, pos
        )
        nit += nit_new
        if phase == 1:
            phase = 2
            if st == 0 or (st == 2 and norm <= f64(_ROUND_OFF_RESIDUAL)):
                x_lam = x_new
                J_lam = J_new
                P_lam = P_new
                lam = one
                done = 1
        elif phase == 2:
            phase = 0
            tip_lam = _ld3(sc.Z, 0, tid)
            if st != 0:
                done = 1
        else:
            solves += 1
            tip = _ld3(sc.Z, 0, tid)
            if st == 0 and _tip_step_ok(tip, tip_lam, tip_prev, has_prev, ratio, rod.length) == 0:
                st = 5
            if st == 0:
                x_prev = x_lam
                tip_prev = tip_lam
                lam_prev = lam
                has_prev = 1
                x_lam = x_new
                J_lam = J_new
                P_lam = P_new
                tip_lam = tip
                lam = trial
                dlam = wp.min(f64(2.0) * dlam, dlam_max)
                if lam >= one:
                    done = 1
            else:
                dlam = dlam * f64(0.5)
                if dlam < f64(_MIN_LOAD_STEP):
                    done = 1
            if solves >= _MAX_CONTINUATION_SOLVES:
                done = 1
            if done != 0 and lam < one and st == 0:
                st = 1
    return st, x_lam, lam, norm, nit, J_lam, P_lam


@wp.func
def _straight_moment(rod: _Rod, it: _Items, tid: int):
    """Base moment of the loads on the straight robot, and the load number ~ P L^2 / EI
    (`_inputs._load_number`): the larger of |that moment| and the largest component of the
    distal force times L, over the moment scale."""
    F = it.force[tid]
    fd = wp.vec3d(it.dist[tid, 0], it.dist[tid, 1], it.dist[tid, 2])
    g = wp.vec3d(it.grav[tid, 0], it.grav[tid, 1], it.grav[tid, 2])
    axis = wp.vec3d(rod.base_R[0, 2], rod.base_R[1, 2], rod.base_R[2, 2])
    M = it.moment[tid]
    fmax = f64(0.0)
    for k in range(rod.n_steps):
        seg = rod.step_seg[k]
        h = rod.node_s[k + 1] - rod.node_s[k]
        Ne = F + fd * rod.dist_len[k] + g * rod.mass_distal[k]
        q = fd + g * rod.seg_par[seg, 9]
        M = M + wp.cross(h * axis, Ne + f64(0.5) * h * q)
        fmax = wp.max(fmax, _amax3(Ne))
    angle = wp.max(wp.length(M), fmax * rod.length) / rod.m_scale
    return M, angle


@wp.kernel
def _solve_kernel(
    rod: _Rod,
    it: _Items,
    sc: _Scratch,
    guess: wp.array(dtype=wp.vec3d),
    use_guess: int,
    tol: wp.float64,
    max_iter: int,
    x_out: wp.array(dtype=wp.vec3d),
    lam_out: wp.array(dtype=wp.float64),
    res_out: wp.array(dtype=wp.float64),
    nit_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    pos: wp.array3d(dtype=wp.float64),
    J_out: wp.array(dtype=wp.mat33d),
    P_out: wp.array(dtype=wp.mat33d),
):
    tid = wp.tid()
    nan = f64(wp.nan)
    M_straight, angle = _straight_moment(rod, it, tid)
    if angle > f64(_MULTI_SHOOT_ANGLE):
        # solve_static would use multiple shooting here: flag, never guess.
        x_out[tid] = wp.vec3d(nan, nan, nan)
        lam_out[tid] = f64(0.0)
        res_out[tid] = nan
        nit_out[tid] = 0
        status_out[tid] = _STATUS_HEAVY
        return
    x0 = M_straight
    if use_guess != 0:
        x0 = guess[tid]
    # `_batch_kernels._direct_ok`: direct Newton when the loads and the tendons bend little.
    bending = angle + it.bend[tid]
    direct = int(0)
    if use_guess != 0 or (
        angle <= f64(_DIRECT_LOAD_ANGLE) and bending <= f64(_DIRECT_BENDING_ANGLE)
    ):
        direct = 1
    st, x, lam, norm, nit, J, P = _drive(rod, it, sc, tid, x0, direct, bending, tol, max_iter, pos)
    J_out[tid] = J
    P_out[tid] = P
    x_out[tid] = x
    lam_out[tid] = lam
    res_out[tid] = norm
    nit_out[tid] = nit
    status_out[tid] = st


@wp.kernel
def _final_kernel(
    rod: _Rod,
    it: _Items,
    sc: _Scratch,
    tol: wp.float64,
    jacobian: int,
    shapes: int,
    stability: int,
    x_in: wp.array(dtype=wp.vec3d),
    lam_in: wp.array(dtype=wp.float64),
    res_in: wp.array(dtype=wp.float64),
    status: wp.array(dtype=wp.int32),
    tip_p: wp.array(dtype=wp.vec3d),
    tip_R: wp.array(dtype=wp.mat33d),
    jac: wp.array3d(dtype=wp.float64),
    pos: wp.array3d(dtype=wp.float64),
    stable_out: wp.array(dtype=wp.int32),
    J_in: wp.array(dtype=wp.mat33d),
    P_in: wp.array(dtype=wp.mat33d),
    err_out: wp.array(dtype=wp.float64),
):
    """One more pass at each answer: tip frame, shape, tension sensitivities and (with
    stability) the stability test's maps; success (status 0) only at the full load, the
    residual within tol and every value finite. stable_out: 1 stable, 0 not, -1 not decided
    here (a zero leading minor: the CPU test decides), -2 not checked (not converged).
    Before it, where the solve converged at the full load, the tip error estimate
    (`_shooting._tip_corrected_by`, `_richardson`): the grid of twice the step integrated from
    the answer without directions, its tip corrected by one Newton step with the solve's last
    Jacobian and tip sensitivities (J_in, P_in); err_out: |corrected coarse tip - tip| /
    (ratio - 1) [m], NaN where there is none (not converged, no coarse grid, a failed coarse
    integration, a Jacobian of condition number `_MAX_COND` or more)."""
    tid = wp.tid()
    st = status[tid]
    stable_out[tid] = _NOT_CHECKED
    if st == _STATUS_HEAVY:
        return
    n_t = rod.n_t
    n_dir = int(0)
    if jacobian != 0:
        n_dir = 3 + n_t
    x = x_in[tid]
    lam = lam_in[tid]
    # The test runs only where the solve converged at the full load (as the CPU batch's).
    n_stab = int(0)
    converged = st == 0 and lam >= f64(1.0) and res_in[tid] <= tol
    if stability != 0 and converged:
        n_stab = 6
    ny = _NY
    nan = f64(wp.nan)
    err_out[tid] = nan
    tip_c = wp.vec3d(nan, nan, nan)
    # Pass 0 (where estimated): the coarse grid, state only; pass 1: the answer's own. One call
    # site of the integrator in a runtime loop (Warp inlines every call: a second site would
    # double this kernel's code).
    first = int(1)
    if converged and rod.ratio > f64(0.0):
        first = 0
    ok = int(0)
    neg = int(0)
    for ps in range(first, 2):
        k_node = int(0)
        k_step = int(0)
        n_steps = rod.n_steps
        n_dir_p = n_dir
        n_stab_p = n_stab
        store = shapes
        if ps == 0:
            k_node = rod.n_steps + 1
            k_step = rod.n_steps
            n_steps = rod.n_steps_c
            n_dir_p = 0
            n_stab_p = 0
            store = 0
        ok, neg = _integrate(
            rod, it, sc, tid, lam, x, n_dir_p, n_stab_p, store, pos, k_node, k_step, n_steps
        )
        if ps == 0 and ok != 0:
            # `_tip_corrected_by`: one Newton step on the coarse residual with the solve's
            # Jacobian moves the coarse tip by its sensitivities.
            J = J_in[tid]
            U = wp.mat33d()
            sig = wp.vec3d()
            V = wp.mat33d()
            wp.svd3(J, U, sig, V)
            smax = wp.max(wp.max(sig[0], sig[1]), sig[2])
            smin = wp.min(wp.min(sig[0], sig[1]), sig[2])
            if smax < f64(_MAX_COND) * smin:
                r_c = (_ld3(sc.Z, 12, tid) - lam * it.moment[tid]) / rod.m_scale
                dx = -(wp.inverse(J) @ r_c)
                tip_c = _ld3(sc.Z, 0, tid) + P_in[tid] @ dx
    tip_p[tid] = _ld3(sc.Z, 0, tid)
    tip_R[tid] = _ldm(sc.Z, 3, tid)
    finite = ok != 0 and wp.isfinite(x[0]) and wp.isfinite(x[1]) and wp.isfinite(x[2])
    if jacobian != 0:
        # Implicit function theorem: dM0/dtau = -(dM/dM0)^-1 dM/dtau.
        P0 = _ld3(sc.Z, ny, tid)
        P1 = _ld3(sc.Z, 2 * ny, tid)
        P2 = _ld3(sc.Z, 3 * ny, tid)
        c0 = _ld3(sc.Z, ny + 12, tid)
        c1 = _ld3(sc.Z, 2 * ny + 12, tid)
        c2 = _ld3(sc.Z, 3 * ny + 12, tid)
        dpdM = wp.mat33d(P0[0], P1[0], P2[0], P0[1], P1[1], P2[1], P0[2], P1[2], P2[2])
        dMdMi = wp.inverse(wp.mat33d(c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2]))
        for j in range(n_t):
            o = ny * (4 + j)
            col = dpdM @ (-(dMdMi @ _ld3(sc.Z, o + 12, tid))) + _ld3(sc.Z, o, tid)
            for a in range(3):
                jac[tid, a, j] = col[a]
                if not wp.isfinite(col[a]):
                    finite = False
    if st == 0 and not (lam >= f64(1.0) and res_in[tid] <= tol):
        st = 1
    if st == 0 and not finite:
        st = 3
    if st == 0:
        d = tip_c - _ld3(sc.Z, 0, tid)
        err = wp.sqrt(wp.dot(d, d)) / (rod.ratio - f64(1.0))
        if wp.isfinite(err):
            err_out[tid] = err
    if st == 0 and n_stab != 0:
        verdict = int(0)
        if neg == 0:
            verdict = 1
        elif neg == -2:
            verdict = _UNDECIDED
        stable_out[tid] = verdict
    status[tid] = st


def _rod_struct(model: RodModel, device: str) -> _Rod:
    """The model's arrays on the device, with the per-step load coefficients."""
    node_s = model.node_s
    h = np.diff(node_s)
    n_steps = h.shape[0]
    rho_a = model.seg_par[model.step_seg, 9]
    # Distal length and mass beyond each step's end (point masses at nodes, tip included).
    dist_len = np.zeros(n_steps)
    mass = np.zeros(n_steps)
    acc_l, acc_m = 0.0, float(model.node_point_mass[n_steps])
    for k in range(n_steps - 1, -1, -1):
        dist_len[k], mass[k] = acc_l, acc_m
        acc_l += h[k]
        acc_m += rho_a[k] * h[k] + model.node_point_mass[k]
    n_tp = max(model.n_tendons, 1)
    tendon = np.zeros((n_tp, 4))
    tendon[:, 3] = -1.0  # padding tendon (robots without tendons): anchored nowhere
    tendon[: model.n_tendons] = model.tendon_pack
    # The tip error estimate's grid of twice the step, as the CPU batch's (`_batch.
    # _build_model_arrays`: no point loads in a batch); each coarse step's distal loads are
    # the fine step's that ends at its end node (`_batch_kernels._coarse_problem`).
    coarse, idx, ratio = _coarse_model(model, ())
    ends = idx[1:] - 1
    rod = _Rod()
    rod.node_s = wp.array(np.concatenate([node_s, coarse.node_s]), dtype=wp.float64, device=device)
    rod.step_seg = wp.array(
        np.concatenate([model.step_seg, coarse.step_seg]).astype(np.int32),
        dtype=wp.int32,
        device=device,
    )
    rod.seg_par = wp.array(model.seg_par, dtype=wp.float64, device=device)
    rod.tendon = wp.array(tendon, dtype=wp.float64, device=device)
    rod.dist_len = wp.array(
        np.concatenate([dist_len, dist_len[ends]]), dtype=wp.float64, device=device
    )
    rod.mass_distal = wp.array(np.concatenate([mass, mass[ends]]), dtype=wp.float64, device=device)
    rod.n_steps_c = int(coarse.step_seg.shape[0])
    rod.ratio = wp.float64(ratio if ratio >= _MIN_COARSE_RATIO else 0.0)
    rod.base_p = wp.vec3d(*model.base_position)
    rod.base_R = wp.mat33d(*model.base_rotation.reshape(-1))
    rod.n_t = model.n_tendons
    rod.n_steps = n_steps
    rod.cosserat = int(model.cosserat)
    rod.m_scale = wp.float64(model.moment_scale)
    rod.length = wp.float64(model.total_length)
    return rod


def _device(device: str) -> str:
    """Warp's name of the device ("cpu", "cuda:0", ...; "warp-cpu" also means Warp's CPU)."""
    return "cpu" if device in ("cpu", "warp-cpu", "warp:cpu") else device


def solve_batch_warp(
    model: RodModel,
    loads: BatchLoads,
    *,
    device: str,
    guess: np.ndarray | None,
    jacobian: bool,
    shapes: bool,
    rtol: float,
    max_iter: int,
    check_stability: bool = True,
) -> BatchArrays:
    """B static solves of one robot on a Warp device (see the module docstring).

    model : the compiled robot. loads : checked (B, .) inputs; tension control only.
    device : a Warp device ("cuda:0", "cpu"; "warp-cpu" is Warp's CPU device too).
    guess : (B, 3) base moments [N m] to start Newton from (a previous batch's `unknowns`),
        or None for cold starts. jacobian : also return d tip / d tension (B, 3, n_t) [m/N],
        exact (forward sensitivities + implicit function theorem). shapes : also return node
        positions (B, n_nodes, 3) [m]. rtol, max_iter : as `solve_static`.
    check_stability : test each converged item's stability (the numba batch's test, on the
        device; on the CPU threads only where the device cannot decide, see the module doc)
        and fill `stable`; unstable items get status 7, success False. Without it `stable`
        is None (not checked).
    Items with a load number above `_MULTI_SHOOT_ANGLE` return success=False and NaN (status
    8); a continuation step that still jumps off the branch at the smallest step, status 5.
    """
    if loads.control != "tension":
        raise ValueError(
            "the Warp back end supports tension control only; length control "
            "(lengths=...) runs on the CPU back end (device='cpu')"
        )
    dev = _device(device)
    B = loads.size
    n_t = model.n_tendons
    n_tp = max(n_t, 1)
    if guess is not None:
        guess = np.ascontiguousarray(np.asarray(guess, dtype=float).reshape(B, -1)[:, :3])
    wp.init()
    rod = _rod_struct(model, dev)
    ny = _NY
    # Directions: Newton's three; the final pass's tensions' (3 + n_t) and the test's six.
    n_final = (3 + n_t if jacobian else 0) + (6 if check_stability else 0)
    nz = ny * (1 + max(3, n_final))
    chunk = max(1, min(B, _SCRATCH_BYTES // (8 * 3 * nz)))
    out = {
        "x": np.full((B, 3), np.nan),
        "p": np.full((B, 3), np.nan),
        "R": np.full((B, 3, 3), np.nan),
        "res": np.full(B, np.nan),
        "nit": np.zeros(B, dtype=np.int32),
        "st": np.zeros(B, dtype=np.int32),
    }
    jac = np.full((B, 3, n_t), np.nan) if jacobian else None
    pos = np.full((B, model.n_nodes, 3), np.nan) if shapes else None
    tau = np.zeros((B, n_tp))
    tau[:, :n_t] = loads.actuation
    bend = _tendon_bending_batch(model, loads.actuation)
    out["lam"] = np.zeros(B)
    out["stab"] = np.full(B, _NOT_CHECKED, dtype=np.int32)
    out["err"] = np.full(B, np.nan)
    sc = _Scratch()
    for b0 in range(0, B, chunk):
        b1 = min(B, b0 + chunk)
        m = b1 - b0
        if b0 == 0 or m != chunk:
            sc.Z = wp.empty((nz, m), dtype=wp.float64, device=dev)
            sc.ZT = wp.empty((nz, m), dtype=wp.float64, device=dev)
            sc.KA = wp.empty((nz, m), dtype=wp.float64, device=dev)
        res = _launch(
            rod,
            loads,
            tau,
            bend,
            guess,
            sc,
            b0,
            b1,
            dev,
            rtol,
            max_iter,
            jacobian,
            shapes,
            check_stability,
        )
        for key in ("x", "p", "R", "res", "nit", "st", "lam", "stab", "err"):
            out[key][b0:b1] = res[key]
        if jac is not None:
            jac[b0:b1] = res["jac"][:, :, :n_t]
        if pos is not None:
            pos[b0:b1] = res["pos"]
    status = out["st"].astype(np.int64)
    stable = None
    if check_stability:
        # The device's verdicts; the numba batch's test on the CPU threads only where the
        # device could not decide (a zero leading minor of the LDL^T, `_UNDECIDED`).
        stable = out["stab"] == 1
        left = np.flatnonzero((status == 0) & (out["stab"] == _UNDECIDED))
        if left.size:
            stable[left] = _stability_on_cpu(model, loads, out["x"], left)
        status[(status == 0) & ~stable] = STATUS_UNSTABLE
    success = status == 0
    return BatchArrays(
        tip_position=out["p"],
        tip_rotation=out["R"],
        success=success,
        residual=out["res"],
        iterations=out["nit"].astype(np.int64),
        unknowns=out["x"],
        tensions=np.array(loads.actuation, dtype=float, copy=True),
        jacobian=jac,
        positions=pos,
        status=status,
        load_scale=out["lam"],
        stable=stable,
        tip_error=out["err"],
    )


def _stability_on_cpu(
    model: RodModel, loads: BatchLoads, x: np.ndarray, items: np.ndarray
) -> np.ndarray:
    """`_stability_batch` (the numba batch's test) at the converged base moments x (B, 3)
    [N m] of the given items (k,); returns their verdicts (k,) bool."""
    forces = np.stack(
        [loads.tip_force, loads.tip_moment, loads.distributed_force, loads.gravity], 1
    )[items]
    checked = np.empty(items.size)
    _stability_batch(
        np.ascontiguousarray(x[items]),
        np.ascontiguousarray(loads.actuation[items], dtype=float),
        np.ascontiguousarray(forces),
        np.zeros(items.size, dtype=np.int64),
        model.kernel_geometry,
        model.kernel_base,
        np.ascontiguousarray(model.node_point_mass, dtype=float),
        checked,
    )
    return checked == 1.0


def _tendon_bending_batch(model: RodModel, tensions: np.ndarray) -> np.ndarray:
    """`_shooting._tendon_bending` of each item's tensions (B, n_t) [N] -> (B,) [rad]: the
    bending the tendons give the straight robot (the path rule counts it with the loads)."""
    B = tensions.shape[0]
    if model.n_tendons == 0:
        return np.zeros(B)
    # through[j, i]: tendon i runs through segment j (anchored in it or beyond).
    through = model.tendon_seg[None, :] >= np.arange(model.seg_length.shape[0])[:, None]
    mx = tensions @ (through * model.tendon_r[:, 1]).T
    my = -(tensions @ (through * model.tendon_r[:, 0]).T)
    ei = np.minimum(model.K_bt[:, 0], model.K_bt[:, 1])
    return np.hypot(mx, my) @ (model.seg_length / ei)


@njit(cache=True, parallel=True)
def _stability_batch(x, tau, forces, status, geo, base, node_point_mass, stable_out):
    """`_batch_kernels._solve_item`'s stability test at Warp's answers, on the CPU threads.

    x : (B, 3) base moments [N m]; tau : (B, n_t) [N]; forces : (B, 4, 3) as `_loads_at`;
    status : (B,) item status. stable_out (B,): 1 stable, 0 not (or the re-integration
    failed), NaN for items not converged (not checked).
    """
    n_steps = geo[1].shape[0]
    n_t = tau.shape[1]
    ny = 15 + n_t
    for b in prange(x.shape[0]):
        stable_out[b] = np.nan
        if status[b] != 0:
            continue
        N_end = np.empty((n_steps, 3))
        q_step = np.empty((n_steps, 3))
        _loads_at(geo, node_point_mass, forces[b], 1.0, N_end, q_step)
        ld = (N_end, q_step, np.zeros((n_steps + 1, 3)), np.ones((n_steps, n_t)), _no_field(geo))
        Y = np.empty((n_steps + 1, ny))
        X = np.empty((n_steps + 1, 6))
        z = np.empty(ny)
        stable_out[b] = 0.0
        tau_b = tau[b].copy()
        if not _evaluate(x[b].copy(), tau_b, 0, base, geo, ld, True, Y, X, z):
            continue
        # The CPU batch's test (the checkpoints of `_stability.is_stable`).
        nodes = np.empty(n_steps + 1, dtype=np.int64)
        maps = np.empty((n_steps, 6, 6))
        if _grouped_stable(Y, tau_b, geo, ld, nodes, maps, 0):
            stable_out[b] = 1.0


def _launch(
    rod: _Rod,
    loads: BatchLoads,
    tau: np.ndarray,
    bend: np.ndarray,
    guess: np.ndarray | None,
    sc: _Scratch,
    b0: int,
    b1: int,
    dev: str,
    rtol: float,
    max_iter: int,
    jacobian: bool,
    shapes: bool,
    stability: bool,
) -> dict[str, np.ndarray]:
    """One launch over items b0..b1; returns its outputs as host arrays."""
    m = b1 - b0
    n_tp = tau.shape[1]

    def vec(a: np.ndarray) -> wp.array:
        return wp.array(np.ascontiguousarray(a[b0:b1]), dtype=wp.vec3d, device=dev)

    def mat(a: np.ndarray) -> wp.array:
        return wp.array(np.ascontiguousarray(a[b0:b1]), dtype=wp.float64, device=dev)

    it = _Items()
    it.tau = mat(tau)
    it.force = vec(loads.tip_force)
    it.moment = vec(loads.tip_moment)
    it.dist = wp.array(
        np.ascontiguousarray(loads.distributed_force[b0:b1]), dtype=wp.float64, device=dev
    )
    it.grav = wp.array(np.ascontiguousarray(loads.gravity[b0:b1]), dtype=wp.float64, device=dev)
    it.bend = wp.array(np.ascontiguousarray(bend[b0:b1]), dtype=wp.float64, device=dev)
    g = vec(guess) if guess is not None else wp.zeros(1, dtype=wp.vec3d, device=dev)
    x = wp.empty(m, dtype=wp.vec3d, device=dev)
    lam = wp.empty(m, dtype=wp.float64, device=dev)
    p = wp.full(m, wp.vec3d(np.nan, np.nan, np.nan), dtype=wp.vec3d, device=dev)
    R = wp.full(m, wp.mat33d(*([np.nan] * 9)), dtype=wp.mat33d, device=dev)
    res = wp.empty(m, dtype=wp.float64, device=dev)
    nit = wp.empty(m, dtype=wp.int32, device=dev)
    st = wp.empty(m, dtype=wp.int32, device=dev)
    jac = wp.zeros((m, 3, n_tp) if jacobian else (1, 1, 1), dtype=wp.float64, device=dev)
    n_nodes = rod.n_steps + 1
    pos = wp.zeros((m, n_nodes, 3) if shapes else (1, 1, 1), dtype=wp.float64, device=dev)
    stab = wp.empty(m, dtype=wp.int32, device=dev)
    J = wp.empty(m, dtype=wp.mat33d, device=dev)
    P = wp.empty(m, dtype=wp.mat33d, device=dev)
    err = wp.empty(m, dtype=wp.float64, device=dev)
    tol = wp.float64(rtol)
    use_guess = int(guess is not None)
    # Solve, then one pass at each answer for the outputs (two kernels: smaller code each).
    wp.launch(
        _solve_kernel,
        dim=m,
        inputs=[rod, it, sc, g, use_guess, tol, int(max_iter), x, lam, res, nit, st, pos, J, P],
        device=dev,
    )
    wp.launch(
        _final_kernel,
        dim=m,
        inputs=[
            rod,
            it,
            sc,
            tol,
            int(jacobian),
            int(shapes),
            int(stability),
            x,
            lam,
            res,
            st,
            p,
            R,
            jac,
            pos,
            stab,
            J,
            P,
            err,
        ],
        device=dev,
    )
    out = {
        "x": x.numpy(),
        "p": p.numpy(),
        "R": R.numpy(),
        "res": res.numpy(),
        "nit": nit.numpy(),
        "st": st.numpy(),
        "lam": lam.numpy(),
        "stab": stab.numpy(),
        "err": err.numpy(),
    }
    if jacobian:
        out["jac"] = jac.numpy()
    if shapes:
        out["pos"] = pos.numpy()
    return out


def bench_batch_warp(
    robot: RodModel | None = None,
    batch_sizes: tuple[int, ...] = (1000, 10000, 100000, 1000000),
    device: str = "cuda:0",
    jacobian: bool = False,
    check_stability: bool = True,
    deadline: float = float("inf"),
) -> dict[str, float]:
    """Solves per second of `solve_batch_warp` at each batch size (after a warm-up call of the
    same size, `wp.synchronize` around the timed call; host transfers included).

    robot : default the SoftManiSim robot. Inputs are random but seeded: tensions uniform in
    0-3 N on every tendon, a tip force of uniform magnitude 0-1 N in a uniform 3-D direction.
    check_stability : as `solve_batch_warp` (default on: what `solve_static_batch` returns).
    deadline : a `time.perf_counter()` value; sizes not started by then are skipped
    (`b{B}.skipped` = 1), so an unattended run stays within its budget.
    Keys: `b{B}.solves_per_s`, `b{B}.converged_fraction`, `b{B}.stable_fraction` (with the
    check), `b{B}.seconds`, and `first_call_s` (the first call: Warp's compile or kernel-cache
    load included).
    """
    if robot is None:
        from softrod.description import find_robot
        from softrod.rods._model import compile_model

        robot = compile_model(find_robot("softmanisim"))
    out: dict[str, float] = {}
    kw = dict(
        device=device,
        guess=None,
        jacobian=jacobian,
        shapes=False,
        rtol=1e-10,
        max_iter=30,
        check_stability=check_stability,
    )
    t0 = time.perf_counter()
    solve_batch_warp(robot, random_loads(robot, 1, 0), **kw)
    out["first_call_s"] = time.perf_counter() - t0
    dev = _device(device)
    for B in batch_sizes:
        if time.perf_counter() > deadline:
            out[f"b{B}.skipped"] = 1.0
            continue
        loads = random_loads(robot, int(B), 1)
        solve_batch_warp(robot, loads, **kw)
        wp.synchronize_device(dev)
        t0 = time.perf_counter()
        res = solve_batch_warp(robot, loads, **kw)
        wp.synchronize_device(dev)
        dt = time.perf_counter() - t0
        out[f"b{B}.seconds"] = dt
        out[f"b{B}.solves_per_s"] = B / dt
        out[f"b{B}.converged_fraction"] = float(np.mean(res.success))
        if res.stable is not None:
            out[f"b{B}.stable_fraction"] = float(np.mean(res.stable))
    return out


def random_loads(model: RodModel, B: int, seed: int) -> BatchLoads:
    """The benchmark's seeded inputs: tensions uniform 0-3 N, tip force 0-1 N in a uniform
    3-D direction, nothing else."""
    rng = np.random.default_rng(seed)
    tau = rng.uniform(0.0, 3.0, size=(B, model.n_tendons))
    d = rng.normal(size=(B, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    force = rng.uniform(0.0, 1.0, size=(B, 1)) * d
    z = np.zeros((B, 3))
    return BatchLoads("tension", tau, force, z, z.copy(), z.copy())
