"""Numba kernels of the Lie-group variational integrator (ALGORITHMS.md E.2-E.5).

Private. Every kernel works on arrays (SI units), inputs first, outputs named `*_out` (or
state arrays updated in place, named in the docstring). Node `a` carries a position `p[a]`
(world, (3,)) and a rotation `O[a]` (body -> world, (3, 3)); the discrete angular velocity of
the last step is stored as the no-half Cayley parameter `fr[a]` of F = O_prev^T O
(F = Cay0(fr), ALGORITHMS.md section 0), so that kinetic energies need no `1 - cos` round-off.

Elastic energy (ALGORITHMS.md E.2 with the shear-evaluation options):
* element i between nodes a = i and b = i + 1, shear-stretch strain g_c = O_c^T dp / l - g0_c
  evaluated at the left node only (shear_mode 0) or at both nodes with weight 1/2 (mode 1);
* bending-torsion springs k between frames i (-1: the base frame) and j with the Cayley strain
  c = cay^-1(O_i^T O_j) and energy 1/2 (c - c0)^T diag(K) (c - c0).

Kernel arguments come in tuples (as `softrod.rods` does; shapes in `LGVIModel`'s docstring):

* model = (elastic, inertia, tendon, magnet), `LGVIModel.kernel_model`:
  elastic = (elem_len, elem_C1, elem_g0a, elem_g0b, shear_mode, spr_i, spr_j, spr_K, spr_c0),
  inertia = (node_mass, node_weight, node_Jd, node_J, pos_free, rot_free),
  tendon = (tv_pidx, tv_pw, tv_oidx, tv_ow, tv_r, tendon_vstart),
  magnet = (mag_frame, mag_n0, mag_n1, mag_w1, mag_m);
* loads = (gravity (3,), dist_force (k, 3), tip_force (k, 3), tip_moment (k, 3), tension
  (k, n_t), field_B (k, 3), field_G (k, 3, 3), base_p (k', 3), base_R (k', 3, 3)): one row
  (constant) or one row per step (the base: one more);
* damping = (node_c (n, 3), node_cw (n, 3), kv_beta, kv_dof_p (n,), kv_dof_r (n,), kv_bw,
  kv_every): viscous and Kelvin-Voigt damping;
* filt = (filt_nodes (n_f,), meas (k + 1, n_f, 3), trend (k + 1, n_f, 3), filt_R (3, 3),
  filt_W (n_f, 3, 3), filt_mass (n_f,), filt_paper, filt_drift): the damping filter (n_f = 0
  disables it); row k holds the measurement y^j and the backward trend y^j - y^{j-1} of
  local step k; filt_drift adds the model's undamped acceleration dt^2 f / m to the trend;
* state = (p, p_prev, O, fr), updated in place; rec = (rec_p, rec_O, rec_E, rec_K) outputs;
  work = (ke_prev (1,), work_f, work_tau, work_p (n, 3), kv_L (n_q, n_q), kv_u (n_q,),
  kv_J (2, 3, 3)) scratch carried between calls.

The per-node work stays inside one kernel; the sub-kernels (elastic, applied, tendon, magnetic
forces; translation, filter, rotation, frame update) are inlined (`inline="always"`) so that no
array is passed through a call in the inner loops, and each accumulates in the order of the
single loop it replaced (bitwise the same results).
"""

from __future__ import annotations

import math

import numba

#: Newton iterations allowed for one rotation update before the step is declared failed.
_NEWTON_MAX_ITER = 25
#: Newton stops after a correction smaller than this fraction of the Cayley parameter: the
#: convergence is quadratic, so the error left is ~1e-16 relative (round-off).
_NEWTON_TOL = 1e-8

#: Fixed-point passes tried before Newton, and their stopping tolerance (relative change; the
#: error left is about the change times the contraction |f| << 1).
_FIXED_POINT_ITER = 6
_FIXED_POINT_TOL = 1e-14

STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_NEWTON = 2


@numba.njit(cache=True, inline="always")
def _cayinv_rel(Oi, i, Oj, j):
    """Cayley strain c = cay^-1(Oi[i]^T Oj[j]) (half convention), as three scalars."""
    # R = Oi^T Oj; only the antisymmetric part and the trace are needed.
    r00 = Oi[i, 0, 0] * Oj[j, 0, 0] + Oi[i, 1, 0] * Oj[j, 1, 0] + Oi[i, 2, 0] * Oj[j, 2, 0]
    r11 = Oi[i, 0, 1] * Oj[j, 0, 1] + Oi[i, 1, 1] * Oj[j, 1, 1] + Oi[i, 2, 1] * Oj[j, 2, 1]
    r22 = Oi[i, 0, 2] * Oj[j, 0, 2] + Oi[i, 1, 2] * Oj[j, 1, 2] + Oi[i, 2, 2] * Oj[j, 2, 2]
    r21 = Oi[i, 0, 2] * Oj[j, 0, 1] + Oi[i, 1, 2] * Oj[j, 1, 1] + Oi[i, 2, 2] * Oj[j, 2, 1]
    r12 = Oi[i, 0, 1] * Oj[j, 0, 2] + Oi[i, 1, 1] * Oj[j, 1, 2] + Oi[i, 2, 1] * Oj[j, 2, 2]
    r02 = Oi[i, 0, 0] * Oj[j, 0, 2] + Oi[i, 1, 0] * Oj[j, 1, 2] + Oi[i, 2, 0] * Oj[j, 2, 2]
    r20 = Oi[i, 0, 2] * Oj[j, 0, 0] + Oi[i, 1, 2] * Oj[j, 1, 0] + Oi[i, 2, 2] * Oj[j, 2, 0]
    r10 = Oi[i, 0, 1] * Oj[j, 0, 0] + Oi[i, 1, 1] * Oj[j, 1, 0] + Oi[i, 2, 1] * Oj[j, 2, 0]
    r01 = Oi[i, 0, 0] * Oj[j, 0, 1] + Oi[i, 1, 0] * Oj[j, 1, 1] + Oi[i, 2, 0] * Oj[j, 2, 1]
    s = 2.0 / (1.0 + r00 + r11 + r22)
    return s * (r21 - r12), s * (r02 - r20), s * (r10 - r01)


@numba.njit(cache=True, inline="always")
def _body_of(O, a, x, y, z):
    """O[a]^T (x, y, z): a world vector in the body frame of node a."""
    return (
        O[a, 0, 0] * x + O[a, 1, 0] * y + O[a, 2, 0] * z,
        O[a, 0, 1] * x + O[a, 1, 1] * y + O[a, 2, 1] * z,
        O[a, 0, 2] * x + O[a, 1, 2] * y + O[a, 2, 2] * z,
    )


@numba.njit(cache=True, inline="always")
def _world_of(O, a, x, y, z):
    """O[a] (x, y, z): a body vector of node a in the world frame."""
    return (
        O[a, 0, 0] * x + O[a, 0, 1] * y + O[a, 0, 2] * z,
        O[a, 1, 0] * x + O[a, 1, 1] * y + O[a, 1, 2] * z,
        O[a, 2, 0] * x + O[a, 2, 1] * y + O[a, 2, 2] * z,
    )


@numba.njit(cache=True, inline="always")
def _elastic_forces(p, O, base_R, kb, elastic, V, f_out, tau_out):
    """Add the shear-stretch and bending-torsion forces at (p, O) to f_out / tau_out.

    elastic : the model's tuple (module docstring); base_R (k, 3, 3) with row kb the base
    frame. Returns V plus the elastic energy [J].
    """
    elem_len, elem_C1, elem_g0a, elem_g0b, shear_mode, spr_i, spr_j, spr_K, spr_c0 = elastic
    n_el = elem_len.shape[0]
    # Shear-stretch of each element.
    for i in range(n_el):
        a = i
        b = i + 1
        l = elem_len[i]
        dx = p[b, 0] - p[a, 0]
        dy = p[b, 1] - p[a, 1]
        dz = p[b, 2] - p[a, 2]
        for side in range(2):
            if side == 0:
                c = a
                w = 1.0 if shear_mode == 0 else 0.5
                g0x = elem_g0a[i, 0]
                g0y = elem_g0a[i, 1]
                g0z = elem_g0a[i, 2]
            else:
                if shear_mode == 0:
                    break
                c = b
                w = 0.5
                g0x = elem_g0b[i, 0]
                g0y = elem_g0b[i, 1]
                g0z = elem_g0b[i, 2]
            qx, qy, qz = _body_of(O, c, dx, dy, dz)
            gx = qx / l - g0x
            gy = qy / l - g0y
            gz = qz / l - g0z
            nx = elem_C1[i, 0] * gx
            ny = elem_C1[i, 1] * gy
            nz = elem_C1[i, 2] * gz
            V += 0.5 * w * l * (gx * nx + gy * ny + gz * nz)
            wx, wy, wz = _world_of(O, c, w * nx, w * ny, w * nz)
            f_out[a, 0] += wx
            f_out[a, 1] += wy
            f_out[a, 2] += wz
            f_out[b, 0] -= wx
            f_out[b, 1] -= wy
            f_out[b, 2] -= wz
            # tau = -dV/d eta = w q x n
            tau_out[c, 0] += w * (qy * nz - qz * ny)
            tau_out[c, 1] += w * (qz * nx - qx * nz)
            tau_out[c, 2] += w * (qx * ny - qy * nx)

    # Bending-torsion springs.
    for k in range(spr_i.shape[0]):
        i = spr_i[k]
        j = spr_j[k]
        if i < 0:
            cx, cy, cz = _cayinv_rel(base_R, kb, O, j)
        else:
            cx, cy, cz = _cayinv_rel(O, i, O, j)
        ex = cx - spr_c0[k, 0]
        ey = cy - spr_c0[k, 1]
        ez = cz - spr_c0[k, 2]
        kx = spr_K[k, 0] * ex
        ky = spr_K[k, 1] * ey
        kz = spr_K[k, 2] * ez
        V += 0.5 * (ex * kx + ey * ky + ez * kz)
        # c x kappa and (c . kappa) c / 4
        xx = cy * kz - cz * ky
        xy = cz * kx - cx * kz
        xz = cx * ky - cy * kx
        ck = 0.25 * (cx * kx + cy * ky + cz * kz)
        # dV/d eta_j = kappa - c x kappa / 2 + (c.kappa) c / 4 ; dV/d eta_i = -(kappa + ...)
        tau_out[j, 0] -= kx - 0.5 * xx + ck * cx
        tau_out[j, 1] -= ky - 0.5 * xy + ck * cy
        tau_out[j, 2] -= kz - 0.5 * xz + ck * cz
        if i >= 0:
            tau_out[i, 0] += kx + 0.5 * xx + ck * cx
            tau_out[i, 1] += ky + 0.5 * xy + ck * cy
            tau_out[i, 2] += kz + 0.5 * xz + ck * cz
    return V


@numba.njit(cache=True, inline="always")
def _applied_forces(p, O, inertia, gravity, dist_force, kd, tip_force, kt, tip_moment, km, V,
                    f_out, tau_out):  # fmt: skip
    """Add gravity, the uniform distributed load (row kd) and the tip force and moment (row
    kt, moment row km; world frame) to f_out / tau_out. Returns V plus their potential [J]."""
    node_mass, node_weight, _, _, _, _ = inertia
    n = p.shape[0]
    # Gravity and uniform distributed load.
    for a in range(n):
        fx = node_mass[a] * gravity[0] + node_weight[a] * dist_force[kd, 0]
        fy = node_mass[a] * gravity[1] + node_weight[a] * dist_force[kd, 1]
        fz = node_mass[a] * gravity[2] + node_weight[a] * dist_force[kd, 2]
        f_out[a, 0] += fx
        f_out[a, 1] += fy
        f_out[a, 2] += fz
        V -= fx * p[a, 0] + fy * p[a, 1] + fz * p[a, 2]

    # Tip force and moment (world frame).
    t = n - 1
    f_out[t, 0] += tip_force[kt, 0]
    f_out[t, 1] += tip_force[kt, 1]
    f_out[t, 2] += tip_force[kt, 2]
    V -= tip_force[kt, 0] * p[t, 0] + tip_force[kt, 1] * p[t, 1] + tip_force[kt, 2] * p[t, 2]
    mx, my, mz = _body_of(O, t, tip_moment[km, 0], tip_moment[km, 1], tip_moment[km, 2])
    tau_out[t, 0] += mx
    tau_out[t, 1] += my
    tau_out[t, 2] += mz
    return V


@numba.njit(cache=True, inline="always")
def _tendon_forces(p, O, base_R, kb, tendon, tension, kn, V, f_out, tau_out):
    """Add the tendon forces (tensions row kn [N]) to f_out / tau_out.

    tendon : the model's tuple: vertex v at sum_k tv_pw[v,k] p[tv_pidx[v,k]] + sum_k
    tv_ow[v,k] O[tv_oidx[v,k]] tv_r[v] (oidx -1 = base frame, row kb of base_R; tv_r (n_v, 3)
    the body-frame offset of the tendon at the vertex), tendon t owns vertices
    tendon_vstart[t]:tendon_vstart[t+1]. Returns V plus tension times path length [J].
    """
    tv_pidx, tv_pw, tv_oidx, tv_ow, tv_r, tendon_vstart = tendon
    # Tendons: a frictionless cable at constant tension, V = T * path length.
    for it in range(tendon_vstart.shape[0] - 1):
        T = tension[kn, it]
        if T == 0.0:
            continue
        px = 0.0
        py = 0.0
        pz = 0.0
        for v in range(tendon_vstart[it], tendon_vstart[it + 1]):
            # Vertex position.
            rx = tv_r[v, 0]
            ry = tv_r[v, 1]
            rz = tv_r[v, 2]
            xx = 0.0
            xy = 0.0
            xz = 0.0
            for k in range(2):
                w = tv_pw[v, k]
                if w != 0.0:
                    q = tv_pidx[v, k]
                    xx += w * p[q, 0]
                    xy += w * p[q, 1]
                    xz += w * p[q, 2]
                w = tv_ow[v, k]
                if w != 0.0:
                    q = tv_oidx[v, k]
                    if q < 0:
                        ox, oy, oz = _world_of(base_R, kb, rx, ry, rz)
                    else:
                        ox, oy, oz = _world_of(O, q, rx, ry, rz)
                    xx += w * ox
                    xy += w * oy
                    xz += w * oz
            if v > tendon_vstart[it]:
                dx = xx - px
                dy = xy - py
                dz = xz - pz
                ln = math.sqrt(dx * dx + dy * dy + dz * dz)
                V += T * ln
                ux = T * dx / ln
                uy = T * dy / ln
                uz = T * dz / ln
                # Force -T u on this vertex, +T u on the previous one.
                for side in range(2):
                    vv = v if side == 0 else v - 1
                    sg = -1.0 if side == 0 else 1.0
                    gx = sg * ux
                    gy = sg * uy
                    gz = sg * uz
                    for k in range(2):
                        w = tv_pw[vv, k]
                        if w != 0.0:
                            q = tv_pidx[vv, k]
                            f_out[q, 0] += w * gx
                            f_out[q, 1] += w * gy
                            f_out[q, 2] += w * gz
                        w = tv_ow[vv, k]
                        q = tv_oidx[vv, k]
                        if w != 0.0 and q >= 0:
                            sx = tv_r[vv, 0]
                            sy = tv_r[vv, 1]
                            sz = tv_r[vv, 2]
                            bx, by, bz = _body_of(O, q, gx, gy, gz)
                            tau_out[q, 0] += w * (sy * bz - sz * by)
                            tau_out[q, 1] += w * (sz * bx - sx * bz)
                            tau_out[q, 2] += w * (sx * by - sy * bx)
            px = xx
            py = xy
            pz = xz
    return V


@numba.njit(cache=True, inline="always")
def _magnetic_forces(p, O, magnet, field_B, field_G, kf, V, f_out, tau_out):
    """Add the forces and torques of the magnets in the field B(x) = field_B[kf] + field_G[kf] x
    [T] to f_out / tau_out. magnet : the model's tuple (body moment mag_m (n_m, 3) [A m^2] in
    the frame of node mag_frame, at (1 - w) p[n0] + w p[n1]). Returns V - m.B [J].
    """
    mag_frame, mag_n0, mag_n1, mag_w1, mag_m = magnet
    # Magnetic dipoles: F = grad(m.B) = G^T m_w, body torque m_b x (O^T B).
    for im in range(mag_m.shape[0]):
        a = mag_frame[im]
        n0 = mag_n0[im]
        n1 = mag_n1[im]
        w1 = mag_w1[im]
        w0 = 1.0 - w1
        xx = w0 * p[n0, 0] + w1 * p[n1, 0]
        xy = w0 * p[n0, 1] + w1 * p[n1, 1]
        xz = w0 * p[n0, 2] + w1 * p[n1, 2]
        Bx = (
            field_B[kf, 0]
            + field_G[kf, 0, 0] * xx
            + field_G[kf, 0, 1] * xy
            + field_G[kf, 0, 2] * xz
        )
        By = (
            field_B[kf, 1]
            + field_G[kf, 1, 0] * xx
            + field_G[kf, 1, 1] * xy
            + field_G[kf, 1, 2] * xz
        )
        Bz = (
            field_B[kf, 2]
            + field_G[kf, 2, 0] * xx
            + field_G[kf, 2, 1] * xy
            + field_G[kf, 2, 2] * xz
        )
        mbx = mag_m[im, 0]
        mby = mag_m[im, 1]
        mbz = mag_m[im, 2]
        mwx, mwy, mwz = _world_of(O, a, mbx, mby, mbz)
        V -= mwx * Bx + mwy * By + mwz * Bz
        Fx = field_G[kf, 0, 0] * mwx + field_G[kf, 1, 0] * mwy + field_G[kf, 2, 0] * mwz
        Fy = field_G[kf, 0, 1] * mwx + field_G[kf, 1, 1] * mwy + field_G[kf, 2, 1] * mwz
        Fz = field_G[kf, 0, 2] * mwx + field_G[kf, 1, 2] * mwy + field_G[kf, 2, 2] * mwz
        f_out[n0, 0] += w0 * Fx
        f_out[n0, 1] += w0 * Fy
        f_out[n0, 2] += w0 * Fz
        f_out[n1, 0] += w1 * Fx
        f_out[n1, 1] += w1 * Fy
        f_out[n1, 2] += w1 * Fz
        bx, by, bz = _body_of(O, a, Bx, By, Bz)
        tau_out[a, 0] += mby * bz - mbz * by
        tau_out[a, 1] += mbz * bx - mbx * bz
        tau_out[a, 2] += mbx * by - mby * bx
    return V


@numba.njit(cache=True)
def _forces(p, O, model, loads, k, f_out, tau_out):
    """Generalised forces of the conservative and applied loads at one configuration.

    p : (n, 3) [m]; O : (n, 3, 3); model, loads : tuples (module docstring). Each load table
    is read at row k when it has one row per step, else at row 0 (a constant); base_R gives
    the frame index -1.

    Writes f_out (n, 3) world forces [N] and tau_out (n, 3) body torques [N m] (overwritten).
    Returns the potential energy [J] of elastic, gravity, uniform/tip force, tendon (tension
    times path length) and magnetic (-m.B) loads.
    """
    elastic, inertia, tendon, magnet = model
    gravity, dist_force, tip_force, tip_moment, tension, field_B, field_G, _, base_R = loads
    # Every table picks its own row: a constant one has a single row.
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
    # Each sub-kernel adds to the forces and to the energy, in this order.
    V = _elastic_forces(p, O, base_R, kb, elastic, 0.0, f_out, tau_out)
    V = _applied_forces(p, O, inertia, gravity, dist_force, kd, tip_force, kt, tip_moment, km,
                        V, f_out, tau_out)  # fmt: skip
    V = _tendon_forces(p, O, base_R, kb, tendon, tension, kn, V, f_out, tau_out)
    return _magnetic_forces(p, O, magnet, field_B, field_G, kf, V, f_out, tau_out)


@numba.njit(cache=True)
def _kinetic(p, p_prev, fr, node_mass, node_J, pos_free, rot_free, dt):
    """Kinetic energy [J] of the step from p_prev to p with rotation parameters fr.

    Translational sum m |dp|^2 / (2 dt^2) plus rotational tr((I - F) J_d) / dt^2
    = 2 f^T J f / ((1 + |f|^2) dt^2) with F = Cay0(f) and J the standard inertia (n, 3).
    """
    ke = 0.0
    for a in range(p.shape[0]):
        if pos_free[a]:
            dx = p[a, 0] - p_prev[a, 0]
            dy = p[a, 1] - p_prev[a, 1]
            dz = p[a, 2] - p_prev[a, 2]
            ke += 0.5 * node_mass[a] * (dx * dx + dy * dy + dz * dz)
        if rot_free[a]:
            fx = fr[a, 0]
            fy = fr[a, 1]
            fz = fr[a, 2]
            ke += (
                2.0
                * (node_J[a, 0] * fx * fx + node_J[a, 1] * fy * fy + node_J[a, 2] * fz * fz)
                / (1.0 + fx * fx + fy * fy + fz * fz)
            )
    return ke / (dt * dt)


@numba.njit(cache=True, inline="always")
def _solve3(a00, a01, a02, a10, a11, a12, a20, a21, a22, b0, b1, b2):
    """Solve a 3x3 linear system by Cramer's rule; returns the solution and the determinant."""
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    det = a00 * c00 + a01 * c01 + a02 * c02
    inv = 1.0 / det
    x0 = (b0 * c00 + b1 * (a02 * a21 - a01 * a22) + b2 * (a01 * a12 - a02 * a11)) * inv
    x1 = (b0 * c01 + b1 * (a00 * a22 - a02 * a20) + b2 * (a02 * a10 - a00 * a12)) * inv
    x2 = (b0 * c02 + b1 * (a01 * a20 - a00 * a21) + b2 * (a00 * a11 - a01 * a10)) * inv
    return x0, x1, x2, det


@numba.njit(cache=True, inline="always")
def _translate(p, p_prev, work_f, node_mass, node_c, pos_free, base_p, kp1, dt, work_p):
    """Explicit translation p^{j+1} = 2 p^j - p^{j-1} + dt^2 (f - c o v) / m into work_p, v the
    last step's velocity; prescribed (base) positions from row kp1 of base_p."""
    n = p.shape[0]
    inv_dt = 1.0 / dt
    dt2 = dt * dt
    # Dissipation and the explicit translation update.
    for a in range(n):
        if not pos_free[a]:
            continue
        vx = (p[a, 0] - p_prev[a, 0]) * inv_dt
        vy = (p[a, 1] - p_prev[a, 1]) * inv_dt
        vz = (p[a, 2] - p_prev[a, 2]) * inv_dt
        h = dt2 / node_mass[a]
        work_p[a, 0] = 2.0 * p[a, 0] - p_prev[a, 0] + h * (work_f[a, 0] - node_c[a, 0] * vx)
        work_p[a, 1] = 2.0 * p[a, 1] - p_prev[a, 1] + h * (work_f[a, 1] - node_c[a, 1] * vy)
        work_p[a, 2] = 2.0 * p[a, 2] - p_prev[a, 2] + h * (work_f[a, 2] - node_c[a, 2] * vz)
    # Prescribed base position.
    for a in range(n):
        if not pos_free[a]:
            work_p[a, 0] = base_p[kp1, 0]
            work_p[a, 1] = base_p[kp1, 1]
            work_p[a, 2] = base_p[kp1, 2]


@numba.njit(cache=True, inline="always")
def _filter_step(p, p_prev, O, work_f, node_mass, filt, k, dt, rec_K, work_p):
    """At the filtered nodes, replace the damped update in work_p by the one with the filter's
    estimate (ALGORITHMS.md E.5) from the measurement y^j and the trend d^j (row k); the
    estimate goes to rec_K[k]. filt : the tuple of the module docstring."""
    filt_nodes, meas, trend, filt_R, filt_W, filt_mass, filt_paper, filt_drift = filt
    n_f = filt_nodes.shape[0]
    inv_dt = 1.0 / dt
    dt2 = dt * dt
    # Distributed predictive filter (E.5): at the measured nodes the damping is replaced by
    # the one-step estimate K = -(M^T R M + W)^-1 M^T R (Z + e - d), Z the undamped model
    # drift p^{j+1} - p^j, e = p^j - y^j the output error, d the causal trend y^j - y^{j-1}
    # (+ dt^2 f / m with filt_drift): only measurements up to j set the step to j + 1.
    for q in range(n_f):
        a = filt_nodes[q]
        h = dt2 / node_mass[a]
        r0 = 0.0
        r1 = 0.0
        r2 = 0.0
        for c in range(3):
            Z = p[a, c] - p_prev[a, c] + h * work_f[a, c]
            e = p[a, c] - meas[k, q, c]
            d = trend[k, q, c]
            if filt_drift:
                d += h * work_f[a, c]
            if c == 0:
                r0 = Z + e - d
            elif c == 1:
                r1 = Z + e - d
            else:
                r2 = Z + e - d
        # M = dp^{j+1}/dK: -(dt^2/m) diag(v) (consistent) or the paper's
        # -(2 dt^2 / (l M)) O^T diag(p^j - p^{j-1}) dt.
        dpx = p[a, 0] - p_prev[a, 0]
        dpy = p[a, 1] - p_prev[a, 1]
        dpz = p[a, 2] - p_prev[a, 2]
        if filt_paper:
            beta = -2.0 * dt2 * dt / filt_mass[q]
            m00 = beta * O[a, 0, 0] * dpx
            m01 = beta * O[a, 1, 0] * dpy
            m02 = beta * O[a, 2, 0] * dpz
            m10 = beta * O[a, 0, 1] * dpx
            m11 = beta * O[a, 1, 1] * dpy
            m12 = beta * O[a, 2, 1] * dpz
            m20 = beta * O[a, 0, 2] * dpx
            m21 = beta * O[a, 1, 2] * dpy
            m22 = beta * O[a, 2, 2] * dpz
        else:
            m00 = -h * dpx * inv_dt
            m11 = -h * dpy * inv_dt
            m22 = -h * dpz * inv_dt
            m01 = 0.0
            m02 = 0.0
            m10 = 0.0
            m12 = 0.0
            m20 = 0.0
            m21 = 0.0
        # RM = R M, then A = M^T R M + W and b = M^T R r.
        R = filt_R
        n00 = R[0, 0] * m00 + R[0, 1] * m10 + R[0, 2] * m20
        n01 = R[0, 0] * m01 + R[0, 1] * m11 + R[0, 2] * m21
        n02 = R[0, 0] * m02 + R[0, 1] * m12 + R[0, 2] * m22
        n10 = R[1, 0] * m00 + R[1, 1] * m10 + R[1, 2] * m20
        n11 = R[1, 0] * m01 + R[1, 1] * m11 + R[1, 2] * m21
        n12 = R[1, 0] * m02 + R[1, 1] * m12 + R[1, 2] * m22
        n20 = R[2, 0] * m00 + R[2, 1] * m10 + R[2, 2] * m20
        n21 = R[2, 0] * m01 + R[2, 1] * m11 + R[2, 2] * m21
        n22 = R[2, 0] * m02 + R[2, 1] * m12 + R[2, 2] * m22
        W = filt_W[q]
        K0, K1, K2, _det = _solve3(
            m00 * n00 + m10 * n10 + m20 * n20 + W[0, 0],
            m00 * n01 + m10 * n11 + m20 * n21 + W[0, 1],
            m00 * n02 + m10 * n12 + m20 * n22 + W[0, 2],
            m01 * n00 + m11 * n10 + m21 * n20 + W[1, 0],
            m01 * n01 + m11 * n11 + m21 * n21 + W[1, 1],
            m01 * n02 + m11 * n12 + m21 * n22 + W[1, 2],
            m02 * n00 + m12 * n10 + m22 * n20 + W[2, 0],
            m02 * n01 + m12 * n11 + m22 * n21 + W[2, 1],
            m02 * n02 + m12 * n12 + m22 * n22 + W[2, 2],
            -(n00 * r0 + n10 * r1 + n20 * r2),
            -(n01 * r0 + n11 * r1 + n21 * r2),
            -(n02 * r0 + n12 * r1 + n22 * r2),
        )
        rec_K[k, q, 0] = K0
        rec_K[k, q, 1] = K1
        rec_K[k, q, 2] = K2
        # Propagate with the estimate: p^{j+1} = undamped update + M K.
        work_p[a, 0] = 2.0 * p[a, 0] - p_prev[a, 0] + h * work_f[a, 0]
        work_p[a, 0] += m00 * K0 + m01 * K1 + m02 * K2
        work_p[a, 1] = 2.0 * p[a, 1] - p_prev[a, 1] + h * work_f[a, 1]
        work_p[a, 1] += m10 * K0 + m11 * K1 + m12 * K2
        work_p[a, 2] = 2.0 * p[a, 2] - p_prev[a, 2] + h * work_f[a, 2]
        work_p[a, 2] += m20 * K0 + m21 * K1 + m22 * K2


@numba.njit(cache=True, inline="always")
def _rotate(O, fr, work_tau, node_Jd, node_J, node_cw, rot_free, base_R, kp1, dt):
    """New step rotations fr (n, 3) (in place) from the torques work_tau: prescribed frames
    follow row kp1 of base_R (O updated to it); free ones solve the discrete Euler equation
    (Newton on the Cayley parameter, fixed-point passes first). False when it fails."""
    n = O.shape[0]
    inv_dt = 1.0 / dt
    dt2 = dt * dt
    # Rotations: Newton on the Cayley parameter, node by node.
    for a in range(n):
        if not rot_free[a]:
            # Prescribed (base) rotation: F = O^T R_base(j+1).
            R = base_R[kp1]
            r00 = O[a, 0, 0] * R[0, 0] + O[a, 1, 0] * R[1, 0] + O[a, 2, 0] * R[2, 0]
            r11 = O[a, 0, 1] * R[0, 1] + O[a, 1, 1] * R[1, 1] + O[a, 2, 1] * R[2, 1]
            r22 = O[a, 0, 2] * R[0, 2] + O[a, 1, 2] * R[1, 2] + O[a, 2, 2] * R[2, 2]
            r21 = O[a, 0, 2] * R[0, 1] + O[a, 1, 2] * R[1, 1] + O[a, 2, 2] * R[2, 1]
            r12 = O[a, 0, 1] * R[0, 2] + O[a, 1, 1] * R[1, 2] + O[a, 2, 1] * R[2, 2]
            r02 = O[a, 0, 0] * R[0, 2] + O[a, 1, 0] * R[1, 2] + O[a, 2, 0] * R[2, 2]
            r20 = O[a, 0, 2] * R[0, 0] + O[a, 1, 2] * R[1, 0] + O[a, 2, 2] * R[2, 0]
            r10 = O[a, 0, 1] * R[0, 0] + O[a, 1, 1] * R[1, 0] + O[a, 2, 1] * R[2, 0]
            r01 = O[a, 0, 0] * R[0, 1] + O[a, 1, 0] * R[1, 1] + O[a, 2, 0] * R[2, 1]
            s = 1.0 / (1.0 + r00 + r11 + r22)
            fr[a, 0] = s * (r21 - r12)
            fr[a, 1] = s * (r02 - r20)
            fr[a, 2] = s * (r10 - r01)
            for r in range(3):
                for c in range(3):
                    O[a, r, c] = R[r, c]
            continue
        fx = fr[a, 0]
        fy = fr[a, 1]
        fz = fr[a, 2]
        # Previous step F = Cay0(f) = I + 2/(1+|f|^2) (f^ + f^2).
        s = 2.0 / (1.0 + fx * fx + fy * fy + fz * fz)
        F01 = s * (-fz + fx * fy)
        F02 = s * (fy + fx * fz)
        F10 = s * (fz + fx * fy)
        F12 = s * (-fx + fy * fz)
        F20 = s * (-fy + fx * fz)
        F21 = s * (fx + fy * fz)
        J1 = node_Jd[a, 0]
        J2 = node_Jd[a, 1]
        J3 = node_Jd[a, 2]
        # Body angular velocity of the last step, omega = 2 f / dt, for angular damping.
        tx = work_tau[a, 0] - node_cw[a, 0] * 2.0 * fx * inv_dt
        ty = work_tau[a, 1] - node_cw[a, 1] * 2.0 * fy * inv_dt
        tz = work_tau[a, 2] - node_cw[a, 2] * 2.0 * fz * inv_dt
        Ux = J3 * F21 - J2 * F12 + dt2 * tx
        Uy = J1 * F02 - J3 * F20 + dt2 * ty
        Uz = J2 * F10 - J1 * F01 + dt2 * tz
        I1 = 2.0 * node_J[a, 0]
        I2 = 2.0 * node_J[a, 1]
        I3 = 2.0 * node_J[a, 2]
        # Fixed point f = (2J)^-1 (U + U x f + (U.f) f) first: it contracts by about |f|
        # (the rotation per step), so slow rotations converge in two or three cheap
        # passes; fast ones fall through to Newton.
        fx = Ux / I1
        fy = Uy / I2
        fz = Uz / I3
        converged = False
        for _it in range(_FIXED_POINT_ITER):
            uf = Ux * fx + Uy * fy + Uz * fz
            gx = (Ux + (Uy * fz - Uz * fy) + uf * fx) / I1
            gy = (Uy + (Uz * fx - Ux * fz) + uf * fy) / I2
            gz = (Uz + (Ux * fy - Uy * fx) + uf * fz) / I3
            dd = abs(gx - fx) + abs(gy - fy) + abs(gz - fz)
            fx = gx
            fy = gy
            fz = gz
            if dd <= _FIXED_POINT_TOL * (abs(fx) + abs(fy) + abs(fz)):
                converged = True
                break
        for _it in range(0 if converged else _NEWTON_MAX_ITER):
            uf = Ux * fx + Uy * fy + Uz * fz
            P0 = Ux + (Uy * fz - Uz * fy) + uf * fx - I1 * fx
            P1 = Uy + (Uz * fx - Ux * fz) + uf * fy - I2 * fy
            P2 = Uz + (Ux * fy - Uy * fx) + uf * fz - I3 * fz
            # A = U^ + (U.f) I + f U^T - 2 J
            d0, d1, d2, det = _solve3(
                uf + fx * Ux - I1, -Uz + fx * Uy, Uy + fx * Uz,
                Uz + fy * Ux, uf + fy * Uy - I2, -Ux + fy * Uz,
                -Uy + fz * Ux, Ux + fz * Uy, uf + fz * Uz - I3,
                P0, P1, P2,
            )  # fmt: skip
            fx -= d0
            fy -= d1
            fz -= d2
            if abs(d0) + abs(d1) + abs(d2) <= _NEWTON_TOL * (abs(fx) + abs(fy) + abs(fz)):
                converged = True
                break
        if not converged or not (math.isfinite(fx) and math.isfinite(fy) and math.isfinite(fz)):
            return False
        fr[a, 0] = fx
        fr[a, 1] = fy
        fr[a, 2] = fz
    return True


@numba.njit(cache=True, inline="always")
def _turn_frames(O, fr, rot_free):
    """O <- O F with F = Cay0(fr) at the free frames."""
    n = O.shape[0]
    for a in range(n):
        if not rot_free[a]:
            continue
        fx = fr[a, 0]
        fy = fr[a, 1]
        fz = fr[a, 2]
        s = 2.0 / (1.0 + fx * fx + fy * fy + fz * fz)
        G00 = 1.0 - s * (fy * fy + fz * fz)
        G11 = 1.0 - s * (fx * fx + fz * fz)
        G22 = 1.0 - s * (fx * fx + fy * fy)
        G01 = s * (-fz + fx * fy)
        G02 = s * (fy + fx * fz)
        G10 = s * (fz + fx * fy)
        G12 = s * (-fx + fy * fz)
        G20 = s * (-fy + fx * fz)
        G21 = s * (fx + fy * fz)
        for r in range(3):
            o0 = O[a, r, 0]
            o1 = O[a, r, 1]
            o2 = O[a, r, 2]
            O[a, r, 0] = o0 * G00 + o1 * G10 + o2 * G20
            O[a, r, 1] = o0 * G01 + o1 * G11 + o2 * G21
            O[a, r, 2] = o0 * G02 + o1 * G12 + o2 * G22


@numba.njit(cache=True, inline="always")
def _shift(p, p_prev, work_p):
    """p_prev <- p, p <- work_p; True when work_p is all finite."""
    n = p.shape[0]
    bad = False
    for a in range(n):
        for c in range(3):
            x = work_p[a, c]
            if not math.isfinite(x):
                bad = True
            p_prev[a, c] = p[a, c]
            p[a, c] = x
    return not bad


@numba.njit(cache=True)
def _run(state, model, loads, damping, filt, dt, step0, n_steps, every, rec, work):
    """Advance the integrator n_steps steps from global step step0 (ALGORITHMS.md E.3).

    Per step j: forces at (p^j, O^j), damping -c o v with v = (p^j - p^{j-1}) / dt (and body
    -c_w o omega^{j-1/2}), explicit translation p^{j+1} = 2 p^j - p^{j-1} + dt^2 f / m,
    rotation by Newton on the no-half Cayley parameter of F^j solving
    (F J_d - J_d F^T)^v = (J_d F^{j-1} - F^{j-1,T} J_d)^v + dt^2 tau, O^{j+1} = O^j F^j.

    With a filter (filt_nodes non-empty, ALGORITHMS.md E.5), the damping at those nodes is
    replaced by the per-step estimate K = -(M^T R M + W)^-1 M^T R (Z + e - d) computed from
    the measured positions meas[k] (step j) and the causal trend trend[k] (n_steps + 1, n_f,
    3 each); filt_R (3, 3), filt_W (n_f, 3, 3); filt_mass (n_f,) the paper's l M per node (paper
    scaling only).

    With kv_beta > 0 the step's velocities are then corrected by the implicit Kelvin-Voigt
    damping (M + dt D) u = M u_pred, D = kv_beta B^T W B refactored from the configuration at
    j every kv_every steps (`_kv_assemble`, `_kv_correct`).

    Tuples as in the module docstring. Samples (global step % every == 0) go to rec_p / rec_O /
    rec_E (row global_step // every); with a filter the per-step estimates go to rec_K
    (n_steps, n_filter, 3). ke_prev (1,) carries the kinetic energy of the last step.
    Returns (status, steps done): status 0 ok, 1 non-finite state, 2 Newton failure.
    """
    p, p_prev, O, fr = state
    _, inertia, _, _ = model
    node_mass, _, node_Jd, node_J, pos_free, rot_free = inertia
    base_p, base_R = loads[7], loads[8]
    node_c, node_cw, kv_beta, kv_dof_p, kv_dof_r, kv_bw, kv_every = damping
    filt_nodes = filt[0]
    rec_p, rec_O, rec_E, rec_K = rec
    ke_prev, work_f, work_tau, work_p, kv_L, kv_u, kv_J = work
    n = p.shape[0]
    n_f = filt_nodes.shape[0]
    for k in range(n_steps):
        j = step0 + k
        kp = k if base_p.shape[0] > 1 else 0
        kp1 = k + 1 if base_p.shape[0] > 1 else 0
        # Record the state at j when it is a sample.
        sample = j % every == 0
        if sample:
            row = j // every
            for a in range(n):
                for r in range(3):
                    rec_p[row, a, r] = p[a, r]
                    for c in range(3):
                        rec_O[row, a, r, c] = O[a, r, c]
        # Forces at j; the Kelvin-Voigt factor follows the configuration every kv_every steps.
        V = _forces(p, O, model, loads, k, work_f, work_tau)
        if kv_beta > 0.0 and (k == 0 or j % kv_every == 0):
            _kv_assemble(p, O, base_R, kp, model, kv_dof_p, kv_dof_r, kv_beta, dt, kv_bw, kv_L,
                         kv_J)  # fmt: skip
        # Dissipation and the explicit translation update; the filter's nodes redone with it.
        _translate(p, p_prev, work_f, node_mass, node_c, pos_free, base_p, kp1, dt, work_p)
        if n_f > 0:
            _filter_step(p, p_prev, O, work_f, node_mass, filt, k, dt, rec_K, work_p)
        # Rotations: Newton on the Cayley parameter, node by node.
        if not _rotate(O, fr, work_tau, node_Jd, node_J, node_cw, rot_free, base_R, kp1, dt):
            return STATUS_NEWTON, k
        # Kelvin-Voigt damping of the predicted step (implicit).
        if kv_beta > 0.0:
            _kv_correct(p, work_p, fr, node_mass, node_J, kv_dof_p, kv_dof_r, kv_L, kv_bw, dt,
                        kv_u)  # fmt: skip
        # O <- O F with the new F.
        _turn_frames(O, fr, rot_free)
        # Kinetic energy of the new step; the energy at j averages the steps j -+ 1/2.
        ke = _kinetic(work_p, p, fr, node_mass, node_J, pos_free, rot_free, dt)
        if sample:
            rec_E[j // every] = V + 0.5 * (ke + ke_prev[0])
        ke_prev[0] = ke
        # Shift the translational state; check it.
        if not _shift(p, p_prev, work_p):
            return STATUS_NONFINITE, k
    return STATUS_OK, n_steps


# ---------------------------------------------------------------------------------------------
# Kelvin-Voigt (strain-rate) damping, implicit (ALGORITHMS.md E.5 extended)


@numba.njit(cache=True, inline="always")
def _kv_add_block(A_out, dof_i, dof_j, Ji, Jj, w0, w1, w2):
    """A_out[dof_i:+3, dof_j:+3] += Ji^T diag(w) Jj (both (3, 3) strain Jacobians)."""
    for r in range(3):
        for c in range(3):
            A_out[dof_i + r, dof_j + c] += (
                Ji[0, r] * w0 * Jj[0, c] + Ji[1, r] * w1 * Jj[1, c] + Ji[2, r] * w2 * Jj[2, c]
            )


@numba.njit(cache=True)
def _kv_assemble(p, O, base_R, kb, model, dof_p, dof_r, beta, dt, bw, A_out, J_work):
    """Factor A = M + dt beta B^T W B at the configuration (p, O), in place (banded Cholesky).

    B is the Jacobian of the discrete strains (element shear-stretch strains, spring Cayley
    strains) with respect to the generalised velocities (world translation of free positions,
    body rotation of free frames), W their elastic stiffnesses (w l C1 and K): beta B^T W B is
    the Kelvin-Voigt damping matrix, zero on rigid-body motions. M = diag(node_mass, node_J).
    dof_p, dof_r (n,) first generalised index of each node's position / rotation (-1 fixed);
    bw the half bandwidth of A. A_out (n_q, n_q) is overwritten with the lower Cholesky
    factor (entries outside the band are not used). J_work (2, 3, 3) scratch. model : the
    tuple of the module docstring; base_R (k, 3, 3) with row kb the base frame.
    """
    elastic, inertia, _, _ = model
    elem_len, elem_C1, _, _, shear_mode, spr_i, spr_j, spr_K, _ = elastic
    node_mass, _, _, node_J, _, _ = inertia
    n_q = A_out.shape[0]
    for r in range(n_q):
        for c in range(max(0, r - bw), min(n_q, r + bw + 1)):
            A_out[r, c] = 0.0
    n = p.shape[0]
    for a in range(n):
        if dof_p[a] >= 0:
            for k in range(3):
                A_out[dof_p[a] + k, dof_p[a] + k] = node_mass[a]
        if dof_r[a] >= 0:
            for k in range(3):
                A_out[dof_r[a] + k, dof_r[a] + k] = node_J[a, k]
    h = dt * beta
    # Shear-stretch: g = O_c^T (p_b - p_a) / l; dg/dp_b = O_c^T / l = -dg/dp_a, dg/de_c = q^ / l.
    Jp = J_work[0]
    Je = J_work[1]
    for i in range(elem_len.shape[0]):
        a = i
        b = i + 1
        l = elem_len[i]
        dx = p[b, 0] - p[a, 0]
        dy = p[b, 1] - p[a, 1]
        dz = p[b, 2] - p[a, 2]
        for side in range(2):
            if side == 1 and shear_mode == 0:
                break
            c = a if side == 0 else b
            w = h * (1.0 if shear_mode == 0 else 0.5) * l
            w0 = w * elem_C1[i, 0]
            w1 = w * elem_C1[i, 1]
            w2 = w * elem_C1[i, 2]
            qx, qy, qz = _body_of(O, c, dx, dy, dz)
            for r in range(3):
                for s in range(3):
                    Jp[r, s] = O[c, s, r] / l
            Je[0, 0] = 0.0
            Je[0, 1] = -qz / l
            Je[0, 2] = qy / l
            Je[1, 0] = qz / l
            Je[1, 1] = 0.0
            Je[1, 2] = -qx / l
            Je[2, 0] = -qy / l
            Je[2, 1] = qx / l
            Je[2, 2] = 0.0
            # Blocks (p_a, p_b, e_c) with signs (-1, +1, +1) on Jp, Jp, Je.
            for u in range(3):
                du = dof_p[a] if u == 0 else (dof_p[b] if u == 1 else dof_r[c])
                if du < 0:
                    continue
                su = -1.0 if u == 0 else 1.0
                Ju = Je if u == 2 else Jp
                for v in range(3):
                    dv = dof_p[a] if v == 0 else (dof_p[b] if v == 1 else dof_r[c])
                    if dv < 0:
                        continue
                    sv = -1.0 if v == 0 else 1.0
                    Jv = Je if v == 2 else Jp
                    ss = su * sv
                    _kv_add_block(A_out, du, dv, Ju, Jv, ss * w0, ss * w1, ss * w2)
    # Bending-torsion springs: dc/de_j = I + c^/2 + c c^T/4, dc/de_i = -(I - c^/2 + c c^T/4).
    Ji = J_work[0]
    Jj = J_work[1]
    for k in range(spr_i.shape[0]):
        i = spr_i[k]
        j = spr_j[k]
        if i < 0:
            cx, cy, cz = _cayinv_rel(base_R, kb, O, j)
        else:
            cx, cy, cz = _cayinv_rel(O, i, O, j)
        cc = (cx, cy, cz)
        for r in range(3):
            for s in range(3):
                v = 0.25 * cc[r] * cc[s] + (1.0 if r == s else 0.0)
                Jj[r, s] = v
                Ji[r, s] = -v
        Jj[0, 1] -= 0.5 * cz
        Jj[0, 2] += 0.5 * cy
        Jj[1, 0] += 0.5 * cz
        Jj[1, 2] -= 0.5 * cx
        Jj[2, 0] -= 0.5 * cy
        Jj[2, 1] += 0.5 * cx
        Ji[0, 1] -= 0.5 * cz
        Ji[0, 2] += 0.5 * cy
        Ji[1, 0] += 0.5 * cz
        Ji[1, 2] -= 0.5 * cx
        Ji[2, 0] -= 0.5 * cy
        Ji[2, 1] += 0.5 * cx
        w0 = h * spr_K[k, 0]
        w1 = h * spr_K[k, 1]
        w2 = h * spr_K[k, 2]
        dj = dof_r[j]
        di = dof_r[i] if i >= 0 else -1
        if dj >= 0:
            _kv_add_block(A_out, dj, dj, Jj, Jj, w0, w1, w2)
        if di >= 0:
            _kv_add_block(A_out, di, di, Ji, Ji, w0, w1, w2)
            if dj >= 0:
                _kv_add_block(A_out, di, dj, Ji, Jj, w0, w1, w2)
                _kv_add_block(A_out, dj, di, Jj, Ji, w0, w1, w2)
    # Banded Cholesky, lower factor in place.
    for j in range(n_q):
        s = A_out[j, j]
        for k in range(max(0, j - bw), j):
            s -= A_out[j, k] * A_out[j, k]
        d = math.sqrt(s)
        A_out[j, j] = d
        for i in range(j + 1, min(n_q, j + bw + 1)):
            s = A_out[i, j]
            for k in range(max(0, i - bw), j):
                s -= A_out[i, k] * A_out[j, k]
            A_out[i, j] = s / d


@numba.njit(cache=True)
def _kv_correct(p, p_new, fr, node_mass, node_J, dof_p, dof_r, L_chol, bw, dt, u_work):
    """Implicit Kelvin-Voigt step: solve (M + dt D) u = M u_pred for the generalised velocity
    of the step j -> j+1 and write it back (backward Euler on the dissipation only).

    p (n, 3) positions at j; p_new (n, 3) predicted positions at j+1 (updated in place); fr
    (n, 3) no-half Cayley parameters of the predicted step rotations (updated in place; the
    body angular velocity is 2 f / dt to first order). L_chol from `_kv_assemble`.
    """
    n = p.shape[0]
    n_q = u_work.shape[0]
    inv_dt = 1.0 / dt
    # Right-hand side M u_pred.
    for a in range(n):
        if dof_p[a] >= 0:
            for k in range(3):
                u_work[dof_p[a] + k] = node_mass[a] * (p_new[a, k] - p[a, k]) * inv_dt
        if dof_r[a] >= 0:
            for k in range(3):
                u_work[dof_r[a] + k] = node_J[a, k] * 2.0 * fr[a, k] * inv_dt
    # Forward and back substitution with the banded factor.
    for i in range(n_q):
        s = u_work[i]
        for k in range(max(0, i - bw), i):
            s -= L_chol[i, k] * u_work[k]
        u_work[i] = s / L_chol[i, i]
    for i in range(n_q - 1, -1, -1):
        s = u_work[i]
        for k in range(i + 1, min(n_q, i + bw + 1)):
            s -= L_chol[k, i] * u_work[k]
        u_work[i] = s / L_chol[i, i]
    # Write the damped velocities back.
    for a in range(n):
        if dof_p[a] >= 0:
            for k in range(3):
                p_new[a, k] = p[a, k] + dt * u_work[dof_p[a] + k]
        if dof_r[a] >= 0:
            for k in range(3):
                fr[a, k] = 0.5 * dt * u_work[dof_r[a] + k]
