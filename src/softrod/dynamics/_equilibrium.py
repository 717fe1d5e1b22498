"""Static equilibrium of the discrete LGVI model: the state its integrators settle to.

Both LGVI steps (explicit and implicit, `simulate_dynamic`) are discrete Euler-Lagrange
equations whose only force terms at rest (q^{j-1} = q^j = q^{j+1}: zero velocity, no damping
force, no inertia) are the model's generalised forces at q, -dV/dq of the elastic energy and
of the applied potentials (`_lgvi_kernels._forces`: world forces on the free node positions,
body torques on the free frames, `tau = -dV/d eta` for `O -> O cay(eta)`). A state is a fixed
point of either integrator exactly when those forces vanish. `_equilibrium` finds such a state
by Newton's method in the free coordinates (translations, body rotation parameters eta: the
same coordinates as `_modes._stiffness`) with a central-difference stiffness, each step applied
along the chain's strains (`_moved_out`), and a line search on the potential (for frozen loads
it is a potential: tendon tension times piece length, per piece when the pieces carry
different tensions). It is the damped dynamics' settled answer
without the time stepping: the same discrete model, the same forces, no new discretisation.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from softrod.dynamics._lgvi_kernels import _body_of, _forces, _world_of
from softrod.dynamics._model import LGVIModel

__all__ = ["EQUILIBRIUM_TOL", "equilibrium_loads"]

#: Newton stops once its step moves no position by more than this fraction of the robot
#: length and turns no frame by more than this many radians.
EQUILIBRIUM_TOL = 1e-10
#: Central-difference step of the stiffness: relative to the robot length (positions) and in
#: radians (rotations); the forces are smooth on this scale (as `_modes._FD_REL`).
_FD_REL = 1e-7
#: Newton iterations allowed per equilibrium, and step halvings per line search.
_MAX_ITER = 50
_MAX_HALVINGS = 30
#: A potential change below this fraction of the potential is round-off (64 ulp).
_ROUNDOFF = 64 * np.finfo(float).eps


def equilibrium_loads(model: LGVIModel, tensions: np.ndarray) -> tuple:
    """The kernels' one-row `loads` tuple with only tendon tensions (n_kernel_tendons,) [N]:
    no gravity, tip or distributed load, field; the base in the robot's pose."""
    z = np.zeros((1, 3))
    tension = np.ascontiguousarray(np.asarray(tensions, dtype=float).reshape(1, -1))
    return (np.zeros(3), z, z.copy(), z.copy(), tension, z.copy(), np.zeros((1, 3, 3)),
            z.copy(), np.ascontiguousarray(model.rod.base_rotation[None]))  # fmt: skip


@numba.njit(cache=True, inline="always")
def _turn_out(O, a, ex, ey, ez, O_out):
    """O_out[a] <- O[a] cay(e) (half-convention Cayley map, as `_model.cay`)."""
    s = 4.0 / (4.0 + ex * ex + ey * ey + ez * ez)
    # C = I + s (E + E E / 2), E = hat(e).
    C = np.empty((3, 3))
    C[0, 0] = 1.0 - 0.5 * s * (ey * ey + ez * ez)
    C[1, 1] = 1.0 - 0.5 * s * (ex * ex + ez * ez)
    C[2, 2] = 1.0 - 0.5 * s * (ex * ex + ey * ey)
    C[0, 1] = s * (-ez + 0.5 * ex * ey)
    C[1, 0] = s * (ez + 0.5 * ex * ey)
    C[0, 2] = s * (ey + 0.5 * ex * ez)
    C[2, 0] = s * (-ey + 0.5 * ex * ez)
    C[1, 2] = s * (-ex + 0.5 * ey * ez)
    C[2, 1] = s * (ex + 0.5 * ey * ez)
    for r in range(3):
        for c in range(3):
            O_out[a, r, c] = O[a, r, 0] * C[0, c] + O[a, r, 1] * C[1, c] + O[a, r, 2] * C[2, c]


@numba.njit(cache=True)
def _generalised_out(p, O, model, loads, pf, rf, f, tau, g_out):
    """Generalised force g_out (n_q,) in the free coordinates (world forces on the nodes pf,
    then body torques on the frames rf; f, tau (n, 3) scratch). Returns the potential [J]."""
    V = _forces(p, O, model, loads, 0, f, tau)
    for i in range(pf.shape[0]):
        for c in range(3):
            g_out[3 * i + c] = f[pf[i], c]
    off = 3 * pf.shape[0]
    for i in range(rf.shape[0]):
        for c in range(3):
            g_out[off + 3 * i + c] = tau[rf[i], c]
    return V


@numba.njit(cache=True)
def _stiffness_out(p, O, model, loads, pf, rf, eps_p, eps_r, K_out):
    """Central-difference stiffness K_out (n_q, n_q) = -d g / d q at (p, O) (g as
    `_generalised_out`; rotation columns perturb O[a] -> O[a] cay(e))."""
    n = p.shape[0]
    n_q = K_out.shape[0]
    f = np.empty((n, 3))
    tau = np.empty((n, 3))
    gp = np.empty(n_q)
    gm = np.empty(n_q)
    pp = p.copy()
    OO = O.copy()
    col = 0
    # Translation columns.
    for i in range(pf.shape[0]):
        a = pf[i]
        for c in range(3):
            pp[a, c] = p[a, c] + eps_p
            _generalised_out(pp, O, model, loads, pf, rf, f, tau, gp)
            pp[a, c] = p[a, c] - eps_p
            _generalised_out(pp, O, model, loads, pf, rf, f, tau, gm)
            pp[a, c] = p[a, c]
            for r in range(n_q):
                K_out[r, col] = -(gp[r] - gm[r]) / (2.0 * eps_p)
            col += 1
    # Rotation columns.
    for i in range(rf.shape[0]):
        a = rf[i]
        for c in range(3):
            e = np.zeros(3)
            e[c] = eps_r
            _turn_out(O, a, e[0], e[1], e[2], OO)
            _generalised_out(p, OO, model, loads, pf, rf, f, tau, gp)
            _turn_out(O, a, -e[0], -e[1], -e[2], OO)
            _generalised_out(p, OO, model, loads, pf, rf, f, tau, gm)
            for r in range(3):
                for s in range(3):
                    OO[a, r, s] = O[a, r, s]
            for r in range(n_q):
                K_out[r, col] = -(gp[r] - gm[r]) / (2.0 * eps_r)
            col += 1


@numba.njit(cache=True)
def _moved_out(p, O, rf, elem_len, step, alpha, p_out, O_out):
    """(p_out, O_out) <- (p, O) moved by alpha * step along the chain's strains.

    step : (n_q,) tangent step (translations of nodes 1..n-1, then body rotation parameters of
    the frames rf). The frames turn, O cay(alpha eta); the element chords w_i = O_i^T (p_i+1 -
    p_i) / l_i change by alpha times their linear change, O_i^T (dp_i+1 - dp_i) / l_i + w_i x
    eta_i, and the nodes are laid out again from the fixed base node along the new chords.
    To first order this is the step itself; unlike adding dp it keeps the stiff shear and
    stretch strains at their linear prediction under large turns (Newton on a rod moved by
    translations stretches the chord by ~l dtheta^2 / 2 per element and stalls)."""
    n = p.shape[0]
    for a in range(n):
        for c in range(3):
            for r in range(3):
                O_out[a, c, r] = O[a, c, r]
    eta = np.zeros((n, 3))
    off = 3 * (n - 1)
    for i in range(rf.shape[0]):
        k = off + 3 * i
        eta[rf[i], 0] = step[k]
        eta[rf[i], 1] = step[k + 1]
        eta[rf[i], 2] = step[k + 2]
        _turn_out(O, rf[i], alpha * step[k], alpha * step[k + 1], alpha * step[k + 2], O_out)
    for c in range(3):
        p_out[0, c] = p[0, c]
    for i in range(n - 1):
        l = elem_len[i]
        dx = p[i + 1, 0] - p[i, 0]
        dy = p[i + 1, 1] - p[i, 1]
        dz = p[i + 1, 2] - p[i, 2]
        wx, wy, wz = _body_of(O, i, dx / l, dy / l, dz / l)
        # The step's translations of nodes i + 1 and i (node 0 is fixed).
        ux = step[3 * i]
        uy = step[3 * i + 1]
        uz = step[3 * i + 2]
        if i > 0:
            ux -= step[3 * (i - 1)]
            uy -= step[3 * (i - 1) + 1]
            uz -= step[3 * (i - 1) + 2]
        bx, by, bz = _body_of(O, i, ux / l, uy / l, uz / l)
        ex = eta[i, 0]
        ey = eta[i, 1]
        ez = eta[i, 2]
        nx = wx + alpha * (bx + wy * ez - wz * ey)
        ny = wy + alpha * (by + wz * ex - wx * ez)
        nz = wz + alpha * (bz + wx * ey - wy * ex)
        qx, qy, qz = _world_of(O_out, i, nx, ny, nz)
        p_out[i + 1, 0] = p_out[i, 0] + l * qx
        p_out[i + 1, 1] = p_out[i, 1] + l * qy
        p_out[i + 1, 2] = p_out[i, 2] + l * qz


@numba.njit(cache=True)
def _lu_solve_out(A, b, x_out):
    """x_out <- A^-1 b by Gaussian elimination with partial pivoting (A (m, m) and b (m,) are
    overwritten). Returns False for a singular A. In numba, not LAPACK: a threaded BLAS spends
    far longer synchronising than computing at this size on a busy machine (measured 72 vs
    2 ms at m = 183 on the shared 2-core machine; `softrod.mujoco` limits its threads instead)."""
    m = A.shape[0]
    for k in range(m):
        piv = k
        big = abs(A[k, k])
        for r in range(k + 1, m):
            if abs(A[r, k]) > big:
                big = abs(A[r, k])
                piv = r
        if big == 0.0:
            return False
        if piv != k:
            for c in range(k, m):
                A[k, c], A[piv, c] = A[piv, c], A[k, c]
            b[k], b[piv] = b[piv], b[k]
        inv = 1.0 / A[k, k]
        for r in range(k + 1, m):
            fct = A[r, k] * inv
            if fct != 0.0:
                for c in range(k + 1, m):
                    A[r, c] -= fct * A[k, c]
                b[r] -= fct * b[k]
    for k in range(m - 1, -1, -1):
        acc = b[k]
        for c in range(k + 1, m):
            acc -= A[k, c] * x_out[c]
        x_out[k] = acc / A[k, k]
    return True


def _equilibrium(
    model: LGVIModel,
    loads: tuple,
    positions: np.ndarray,
    frames: np.ndarray,
    tol: float = EQUILIBRIUM_TOL,
    max_iter: int = _MAX_ITER,
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Newton's method for a zero of the generalised forces of `model` under `loads` (the
    kernels' tuple, one row), from (positions (n, 3) [m], frames (n, 3, 3)).

    Returns (positions, frames, iterations, converged). Each step solves K d = g (K the
    central-difference stiffness, g the generalised force), moves along the chain's strains
    (`_moved_out`) and halves d until the potential decreases (or the force norm does, near
    round-off); converged when the step moves no position by more than tol * L and turns no
    frame by more than tol rad (that last step is taken). The frozen loads make it a
    potential: with friction, each piece's tension times its length.
    """
    pf = np.flatnonzero(model.pos_free).astype(np.int64)
    rf = np.flatnonzero(model.rot_free).astype(np.int64)
    if pf.tolist() != list(range(1, model.n_nodes)):
        raise ValueError("the LGVI equilibrium needs every node but the base free")
    n_q = 3 * (pf.size + rf.size)
    n_p = 3 * pf.size
    kmodel = model.kernel_model
    L = model.total_length
    p = np.ascontiguousarray(positions, dtype=float).copy()
    O = np.ascontiguousarray(frames, dtype=float).copy()
    f = np.empty_like(p)
    tau = np.empty_like(p)
    g = np.empty(n_q)
    g_new = np.empty(n_q)
    K = np.empty((n_q, n_q))
    p_new = np.empty_like(p)
    O_new = np.empty_like(O)
    V = _generalised_out(p, O, kmodel, loads, pf, rf, f, tau, g)
    for it in range(1, max_iter + 1):
        _stiffness_out(p, O, kmodel, loads, pf, rf, _FD_REL * L, _FD_REL, K)
        step = np.empty(n_q)
        if not _lu_solve_out(K, g.copy(), step) or not np.all(np.isfinite(step)):
            return p, O, it, False
        move_p = float(np.max(np.abs(step[:n_p]), initial=0.0))
        move_r = float(np.max(np.abs(step[n_p:]), initial=0.0))
        if move_p <= tol * L and move_r <= tol:
            # Converged: the step left is below tol (its own error ~1e-4 of it: FD stiffness).
            _moved_out(p, O, rf, model.elem_len, step, 1.0, p_new, O_new)
            return p_new, O_new, it, True
        # Newton's step on the potential: accept the first halving that lowers it (or the
        # force); a step whose predicted decrease g.d is below V's round-off is taken whole.
        whole = abs(float(g @ step)) <= _ROUNDOFF * abs(V)
        alpha = 1.0
        for _ in range(_MAX_HALVINGS):
            _moved_out(p, O, rf, model.elem_len, step, alpha, p_new, O_new)
            V_new = _generalised_out(p_new, O_new, kmodel, loads, pf, rf, f, tau, g_new)
            if math.isfinite(V_new) and (
                whole or V_new < V or np.linalg.norm(g_new) < np.linalg.norm(g)
            ):
                break
            alpha *= 0.5
        else:
            return p, O, it, False
        p, p_new = p_new, p
        O, O_new = O_new, O
        g, g_new = g_new, g
        V = V_new
    return p, O, max_iter, False
