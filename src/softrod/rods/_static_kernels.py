"""Numba kernels of the static rod solver (see `_model.py` for the formulation).

Layout of the integrated state (length ny = 15 + n_t):
    y = [p (3), R (9, row-major), M (3), l (n_t)]
with p the centreline [m], R the section frame, M the total moment across the section (world)
[N m] and l the tendon path lengths from the base [m]. Sensitivities with respect to n_dir
unknowns follow in blocks of ny: directions 0-2 are M(0); direction 3 + j is tension j
(length control only). RK4 is applied to the augmented system, so the sensitivities are the
exact derivatives of the discrete solution (Newton converges quadratically).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_SECTION_MAX_ITER = 40
#: Section Newton stops after an update below this relative size: convergence is quadratic
#: (the tendon terms are a small perturbation of K), so the error left is ~1e-16.
_SECTION_XTOL = 1e-8


@njit(cache=True, inline="always")
def _lu_factor(A, n, piv):
    """In-place LU with partial pivoting of the leading n x n block; False if singular."""
    for c in range(n):
        p = c
        best = abs(A[c, c])
        for r in range(c + 1, n):
            if abs(A[r, c]) > best:
                best = abs(A[r, c])
                p = r
        if best == 0.0:
            return False
        piv[c] = p
        if p != c:
            for j in range(n):
                tmp = A[c, j]
                A[c, j] = A[p, j]
                A[p, j] = tmp
        inv = 1.0 / A[c, c]
        for r in range(c + 1, n):
            f = A[r, c] * inv
            A[r, c] = f
            if f != 0.0:
                for j in range(c + 1, n):
                    A[r, j] -= f * A[c, j]
    return True


@njit(cache=True, inline="always")
def _lu_solve(LU, n, piv, b, off):
    """Solve in place for b[off:off+n] with the factors from `_lu_factor`."""
    for c in range(n):
        p = int(piv[c])
        if p != c:
            tmp = b[off + c]
            b[off + c] = b[off + p]
            b[off + p] = tmp
    for r in range(n):
        acc = b[off + r]
        for j in range(r):
            acc -= LU[r, j] * b[off + j]
        b[off + r] = acc
    for r in range(n - 1, -1, -1):
        acc = b[off + r]
        for j in range(r + 1, n):
            acc -= LU[r, j] * b[off + j]
        b[off + r] = acc / LU[r, r]


@njit(cache=True, inline="always")
def _tendon_terms(x_io, tau, seg, tendon_r, tendon_seg, T_out, g, Jw, with_jac):
    """Add the tendons' force and moment on the section to g (6,) and, if with_jac, their
    derivatives w.r.t. x = (v, u) to Jw (6, 6); store unit tangents in T_out (n_t, 3)."""
    v0, v1, v2 = x_io[0], x_io[1], x_io[2]
    u0, u1, u2 = x_io[3], x_io[4], x_io[5]
    for i in range(tau.shape[0]):
        if tendon_seg[i] < seg:
            continue
        r0, r1, r2 = tendon_r[i, 0], tendon_r[i, 1], tendon_r[i, 2]
        # w = v + u x r: the tendon's body-frame tangent direction (unnormalized).
        w0 = v0 + u1 * r2 - u2 * r1
        w1 = v1 + u2 * r0 - u0 * r2
        w2 = v2 + u0 * r1 - u1 * r0
        nw = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        t0, t1, t2 = w0 / nw, w1 / nw, w2 / nw
        T_out[i, 0] = t0
        T_out[i, 1] = t1
        T_out[i, 2] = t2
        ti = tau[i]
        if ti == 0.0:
            continue
        g[0] += ti * t0
        g[1] += ti * t1
        g[2] += ti * t2
        g[3] += ti * (r1 * t2 - r2 * t1)
        g[4] += ti * (r2 * t0 - r0 * t2)
        g[5] += ti * (r0 * t1 - r1 * t0)
        if not with_jac:
            continue
        # dt/dw = c (I - t t^T) with c = tau/|w|; dw/dv = I and dw/du = -[r]x, so the blocks
        # are P, -P[r]x, [r]x P and -[r]x P [r]x (written out to stay allocation-free).
        c = ti / nw
        p00 = c * (1.0 - t0 * t0)
        p11 = c * (1.0 - t1 * t1)
        p22 = c * (1.0 - t2 * t2)
        p01 = -c * t0 * t1
        p02 = -c * t0 * t2
        p12 = -c * t1 * t2
        # Q = P [r]x (rows of P crossed with r)
        q00 = p01 * r2 - p02 * r1
        q01 = p02 * r0 - p00 * r2
        q02 = p00 * r1 - p01 * r0
        q10 = p11 * r2 - p12 * r1
        q11 = p12 * r0 - p01 * r2
        q12 = p01 * r1 - p11 * r0
        q20 = p12 * r2 - p22 * r1
        q21 = p22 * r0 - p02 * r2
        q22 = p02 * r1 - p12 * r0
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
        # [r]x P = -(P [r]x)^T since P is symmetric and [r]x skew.
        Jw[3, 0] -= q00
        Jw[3, 1] -= q10
        Jw[3, 2] -= q20
        Jw[4, 0] -= q01
        Jw[4, 1] -= q11
        Jw[4, 2] -= q21
        Jw[5, 0] -= q02
        Jw[5, 1] -= q12
        Jw[5, 2] -= q22
        # -[r]x Q, column by column
        for b, (y0, y1, y2) in enumerate(((q00, q10, q20), (q01, q11, q21), (q02, q12, q22))):
            Jw[3, 3 + b] -= r1 * y2 - r2 * y1
            Jw[4, 3 + b] -= r2 * y0 - r0 * y2
            Jw[5, 3 + b] -= r0 * y1 - r1 * y0


@njit(cache=True, inline="always")
def _section_solve(
    nb0, nb1, nb2, mb0, mb1, mb2, tau, seg, tendon_r, tendon_seg, kbt, kse, ustar, cosserat,
    x_io, Jw, Jinv_out, T_out, g, piv,
):
    """Solve the section balance for the strains x = (v, u) given body-frame N, M.

    nb*, mb* : components of R^T N and R^T M [N], [N m]. tau : (n_t,) tensions [N]; a tendon
    acts where tendon_seg >= seg. x_io : (6,) warm start in, solution out (v = e3 for
    Kirchhoff). T_out : (n_t, 3) unit tendon tangents (body frame). g (6,), Jw (6, 6) scratch.
    On return Jinv_out/piv hold what `_section_apply` needs to solve J dx = b:
    piv[0] = -1: J diagonal (no loaded tendon; Jinv_out[0] holds 1/diag);
    piv[0] = -2: Kirchhoff, Jinv_out[:3, :3] = J^-1 of the u block; otherwise LU of J (6x6).
    Returns the number of Newton iterations, or -1 when J is singular.
    """
    loaded = False
    for i in range(tau.shape[0]):
        if tendon_seg[i] >= seg and tau[i] != 0.0:
            loaded = True
    if not loaded:
        # Linear, diagonal balance: closed form.
        x_io[3] = ustar[0] + mb0 / kbt[0]
        x_io[4] = ustar[1] + mb1 / kbt[1]
        x_io[5] = ustar[2] + mb2 / kbt[2]
        if cosserat:
            x_io[0] = nb0 / kse[0]
            x_io[1] = nb1 / kse[1]
            x_io[2] = 1.0 + nb2 / kse[2]
        else:
            x_io[0] = 0.0
            x_io[1] = 0.0
            x_io[2] = 1.0
        for a in range(3):
            Jinv_out[0, a] = 1.0 / kse[a]
            Jinv_out[0, 3 + a] = 1.0 / kbt[a]
        piv[0] = -1.0
        _tendon_terms(x_io, tau, seg, tendon_r, tendon_seg, T_out, g, Jw, False)
        return 1
    it = 0
    for it in range(1, _SECTION_MAX_ITER + 1):
        g[0] = kse[0] * x_io[0] - nb0
        g[1] = kse[1] * x_io[1] - nb1
        g[2] = kse[2] * (x_io[2] - 1.0) - nb2
        g[3] = kbt[0] * (x_io[3] - ustar[0]) - mb0
        g[4] = kbt[1] * (x_io[4] - ustar[1]) - mb1
        g[5] = kbt[2] * (x_io[5] - ustar[2]) - mb2
        for a in range(6):
            for b in range(6):
                Jw[a, b] = 0.0
        for a in range(3):
            Jw[a, a] = kse[a]
            Jw[3 + a, 3 + a] = kbt[a]
        _tendon_terms(x_io, tau, seg, tendon_r, tendon_seg, T_out, g, Jw, True)
        dmax = 0.0
        xmax = 1.0
        if cosserat:
            for a in range(6):
                for b in range(6):
                    Jinv_out[a, b] = Jw[a, b]
            if not _lu_factor(Jinv_out, 6, piv):
                return -1
            for a in range(6):
                g[a] = -g[a]
            _lu_solve(Jinv_out, 6, piv, g, 0)
            for a in range(6):
                x_io[a] += g[a]
                dmax = max(dmax, abs(g[a]))
                xmax = max(xmax, abs(x_io[a]))
        else:
            # Explicit inverse of the 3x3 moment block (adjugate / determinant).
            a00, a01, a02 = Jw[3, 3], Jw[3, 4], Jw[3, 5]
            a10, a11, a12 = Jw[4, 3], Jw[4, 4], Jw[4, 5]
            a20, a21, a22 = Jw[5, 3], Jw[5, 4], Jw[5, 5]
            c00 = a11 * a22 - a12 * a21
            c01 = a02 * a21 - a01 * a22
            c02 = a01 * a12 - a02 * a11
            det = a00 * c00 + a10 * c01 + a20 * c02
            if det == 0.0:
                return -1
            inv = 1.0 / det
            Jinv_out[0, 0] = c00 * inv
            Jinv_out[0, 1] = c01 * inv
            Jinv_out[0, 2] = c02 * inv
            Jinv_out[1, 0] = (a12 * a20 - a10 * a22) * inv
            Jinv_out[1, 1] = (a00 * a22 - a02 * a20) * inv
            Jinv_out[1, 2] = (a02 * a10 - a00 * a12) * inv
            Jinv_out[2, 0] = (a10 * a21 - a11 * a20) * inv
            Jinv_out[2, 1] = (a01 * a20 - a00 * a21) * inv
            Jinv_out[2, 2] = (a00 * a11 - a01 * a10) * inv
            piv[0] = -2.0
            for a in range(3):
                d = -(Jinv_out[a, 0] * g[3] + Jinv_out[a, 1] * g[4] + Jinv_out[a, 2] * g[5])
                x_io[3 + a] += d
                dmax = max(dmax, abs(d))
                xmax = max(xmax, abs(x_io[3 + a]))
        # Quadratic convergence: after an update of relative size 1e-8 the error left is
        # ~1e-16, so no confirming iteration is needed.
        if dmax <= _SECTION_XTOL * xmax:
            break
    # Tangents at the final strains (used by tendon-length rates and sensitivities).
    _tendon_terms(x_io, tau, seg, tendon_r, tendon_seg, T_out, g, Jw, False)
    return it


@njit(cache=True, inline="always")
def _section_apply(Jinv, piv, cosserat, b):
    """Solve J dx = b in place (b: (6,) = (force rows, moment rows)) with the factors left by
    `_section_solve`; for Kirchhoff the force rows are ignored and dv = 0."""
    kind = piv[0]
    if kind == -1.0:
        for a in range(3):
            b[a] = b[a] * Jinv[0, a] if cosserat else 0.0
            b[3 + a] = b[3 + a] * Jinv[0, 3 + a]
    elif kind == -2.0:
        m0, m1, m2 = b[3], b[4], b[5]
        for a in range(3):
            b[a] = 0.0
            b[3 + a] = Jinv[a, 0] * m0 + Jinv[a, 1] * m1 + Jinv[a, 2] * m2
    else:
        _lu_solve(Jinv, 6, piv, b, 0)


@njit(cache=True, inline="always")
def _rhs(
    s, z, ny, n_dir, seg, s_end, N_end, q, tau, tendon_r, tendon_seg, kbt, kse, ustar,
    cosserat, x_sec, Jw, Jinv, T, g, piv, rhs, dz_out,
):
    """Derivative dz/ds of the augmented state z (state + n_dir sensitivity blocks).

    N_end : (3,) total distal force at the step's end [N]; q : (3,) line load in the step
    [N/m]; N(s) = N_end + q (s_end - s). Returns False if the section balance failed.
    """
    n_t = tau.shape[0]
    N0 = N_end[0] + q[0] * (s_end - s)
    N1 = N_end[1] + q[1] * (s_end - s)
    N2 = N_end[2] + q[2] * (s_end - s)
    R = z[3:12].reshape(3, 3)
    M0, M1, M2 = z[12], z[13], z[14]
    if _section_solve(
        R[0, 0] * N0 + R[1, 0] * N1 + R[2, 0] * N2,
        R[0, 1] * N0 + R[1, 1] * N1 + R[2, 1] * N2,
        R[0, 2] * N0 + R[1, 2] * N1 + R[2, 2] * N2,
        R[0, 0] * M0 + R[1, 0] * M1 + R[2, 0] * M2,
        R[0, 1] * M0 + R[1, 1] * M1 + R[2, 1] * M2,
        R[0, 2] * M0 + R[1, 2] * M1 + R[2, 2] * M2,
        tau, seg, tendon_r, tendon_seg, kbt, kse, ustar, cosserat, x_sec, Jw, Jinv, T, g, piv,
    ) < 0:
        return False
    v0, v1, v2 = x_sec[0], x_sec[1], x_sec[2]
    u0, u1, u2 = x_sec[3], x_sec[4], x_sec[5]
    # p' = R v
    pd0 = R[0, 0] * v0 + R[0, 1] * v1 + R[0, 2] * v2
    pd1 = R[1, 0] * v0 + R[1, 1] * v1 + R[1, 2] * v2
    pd2 = R[2, 0] * v0 + R[2, 1] * v1 + R[2, 2] * v2
    dz_out[0] = pd0
    dz_out[1] = pd1
    dz_out[2] = pd2
    # R' = R [u]x
    for a in range(3):
        dz_out[3 + 3 * a + 0] = R[a, 1] * u2 - R[a, 2] * u1
        dz_out[3 + 3 * a + 1] = R[a, 2] * u0 - R[a, 0] * u2
        dz_out[3 + 3 * a + 2] = R[a, 0] * u1 - R[a, 1] * u0
    # M' = -p' x N
    dz_out[12] = -(pd1 * N2 - pd2 * N1)
    dz_out[13] = -(pd2 * N0 - pd0 * N2)
    dz_out[14] = -(pd0 * N1 - pd1 * N0)
    # l_i' = |v + u x r_i| for tendons passing this segment.
    for i in range(n_t):
        if tendon_seg[i] >= seg:
            r0, r1, r2 = tendon_r[i, 0], tendon_r[i, 1], tendon_r[i, 2]
            w0 = v0 + u1 * r2 - u2 * r1
            w1 = v1 + u2 * r0 - u0 * r2
            w2 = v2 + u0 * r1 - u1 * r0
            dz_out[15 + i] = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        else:
            dz_out[15 + i] = 0.0
    # Sensitivities: linearize every line above.
    dx = rhs
    for d in range(n_dir):
        o = ny * (1 + d)
        dR = z[o + 3 : o + 12].reshape(3, 3)
        # d(R^T N) = dR^T N ; d(R^T M) = dR^T M + R^T dM
        for a in range(3):
            rhs[a] = dR[0, a] * N0 + dR[1, a] * N1 + dR[2, a] * N2
            rhs[3 + a] = (
                dR[0, a] * M0 + dR[1, a] * M1 + dR[2, a] * M2
                + R[0, a] * z[o + 12] + R[1, a] * z[o + 13] + R[2, a] * z[o + 14]
            )
        if d >= 3:
            j = d - 3
            if tendon_seg[j] >= seg:
                # -dg/dtau_j: the tendon's force and moment on the section.
                t0, t1, t2 = T[j, 0], T[j, 1], T[j, 2]
                r0, r1, r2 = tendon_r[j, 0], tendon_r[j, 1], tendon_r[j, 2]
                rhs[0] -= t0
                rhs[1] -= t1
                rhs[2] -= t2
                rhs[3] -= r1 * t2 - r2 * t1
                rhs[4] -= r2 * t0 - r0 * t2
                rhs[5] -= r0 * t1 - r1 * t0
        # Linearized section balance: J dx = rhs (J factored by the section solve).
        _section_apply(Jinv, piv, cosserat, dx)
        dv0, dv1, dv2 = dx[0], dx[1], dx[2]
        du0, du1, du2 = dx[3], dx[4], dx[5]
        # dp' = dR v + R dv
        dp0 = dR[0, 0] * v0 + dR[0, 1] * v1 + dR[0, 2] * v2
        dp0 += R[0, 0] * dv0 + R[0, 1] * dv1 + R[0, 2] * dv2
        dp1 = dR[1, 0] * v0 + dR[1, 1] * v1 + dR[1, 2] * v2
        dp1 += R[1, 0] * dv0 + R[1, 1] * dv1 + R[1, 2] * dv2
        dp2 = dR[2, 0] * v0 + dR[2, 1] * v1 + dR[2, 2] * v2
        dp2 += R[2, 0] * dv0 + R[2, 1] * dv1 + R[2, 2] * dv2
        dz_out[o + 0] = dp0
        dz_out[o + 1] = dp1
        dz_out[o + 2] = dp2
        # dR' = dR [u]x + R [du]x
        for a in range(3):
            dz_out[o + 3 + 3 * a + 0] = (dR[a, 1] * u2 - dR[a, 2] * u1) + (
                R[a, 1] * du2 - R[a, 2] * du1
            )
            dz_out[o + 3 + 3 * a + 1] = (dR[a, 2] * u0 - dR[a, 0] * u2) + (
                R[a, 2] * du0 - R[a, 0] * du2
            )
            dz_out[o + 3 + 3 * a + 2] = (dR[a, 0] * u1 - dR[a, 1] * u0) + (
                R[a, 0] * du1 - R[a, 1] * du0
            )
        # dM' = -dp' x N
        dz_out[o + 12] = -(dp1 * N2 - dp2 * N1)
        dz_out[o + 13] = -(dp2 * N0 - dp0 * N2)
        dz_out[o + 14] = -(dp0 * N1 - dp1 * N0)
        # dl_i' = t_i . (dv + du x r_i)
        for i in range(n_t):
            if tendon_seg[i] >= seg:
                r0, r1, r2 = tendon_r[i, 0], tendon_r[i, 1], tendon_r[i, 2]
                e0 = dv0 + du1 * r2 - du2 * r1
                e1 = dv1 + du2 * r0 - du0 * r2
                e2 = dv2 + du0 * r1 - du1 * r0
                dz_out[o + 15 + i] = T[i, 0] * e0 + T[i, 1] * e1 + T[i, 2] * e2
            else:
                dz_out[o + 15 + i] = 0.0
    return True


@njit(cache=True)
def _integrate(
    z, n_dir, node_s, step_seg, N_end, q_step, tau, tendon_r, tendon_seg, K_bt, K_se, u_star,
    cosserat, store, Y_out, X_out,
):
    """RK4 over the grid, in place on the augmented state z; returns False on failure.

    store : when True, write the state y at every node into Y_out (n_nodes, ny) and the
    section strains (v, u) into X_out (n_nodes, 6).
    """
    n_t = tau.shape[0]
    ny = 15 + n_t
    nz = ny * (1 + n_dir)
    k1 = np.empty(nz)
    k2 = np.empty(nz)
    k3 = np.empty(nz)
    k4 = np.empty(nz)
    zt = np.empty(nz)
    x_sec = np.zeros(6)
    x_sec[2] = 1.0
    Jw = np.empty((6, 6))
    Jinv = np.empty((6, 6))
    T = np.zeros((n_t, 3))
    g = np.zeros(6)
    piv = np.zeros(6)
    rhs = np.zeros(6)
    n_steps = step_seg.shape[0]
    for k in range(n_steps):
        seg = step_seg[k]
        sa = node_s[k]
        sb = node_s[k + 1]
        h = sb - sa
        kbt = K_bt[seg]
        kse = K_se[seg]
        us = u_star[seg]
        Ne = N_end[k]
        q = q_step[k]
        ok = _rhs(sa, z, ny, n_dir, seg, sb, Ne, q, tau, tendon_r, tendon_seg, kbt, kse, us,
                  cosserat, x_sec, Jw, Jinv, T, g, piv, rhs, k1)
        if store:
            for a in range(ny):
                Y_out[k, a] = z[a]
            for a in range(6):
                X_out[k, a] = x_sec[a]
        for a in range(nz):
            zt[a] = z[a] + 0.5 * h * k1[a]
        ok &= _rhs(sa + 0.5 * h, zt, ny, n_dir, seg, sb, Ne, q, tau, tendon_r, tendon_seg, kbt,
                   kse, us, cosserat, x_sec, Jw, Jinv, T, g, piv, rhs, k2)
        for a in range(nz):
            zt[a] = z[a] + 0.5 * h * k2[a]
        ok &= _rhs(sa + 0.5 * h, zt, ny, n_dir, seg, sb, Ne, q, tau, tendon_r, tendon_seg, kbt,
                   kse, us, cosserat, x_sec, Jw, Jinv, T, g, piv, rhs, k3)
        for a in range(nz):
            zt[a] = z[a] + h * k3[a]
        ok &= _rhs(sb, zt, ny, n_dir, seg, sb, Ne, q, tau, tendon_r, tendon_seg, kbt, kse, us,
                   cosserat, x_sec, Jw, Jinv, T, g, piv, rhs, k4)
        if not ok:
            return False
        for a in range(nz):
            z[a] += h / 6.0 * (k1[a] + 2.0 * k2[a] + 2.0 * k3[a] + k4[a])
    if store:
        last = n_steps - 1
        seg = step_seg[last]
        _rhs(node_s[n_steps], z, ny, 0, seg, node_s[n_steps], N_end[last], q_step[last], tau,
             tendon_r, tendon_seg, K_bt[seg], K_se[seg], u_star[seg], cosserat, x_sec, Jw, Jinv,
             T, g, piv, rhs, k1)
        for a in range(ny):
            Y_out[n_steps, a] = z[a]
        for a in range(6):
            X_out[n_steps, a] = x_sec[a]
    for a in range(nz):
        if not np.isfinite(z[a]):
            return False
    return True


@njit(cache=True)
def _distal_loads(node_s, step_seg, node_point_mass, rho_A, F_tip, f_dist, gravity, N_end_out,
                  q_out):
    """Total distal force at each step's end, N_end_out (n_steps, 3) [N], and the line load of
    each step q_out (n_steps, 3) [N/m] = f_dist + rho_A g (world frame)."""
    n_steps = step_seg.shape[0]
    acc = np.empty(3)
    for a in range(3):
        acc[a] = F_tip[a] + node_point_mass[n_steps] * gravity[a]
    for k in range(n_steps - 1, -1, -1):
        seg = step_seg[k]
        for a in range(3):
            q_out[k, a] = f_dist[a] + rho_A[seg] * gravity[a]
            N_end_out[k, a] = acc[a]
        h = node_s[k + 1] - node_s[k]
        for a in range(3):
            acc[a] += q_out[k, a] * h + node_point_mass[k] * gravity[a]


@njit(cache=True)
def _init_state(base_p, base_R, M0, n_t, n_dir, z_out):
    """Base values of the augmented state: p, R given, M = M0, l = 0; dM0/dM0 = I."""
    ny = 15 + n_t
    for a in range(z_out.shape[0]):
        z_out[a] = 0.0
    for a in range(3):
        z_out[a] = base_p[a]
        z_out[12 + a] = M0[a]
        for b in range(3):
            z_out[3 + 3 * a + b] = base_R[a, b]
    for d in range(min(n_dir, 3)):
        z_out[ny * (1 + d) + 12 + d] = 1.0


@njit(cache=True)
def _residual(z, n_t, length_mode, M_tip, L_cmd, k_t, m_scale, t_scale, r_out, J_out, n_unk):
    """Scaled residual r_out (n_unk,) and its Jacobian J_out (n_unk, n_unk) from the end state.

    Moment rows: (M(L) - M_tip) / m_scale. Tension rows (length control):
    (tau_j - k_j max(0, l_j - L_cmd_j)) / t_scale, with tau_j the unknown x[3 + j].
    """
    ny = 15 + n_t
    for a in range(3):
        r_out[a] = (z[12 + a] - M_tip[a]) / m_scale
        for d in range(n_unk):
            J_out[a, d] = z[ny * (1 + d) + 12 + a] / m_scale
    if length_mode:
        for j in range(n_t):
            row = 3 + j
            stretch = z[15 + j] - L_cmd[j]
            r_out[row] = -k_t[j] * max(stretch, 0.0) / t_scale  # tau added by caller
            for d in range(n_unk):
                J_out[row, d] = 0.0
                if stretch > 0.0:
                    J_out[row, d] = -k_t[j] * z[ny * (1 + d) + 15 + j] / t_scale
            J_out[row, row] += 1.0 / t_scale


@njit(cache=True)
def _evaluate(x, length_mode, tau_fixed, base_p, base_R, node_s, step_seg, N_end, q_step,
              tendon_r, tendon_seg, K_bt, K_se, u_star, cosserat, M_tip, L_cmd, k_t, m_scale,
              t_scale, store, Y_out, X_out, r_out, J_out):
    """Integrate from unknowns x = (M0, [tau]) and fill residual and Jacobian; False on failure."""
    n_t = tendon_r.shape[0]
    n_unk = x.shape[0]
    n_dir = n_unk
    tau = tau_fixed.copy()
    if length_mode:
        for j in range(n_t):
            tau[j] = x[3 + j]
    z = np.empty((15 + n_t) * (1 + n_dir))
    _init_state(base_p, base_R, x[:3], n_t, n_dir, z)
    # Direction 3 + j perturbs tension j: nothing at the base, it enters through the section.
    ok = _integrate(z, n_dir, node_s, step_seg, N_end, q_step, tau, tendon_r, tendon_seg, K_bt,
                    K_se, u_star, cosserat, store, Y_out, X_out)
    if not ok:
        return False
    _residual(z, n_t, length_mode, M_tip, L_cmd, k_t, m_scale, t_scale, r_out, J_out, n_unk)
    if length_mode:
        for j in range(n_t):
            r_out[3 + j] += x[3 + j] / t_scale
    return True


@njit(cache=True)
def _newton(x, length_mode, tau_fixed, base_p, base_R, node_s, step_seg, N_end, q_step,
            tendon_r, tendon_seg, K_bt, K_se, u_star, cosserat, M_tip, L_cmd, k_t, m_scale,
            t_scale, tol, max_iter, Y_out, X_out, counters):
    """Damped Newton shooting on x (in place). counters: [nit, nfev, final residual norm].

    Returns a status: 0 converged, 1 max_iter reached, 2 line search stalled,
    3 non-finite state.
    """
    n = x.shape[0]
    r = np.empty(n)
    J = np.empty((n, n))
    r_try = np.empty(n)
    J_try = np.empty((n, n))
    x_try = np.empty(n)
    ok = _evaluate(x, length_mode, tau_fixed, base_p, base_R, node_s, step_seg, N_end, q_step,
                   tendon_r, tendon_seg, K_bt, K_se, u_star, cosserat, M_tip, L_cmd, k_t,
                   m_scale, t_scale, True, Y_out, X_out, r, J)
    counters[1] += 1
    if not ok:
        return 3
    norm = np.max(np.abs(r))
    counters[2] = norm
    for _ in range(max_iter):
        if norm <= tol:
            return 0
        step = np.linalg.solve(J, -r)
        if not np.all(np.isfinite(step)):
            return 3
        alpha = 1.0
        accepted = False
        norm_try = norm
        while alpha >= 1.0 / 64.0:
            for a in range(n):
                x_try[a] = x[a] + alpha * step[a]
            ok = _evaluate(x_try, length_mode, tau_fixed, base_p, base_R, node_s, step_seg,
                           N_end, q_step, tendon_r, tendon_seg, K_bt, K_se, u_star, cosserat,
                           M_tip, L_cmd, k_t, m_scale, t_scale, True, Y_out, X_out, r_try, J_try)
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
            _evaluate(x, length_mode, tau_fixed, base_p, base_R, node_s, step_seg, N_end,
                      q_step, tendon_r, tendon_seg, K_bt, K_se, u_star, cosserat, M_tip, L_cmd,
                      k_t, m_scale, t_scale, True, Y_out, X_out, r, J)
            counters[1] += 1
            return 2
        for a in range(n):
            x[a] = x_try[a]
            r[a] = r_try[a]
            for b in range(n):
                J[a, b] = J_try[a, b]
        norm = norm_try
        counters[2] = norm
    return 0 if norm <= tol else 1
