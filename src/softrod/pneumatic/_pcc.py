"""Quasistatic no-load PCC model of a planar pneumatic arm (ALGORITHMS.md D.1, D.4).

Per segment, the pressurised side contracts by eps = E(|p|) while the other keeps its rest
length, so the segment bends with |kappa| = -2 eps / (t (2 + eps)) and its backbone shortens to
l = (1 + eps / 2) l_0. Segments are circular arcs chained with planar SE(2) transforms. The
model is exactly invertible: kappa -> eps -> |p| through the monotone strain polynomial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from softrod.description import RobotSpec
from softrod.pneumatic._model import BEND_SIGN, PneumaticArm, compile_pneumatic

__all__ = ["NoLoadModel", "IKResult"]

#: Below this |kappa s| the arc formulas switch to their Taylor series; the first dropped term
#: is ~(kappa s)^6 / 5040 < 2e-22 relative, far below double precision.
_SERIES_THRESHOLD = 1e-3
#: Relative pressure tolerance of the strain-polynomial inversion (bisection-safeguarded
#: Newton); 1e-13 of p_max is ~1e-8 Pa, at the level of round-off in eps.
_INVERSE_PTOL = 1e-13
_INVERSE_MAX_ITER = 200


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _poly(coeffs: np.ndarray, x: float) -> float:
    out = 0.0
    for k in range(coeffs.shape[0] - 1, -1, -1):
        out = out * x + coeffs[k]
    return out


@numba.njit(cache=True)
def _poly_deriv(coeffs: np.ndarray, x: float) -> float:
    out = 0.0
    for k in range(coeffs.shape[0] - 1, 0, -1):
        out = out * x + k * coeffs[k]
    return out


@numba.njit(cache=True)
def _curvature_length(
    q: np.ndarray,
    coeffs: np.ndarray,
    width: np.ndarray,
    rest_length: np.ndarray,
    kappa_out: np.ndarray,
    length_out: np.ndarray,
) -> None:
    """Signed curvature [1/m] and length [m] of every segment at signed pressures q [Pa]."""
    for j in range(q.shape[0]):
        eps = _poly(coeffs[j], abs(q[j]))
        k_abs = -2.0 * eps / (width[j] * (2.0 + eps))
        side = 0.0
        if q[j] > 0.0:
            side = 1.0
        elif q[j] < 0.0:
            side = -1.0
        kappa_out[j] = BEND_SIGN * side * k_abs
        length_out[j] = (1.0 + 0.5 * eps) * rest_length[j]


@numba.njit(cache=True)
def _arc(kappa: float, s: float) -> tuple[float, float, float]:
    """Pose (x, y, theta) at arc length s along a constant-curvature arc from the origin."""
    a = kappa * s
    if abs(a) < _SERIES_THRESHOLD:
        a2 = a * a
        x = s * (1.0 - a2 / 6.0 + a2 * a2 / 120.0)
        y = s * a * (0.5 - a2 / 24.0 + a2 * a2 / 720.0)
    else:
        x = math.sin(a) / kappa
        y = (1.0 - math.cos(a)) / kappa
    return x, y, a


@numba.njit(cache=True)
def _backbone_kernel(
    kappa: np.ndarray,
    length: np.ndarray,
    plate_seg: np.ndarray,
    plate_frac: np.ndarray,
    out: np.ndarray,
) -> None:
    """Plate poses (m, 3) = (x, y, theta) of the PCC arm with given curvatures and lengths."""
    bx = 0.0
    by = 0.0
    bth = 0.0
    seg = 0
    for i in range(plate_seg.shape[0]):
        while plate_seg[i] > seg:
            ex, ey, eth = _arc(kappa[seg], length[seg])
            c = math.cos(bth)
            s = math.sin(bth)
            bx += c * ex - s * ey
            by += s * ex + c * ey
            bth += eth
            seg += 1
        lx, ly, lth = _arc(kappa[seg], plate_frac[i] * length[seg])
        c = math.cos(bth)
        s = math.sin(bth)
        out[i, 0] = bx + c * lx - s * ly
        out[i, 1] = by + s * lx + c * ly
        out[i, 2] = bth + lth


@numba.njit(cache=True)
def _backbone_batch_kernel(
    q: np.ndarray,
    coeffs: np.ndarray,
    width: np.ndarray,
    rest_length: np.ndarray,
    plate_seg: np.ndarray,
    plate_frac: np.ndarray,
    out: np.ndarray,
) -> None:
    """No-load backbones (n, m, 3) for pressures q (n, n_seg)."""
    n_seg = q.shape[1]
    kappa = np.empty(n_seg)
    length = np.empty(n_seg)
    for b in range(q.shape[0]):
        _curvature_length(q[b], coeffs, width, rest_length, kappa, length)
        _backbone_kernel(kappa, length, plate_seg, plate_frac, out[b])


@numba.njit(cache=True)
def _length_of_curvature(kappa: float, rest_length: float, width: float) -> float:
    """l(kappa) = 2 l_0 / (2 + t |kappa|) [m] (D.1 inverse)."""
    return 2.0 * rest_length / (2.0 + width * abs(kappa))


@numba.njit(cache=True)
def _length_derivative(kappa: float, rest_length: float, width: float) -> float:
    """D = dl/dkappa [m^2] (eq. 6); one-sided -l_0 t / 2 at kappa = 0 as in the paper."""
    sgn = -1.0 if kappa < 0.0 else 1.0
    den = 2.0 + width * abs(kappa)
    return -2.0 * rest_length * width * sgn / (den * den)


@numba.njit(cache=True)
def _tip_pose_kernel(
    kappa: np.ndarray, rest_length: np.ndarray, width: np.ndarray, out: np.ndarray
) -> None:
    """Tip pose (3,) of the PCC arm at curvatures kappa with lengths l(kappa)."""
    bx = 0.0
    by = 0.0
    bth = 0.0
    for j in range(kappa.shape[0]):
        l = _length_of_curvature(kappa[j], rest_length[j], width[j])
        ex, ey, eth = _arc(kappa[j], l)
        c = math.cos(bth)
        s = math.sin(bth)
        bx += c * ex - s * ey
        by += s * ex + c * ey
        bth += eth
    out[0] = bx
    out[1] = by
    out[2] = bth


@numba.njit(cache=True)
def _tip_jacobian_kernel(
    kappa: np.ndarray, rest_length: np.ndarray, width: np.ndarray, jac_out: np.ndarray
) -> None:
    """Planar tip Jacobian d(x, y, theta)_tip / d kappa (3, n_seg) with l = l(kappa) (D.4)."""
    n = kappa.shape[0]
    base_x = np.empty(n + 1)
    base_y = np.empty(n + 1)
    base_th = np.empty(n + 1)
    lam = np.empty(n)
    dloc = np.empty((n, 2))
    base_x[0] = 0.0
    base_y[0] = 0.0
    base_th[0] = 0.0
    for j in range(n):
        k = kappa[j]
        l = _length_of_curvature(k, rest_length[j], width[j])
        d = _length_derivative(k, rest_length[j], width[j])
        lam[j] = l + k * d
        a = k * l
        # Local end-point derivative d(x_j, y_j)/d kappa_j, series near kappa = 0.
        if abs(a) < _SERIES_THRESHOLD:
            a2 = a * a
            dx = l * l * (-a / 3.0 + a2 * a / 30.0) + d * math.cos(a)
            dy = l * l * (0.5 - a2 / 8.0 + a2 * a2 / 144.0) + d * math.sin(a)
        else:
            dx = lam[j] * math.cos(a) / k - math.sin(a) / (k * k)
            dy = lam[j] * math.sin(a) / k - (1.0 - math.cos(a)) / (k * k)
        dloc[j, 0] = dx
        dloc[j, 1] = dy
        ex, ey, eth = _arc(k, l)
        c = math.cos(base_th[j])
        s = math.sin(base_th[j])
        base_x[j + 1] = base_x[j] + c * ex - s * ey
        base_y[j + 1] = base_y[j] + s * ex + c * ey
        base_th[j + 1] = base_th[j] + eth
    tip_x = base_x[n]
    tip_y = base_y[n]
    for j in range(n):
        c = math.cos(base_th[j])
        s = math.sin(base_th[j])
        # R(Theta_{j-1}) d(x_j, y_j) + lambda_j E (p_tip - P_j), E = [[0, -1], [1, 0]].
        rx = tip_x - base_x[j + 1]
        ry = tip_y - base_y[j + 1]
        jac_out[0, j] = c * dloc[j, 0] - s * dloc[j, 1] - lam[j] * ry
        jac_out[1, j] = s * dloc[j, 0] + c * dloc[j, 1] + lam[j] * rx
        jac_out[2, j] = lam[j]


@numba.njit(cache=True)
def _pressure_of_strain(eps: float, coeffs: np.ndarray, p_max: float) -> float:
    """|p| in [0, p_max] with E(|p|) = eps for a non-increasing E; NaN when out of range."""
    f0 = _poly(coeffs, 0.0) - eps
    if f0 <= 0.0:
        # eps at or above the unpressurised strain: the chamber is vented.
        return 0.0 if f0 > -1e-15 else math.nan
    f1 = _poly(coeffs, p_max) - eps
    if f1 > 0.0:
        return math.nan
    lo = 0.0
    hi = p_max
    p = p_max * f0 / (f0 - f1)
    for _ in range(_INVERSE_MAX_ITER):
        f = _poly(coeffs, p) - eps
        if f > 0.0:
            lo = p
        else:
            hi = p
        if hi - lo < _INVERSE_PTOL * p_max or f == 0.0:
            break
        dfdp = _poly_deriv(coeffs, p)
        step_ok = dfdp < 0.0
        if step_ok:
            p_new = p - f / dfdp
            step_ok = lo < p_new < hi
        p = p_new if step_ok else 0.5 * (lo + hi)
    return p


@numba.njit(cache=True)
def _pressure_of_curvature_kernel(
    kappa: np.ndarray,
    coeffs: np.ndarray,
    width: np.ndarray,
    p_max: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    out: np.ndarray,
) -> None:
    """Signed pressures (n, n_seg) for curvatures (n, n_seg); NaN where infeasible."""
    for b in range(kappa.shape[0]):
        for j in range(kappa.shape[1]):
            k = kappa[b, j]
            ta = width[j] * abs(k)
            eps = -2.0 * ta / (2.0 + ta)
            p_abs = _pressure_of_strain(eps, coeffs[j], p_max[j])
            # sigma sgn(p) = sgn(kappa): with sigma = -1, kappa < 0 is right-side pressure.
            p = p_abs * BEND_SIGN * (-1.0 if k < 0.0 else 1.0)
            if p_abs == 0.0:
                p = 0.0
            if not (lower[j] - 1e-9 * p_max[j] <= p <= upper[j] + 1e-9 * p_max[j]):
                p = math.nan
            out[b, j] = p


@numba.njit(cache=True)
def _ik_kernel(
    kappa0: np.ndarray,
    goal: np.ndarray,
    use_theta: bool,
    theta_weight: float,
    rest_length: np.ndarray,
    width: np.ndarray,
    k_lo: np.ndarray,
    k_hi: np.ndarray,
    max_iter: int,
    tol: float,
    kappa_out: np.ndarray,
    err_out: np.ndarray,
) -> None:
    """Damped Newton-Raphson IK from each start kappa0 (n, n_seg); pose error per start."""
    n_seg = kappa0.shape[1]
    jac = np.empty((3, n_seg))
    pose = np.empty(3)
    rows = 3 if use_theta else 2
    for b in range(kappa0.shape[0]):
        k = kappa0[b].copy()
        err = math.inf
        for _ in range(max_iter):
            _tip_pose_kernel(k, rest_length, width, pose)
            r = np.empty(rows)
            r[0] = goal[0] - pose[0]
            r[1] = goal[1] - pose[1]
            if use_theta:
                dth = goal[2] - pose[2]
                r[2] = theta_weight * ((dth + math.pi) % (2.0 * math.pi) - math.pi)
            err = math.sqrt(np.sum(r * r))
            if err < tol:
                break
            _tip_jacobian_kernel(k, rest_length, width, jac)
            jw = jac[:rows].copy()
            if use_theta:
                jw[2] *= theta_weight
            step = np.linalg.pinv(jw) @ r
            # Keep Newton steps within a fraction of the curvature range (damping far away).
            scale = 1.0
            for j in range(n_seg):
                lim = 0.5 * (k_hi[j] - k_lo[j]) + 1e-12
                if abs(step[j]) * scale > lim:
                    scale = lim / abs(step[j])
            for j in range(n_seg):
                k[j] = min(max(k[j] + scale * step[j], k_lo[j]), k_hi[j])
        kappa_out[b] = k
        err_out[b] = err


# --------------------------------------------------------------------------------------------
# Public model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IKResult:
    """Approximate goal configurations from PCC inverse kinematics (D.4).

    pressures : (k, n_seg) signed pressures [Pa] of the feasible solutions.
    curvatures : (k, n_seg) their curvatures [1/m]; pose_error : (k,) weighted pose error
    [m] at convergence; n_tried : starts attempted; success : at least one solution.
    """

    pressures: np.ndarray
    curvatures: np.ndarray
    pose_error: np.ndarray
    n_tried: int

    @property
    def success(self) -> bool:
        return bool(self.pressures.shape[0] > 0)


class NoLoadModel:
    """Quasistatic no-load PCC model (D.1): forward, exact inverse, Jacobian and IK.

    Parameters
    ----------
    arm : a compiled `PneumaticArm`, or anything `compile_pneumatic` takes.

    Shapes: q (..., n_seg) signed pressures [Pa]; backbones (..., m, 3) plate poses
    (x [m], y [m], theta [rad]) in the arm's plane, base plate first.
    """

    def __init__(self, arm: PneumaticArm | RobotSpec | dict | str) -> None:
        self.arm = arm if isinstance(arm, PneumaticArm) else compile_pneumatic(arm)
        a = self.arm
        kmax = a.curvature_max
        # Curvature bounds: a left side (p < 0) gives kappa > 0 because sigma = -1.
        self.curvature_lower = np.where(a.pressure_upper > 0, -kmax, 0.0)
        self.curvature_upper = np.where(a.pressure_lower < 0, kmax, 0.0)

    # Forward model --------------------------------------------------------------------------
    def strain(self, q: np.ndarray) -> np.ndarray:
        """Actuator strain eps (..., n_seg) of the pressurised side (0 when vented)."""
        qq = self.arm.check_pressures(q)
        p = np.abs(qq)
        c = self.arm.strain_coeffs
        return sum(c[:, k] * p**k for k in range(c.shape[1]))  # type: ignore[return-value]

    def curvature_length(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed curvature [1/m] and length [m] of every segment, each (..., n_seg)."""
        qq = np.atleast_2d(self.arm.check_pressures(q))
        flat = qq.reshape(-1, self.arm.n_segments)
        kappa = np.empty_like(flat)
        length = np.empty_like(flat)
        a = self.arm
        for b in range(flat.shape[0]):
            _curvature_length(flat[b], a.strain_coeffs, a.width, a.rest_length, kappa[b], length[b])
        shape = np.shape(q)
        return kappa.reshape(shape), length.reshape(shape)

    def backbone(self, q: np.ndarray) -> np.ndarray:
        """No-load backbone B~(q): (m, 3) for q (n_seg,), or (n, m, 3) for q (n, n_seg)."""
        qq = self.arm.check_pressures(q)
        return self.backbone_unchecked(qq)

    def backbone_unchecked(self, q: np.ndarray) -> np.ndarray:
        """`backbone` without input checks (hot loops; q must be a valid float array)."""
        a = self.arm
        single = q.ndim == 1
        qb = np.ascontiguousarray(q.reshape(-1, a.n_segments), dtype=float)
        out = np.empty((qb.shape[0], a.n_plates, 3))
        _backbone_batch_kernel(
            qb, a.strain_coeffs, a.width, a.rest_length, a.plate_seg, a.plate_frac, out
        )
        return out[0] if single else out

    def backbone_from_curvature(self, kappa: np.ndarray) -> np.ndarray:
        """PCC backbone (m, 3) for curvatures (n_seg,) with lengths l(kappa) (D.1 inverse)."""
        a = self.arm
        k = np.asarray(kappa, dtype=float).reshape(a.n_segments)
        length = 2.0 * a.rest_length / (2.0 + a.width * np.abs(k))
        out = np.empty((a.n_plates, 3))
        _backbone_kernel(k, length, a.plate_seg, a.plate_frac, out)
        return out

    # Exact inverse --------------------------------------------------------------------------
    def pressure_from_curvature(self, kappa: np.ndarray) -> np.ndarray:
        """Signed pressures (..., n_seg) [Pa] that give curvatures kappa; NaN where a
        curvature needs more than p_max or the side it needs has no chamber."""
        a = self.arm
        k = np.asarray(kappa, dtype=float)
        flat = np.ascontiguousarray(k.reshape(-1, a.n_segments))
        out = np.empty_like(flat)
        _pressure_of_curvature_kernel(
            flat,
            a.strain_coeffs,
            a.width,
            a.pressure_max,
            a.pressure_lower,
            a.pressure_upper,
            out,
        )
        return out.reshape(k.shape)

    def curvature_from_backbone(self, backbone: np.ndarray) -> np.ndarray:
        """Segment curvatures (..., n_seg) [1/m] of a PCC backbone (..., m, 3).

        Exact for backbones of this model: each segment turns by dtheta = kappa l(kappa), so
        |kappa| = 2 |dtheta| / (2 l_0 - t |dtheta|).
        """
        a = self.arm
        bb = np.asarray(backbone, dtype=float)
        ends = [int(np.flatnonzero(a.plate_seg == j)[-1]) for j in range(a.n_segments)]
        theta_end = bb[..., ends, 2]
        theta_start = np.concatenate([bb[..., :1, 2], theta_end[..., :-1]], axis=-1)
        dth = theta_end - theta_start
        return np.sign(dth) * 2.0 * np.abs(dth) / (2.0 * a.rest_length - a.width * np.abs(dth))

    def pressure_from_backbone(self, backbone: np.ndarray) -> np.ndarray:
        """Signed pressures that reproduce a no-load backbone (the model's exact inverse)."""
        return self.pressure_from_curvature(self.curvature_from_backbone(backbone))

    # Differential kinematics (D.4) ------------------------------------------------------------
    def length_curvature_derivative(self, kappa: np.ndarray) -> np.ndarray:
        """D = dl/dkappa (..., n_seg) [m^2] of eq. 6 (one-sided -l_0 t / 2 at kappa = 0)."""
        a = self.arm
        k = np.asarray(kappa, dtype=float)
        sgn = np.where(k < 0.0, -1.0, 1.0)
        return -2.0 * a.rest_length * a.width * sgn / (2.0 + a.width * np.abs(k)) ** 2

    def tip_pose_from_curvature(self, kappa: np.ndarray) -> np.ndarray:
        """End-effector pose (3,) = (x, y, theta) at curvatures kappa (n_seg,)."""
        a = self.arm
        out = np.empty(3)
        _tip_pose_kernel(
            np.asarray(kappa, dtype=float).reshape(a.n_segments), a.rest_length, a.width, out
        )
        return out

    def tip_jacobian(self, kappa: np.ndarray) -> np.ndarray:
        """d(x, y, theta)_tip / d kappa (3, n_seg) including l = l(kappa) (D.4, eq. 6-8)."""
        a = self.arm
        jac = np.empty((3, a.n_segments))
        _tip_jacobian_kernel(
            np.asarray(kappa, dtype=float).reshape(a.n_segments), a.rest_length, a.width, jac
        )
        return jac

    def inverse_kinematics(
        self,
        goal_position: np.ndarray,
        rng: np.random.Generator,
        *,
        goal_theta: float | None = None,
        theta_weight: float = 0.1,
        n_starts: int = 64,
        tol: float = 1e-4,
        max_iter: int = 60,
    ) -> IKResult:
        """Goal configurations by Newton-Raphson on the PCC Jacobian from random starts (D.4).

        Parameters
        ----------
        goal_position : (2,) end-effector goal [m]; goal_theta : optional orientation [rad].
        rng : source of the random initial curvatures.
        theta_weight : length scale [m/rad] that weights the angle error against position.
        n_starts : random starts; tol : weighted pose error accepted [m].

        Returns
        -------
        IKResult with the distinct feasible pressure solutions (infeasible ones discarded).
        """
        goal = np.zeros(3)
        goal[:2] = np.asarray(goal_position, dtype=float).reshape(2)
        use_theta = goal_theta is not None
        if use_theta:
            goal[2] = float(goal_theta)  # type: ignore[arg-type]
        k0 = rng.uniform(
            self.curvature_lower, self.curvature_upper, size=(n_starts, self.arm.n_segments)
        )
        kappa = np.empty_like(k0)
        err = np.empty(n_starts)
        _ik_kernel(
            k0,
            goal,
            use_theta,
            float(theta_weight),
            self.arm.rest_length,
            self.arm.width,
            self.curvature_lower,
            self.curvature_upper,
            int(max_iter),
            float(tol),
            kappa,
            err,
        )
        ok = err < tol
        q = self.pressure_from_curvature(kappa[ok])
        feasible = np.all(np.isfinite(q), axis=1)
        q, kk, ee = q[feasible], kappa[ok][feasible], err[ok][feasible]
        # Drop duplicates (starts that converged to the same branch).
        if q.shape[0] > 1:
            key = np.round(q / (1e-4 * self.arm.pressure_max)).astype(np.int64)
            _, idx = np.unique(key, axis=0, return_index=True)
            idx = np.sort(idx)
            q, kk, ee = q[idx], kk[idx], ee[idx]
        return IKResult(pressures=q, curvatures=kk, pose_error=ee, n_tried=n_starts)
