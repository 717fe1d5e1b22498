"""Multiple shooting for strongly loaded rods.

Single shooting integrates the whole rod from guessed base values; its Jacobian's condition
number grows like exp(sqrt(P L^2 / EI)), so under heavy loads (a soft 0.5 m robot held
horizontally under its own weight has w L^3 / EI ~ 180) Newton lands on looped equilibria or
stalls. Multiple shooting splits the rod into K intervals, each integrated from its own guessed
frame and total moment, and adds continuity conditions at the joins: every interval stays well
conditioned (exp(sqrt(.) / K)) and the Newton system is block bidiagonal.

Unknowns: M(0) (3) for the first interval; for each later interval a rotation of its start
frame (3, about the reference frame R_bar_k, folded into R_bar_k after every step) and its
start moment M_k (3); under length control the tensions (n_t). Residuals (dimensionless):
frame mismatch vee(skew(R_bar_{k+1}^T R_end,k)) [rad], moment jumps (M_end,k - M_{k+1}) /
m_scale, the tip condition, and the tendon law rows as in single shooting.
"""

from __future__ import annotations

import numpy as np

from softrod.rods import so3
from softrod.rods._budget import BUDGET_STATUS, budget_expired
from softrod.rods._inputs import _Problem
from softrod.rods._model import RodModel
from softrod.rods._static_kernels import _evaluate_interval

__all__ = ["multiple_shooting"]


def interval_bounds(n_steps: int, K: int) -> np.ndarray:
    """Node indices b_0 = 0 < ... < b_K = n_steps splitting the grid into K intervals."""
    K = max(1, min(K, n_steps))
    return np.unique(np.round(np.linspace(0, n_steps, K + 1)).astype(np.int64))


def multiple_shooting(
    model: RodModel,
    pb: _Problem,
    K: int,
    M0: np.ndarray,
    tau0: np.ndarray,
    init_rotations: np.ndarray,
    init_moments: np.ndarray,
    rtol: float,
    max_iter: int,
    Y: np.ndarray,
    X: np.ndarray,
    max_step: float = np.inf,
) -> tuple[int, np.ndarray, np.ndarray, float, int, int]:
    """Damped Newton on the multiple-shooting system at one load level.

    init_rotations (n_nodes, 3, 3) and init_moments (n_nodes, 3): a shape to start every
    interval from (the total moment M at the nodes). Returns (status, M0, tensions, residual,
    iterations, integrations); Y (n_nodes, ny) and X (n_nodes, 6) describe the last iterate.
    Status: 0 converged, 1 max_iter, 2 line search stalled, 3 non-finite, 6 the solve's time
    budget ran out (`_budget`; checked before every evaluation after the first). `max_step` bounds
    each Newton step in the scaled unknowns (moments / m_scale, frame rotations [rad],
    tensions / t_scale): continuation keeps the line search near the predicted equilibrium.
    """
    n_t = model.n_tendons
    ny = 15 + n_t
    lm = pb.length_mode
    n_tau = n_t if lm else 0
    b = interval_bounds(model.step_seg.shape[0], K)
    K = b.shape[0] - 1
    base_p, base_R = pb.base
    M_tip, L_cmd, k_t, m_scale, t_scale = pb.bc
    Rbar = [base_R.copy()] + [init_rotations[b[k]].copy() for k in range(1, K)]
    Ms = [np.asarray(M0, float).copy()] + [init_moments[b[k]].copy() for k in range(1, K)]
    tau = np.asarray(tau0, float).copy()
    n = 3 + 6 * (K - 1) + n_tau
    col = [0] + [3 + 6 * (k - 1) for k in range(1, K)]  # first column of interval k
    # Scale of each unknown: moments by m_scale, rotations by 1 rad, tensions by t_scale.
    unit = np.ones(n)
    unit[0:3] = m_scale
    for k in range(1, K):
        unit[col[k] + 3 : col[k] + 6] = m_scale
    unit[n - n_tau :] = t_scale
    nfev = 0

    def evaluate() -> tuple[bool, np.ndarray, np.ndarray]:
        nonlocal nfev
        r = np.zeros(n)
        J = np.zeros((n, n))
        p0 = base_p.copy()
        l0 = np.zeros(n_t)
        ends = []
        sens = []
        tau_arr = np.ascontiguousarray(tau if lm else pb.tau_fixed)
        for k in range(K):
            rot = k > 0
            n_dir = (3 if rot else 0) + 3 + n_tau
            z = np.empty(ny * (1 + n_dir))
            ok = _evaluate_interval(
                p0,
                np.ascontiguousarray(Rbar[k]),
                Ms[k],
                l0,
                tau_arr,
                rot,
                n_tau,
                pb.geo,
                pb.ld,
                int(b[k]),
                int(b[k + 1]),
                Y,
                X,
                z,
            )
            nfev += 1
            if not ok:
                return False, r, J
            ends.append(z[:ny].copy())
            sens.append(z[ny:].reshape(n_dir, ny).copy())
            p0 = z[0:3].copy()
            l0 = z[15:ny].copy()
        for k in range(K):
            end, S = ends[k], sens[k]
            n_own = 6 if k > 0 else 3
            own = slice(col[k], col[k] + n_own)
            R_end = end[3:12].reshape(3, 3)
            dR = S[:, 3:12].reshape(-1, 3, 3)  # (n_dir, 3, 3)
            dM = S[:, 12:15]
            if k < K - 1:
                # Join k -> k+1: 3 frame rows, then 3 moment rows (at columns of k+1).
                rr = col[k + 1]
                Q = Rbar[k + 1].T @ R_end
                r[rr : rr + 3] = so3.vee(Q)
                r[rr + 3 : rr + 6] = (end[12:15] - Ms[k + 1]) / m_scale
                for d in range(n_own):
                    J[rr : rr + 3, own.start + d] = so3.vee(Rbar[k + 1].T @ dR[d])
                    J[rr + 3 : rr + 6, own.start + d] = dM[d] / m_scale
                for d in range(3):
                    e = np.zeros(3)
                    e[d] = 1.0
                    J[rr : rr + 3, rr + d] = so3.vee(-so3.hat(e) @ Q)
                J[rr + 3 : rr + 6, rr + 3 : rr + 6] = -np.eye(3) / m_scale
                rows = slice(rr, rr + 6)
                n_rows = 6
            else:
                r[0:3] = (end[12:15] - M_tip) / m_scale
                for d in range(n_own):
                    J[0:3, own.start + d] = dM[d] / m_scale
                rows = slice(0, 3)
                n_rows = 3
            if lm:
                tcols = slice(n - n_tau, n)
                tdirs = S[n_own:]
                if n_rows == 6:
                    J[rows.start : rows.start + 3, tcols] = np.stack(
                        [so3.vee(Rbar[k + 1].T @ m.reshape(3, 3)) for m in tdirs[:, 3:12]], 1
                    )
                    J[rows.start + 3 : rows.stop, tcols] = tdirs[:, 12:15].T / m_scale
                else:
                    J[0:3, tcols] = tdirs[:, 12:15].T / m_scale
        if lm:
            # Tendon law rows: l_j(L) is the sum of every interval's increment.
            l_end = ends[-1][15:ny]
            stretch = l_end - L_cmd
            active = stretch > 0
            rt = slice(n - n_tau, n)
            r[rt] = (tau - k_t * np.where(active, stretch, 0.0)) / t_scale
            for k in range(K):
                S = sens[k]
                n_own = 6 if k > 0 else 3
                dl = S[:, 15:ny]  # (n_dir, n_t)
                J[rt, col[k] : col[k] + n_own] -= (k_t * active)[:, None] * dl[:n_own].T / t_scale
                J[rt, rt] -= (k_t * active)[:, None] * dl[n_own:].T / t_scale
            J[rt, rt] += np.eye(n_tau) / t_scale
        return bool(np.all(np.isfinite(r))), r, J

    def apply(step: np.ndarray, alpha: float) -> tuple[list, list, np.ndarray]:
        R_new = [Rbar[0]] + [
            Rbar[k] @ so3.exp(alpha * step[col[k] : col[k] + 3]) for k in range(1, K)
        ]
        M_new = [Ms[0] + alpha * step[0:3]] + [
            Ms[k] + alpha * step[col[k] + 3 : col[k] + 6] for k in range(1, K)
        ]
        t_new = tau + alpha * step[n - n_tau :] if lm else tau
        return R_new, M_new, t_new

    ok, r, J = evaluate()
    if not ok:
        return 3, Ms[0], tau, float("inf"), 0, nfev
    norm = float(np.max(np.abs(r)))
    nit = 0
    for nit in range(1, max_iter + 1):
        if norm <= rtol:
            nit -= 1
            break
        if budget_expired():
            return BUDGET_STATUS, Ms[0], tau, norm, nit - 1, nfev
        try:
            step = np.linalg.solve(J, -r)
        except np.linalg.LinAlgError:
            return 3, Ms[0], tau, norm, nit, nfev
        saved = (Rbar, Ms, tau)
        size = float(np.max(np.abs(step) / unit))
        alpha = 1.0 if size <= max_step else max_step / size
        alpha_min = alpha / 64.0
        accepted = False
        while alpha >= alpha_min:
            Rbar, Ms, tau = apply(step, alpha)
            ok, r_try, J_try = evaluate()
            if ok and float(np.max(np.abs(r_try))) < norm:
                accepted = True
                break
            Rbar, Ms, tau = saved
            alpha *= 0.5
            if budget_expired():
                evaluate()  # leave Y/X describing the last accepted iterate
                return BUDGET_STATUS, Ms[0], tau, norm, nit, nfev
        if not accepted:
            evaluate()  # leave Y/X describing the last accepted iterate
            return 2, Ms[0], tau, norm, nit, nfev
        r, J = r_try, J_try
        norm = float(np.max(np.abs(r)))
    # Y holds the last intervals; at convergence continuity holds to rtol at every join.
    return (0 if norm <= rtol else 1), Ms[0], tau, norm, nit, nfev
