"""Rotations: the small set of SO(3) helpers the tree needs, in one place.

Conventions (DESIGN.md): rotation matrices are (3, 3) with columns = body axes in world;
quaternions are (w, x, y, z) like MuJoCo; rotation vectors (axis times angle) are (3,) [rad].
Pure NumPy; no MuJoCo, so the core can use it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "exp",
    "hat",
    "log",
    "matrix_to_quat",
    "quat_from_axis_angle",
    "quat_from_z",
    "quat_multiply",
    "quat_to_matrix",
    "vee",
]

#: Below this angle [rad] `exp` uses its second-order series: the closed form's
#: (1 - cos th) / th^2 loses all digits to cancellation near 0, the series is exact to O(th^3).
_SMALL_ANGLE = 1e-8


def hat(v: Sequence[float] | np.ndarray) -> np.ndarray:
    """Skew matrices (..., 3, 3) of vectors (..., 3): hat(v) @ w == cross(v, w)."""
    v = np.asarray(v, dtype=float)
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1] = -v[..., 2]
    out[..., 0, 2] = v[..., 1]
    out[..., 1, 0] = v[..., 2]
    out[..., 1, 2] = -v[..., 0]
    out[..., 2, 0] = -v[..., 1]
    out[..., 2, 1] = v[..., 0]
    return out


def vee(A: np.ndarray) -> np.ndarray:
    """Vector (3,) of the antisymmetric part of A (3, 3); the inverse of `hat` on skew
    matrices, and the small rotation a near-identity rotation matrix encodes."""
    return 0.5 * np.array([A[2, 1] - A[1, 2], A[0, 2] - A[2, 0], A[1, 0] - A[0, 1]])


def exp(theta: Sequence[float] | np.ndarray) -> np.ndarray:
    """Rotation matrix (3, 3) exp(hat(theta)) of a rotation vector (3,) [rad] (Rodrigues)."""
    theta = np.asarray(theta, dtype=float)
    th = float(np.linalg.norm(theta))
    K = hat(theta)
    # Near zero the closed form cancels; its series is exact to the order kept.
    if th < _SMALL_ANGLE:
        return np.eye(3) + K + 0.5 * K @ K
    return np.eye(3) + np.sin(th) / th * K + (1.0 - np.cos(th)) / th**2 * K @ K


def log(R: np.ndarray) -> np.ndarray:
    """Rotation vector (3,) [rad] of a rotation matrix (3, 3), angle in [0, pi]."""
    R = np.asarray(R, dtype=float)
    # Through the quaternion: well conditioned at every angle, including near pi.
    w, x, y, z = matrix_to_quat(R)
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1e-300:
        return np.zeros(3)
    angle = 2.0 * math.atan2(s, w)
    return np.array([x, y, z]) * (angle / s)


def quat_to_matrix(q: Sequence[float] | np.ndarray) -> np.ndarray:
    """Rotation matrix (3, 3) from a quaternion (w, x, y, z); normalized first."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (4,) (w, x, y, z) with w >= 0 of a rotation matrix (3, 3)."""
    R = np.asarray(R, dtype=float)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    # Shepperd: divide by the largest of the four candidates, so no branch loses digits.
    if tr > max(R[0, 0], R[1, 1], R[2, 2]):
        s = 2.0 * math.sqrt(1.0 + tr)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    out = np.array(q, dtype=float)
    out /= np.linalg.norm(out)
    return -out if out[0] < 0 else out


def quat_from_axis_angle(axis: Sequence[float] | np.ndarray, angle: float) -> np.ndarray:
    """Quaternion (4,) (w, x, y, z) of a rotation by `angle` [rad] about `axis` (3,) (any
    nonzero length)."""
    a = np.asarray(axis, dtype=float)
    n = float(np.linalg.norm(a))
    if not n > 0:
        raise ValueError(f"axis must be a nonzero vector, got {a.tolist()}")
    a = a / n
    s = math.sin(angle / 2.0)
    return np.array([math.cos(angle / 2.0), *(s * a).tolist()])


def quat_from_z(direction: Sequence[float] | np.ndarray) -> np.ndarray:
    """Unit quaternion (4,) (w, x, y, z) of the shortest rotation taking +z onto `direction`
    (3,) (any nonzero length); a half turn about x for the opposite direction."""
    z = np.array([0.0, 0.0, 1.0])
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    c = float(np.dot(z, d))
    if c < -1.0 + 1e-12:
        return np.array([0.0, 1.0, 0.0, 0.0])
    axis = np.cross(z, d)
    q = np.array([1.0 + c, axis[0], axis[1], axis[2]])
    return q / np.linalg.norm(q)


def quat_multiply(qa: Sequence[float] | np.ndarray, qb: Sequence[float] | np.ndarray) -> np.ndarray:
    """Hamilton product qa * qb (4,) of quaternions (w, x, y, z): the rotation qb, then qa
    (as MuJoCo's `mju_mulQuat`)."""
    a0, a1, a2, a3 = (float(x) for x in qa)
    b0, b1, b2, b3 = (float(x) for x in qb)
    return np.array(
        [
            a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0,
        ]
    )
