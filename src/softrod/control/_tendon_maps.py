"""Maps between segment bending and tendon inputs under the constant-curvature (PCC) picture.

Used to command each segment's bending independently: `pcc_length_matrix` turns segment
curvatures into tendon length changes (length control), `bending_tensions` turns segment
bending moments into tendon tensions (force control). Pure numpy on a `RobotSpec`.
"""

from __future__ import annotations

import math

import numpy as np

from softrod.description import RobotSpec

__all__ = ["bending_tensions", "pcc_length_matrix"]


def pcc_length_matrix(robot: RobotSpec, planar: bool = False) -> np.ndarray:
    """Tendon length change per segment curvature (constant curvature, small-offset map).

    A tendon at body-frame offset r_i = d (cos a, sin a) shortens by d (cos a u_x' + sin a u_y')
    L_k over every segment k it runs through, where (u_x', u_y') is the bending of segment k
    toward body +x and +y. Routed through all proximal segments, a distal tendon's length
    therefore depends on every segment up to its anchor; this map lets one command each
    segment's bending independently.

    Returns (n_tendons, 2 n_segments) [m per 1/m] (columns: segment 0 x, segment 0 y, ...), or
    (n_tendons, n_segments) with `planar=True` (bending toward body +x only).
    """
    tendons = robot.tendon_list()
    n_seg = robot.n_segments
    per = 1 if planar else 2
    out = np.zeros((len(tendons), per * n_seg))
    for i, (j, tendon) in enumerate(tendons):
        a = math.radians(tendon.angle_deg)
        for k in range(j + 1):
            length = robot.segments[k].length
            out[i, per * k] = -tendon.offset * math.cos(a) * length
            if not planar:
                out[i, per * k + 1] = -tendon.offset * math.sin(a) * length
    return out


def bending_tensions(robot: RobotSpec, moments: np.ndarray) -> np.ndarray:
    """Tendon tensions [N] that put bending moment `moments[j]` on segment j.

    moments : (n_segments, 2) [N m], the moment bending segment j toward body (+x, +y).
    A tendon of segment j runs from the base to segment j's end, so it loads every segment
    up to j; segment j's own tendons therefore supply the difference m_j - m_(j+1). Each
    tendon at angle a pulls max(0, dm . (cos a, sin a)) / offset: exact for tendon sets at
    0/90/180/270 deg or antagonistic pairs (what the environments use).
    Returns (n_tendons,) in input order, all >= 0.
    """
    m = np.asarray(moments, dtype=float).reshape(robot.n_segments, 2)
    dm = m - np.vstack([m[1:], np.zeros((1, 2))])
    out = np.zeros(robot.n_tendons)
    for i, (j, tendon) in enumerate(robot.tendon_list()):
        a = math.radians(tendon.angle_deg)
        out[i] = max(0.0, dm[j, 0] * math.cos(a) + dm[j, 1] * math.sin(a)) / tendon.offset
    return out
