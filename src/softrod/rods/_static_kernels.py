"""Numba kernels of the static rod solver (see `_model.py` for the formulation).

Layout of the integrated state (length ny = 15 + n_t):
    y = [p (3), R (9, row-major), M (3), l (n_t)]
with p the centreline [m], R the section frame, M the total moment across the section (world)
[N m] and l the tendon path lengths from the base [m]. Sensitivities with respect to n_dir
directions follow in blocks of ny: directions 0-2 are M(0); direction 3 + j is tension j.
The lengths' sensitivities (the last n_t entries of each block) are integrated only with
tension directions, else left 0. RK4 is applied to the augmented system, so the
sensitivities are the derivatives of the discrete solution (Newton converges
quadratically), up to the section balance's last step (`_SECTION_ETOL`).

Performance note: the RK4 loop, the section balance and the sensitivities live in one
function (`_integrate`). Numba reference-counts every array passed to a call (~10 ns each);
with ~20 arrays per right-hand side that cost 4x the arithmetic, so the hot loop makes no
calls that take arrays (measured: 1.2 us -> 0.3 us per step on the 2-segment benchmark robot)
and takes no views (each costs two atomic reference count updates). Most of an evaluation
is the section balance's Newton, a chain of dependent square roots and divisions: Kirchhoff
rods run it in scalars (registers, not arrays) from a predicted start (one iteration fewer
per stage); SoftManiSim's problem, one evaluation: 53 -> 37 us with Newton's three directions,
40 -> 23 us without (session 14), then 37 -> 30 and 23 -> 21.5 us (session 16: no lengths'
sensitivities without tension directions, the section's early stop; docs/batch.md, "Speed").

Packed model arrays:
    seg_par (n_seg, 10): K_bt (3) [N m^2], K_se (3) [N], u* (3) [1/m], rho A [kg/m]
    tendon (n_t, 4): body offset r (3) [m], anchoring segment index; with general routing
        (n_t, 8 + 6 n_nodes), the path after them (`_route_fill`, docs/routing.md)
"""

from __future__ import annotations

import numpy as np
from numba import njit

_SECTION_MAX_ITER = 40
#: Section Newton stops after an update below this relative size: convergence is quadratic
#: (the tendon terms are a small perturbation of K), so the error left is ~1e-16.
_SECTION_XTOL = 1e-8
#: The section Newton's step limit tests |dw| > |w| / 2 by its square first and takes the
#: root only when |dw|^2 > this times |w|^2: 1/4 less 1e-9 relative, far more than the
#: rounding of either side, so every step the root test limits also passes this one (the
#: same steps, bit for bit, without a square root per tendon and iteration).
_STEP_LIMIT_SQ = 0.25 * (1.0 - 1e-9)
#: The Kirchhoff section Newton also stops after a full step b whose quadratic convergence
#: bound leaves an error below this times the largest strain: e <= ||A^-1|| sup||D^2 g|| / 2
#: |b|^2 <= 3 sum_i tau_i |r_i|^3 / |w_i|^2 / min(K_bt) |b|^2 (twice the bound: the tendon
#: block of A is positive semidefinite, |D^2 (w / |w|)| <= 3 / |w|^2). 1e-15 is ~5 ulp:
#: the strains stay at the level of round-off, without the iteration that only confirms a
#: step below `_SECTION_XTOL` (the section Jacobian the sensitivities use is then that of the
#: iterate one step before, as it is with `_SECTION_XTOL`, a step up to ~1e-6 away).
_SECTION_ETOL = 1e-15


@njit(cache=True)
def _integrate(z, n_dir, geo, tau, ld, store, Y_out, X_out, k0=0, k1=-1, tdir0=3):
    """RK4 over the grid, in place on the augmented state z; returns False on failure.

    geo = (node_s (n_nodes,) [m], step_seg (n_steps,), seg_par (n_seg, 10), tendon (n_t, 4),
    cosserat): the model (`RodModel.kernel_geometry`). tau : (n_t,) tensions [N].
    ld = (N_end (n_steps, 3) total distal force at each step's end [N], q_step (n_steps, 3)
    line load in each step [N/m], node_moment (n_nodes, 3) point moments at nodes [N m],
    tau_scale (n_steps, n_t) tension in each step over tau [-]: tendon friction, ones without,
    mag = (B (3,) [T], node_dipole (n_nodes, 3) [A m^2], seg_dipole (n_seg, 3) [A m], fdir0)):
    body-frame dipoles whose torques (R m) x B follow the shape (in the sensitivities too);
    directions fdir0..fdir0+2 (-1: none) are d/dB_j.
    store : when True, write the state y at every node into Y_out (n_nodes, ny) and the
    section strains x = (v, u) into X_out (n_nodes, 6).
    k0, k1 : integrate nodes k0..k1 only (default the whole grid; multiple shooting).
    tdir0 : index of the first tension direction among the n_dir sensitivities. The tendon
    lengths' sensitivities are integrated only with tension directions (n_dir > tdir0): only
    length control's rows read them, and its unknowns include the tensions; without, they are
    left 0 in z (force control's Newton: 41 -> 36 us an evaluation, docs/batch.md "Speed").
    """
    node_s, step_seg, seg_par, tendon, cosserat = geo
    N_end, q_step, node_moment, tau_scale, mag = ld
    B, node_dip, seg_dip, fdir0 = mag
    n_t = tau.shape[0]
    ny = 15 + n_t
    nz = ny * (1 + n_dir)
    # Zeros: the lengths' sensitivity entries stay 0 where they are not integrated.
    K = np.zeros((4, nz))
    zt = np.empty(nz)
    x = np.zeros(6)  # section strains (v, u), warm-started along the rod
    x[2] = 1.0
    g = np.zeros(6)
    Jw = np.zeros((6, 6))
    LU = np.zeros((6, 6))  # Cosserat: LU of J; Kirchhoff: inverse of the moment block
    piv = np.zeros(6, dtype=np.int64)
    T = np.zeros((n_t, 3))  # unit tendon tangents (body frame)
    # Body-frame tendon directions w (3) and |w| of the section Newton's iterate (|w| = 0:
    # tendon not loaded there), for its step limit.
    Wd = np.zeros((n_t, 4))
    # Tendon paths at the current stage: body-frame r and r' (n_t, 6); straight: r' = 0.
    routed = tendon.shape[1] > 4
    Rt = np.zeros((n_t, 6))
    # |r_i|^3 [m^3] of every tendon's path at the current stage (the section's error bound).
    Rn3 = np.empty(n_t)
    for i in range(n_t):
        for a in range(3):
            Rt[i, a] = tendon[i, a]
        Rn3[i] = (Rt[i, 0] ** 2 + Rt[i, 1] ** 2 + Rt[i, 2] ** 2) ** 1.5
    b = np.zeros(6)
    # The Kirchhoff section Jacobian's inverse (moment block) of the last loaded stage, its
    # body moment and segment (-1: no predictor for the next stage).
    l00 = l01 = l02 = l10 = l11 = l12 = l20 = l21 = l22 = 0.0
    pmb0 = pmb1 = pmb2 = 0.0
    pred_seg = -1
    # The lengths' sensitivities and the tension directions, which also need the unit tendon
    # tangents, come together (see above).
    len_dirs = n_dir > tdir0
    n_steps = step_seg.shape[0]
    if k1 < 0:
        k1 = n_steps
    for k in range(k0, k1 + 1):
        last = k == k1
        seg = step_seg[k - 1] if last and k > 0 else step_seg[min(k, n_steps - 1)]
        sa = node_s[k]
        sb = sa if last else node_s[k + 1]
        h = sb - sa
        kb0, kb1, kb2 = seg_par[seg, 0], seg_par[seg, 1], seg_par[seg, 2]
        ks0, ks1, ks2 = seg_par[seg, 3], seg_par[seg, 4], seg_par[seg, 5]
        us0, us1, us2 = seg_par[seg, 6], seg_par[seg, 7], seg_par[seg, 8]
        kk = k - 1 if last else k
        Ne0, Ne1, Ne2 = N_end[kk, 0], N_end[kk, 1], N_end[kk, 2]
        q0, q1, q2 = q_step[kk, 0], q_step[kk, 1], q_step[kk, 2]
        # Magnetized backbone: body-frame dipole density mu of this step [A m].
        mu0, mu1, mu2 = seg_dip[seg, 0], seg_dip[seg, 1], seg_dip[seg, 2]
        magnetized = mu0 != 0.0 or mu1 != 0.0 or mu2 != 0.0
        wm0 = wm1 = wm2 = 0.0  # R mu (world)
        loaded = False
        for i in range(n_t):
            if tendon[i, 3] >= seg and tau[i] * tau_scale[kk, i] != 0.0:
                loaded = True
        n_stage = 1 if last else 4
        for stage in range(n_stage):
            # ---- stage input: zt and its arc length
            if stage == 0:
                for a in range(nz):
                    zt[a] = z[a]
                s = sa
            elif stage < 3:
                for a in range(nz):
                    zt[a] = z[a] + 0.5 * h * K[stage - 1, a]
                s = sa + 0.5 * h
            else:
                for a in range(nz):
                    zt[a] = z[a] + h * K[2, a]
                s = sb
            if routed:
                _route_fill(tendon, node_s, kk, s, Rt)
                for i in range(n_t):
                    Rn3[i] = (Rt[i, 0] ** 2 + Rt[i, 1] ** 2 + Rt[i, 2] ** 2) ** 1.5
            # ---- total distal force N(s) and body-frame section loads
            N0 = Ne0 + q0 * (sb - s)
            N1 = Ne1 + q1 * (sb - s)
            N2 = Ne2 + q2 * (sb - s)
            r00, r01, r02 = zt[3], zt[4], zt[5]
            r10, r11, r12 = zt[6], zt[7], zt[8]
            r20, r21, r22 = zt[9], zt[10], zt[11]
            M0, M1, M2 = zt[12], zt[13], zt[14]
            nb0 = r00 * N0 + r10 * N1 + r20 * N2
            nb1 = r01 * N0 + r11 * N1 + r21 * N2
            nb2 = r02 * N0 + r12 * N1 + r22 * N2
            mb0 = r00 * M0 + r10 * M1 + r20 * M2
            mb1 = r01 * M0 + r11 * M1 + r21 * M2
            mb2 = r02 * M0 + r12 * M1 + r22 * M2
            # ---- section balance for x = (v, u):
            #   K_se (v - e3) + sum tau t = R^T N,  K_bt (u - u*) + sum tau r x t = R^T M
            if not loaded:
                pred_seg = -1
                # Linear and diagonal: closed form.
                x[3] = us0 + mb0 / kb0
                x[4] = us1 + mb1 / kb1
                x[5] = us2 + mb2 / kb2
                if cosserat:
                    x[0] = nb0 / ks0
                    x[1] = nb1 / ks1
                    x[2] = 1.0 + nb2 / ks2
            elif not cosserat:
                # Kirchhoff (v = e3 fixed): Newton on u alone, the same arithmetic as the
                # 6x6 form's moment block, in scalars so that the iterate, residual, Jacobian
                # and its inverse stay in registers (arrays written in the loop are reloaded
                # after every store: numba cannot tell LLVM that they do not alias).
                v0, v1, v2 = x[0], x[1], x[2]
                u0, u1, u2 = x[3], x[4], x[5]
                if pred_seg == seg:
                    # Predictor (from the last loaded stage of this segment): its u moved by
                    # its section Jacobian's inverse times the change of the body moment mb,
                    # a Newton step with that Jacobian (straight tendons without friction:
                    # the balance depends on the stage through mb alone). Newton then starts
                    # at O(|d mb|^2) from the root, not O(|d mb|): 1.56 iterations per stage
                    # instead of 2.56 on the bench's problems (docs/batch.md, "Speed"); the
                    # root is the same to rounding (the stop rule is unchanged). Skipped where
                    # it would move a loaded tendon's direction w by more than the section
                    # Newton's own step limit |w| / 2 (|w| of the last stage's last iterate).
                    d0, d1, d2 = mb0 - pmb0, mb1 - pmb1, mb2 - pmb2
                    du0 = l00 * d0 + l01 * d1 + l02 * d2
                    du1 = l10 * d0 + l11 * d1 + l12 * d2
                    du2 = l20 * d0 + l21 * d1 + l22 * d2
                    small = True
                    for i in range(n_t):
                        nw = Wd[i, 3]
                        if nw == 0.0:
                            continue
                        rr0, rr1, rr2 = Rt[i, 0], Rt[i, 1], Rt[i, 2]
                        f0 = du1 * rr2 - du2 * rr1
                        f1 = du2 * rr0 - du0 * rr2
                        f2 = du0 * rr1 - du1 * rr0
                        if f0 * f0 + f1 * f1 + f2 * f2 > _STEP_LIMIT_SQ * nw * nw:
                            small = False
                    if small:
                        u0 += du0
                        u1 += du1
                        u2 += du2
                settled = False
                kmin = min(min(kb0, kb1), kb2)
                for _it in range(_SECTION_MAX_ITER):
                    cb = 0.0  # sum_i tau_i |r_i|^3 / |w_i|^2 (`_SECTION_ETOL`)
                    g3 = kb0 * (u0 - us0) - mb0
                    g4 = kb1 * (u1 - us1) - mb1
                    g5 = kb2 * (u2 - us2) - mb2
                    a00, a01, a02 = kb0, 0.0, 0.0
                    a10, a11, a12 = 0.0, kb1, 0.0
                    a20, a21, a22 = 0.0, 0.0, kb2
                    for i in range(n_t):
                        Wd[i, 3] = 0.0
                        ti = tau[i] * tau_scale[kk, i]
                        if tendon[i, 3] < seg or ti == 0.0:
                            continue
                        rr0, rr1, rr2 = Rt[i, 0], Rt[i, 1], Rt[i, 2]
                        w0 = v0 + u1 * rr2 - u2 * rr1
                        w1 = v1 + u2 * rr0 - u0 * rr2
                        w2 = v2 + u0 * rr1 - u1 * rr0
                        if routed:
                            w0 += Rt[i, 3]
                            w1 += Rt[i, 4]
                            w2 += Rt[i, 5]
                        nw = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
                        Wd[i, 3] = nw
                        inw = 1.0 / nw
                        t0, t1, t2 = w0 * inw, w1 * inw, w2 * inw
                        g3 += ti * (rr1 * t2 - rr2 * t1)
                        g4 += ti * (rr2 * t0 - rr0 * t2)
                        g5 += ti * (rr0 * t1 - rr1 * t0)
                        # The moment block -[r]x P [r]x of the 6x6 form below.
                        c = ti * inw
                        cb += abs(ti) * Rn3[i] * inw * inw
                        p00 = c * (1.0 - t0 * t0)
                        p11 = c * (1.0 - t1 * t1)
                        p22 = c * (1.0 - t2 * t2)
                        p01 = -c * t0 * t1
                        p02 = -c * t0 * t2
                        p12 = -c * t1 * t2
                        q00 = p01 * rr2 - p02 * rr1
                        q01 = p02 * rr0 - p00 * rr2
                        q02 = p00 * rr1 - p01 * rr0
                        q10 = p11 * rr2 - p12 * rr1
                        q11 = p12 * rr0 - p01 * rr2
                        q12 = p01 * rr1 - p11 * rr0
                        q20 = p12 * rr2 - p22 * rr1
                        q21 = p22 * rr0 - p02 * rr2
                        q22 = p02 * rr1 - p12 * rr0
                        a00 -= rr1 * q20 - rr2 * q10
                        a10 -= rr2 * q00 - rr0 * q20
                        a20 -= rr0 * q10 - rr1 * q00
                        a01 -= rr1 * q21 - rr2 * q11
                        a11 -= rr2 * q01 - rr0 * q21
                        a21 -= rr0 * q11 - rr1 * q01
                        a02 -= rr1 * q22 - rr2 * q12
                        a12 -= rr2 * q02 - rr0 * q22
                        a22 -= rr0 * q12 - rr1 * q02
                    # Explicit inverse of the moment block, then the step -A^-1 g.
                    c00 = a11 * a22 - a12 * a21
                    c01 = a02 * a21 - a01 * a22
                    c02 = a01 * a12 - a02 * a11
                    det = a00 * c00 + a10 * c01 + a20 * c02
                    if det == 0.0:
                        return False
                    inv = 1.0 / det
                    l00 = c00 * inv
                    l01 = c01 * inv
                    l02 = c02 * inv
                    l10 = (a12 * a20 - a10 * a22) * inv
                    l11 = (a00 * a22 - a02 * a20) * inv
                    l12 = (a02 * a10 - a00 * a12) * inv
                    l20 = (a10 * a21 - a11 * a20) * inv
                    l21 = (a01 * a20 - a00 * a21) * inv
                    l22 = (a00 * a11 - a01 * a10) * inv
                    bz = 0.0  # the force rows' step (v fixed)
                    b3 = -(l00 * g3 + l01 * g4 + l02 * g5)
                    b4 = -(l10 * g3 + l11 * g4 + l12 * g5)
                    b5 = -(l20 * g3 + l21 * g4 + l22 * g5)
                    # The step limit of the 6x6 form below (same arithmetic).
                    alpha = 1.0
                    for i in range(n_t):
                        nw = Wd[i, 3]
                        if nw == 0.0:
                            continue
                        rr0, rr1, rr2 = Rt[i, 0], Rt[i, 1], Rt[i, 2]
                        f0 = bz + b4 * rr2 - b5 * rr1
                        f1 = bz + b5 * rr0 - b3 * rr2
                        f2 = bz + b3 * rr1 - b4 * rr0
                        # The root only where the limit may bind (`_STEP_LIMIT_SQ`).
                        dw2 = f0 * f0 + f1 * f1 + f2 * f2
                        if dw2 > _STEP_LIMIT_SQ * nw * nw:
                            ndw = np.sqrt(dw2)
                            if ndw > 0.5 * nw:
                                alpha = min(alpha, 0.5 * nw / ndw)
                    u0 += alpha * b3
                    u1 += alpha * b4
                    u2 += alpha * b5
                    dmax = max(max(max(0.0, abs(bz)), abs(b3)), abs(b4))
                    dmax = max(dmax, abs(b5))
                    xmax = max(max(max(1.0, abs(v0)), abs(v1)), abs(v2))
                    xmax = max(max(max(xmax, abs(u0)), abs(u1)), abs(u2))
                    if dmax <= _SECTION_XTOL * xmax:
                        settled = True
                        break
                    if alpha == 1.0:
                        bb = b3 * b3 + b4 * b4 + b5 * b5
                        if 3.0 * cb * bb <= _SECTION_ETOL * kmin * xmax:
                            settled = True
                            break
                x[3], x[4], x[5] = u0, u1, u2
                if not settled:
                    return False
                pred_seg = seg
                pmb0, pmb1, pmb2 = mb0, mb1, mb2
            else:
                settled = False
                for _it in range(_SECTION_MAX_ITER):
                    v0, v1, v2 = x[0], x[1], x[2]
                    u0, u1, u2 = x[3], x[4], x[5]
                    g[0] = ks0 * v0 - nb0
                    g[1] = ks1 * v1 - nb1
                    g[2] = ks2 * (v2 - 1.0) - nb2
                    g[3] = kb0 * (u0 - us0) - mb0
                    g[4] = kb1 * (u1 - us1) - mb1
                    g[5] = kb2 * (u2 - us2) - mb2
                    for a in range(6):
                        for c in range(6):
                            Jw[a, c] = 0.0
                    Jw[0, 0] = ks0
                    Jw[1, 1] = ks1
                    Jw[2, 2] = ks2
                    Jw[3, 3] = kb0
                    Jw[4, 4] = kb1
                    Jw[5, 5] = kb2
                    for i in range(n_t):
                        Wd[i, 3] = 0.0
                        ti = tau[i] * tau_scale[kk, i]  # friction: tau_i(s) = tau_i c_i(s)
                        if tendon[i, 3] < seg or ti == 0.0:
                            continue
                        rr0, rr1, rr2 = Rt[i, 0], Rt[i, 1], Rt[i, 2]
                        # w = v + u x r (+ r'): the tendon's body-frame direction (unnormalized).
                        w0 = v0 + u1 * rr2 - u2 * rr1
                        w1 = v1 + u2 * rr0 - u0 * rr2
                        w2 = v2 + u0 * rr1 - u1 * rr0
                        if routed:
                            # General routing: w = v + u x r + r' (docs/routing.md).
                            w0 += Rt[i, 3]
                            w1 += Rt[i, 4]
                            w2 += Rt[i, 5]
                        nw = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
                        Wd[i, 0], Wd[i, 1], Wd[i, 2], Wd[i, 3] = w0, w1, w2, nw
                        t0, t1, t2 = w0 / nw, w1 / nw, w2 / nw
                        g[0] += ti * t0
                        g[1] += ti * t1
                        g[2] += ti * t2
                        g[3] += ti * (rr1 * t2 - rr2 * t1)
                        g[4] += ti * (rr2 * t0 - rr0 * t2)
                        g[5] += ti * (rr0 * t1 - rr1 * t0)
                        # dt/dw = c (I - t t^T) = P, c = tau/|w|; dw/dv = I, dw/du = -[r]x:
                        # blocks P, -P[r]x, [r]x P = -(P[r]x)^T, -[r]x P [r]x.
                        c = ti / nw
                        p00 = c * (1.0 - t0 * t0)
                        p11 = c * (1.0 - t1 * t1)
                        p22 = c * (1.0 - t2 * t2)
                        p01 = -c * t0 * t1
                        p02 = -c * t0 * t2
                        p12 = -c * t1 * t2
                        q00 = p01 * rr2 - p02 * rr1
                        q01 = p02 * rr0 - p00 * rr2
                        q02 = p00 * rr1 - p01 * rr0
                        q10 = p11 * rr2 - p12 * rr1
                        q11 = p12 * rr0 - p01 * rr2
                        q12 = p01 * rr1 - p11 * rr0
                        q20 = p12 * rr2 - p22 * rr1
                        q21 = p22 * rr0 - p02 * rr2
                        q22 = p02 * rr1 - p12 * rr0
                        Jw[0, 0] += p00
                        Jw[0, 1] += p01
                        Jw[0, 2] += p02
                        Jw[1, 0] += p01
                        Jw[1, 1] += p11
                        Jw[1, 2] += p12
                        Jw[2, 0] += p02
                        Jw[2, 1] += p12
                        Jw[2, 2] += p22
                        Jw[0, 3] -= q00
                        Jw[0, 4] -= q01
                        Jw[0, 5] -= q02
                        Jw[1, 3] -= q10
                        Jw[1, 4] -= q11
                        Jw[1, 5] -= q12
                        Jw[2, 3] -= q20
                        Jw[2, 4] -= q21
                        Jw[2, 5] -= q22
                        Jw[3, 0] -= q00
                        Jw[3, 1] -= q10
                        Jw[3, 2] -= q20
                        Jw[4, 0] -= q01
                        Jw[4, 1] -= q11
                        Jw[4, 2] -= q21
                        Jw[5, 0] -= q02
                        Jw[5, 1] -= q12
                        Jw[5, 2] -= q22
                        Jw[3, 3] -= rr1 * q20 - rr2 * q10
                        Jw[4, 3] -= rr2 * q00 - rr0 * q20
                        Jw[5, 3] -= rr0 * q10 - rr1 * q00
                        Jw[3, 4] -= rr1 * q21 - rr2 * q11
                        Jw[4, 4] -= rr2 * q01 - rr0 * q21
                        Jw[5, 4] -= rr0 * q11 - rr1 * q01
                        Jw[3, 5] -= rr1 * q22 - rr2 * q12
                        Jw[4, 5] -= rr2 * q02 - rr0 * q22
                        Jw[5, 5] -= rr0 * q12 - rr1 * q02
                    dmax = 0.0
                    xmax = 1.0
                    # LU with partial pivoting of the 6x6 Jacobian, then solve J d = -g.
                    for a in range(6):
                        for c in range(6):
                            LU[a, c] = Jw[a, c]
                    for c in range(6):
                        p = c
                        best = abs(LU[c, c])
                        for r in range(c + 1, 6):
                            if abs(LU[r, c]) > best:
                                best = abs(LU[r, c])
                                p = r
                        if best == 0.0:
                            return False
                        piv[c] = p
                        if p != c:
                            for j in range(6):
                                tmp = LU[c, j]
                                LU[c, j] = LU[p, j]
                                LU[p, j] = tmp
                        inv = 1.0 / LU[c, c]
                        for r in range(c + 1, 6):
                            f = LU[r, c] * inv
                            LU[r, c] = f
                            for j in range(c + 1, 6):
                                LU[r, j] -= f * LU[c, j]
                    for a in range(6):
                        b[a] = -g[a]
                    for c in range(6):
                        p = piv[c]
                        if p != c:
                            tmp = b[c]
                            b[c] = b[p]
                            b[p] = tmp
                    for r in range(6):
                        for j in range(r):
                            b[r] -= LU[r, j] * b[j]
                    for r in range(5, -1, -1):
                        for j in range(r + 1, 6):
                            b[r] -= LU[r, j] * b[j]
                        b[r] /= LU[r, r]
                    # Step limit: no loaded tendon's direction w = v + u x r moves by more
                    # than |w| / 2. The balance is the gradient of a convex energy, smooth
                    # while every |w| > 0, but its tendon term turns w / |w| and so is
                    # stiffest next to the fold w = 0; a full step from far away (the cold
                    # start at the base) can cross it, where w / |w| flips and Newton cycles
                    # between two iterates (seed 1 case 130, docs/validation.md). Inside
                    # |dw| <= |w| / 2 no iterate gets within |w| / 2 of the fold and the
                    # direction turns by at most 30 degrees, a region where the model is
                    # close to its linearisation; near the solution the step is far below it
                    # and Newton is unchanged (quadratic).
                    alpha = 1.0
                    for i in range(n_t):
                        nw = Wd[i, 3]
                        if nw == 0.0:
                            continue
                        rr0, rr1, rr2 = Rt[i, 0], Rt[i, 1], Rt[i, 2]
                        f0 = b[0] + b[4] * rr2 - b[5] * rr1
                        f1 = b[1] + b[5] * rr0 - b[3] * rr2
                        f2 = b[2] + b[3] * rr1 - b[4] * rr0
                        # The root only where the limit may bind (`_STEP_LIMIT_SQ`).
                        dw2 = f0 * f0 + f1 * f1 + f2 * f2
                        if dw2 > _STEP_LIMIT_SQ * nw * nw:
                            ndw = np.sqrt(dw2)
                            if ndw > 0.5 * nw:
                                alpha = min(alpha, 0.5 * nw / ndw)
                    for a in range(6):
                        x[a] += alpha * b[a]
                        dmax = max(dmax, abs(b[a]))
                        xmax = max(xmax, abs(x[a]))
                    if dmax <= _SECTION_XTOL * xmax:
                        settled = True
                        break
                if not settled:
                    # No section balance (a tendon folding back, docs/validation.md): fail
                    # rather than carry on from an unbalanced section.
                    return False
            v0, v1, v2 = x[0], x[1], x[2]
            u0, u1, u2 = x[3], x[4], x[5]
            if stage == 0 and store:
                for a in range(ny):
                    Y_out[k, a] = zt[a]
                for a in range(6):
                    X_out[k, a] = x[a]
            if last:
                # The last node's dipole, after storing: the stored end state is the material's
                # (as with M_tip), the returned z the distal side the residual compares.
                if node_dip[k, 0] != 0.0 or node_dip[k, 1] != 0.0 or node_dip[k, 2] != 0.0:
                    _dipole_drop(z, ny, n_dir, node_dip[k], B, fdir0)
                break
            # K[stage, :] is this stage's derivative dz (indexed, not a view: a view costs
            # two atomic reference count updates per stage).
            # ---- p' = R v ; R' = R [u]x ; M' = -p' x N
            pd0 = r00 * v0 + r01 * v1 + r02 * v2
            pd1 = r10 * v0 + r11 * v1 + r12 * v2
            pd2 = r20 * v0 + r21 * v1 + r22 * v2
            K[stage, 0] = pd0
            K[stage, 1] = pd1
            K[stage, 2] = pd2
            K[stage, 3] = r01 * u2 - r02 * u1
            K[stage, 4] = r02 * u0 - r00 * u2
            K[stage, 5] = r00 * u1 - r01 * u0
            K[stage, 6] = r11 * u2 - r12 * u1
            K[stage, 7] = r12 * u0 - r10 * u2
            K[stage, 8] = r10 * u1 - r11 * u0
            K[stage, 9] = r21 * u2 - r22 * u1
            K[stage, 10] = r22 * u0 - r20 * u2
            K[stage, 11] = r20 * u1 - r21 * u0
            K[stage, 12] = -(pd1 * N2 - pd2 * N1)
            K[stage, 13] = -(pd2 * N0 - pd0 * N2)
            K[stage, 14] = -(pd0 * N1 - pd1 * N0)
            if magnetized:
                # Magnetization: M' -= (R mu) x B, the moment density on the section.
                wm0 = r00 * mu0 + r01 * mu1 + r02 * mu2
                wm1 = r10 * mu0 + r11 * mu1 + r12 * mu2
                wm2 = r20 * mu0 + r21 * mu1 + r22 * mu2
                K[stage, 12] -= wm1 * B[2] - wm2 * B[1]
                K[stage, 13] -= wm2 * B[0] - wm0 * B[2]
                K[stage, 14] -= wm0 * B[1] - wm1 * B[0]
            # ---- l_i' = |v + u x r_i + r_i'| for the tendons passing this segment
            for i in range(n_t):
                if tendon[i, 3] >= seg:
                    rr0, rr1, rr2 = Rt[i, 0], Rt[i, 1], Rt[i, 2]
                    w0 = v0 + u1 * rr2 - u2 * rr1
                    w1 = v1 + u2 * rr0 - u0 * rr2
                    w2 = v2 + u0 * rr1 - u1 * rr0
                    if routed:
                        w0 += Rt[i, 3]
                        w1 += Rt[i, 4]
                        w2 += Rt[i, 5]
                    nw = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
                    K[stage, 15 + i] = nw
                    if len_dirs:  # the unit tangents serve those sensitivities only
                        T[i, 0] = w0 / nw
                        T[i, 1] = w1 / nw
                        T[i, 2] = w2 / nw
                else:
                    K[stage, 15 + i] = 0.0
            # ---- sensitivities: linearize every line above, one direction at a time
            for d in range(n_dir):
                o = ny * (1 + d)
                e00, e01, e02 = zt[o + 3], zt[o + 4], zt[o + 5]
                e10, e11, e12 = zt[o + 6], zt[o + 7], zt[o + 8]
                e20, e21, e22 = zt[o + 9], zt[o + 10], zt[o + 11]
                dM0, dM1, dM2 = zt[o + 12], zt[o + 13], zt[o + 14]
                # d(R^T N) = dR^T N ; d(R^T M) = dR^T M + R^T dM (scalars: see the section);
                # Kirchhoff: dv = 0, the force rows unused.
                b0 = b1 = b2 = 0.0
                if cosserat:
                    b0 = e00 * N0 + e10 * N1 + e20 * N2
                    b1 = e01 * N0 + e11 * N1 + e21 * N2
                    b2 = e02 * N0 + e12 * N1 + e22 * N2
                b3 = e00 * M0 + e10 * M1 + e20 * M2 + r00 * dM0 + r10 * dM1 + r20 * dM2
                b4 = e01 * M0 + e11 * M1 + e21 * M2 + r01 * dM0 + r11 * dM1 + r21 * dM2
                b5 = e02 * M0 + e12 * M1 + e22 * M2 + r02 * dM0 + r12 * dM1 + r22 * dM2
                if tdir0 <= d < tdir0 + n_t:
                    j = d - tdir0
                    if tendon[j, 3] >= seg:
                        # minus dg/dtau_j: tendon j's force and moment on the section
                        # (d tau_j(s) / d tau_j = c_j(s) with friction)
                        cj = tau_scale[kk, j]
                        t0, t1, t2 = cj * T[j, 0], cj * T[j, 1], cj * T[j, 2]
                        rr0, rr1, rr2 = Rt[j, 0], Rt[j, 1], Rt[j, 2]
                        if cosserat:
                            b0 -= t0
                            b1 -= t1
                            b2 -= t2
                        b3 -= rr1 * t2 - rr2 * t1
                        b4 -= rr2 * t0 - rr0 * t2
                        b5 -= rr0 * t1 - rr1 * t0
                # J dx = b with the section Jacobian at the converged strains
                if not loaded:
                    if cosserat:
                        b0 /= ks0
                        b1 /= ks1
                        b2 /= ks2
                    b3 /= kb0
                    b4 /= kb1
                    b5 /= kb2
                elif cosserat:
                    b[0], b[1], b[2], b[3], b[4], b[5] = b0, b1, b2, b3, b4, b5
                    for c in range(6):
                        p = piv[c]
                        if p != c:
                            tmp = b[c]
                            b[c] = b[p]
                            b[p] = tmp
                    for r in range(6):
                        for j in range(r):
                            b[r] -= LU[r, j] * b[j]
                    for r in range(5, -1, -1):
                        for j in range(r + 1, 6):
                            b[r] -= LU[r, j] * b[j]
                        b[r] /= LU[r, r]
                    b0, b1, b2, b3, b4, b5 = b[0], b[1], b[2], b[3], b[4], b[5]
                else:
                    m0, m1, m2 = b3, b4, b5
                    b3 = l00 * m0 + l01 * m1 + l02 * m2
                    b4 = l10 * m0 + l11 * m1 + l12 * m2
                    b5 = l20 * m0 + l21 * m1 + l22 * m2
                dv0, dv1, dv2 = b0, b1, b2
                du0, du1, du2 = b3, b4, b5
                # dp' = dR v + R dv (Kirchhoff: dv = 0; R dv would add only zeros)
                dp0 = e00 * v0 + e01 * v1 + e02 * v2
                dp1 = e10 * v0 + e11 * v1 + e12 * v2
                dp2 = e20 * v0 + e21 * v1 + e22 * v2
                if cosserat:
                    dp0 = dp0 + r00 * dv0 + r01 * dv1 + r02 * dv2  # the sum's order
                    dp1 = dp1 + r10 * dv0 + r11 * dv1 + r12 * dv2  # the sum's order
                    dp2 = dp2 + r20 * dv0 + r21 * dv1 + r22 * dv2  # the sum's order
                K[stage, o + 0] = dp0
                K[stage, o + 1] = dp1
                K[stage, o + 2] = dp2
                # dR' = dR [u]x + R [du]x
                K[stage, o + 3] = (e01 * u2 - e02 * u1) + (r01 * du2 - r02 * du1)
                K[stage, o + 4] = (e02 * u0 - e00 * u2) + (r02 * du0 - r00 * du2)
                K[stage, o + 5] = (e00 * u1 - e01 * u0) + (r00 * du1 - r01 * du0)
                K[stage, o + 6] = (e11 * u2 - e12 * u1) + (r11 * du2 - r12 * du1)
                K[stage, o + 7] = (e12 * u0 - e10 * u2) + (r12 * du0 - r10 * du2)
                K[stage, o + 8] = (e10 * u1 - e11 * u0) + (r10 * du1 - r11 * du0)
                K[stage, o + 9] = (e21 * u2 - e22 * u1) + (r21 * du2 - r22 * du1)
                K[stage, o + 10] = (e22 * u0 - e20 * u2) + (r22 * du0 - r20 * du2)
                K[stage, o + 11] = (e20 * u1 - e21 * u0) + (r20 * du1 - r21 * du0)
                # dM' = -dp' x N
                K[stage, o + 12] = -(dp1 * N2 - dp2 * N1)
                K[stage, o + 13] = -(dp2 * N0 - dp0 * N2)
                K[stage, o + 14] = -(dp0 * N1 - dp1 * N0)
                if magnetized:
                    # d((R mu) x B) = (dR mu) x B, plus (R mu) x e_j along field direction j.
                    f0 = e00 * mu0 + e01 * mu1 + e02 * mu2
                    f1 = e10 * mu0 + e11 * mu1 + e12 * mu2
                    f2 = e20 * mu0 + e21 * mu1 + e22 * mu2
                    K[stage, o + 12] -= f1 * B[2] - f2 * B[1]
                    K[stage, o + 13] -= f2 * B[0] - f0 * B[2]
                    K[stage, o + 14] -= f0 * B[1] - f1 * B[0]
                    if 0 <= fdir0 <= d < fdir0 + 3:
                        _cross_e_sub(K[stage], o + 12, wm0, wm1, wm2, d - fdir0)
                # dl_i' = t_i . (dv + du x r_i)
                if not len_dirs:
                    continue
                for i in range(n_t):
                    if tendon[i, 3] >= seg:
                        rr0, rr1, rr2 = Rt[i, 0], Rt[i, 1], Rt[i, 2]
                        f0 = dv0 + du1 * rr2 - du2 * rr1
                        f1 = dv1 + du2 * rr0 - du0 * rr2
                        f2 = dv2 + du0 * rr1 - du1 * rr0
                        K[stage, o + 15 + i] = T[i, 0] * f0 + T[i, 1] * f1 + T[i, 2] * f2
                    else:
                        K[stage, o + 15 + i] = 0.0
        if last:
            break
        for a in range(nz):
            z[a] += h / 6.0 * (K[0, a] + 2.0 * K[1, a] + 2.0 * K[2, a] + K[3, a])
        # A point moment at node k+1 belongs to the proximal side: M drops across it.
        for a in range(3):
            z[12 + a] -= node_moment[k + 1, a]
        # So does a point dipole's torque (R m) x B (with its sensitivities; at k1 see above).
        nd0, nd1, nd2 = node_dip[k + 1, 0], node_dip[k + 1, 1], node_dip[k + 1, 2]
        if k + 1 < k1 and (nd0 != 0.0 or nd1 != 0.0 or nd2 != 0.0):
            _dipole_drop(z, ny, n_dir, node_dip[k + 1], B, fdir0)
    for a in range(nz):
        if not np.isfinite(z[a]):
            return False
    return True


@njit(cache=True)
def _route_fill(tendon, node_s, kk, s, Rt):
    """Body-frame path r(s) and r'(s) of every routed tendon in step kk at arc length s [m]
    into Rt (n_t, 6) (docs/routing.md). tendon (n_t, 8 + 6 n_nodes): column 4 the kind
    (0 straight, 1 helix, 2 per-disk holes); 5-7 the helix's offset [m], phase [rad] and
    wavenumber 2 pi / pitch [rad/m]; from 8, (r, r') at each node, r' on the node's distal
    side (the holes' path is linear in s between nodes)."""
    for i in range(tendon.shape[0]):
        kind = tendon[i, 4]
        if kind == 1.0:
            d, ang, kw = tendon[i, 5], tendon[i, 6] + tendon[i, 7] * s, tendon[i, 7]
            c, sn = np.cos(ang), np.sin(ang)
            Rt[i, 0] = d * c
            Rt[i, 1] = d * sn
            Rt[i, 2] = 0.0
            Rt[i, 3] = -d * kw * sn
            Rt[i, 4] = d * kw * c
            Rt[i, 5] = 0.0
        elif kind == 2.0:
            o = 8 + 6 * kk
            ds = s - node_s[kk]
            for a in range(3):
                Rt[i, 3 + a] = tendon[i, o + 3 + a]
                Rt[i, a] = tendon[i, o + a] + tendon[i, o + 3 + a] * ds


@njit(cache=True)
def _routed_node_w(tendon, i, k, v0, v1, v2, u0, u1, u2):
    """w = v + u x r + r' of routed tendon i at node k (its stored r, r'; `_route_fill`)."""
    o = 8 + 6 * k
    rr0, rr1, rr2 = tendon[i, o], tendon[i, o + 1], tendon[i, o + 2]
    w0 = v0 + u1 * rr2 - u2 * rr1 + tendon[i, o + 3]
    w1 = v1 + u2 * rr0 - u0 * rr2 + tendon[i, o + 4]
    w2 = v2 + u0 * rr1 - u1 * rr0 + tendon[i, o + 5]
    return w0, w1, w2


@njit(cache=True)
def _cross_e_sub(out, o, w0, w1, w2, j):
    """out[o:o + 3] -= w x e_j."""
    if j == 0:
        out[o + 1] -= w2
        out[o + 2] += w1
    elif j == 1:
        out[o + 0] += w2
        out[o + 2] -= w0
    else:
        out[o + 0] -= w1
        out[o + 1] += w0


@njit(cache=True)
def _dipole_drop(z, ny, n_dir, m, B, fdir0):
    """Total moment across a point dipole m (3,) [A m^2] (body frame) in the field B (3,) [T]:
    M -= (R m) x B, and along every sensitivity direction dM -= (dR m) x B (+ (R m) x e_j for
    the field directions fdir0..fdir0+2)."""
    for d in range(-1, n_dir):
        o = ny * (1 + d)
        w0 = z[o + 3] * m[0] + z[o + 4] * m[1] + z[o + 5] * m[2]
        w1 = z[o + 6] * m[0] + z[o + 7] * m[1] + z[o + 8] * m[2]
        w2 = z[o + 9] * m[0] + z[o + 10] * m[1] + z[o + 11] * m[2]
        z[o + 12] -= w1 * B[2] - w2 * B[1]
        z[o + 13] -= w2 * B[0] - w0 * B[2]
        z[o + 14] -= w0 * B[1] - w1 * B[0]
        if 0 <= fdir0 <= d < fdir0 + 3:
            r0 = z[3] * m[0] + z[4] * m[1] + z[5] * m[2]
            r1 = z[6] * m[0] + z[7] * m[1] + z[8] * m[2]
            r2 = z[9] * m[0] + z[10] * m[1] + z[11] * m[2]
            _cross_e_sub(z, o + 12, r0, r1, r2, d - fdir0)


@njit(cache=True)
def _distal_loads(node_s, step_seg, node_force, seg_par, F_tip, f_dist, gravity, N_end_out, q_out):
    """Total distal force at each step's end, N_end_out (n_steps, 3) [N], and each step's line
    load q_out (n_steps, 3) [N/m] = f_dist + rho_A g. node_force : (n_nodes, 3) point forces at
    nodes (disk weights, point loads) [N]; a force at a node is distal to the step ending there.
    """
    n_steps = step_seg.shape[0]
    acc = np.empty(3)
    for a in range(3):
        acc[a] = F_tip[a] + node_force[n_steps, a]
    for k in range(n_steps - 1, -1, -1):
        seg = step_seg[k]
        h = node_s[k + 1] - node_s[k]
        for a in range(3):
            q_out[k, a] = f_dist[a] + seg_par[seg, 9] * gravity[a]
            N_end_out[k, a] = acc[a]
            acc[a] += q_out[k, a] * h + node_force[k, a]


@njit(cache=True)
def _evaluate(M0, tau, n_dir, base, geo, ld, store, Y_out, X_out, z_out):
    """Integrate from base moment M0 (3,) with tensions tau (n_t,) from base = (position (3,),
    rotation (3, 3)); z_out receives the final augmented state (ny * (1 + n_dir),).
    Returns False on failure."""
    base_p, base_R = base
    n_t = tau.shape[0]
    ny = 15 + n_t
    for a in range(z_out.shape[0]):
        z_out[a] = 0.0
    for a in range(3):
        z_out[a] = base_p[a]
        z_out[12 + a] = M0[a]
        for c in range(3):
            z_out[3 + 3 * a + c] = base_R[a, c]
    for d in range(min(n_dir, 3)):
        z_out[ny * (1 + d) + 12 + d] = 1.0
    # Explicit non-literal k0, k1, tdir0: one compiled `_integrate` for every caller.
    return _integrate(
        z_out, n_dir, geo, tau, ld, store, Y_out, X_out, np.int64(0), np.int64(-1), np.int64(3)
    )


@njit(cache=True)
def _evaluate_interval(
    p0, R0, M0, l0, tau, rot_dirs, n_tau_dirs, geo, ld, k0, k1, Y_out, X_out, z_out
):
    """Integrate nodes k0..k1 from (p0, R0, M0, l0) for multiple shooting, storing the nodes.

    Sensitivity directions: with rot_dirs, three rotations of the start frame
    (dR = R0 [e_d]x), then three of M0, then n_tau_dirs tensions; without, M0 then tensions.
    z_out : (ny * (1 + n_dir),) receives the end state. Returns False on failure.
    """
    n_t = tau.shape[0]
    ny = 15 + n_t
    n_rot = 3 if rot_dirs else 0
    n_dir = n_rot + 3 + n_tau_dirs
    for a in range(z_out.shape[0]):
        z_out[a] = 0.0
    for a in range(3):
        z_out[a] = p0[a]
        z_out[12 + a] = M0[a]
        for c in range(3):
            z_out[3 + 3 * a + c] = R0[a, c]
    for i in range(n_t):
        z_out[15 + i] = l0[i]
    for d in range(n_rot):
        o = ny * (1 + d)
        # R0 [e_d]x: column-wise cross products of R0's rows with e_d.
        for a in range(3):
            r0, r1, r2 = R0[a, 0], R0[a, 1], R0[a, 2]
            if d == 0:
                z_out[o + 3 + 3 * a + 1] = r2
                z_out[o + 3 + 3 * a + 2] = -r1
            elif d == 1:
                z_out[o + 3 + 3 * a + 0] = -r2
                z_out[o + 3 + 3 * a + 2] = r0
            else:
                z_out[o + 3 + 3 * a + 0] = r1
                z_out[o + 3 + 3 * a + 1] = -r0
    for d in range(3):
        z_out[ny * (1 + n_rot + d) + 12 + d] = 1.0
    store = np.bool_(True)  # not the literal True: numba would compile a copy per literal
    return _integrate(z_out, n_dir, geo, tau, ld, store, Y_out, X_out, k0, k1, n_rot + 3)


@njit(cache=True)
def _residual(x, length_mode, tau_fixed, base, geo, ld, bc, store, Y_out, X_out, z, r_out, J_out):
    """Scaled residual r_out (n,) and its Jacobian J_out (n, n) at unknowns x = (M0, [tau]).

    bc = (M_tip (3,) [N m], L_cmd (n_t,) [m], k_t (n_t,) [N/m], m_scale [N m], t_scale [N]).
    Moment rows: (M(L) - M_tip) / m_scale. Tension rows (length control):
    (tau_j - k_j max(0, l_j - L_cmd_j)) / t_scale. Returns False on failure.
    """
    M_tip, L_cmd, k_t, m_scale, t_scale = bc
    n_t = tau_fixed.shape[0]
    ny = 15 + n_t
    n = x.shape[0]
    if length_mode:
        tau = x[3:]
    else:
        tau = tau_fixed
    if not _evaluate(x[:3], tau, n, base, geo, ld, store, Y_out, X_out, z):
        return False
    for a in range(3):
        r_out[a] = (z[12 + a] - M_tip[a]) / m_scale
        for d in range(n):
            J_out[a, d] = z[ny * (1 + d) + 12 + a] / m_scale
    if length_mode:
        for j in range(n_t):
            row = 3 + j
            stretch = z[15 + j] - L_cmd[j]
            r_out[row] = (x[row] - k_t[j] * max(stretch, 0.0)) / t_scale
            for d in range(n):
                J_out[row, d] = 0.0
                if stretch > 0.0:
                    J_out[row, d] = -k_t[j] * z[ny * (1 + d) + 15 + j] / t_scale
            J_out[row, row] += 1.0 / t_scale
    return True


@njit(cache=True)
def _residual_value(x, length_mode, tau_fixed, base, geo, ld, bc, store, Y_out, X_out, z, r_out):
    """`_residual` without the Jacobian: the IVP from x without sensitivity directions (the
    state, Y_out and X_out are the same numbers), r_out (n,) only. Returns False on failure."""
    M_tip, L_cmd, k_t, m_scale, t_scale = bc
    n_t = tau_fixed.shape[0]
    if length_mode:
        tau = x[3:]
    else:
        tau = tau_fixed
    # np.int64, not the literal 0: numba would compile another `_integrate` for a literal.
    if not _evaluate(x[:3], tau, np.int64(0), base, geo, ld, store, Y_out, X_out, z):
        return False
    for a in range(3):
        r_out[a] = (z[12 + a] - M_tip[a]) / m_scale
    if length_mode:
        for j in range(n_t):
            stretch = z[15 + j] - L_cmd[j]
            r_out[3 + j] = (x[3 + j] - k_t[j] * max(stretch, 0.0)) / t_scale
    return True


#: Newton evaluates a trial without the Jacobian when quadratic convergence predicts a
#: residual below this fraction of the tolerance (`_newton`): the converged iterate's
#: sensitivities are never used. The prediction r_k+1 = r_k^3 / r_k-1^2 lands within a factor
#: ~2 of the residual found on the bench's solves (docs/stability.md, "Cost of a solve"), so
#: 1/2 catches most last steps; a miss costs one evaluation and changes no iterate.
_PREDICTED_FRACTION = 0.5
#: `_newton` status of a predicted-converged iterate left to the caller to evaluate.
_DEFERRED = 8
#: counters[3] of continuation's intermediate steps (`_newton`): deferred as with any value
#: != 0, and the first Newton step's iterate evaluated value-only, the Jacobian updated by
#: Broyden's rank-one formula. The step after it then converges at r2 ~ r1^2 / r0 (measured
#: r2 / (r1^2 / r0) 0.92-1.25 over 10-99 % of the bench's steps, max 1.86: `dev/
#: continuation_steps.py`), which `_newton` predicts with that rule.
_BROYDEN_DEFER = 2.0
#: After Broyden's update a step is deferred when r1^2 / r0 < this times tol: 1/4, not
#: `_PREDICTED_FRACTION`'s 1/2 (the bench's first 2000 items, docs/batch.md "Speed": at 1/2,
#: 2 of 2388 deferred steps left residuals above tol, up to 2.4e-4 with tol 1e-4; at 1/4
#: none of 2239, at most 4.5e-5 as with Newton's rule; at 1/8 the gain is gone).
_BROYDEN_FRACTION = 0.25


@njit(cache=True)
def _newton(
    x,
    length_mode,
    tau_fixed,
    base,
    geo,
    ld,
    bc,
    tol,
    max_iter,
    Y_out,
    X_out,
    counters,
    max_step=np.inf,
):
    """Damped Newton shooting on x (in place). counters: [nit, nfev, final residual norm], or
    with a fourth entry != 0 the caller evaluates a predicted-converged iterate itself (status
    `_DEFERRED`: x is moved there, not evaluated, and Y_out still describes the iterate before;
    `_shooting` then integrates it once with the stability test's maps). With n (n + 3) more
    entries (`_JACOBIAN_AT`), counters also receives the last Jacobian Newton computed, of the
    final x or of the iterate before it: J (n, n) row-major, then the tip's sensitivities
    d p(L) / dx (3, n) row-major (the tip error estimate's boundary correction reads them;
    the same float array, so the kernel's signature and its other callers are unchanged).

    With n more entries after those (n (n + 4) in all), a deferred iterate's step x - x_before
    (n,) is written there as well (`_deferred_tip` reads it).

    counters[3] == `_BROYDEN_DEFER` (continuation's intermediate steps, which defer), on a
    Kirchhoff rod: a full
    first step's iterate is evaluated without sensitivities and, when it lowers the residual,
    kept with Broyden's update of the Jacobian (J += r_1 s^T / s^T s); the next step is then
    predicted to converge when r_1^2 / r_0 < `_BROYDEN_FRACTION` tol (linear, not quadratic),
    and a deferred step's tip sensitivities are those of the last full evaluation.

    On return Y_out/X_out describe the final x. Status: 0 converged, 1 max_iter reached,
    2 line search stalled, 3 non-finite state, 8 (`_DEFERRED`) see above.
    Every Newton step is shortened to at most `max_step` in the scaled unknowns (M0 / m_scale,
    tensions / t_scale; default unbounded): the line search then only accepts residual
    decreases near the current iterate, not on a distant branch.
    """
    n = x.shape[0]
    nz = (15 + tau_fixed.shape[0]) * (1 + n)
    z = np.empty(nz)
    r = np.empty(n)
    J = np.empty((n, n))
    r_try = np.empty(n)
    J_try = np.empty((n, n))
    x_try = np.empty(n)
    m_scale = bc[3]
    t_scale = bc[4]
    # `store` as np.bool_, not a literal: numba compiles `_residual` once for both values.
    store = np.bool_(True)
    ok = _residual(x, length_mode, tau_fixed, base, geo, ld, bc, store, Y_out, X_out, z, r, J)
    counters[1] += 1
    if not ok:
        return 3
    norm = np.max(np.abs(r))
    counters[2] = norm
    norm_prev = 0.0  # the residual before the last step (none yet)
    keep = counters.shape[0] >= _JACOBIAN_AT + n * (n + 3)
    ny = 15 + tau_fixed.shape[0]
    # Kirchhoff rods only: their value-only evaluation costs ~0.7 of a full one (measured);
    # a Cosserat rod's was not measured, and its sets took more iterations for no clear gain.
    broyden = counters.shape[0] > 3 and counters[3] == _BROYDEN_DEFER and not geo[4]
    fresh = True  # J (and z's sensitivities) from a full evaluation at x, not Broyden's
    for _ in range(max_iter):
        if keep:
            # After Broyden's update z holds no sensitivities: J only, the tip's kept.
            _keep_jacobian(J, z, ny if fresh else -1, counters)
        if norm <= tol:
            return 0
        step = np.linalg.solve(J, -r)
        if not np.all(np.isfinite(step)):
            return 3
        # The step's length in scaled unknowns; shorten it to the bound.
        size = 0.0
        for a in range(n):
            size = max(size, abs(step[a]) / (m_scale if a < 3 else t_scale))
        alpha = 1.0 if size <= max_step else max_step / size
        alpha_min = alpha / 64.0
        accepted = False
        norm_try = norm
        # Quadratic convergence (r_k+1 ~ r_k^2 r_k / r_k-1^2; after Broyden's update r_k+1 ~
        # r_k^2 / r_k-1) predicts a full step lands far below tol: evaluate it without
        # sensitivities, the converged x needs none.
        predicted = (
            norm * norm * norm < _PREDICTED_FRACTION * tol * norm_prev**2
            if fresh
            else norm * norm < _BROYDEN_FRACTION * tol * norm_prev
        )
        if alpha == 1.0 and predicted:
            for a in range(n):
                x_try[a] = x[a] + step[a]
            if counters.shape[0] > 3 and counters[3] != 0.0:
                # With room for it (n (n + 4) entries after `_JACOBIAN_AT`), the step goes to
                # counters too: the caller can correct the iterate before's tip to first order
                # (`_deferred_tip`).
                room = keep and counters.shape[0] >= _JACOBIAN_AT + n * (n + 4)
                for a in range(n):
                    x[a] = x_try[a]
                    if room:
                        counters[_JACOBIAN_AT + n * (n + 3) + a] = step[a]
                return _DEFERRED
            ok = _residual_value(
                x_try, length_mode, tau_fixed, base, geo, ld, bc, store, Y_out, X_out, z, r_try
            )
            counters[1] += 1
            if ok:
                norm_try = np.max(np.abs(r_try))
                if norm_try <= tol and norm_try < norm:
                    counters[0] += 1
                    for a in range(n):
                        x[a] = x_try[a]
                        r[a] = r_try[a]
                    counters[2] = norm_try
                    return 0
        if broyden and fresh and alpha == 1.0 and norm_prev == 0.0:
            # The first step's iterate without sensitivities, J by Broyden's update (J s = -r).
            for a in range(n):
                x_try[a] = x[a] + step[a]
            ok = _residual_value(
                x_try, length_mode, tau_fixed, base, geo, ld, bc, store, Y_out, X_out, z, r_try
            )
            counters[1] += 1
            if ok:
                norm_try = np.max(np.abs(r_try))
                if norm_try < norm:
                    counters[0] += 1
                    ss = 0.0
                    for a in range(n):
                        ss += step[a] * step[a]
                    for a in range(n):
                        x[a] = x_try[a]
                        for c in range(n):
                            J[a, c] += r_try[a] * step[c] / ss
                        r[a] = r_try[a]
                    norm_prev = norm
                    norm = norm_try
                    counters[2] = norm
                    fresh = False
                    continue
            alpha *= 0.5  # the full step, just evaluated, did not lower the residual
        norm_prev = norm
        while alpha >= alpha_min:
            for a in range(n):
                x_try[a] = x[a] + alpha * step[a]
            ok = _residual(
                x_try,
                length_mode,
                tau_fixed,
                base,
                geo,
                ld,
                bc,
                store,
                Y_out,
                X_out,
                z,
                r_try,
                J_try,
            )
            counters[1] += 1
            if ok:
                norm_try = np.max(np.abs(r_try))
                if norm_try < norm:
                    accepted = True
                    break
            alpha *= 0.5
        counters[0] += 1
        if not accepted:
            # Leave Y_out/X_out describing x, not the rejected trial.
            _residual(x, length_mode, tau_fixed, base, geo, ld, bc, store, Y_out, X_out, z, r, J)
            counters[1] += 1
            return 2
        for a in range(n):
            x[a] = x_try[a]
            r[a] = r_try[a]
            for c in range(n):
                J[a, c] = J_try[a, c]
        norm = norm_try
        counters[2] = norm
        fresh = True
    if keep:
        _keep_jacobian(J, z, ny if fresh else -1, counters)
    return 0 if norm <= tol else 1


#: Index in `_newton`'s counters where the kept Jacobian starts (after nit, nfev, residual,
#: defer).
_JACOBIAN_AT = 4


@njit(cache=True)
def _deferred_tip(Y, counters, n, tip_out):
    """Tip (3,) [m] of `_newton`'s deferred iterate (status `_DEFERRED`, counters of length
    `_JACOBIAN_AT` + n (n + 4)) to first order: the iterate before's tip (Y's last node, which
    still describes it) plus its tip sensitivities times the deferred step (both in counters).
    The step is Newton's from a residual r_k with r_k^3 < `_PREDICTED_FRACTION` tol
    r_k-1^2, so the tip's error is second order in it (measured <= 5e-6 L with tol 1e-6 and
    <= 1.0e-4 L with `_STEP_RTOL` on the bench's continuation steps)."""
    last = Y.shape[0] - 1
    o = _JACOBIAN_AT + n * n
    s = _JACOBIAN_AT + n * (n + 3)
    for a in range(3):
        tip_out[a] = Y[last, a]
        for d in range(n):
            tip_out[a] += counters[o + a * n + d] * counters[s + d]


@njit(cache=True)
def _keep_jacobian(J, z, ny, counters):
    """Copy the residual's Jacobian J (n, n) and the tip's sensitivities d p(L) / dx (3, n)
    from the augmented state z of the same evaluation into counters from `_JACOBIAN_AT` on;
    ny < 0: J only (the tip's sensitivities kept from before)."""
    n = J.shape[0]
    o = _JACOBIAN_AT
    for a in range(n):
        for d in range(n):
            counters[o + a * n + d] = J[a, d]
    if ny < 0:
        return
    o += n * n
    for a in range(3):
        for d in range(n):
            counters[o + a * n + d] = z[ny * (1 + d) + a]


@njit(cache=True)
def _section_loads(Y, X, N_node, node_seg, seg_par, tendon, tau, force_out, moment_out):
    """World-frame force and moment carried by the backbone material at each node.

    Y (n, ny), X (n, 6) from `_integrate`; N_node (n, 3) total distal force [N];
    tau (n, n_t) tendon tension at each node [N] (constant along a tendon without friction).
    force_out = N - sum_i tau_i R t_i over the tendons passing the node [N];
    moment_out = R K_bt (u - u*) [N m].
    """
    n_t = tau.shape[1]
    for k in range(Y.shape[0]):
        seg = node_seg[k]
        v0, v1, v2 = X[k, 0], X[k, 1], X[k, 2]
        u0, u1, u2 = X[k, 3], X[k, 4], X[k, 5]
        f0, f1, f2 = N_node[k, 0], N_node[k, 1], N_node[k, 2]
        for i in range(n_t):
            if tendon[i, 3] < seg or tau[k, i] == 0.0:
                continue
            rr0, rr1, rr2 = tendon[i, 0], tendon[i, 1], tendon[i, 2]
            w0 = v0 + u1 * rr2 - u2 * rr1
            w1 = v1 + u2 * rr0 - u0 * rr2
            w2 = v2 + u0 * rr1 - u1 * rr0
            if tendon.shape[1] > 4 and tendon[i, 4] != 0.0:
                w0, w1, w2 = _routed_node_w(tendon, i, k, v0, v1, v2, u0, u1, u2)
            c = tau[k, i] / np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
            f0 -= c * (Y[k, 3] * w0 + Y[k, 4] * w1 + Y[k, 5] * w2)
            f1 -= c * (Y[k, 6] * w0 + Y[k, 7] * w1 + Y[k, 8] * w2)
            f2 -= c * (Y[k, 9] * w0 + Y[k, 10] * w1 + Y[k, 11] * w2)
        force_out[k, 0] = f0
        force_out[k, 1] = f1
        force_out[k, 2] = f2
        m0 = seg_par[seg, 0] * (u0 - seg_par[seg, 6])
        m1 = seg_par[seg, 1] * (u1 - seg_par[seg, 7])
        m2 = seg_par[seg, 2] * (u2 - seg_par[seg, 8])
        for a in range(3):
            moment_out[k, a] = Y[k, 3 + 3 * a] * m0 + Y[k, 4 + 3 * a] * m1 + Y[k, 5 + 3 * a] * m2


@njit(cache=True)
def _distal_moments_on_shape(positions, node_s, N_end, q_step, node_moment, tip_moment, out):
    """Moment of the external loads distal to each node about that node, on a given shape.

    positions (n_nodes, 3) [m] -> out (n_nodes, 3) [N m] (distal side of every node, i.e.
    what the total section moment M equals at equilibrium). Line loads by the trapezoid rule.
    """
    n_steps = N_end.shape[0]
    for a in range(3):
        out[n_steps, a] = tip_moment[a]
    for k in range(n_steps - 1, -1, -1):
        h = node_s[k + 1] - node_s[k]
        d0 = positions[k + 1, 0] - positions[k, 0]
        d1 = positions[k + 1, 1] - positions[k, 1]
        d2 = positions[k + 1, 2] - positions[k, 2]
        f0 = N_end[k, 0] + 0.5 * h * q_step[k, 0]
        f1 = N_end[k, 1] + 0.5 * h * q_step[k, 1]
        f2 = N_end[k, 2] + 0.5 * h * q_step[k, 2]
        m_next0 = node_moment[k + 1, 0] if k + 1 < n_steps else 0.0
        m_next1 = node_moment[k + 1, 1] if k + 1 < n_steps else 0.0
        m_next2 = node_moment[k + 1, 2] if k + 1 < n_steps else 0.0
        out[k, 0] = out[k + 1, 0] + m_next0 + d1 * f2 - d2 * f1
        out[k, 1] = out[k + 1, 1] + m_next1 + d2 * f0 - d0 * f2
        out[k, 2] = out[k + 1, 2] + m_next2 + d0 * f1 - d1 * f0


# ---------------------------------------------------------------------------------------------
# Load continuation: one step rule for `solve_static` (`_shooting`'s `follow`) and the batch
# (`_batch_kernels._follow`), so that a sweep's batched rows and its per-point solves take the
# same path (docs/stability.md, "One continuation rule").

#: Branch safety (issue 19): a load step is accepted only if the corrected tip moved at most
#: `_MAX_TIP_MOVE` of the length from the last equilibrium and lies within
#: `_MAX_TIP_DEVIATION` of the length of the secant-predicted tip. Equilibria on another
#: branch lay 0.5-2 L away in the cases that jumped.
_MAX_TIP_MOVE = 0.2
_MAX_TIP_DEVIATION = 0.05
#: The first load increment of a continuation bends the robot by about this angle [rad]
#: (of the path's bending number; a path after a failed direct Newton starts at 1/4). With
#: no secant yet only the move bound checks it, and a bending angle a moves the tip by about
#: a L / 3 (tip force) to a L / 2 (moment): 0.5 keeps it near `_MAX_TIP_MOVE` L. (With 1.0,
#: before, the bench's first 400 items had 75 first steps rejected among their 95 continued
#: ones, each retried smaller: ~2 of their ~20 evaluations; 0.4-0.5 measured best,
#: docs/batch.md "Speed".)
_FIRST_STEP_ANGLE = 0.5
#: Each next increment is sized to use this fraction of the tip check's bounds
#: (`_next_load_step`): the move grows like the increment, the secant's deviation like its
#: square. After an accepted step it grows at most x2 and at least x`_MIN_STEP_GROWTH`; a
#: rejected one shrinks at most to x1/2 and at least to x`_MIN_STEP_CUT`.
_STEP_SAFETY = 0.7
_MIN_STEP_GROWTH = 0.25
_MIN_STEP_CUT = 0.1
#: Scaled residual to which the intermediate equilibria of continuation are converged (the
#: last step, at the full inputs, to rtol): they only carry the path and the tip check, whose
#: bounds are 0.05-0.2 L. At 1e-4 the deferred iterates' residuals measured <= 4.5e-5 and
#: their corrected tips within 1.0e-4 L of the evaluated ones (the bench's continued items,
#: docs/batch.md "Speed"), ~1/500 of the tighter bound; 1e-6 (before) cost a third full
#: evaluation on ~1 step in 6.
_STEP_RTOL = 1e-4


@njit(cache=True)
def _tip_step_use(tip, tip_cur, tip_prev, has_prev, ratio, length, out):
    """How much of the branch check's bounds a continuation step used: the corrected tip's
    move from the last equilibrium's tip `tip_cur` over `_MAX_TIP_MOVE` L and its distance from
    the secant prediction tip_cur + ratio (tip_cur - tip_prev) over `_MAX_TIP_DEVIATION` L (0
    without a previous step) into out (2,), inf for a non-finite tip. Returns whether the step
    stays on the branch: both at most 1. tip, tip_cur, tip_prev (3,) [m]; length [m]."""
    move = 0.0
    dev = 0.0
    for a in range(3):
        if not np.isfinite(tip[a]):
            out[0] = np.inf
            out[1] = np.inf
            return False
        move += (tip[a] - tip_cur[a]) ** 2
        if has_prev:
            dev += (tip[a] - tip_cur[a] - ratio * (tip_cur[a] - tip_prev[a])) ** 2
    out[0] = np.sqrt(move) / (_MAX_TIP_MOVE * length)
    out[1] = np.sqrt(dev) / (_MAX_TIP_DEVIATION * length)
    return out[0] <= 1.0 and out[1] <= 1.0


@njit(cache=True)
def _next_load_step(dmu, used, status, dmu_max):
    """The next load increment after one of dmu: `status` 0 (accepted), 5 (rejected by the
    branch check) or another (Newton failed: halved); `used` (2,) the bounds the step used
    (`_tip_step_use`). Sized so that the next step uses `_STEP_SAFETY` of each bound, within
    the growth and cut limits above; an accepted step grows to at most dmu_max."""
    grow = status == 0
    if status != 0 and (status != 5 or not np.isfinite(used[0])):
        return 0.5 * dmu
    f = 2.0 if grow else 0.5
    if used[0] > 0.0:
        f = min(f, _STEP_SAFETY / used[0])
    if used[1] > 0.0:
        f = min(f, np.sqrt(_STEP_SAFETY / used[1]))
    f = max(f, _MIN_STEP_GROWTH if grow else _MIN_STEP_CUT)
    return min(f * dmu, dmu_max) if grow else f * dmu
