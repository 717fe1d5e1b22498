"""Seed 003's planar arm as a mechanics description: McKibben pairs as pulling chambers.

The no-load model (D.1) is kinematic: one side's actuators contract by the strain eps(|p|)
while the other side keeps its rest length. The mechanics models (exact statics, MuJoCo, LGVI)
take forces, so `chamber_description` maps each actuated side onto a chamber (docs/actuators.md,
"Seed 003's arm"):

* A McKibben muscle *pulls* along its line: a chamber whose force p A_eff(p) is negative. Its
  input is the negated supply pressure, -|p| in [-p_max, 0] (`chamber_pressures`), at the
  side's line r = +-(t / 2) e_x of the section (the arm's plane is the body x-z plane: the
  left side is body +x, the right side body -x).
* A pull T at offset t / 2 shortens the centreline by T / EA and bends by T (t / 2) / EI, so the
  far side's strain is T (t / 2)^2 / EI - T / EA: D.1's "the other side keeps its rest length"
  is the section property EA = EI / (t / 2)^2. The description sets each segment's area to
  I / (t / 2)^2 (Cosserat, density scaled to keep the mass per length) and keeps EI.
* The muscle's force is seed 003's strain fit made a force fit: T(|p|) = -eps(|p|) EA / 2, so
  the centre strain is eps / 2 and the curvature per unit rest length -eps / t, exactly the PCC
  segment (kappa = -2 eps / (t (2 + eps)) over the length (1 + eps / 2) l_0). With
  eps = sum_k e_k |p|^k (e_0 = 0) and p = -|p|: A_eff(p) = (EA / 2)(-e_1 + e_2 p - e_3 p^2 +
  e_4 p^3), an `area` and three `area_polynomial` terms, exact.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from softrod.description import RobotSpec, load_robot

__all__ = ["chamber_description", "chamber_pressures"]

#: Body angle of each side's chamber line: the arm's plane is body x-z, its left is body +x.
_SIDE_ANGLE_DEG = {"left": 0.0, "right": 180.0}


def chamber_description(robot: RobotSpec | dict | str) -> RobotSpec:
    """The planar pneumatic arm `robot` (every segment `actuator: pneumatic`) with one pulling
    chamber per actuated side added, on a Cosserat backbone with EA = EI / (t / 2)^2.

    The `actuator` blocks stay, so `NoLoadModel` reads the same file; `chamber_pressures(q)`
    turns a planar configuration q (n_seg,) [Pa] into the chambers' `pressures`.
    """
    spec = robot if isinstance(robot, RobotSpec) else load_robot(robot)
    data = spec.to_dict()
    data["model"] = "cosserat"
    data["name"] = f"{spec.name}_chambers"
    for j, seg in enumerate(data["segments"]):
        act = spec.segments[j].actuator
        if act is None:
            raise ValueError(f"segments[{j}].actuator is required (a pneumatic segment)")
        bb = spec.segment_backbone(j)
        half = 0.5 * act.width
        # EA = EI / (t/2)^2: the unpressurised side keeps its length (D.1's kinematics).
        area = bb.I / half**2
        override = dict(seg.get("backbone") or {})
        override.update(area=area, density=bb.density * bb.A / area)
        seg["backbone"] = override
        seg["disk_radius"] = max(half, seg.get("disk_radius") or 0.0)
        # T(|p|) = -eps(|p|) EA / 2 at p = -|p|: A_eff(p) = (EA / 2) sum_k e_k (-1)^k p^(k-1).
        e = list(act.strain_polynomial) + [0.0] * (5 - len(act.strain_polynomial))
        if e[0] != 0.0 or not e[1] < 0.0:
            raise ValueError(
                f"segments[{j}].actuator.strain_polynomial must start 0, e_1 < 0 (a contraction "
                f"from zero at zero pressure) to map onto a chamber, got {act.strain_polynomial}"
            )
        ea_half = 0.5 * bb.youngs_modulus * area
        base = -ea_half * e[1]
        poly = [(-1.0) ** (k + 1) * ea_half * e[k + 1] / base for k in range(1, 4)]
        while poly and poly[-1] == 0.0:
            poly.pop()
        lo, hi = act.pressure_range
        seg["chambers"] = [
            {
                "area": base,
                "offset": half,
                "angle_deg": _SIDE_ANGLE_DEG[c.side],
                "pressure_range": [-hi, 0.0 - lo],
                "area_polynomial": poly,
            }
            for c in act.chambers
        ]
    return load_robot(data)


def chamber_pressures(robot: RobotSpec | dict | str, q: Sequence[float] | np.ndarray) -> np.ndarray:
    """Chamber pressures (n_pressures,) [Pa] of a `chamber_description` for the planar
    configuration q (n_seg,) [Pa] (q_j > 0: right side at q_j, q_j < 0: left side at |q_j|):
    -|q_j| on the pressurised side's chamber, 0 on the other."""
    spec = robot if isinstance(robot, RobotSpec) else load_robot(robot)
    qq = np.asarray(q, dtype=float).reshape(-1)
    if qq.shape != (spec.n_segments,):
        raise ValueError(
            f"q must have {spec.n_segments} values (one per segment), got {qq.shape[0]}"
        )
    out = []
    for j, seg in enumerate(spec.segments):
        if seg.actuator is None or len(seg.chambers) != len(seg.actuator.chambers):
            raise ValueError(f"segments[{j}] is not a chamber_description segment")
        for c in seg.actuator.chambers:
            on = qq[j] > 0 if c.side == "right" else qq[j] < 0
            out.append(-abs(qq[j]) if on else 0.0)
    return np.array(out)
