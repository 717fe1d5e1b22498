"""`softrod.rods.robot_properties`: the derived quantities `softrod info` prints, checked against
closed forms (Euler buckling, section masses) and against the static solver (90-degree pull)."""

from __future__ import annotations

import math

import numpy as np

import softrod
from softrod.rods import robot_properties

#: Closed forms evaluated with the same floats: only round-off separates them.
ROUNDOFF = 1e-12
#: The straight tendon of a massless rod gives an exactly constant moment tau d, so the tip
#: turns by kappa L = pi / 2; the solver's tolerance leaves 8e-8 rad (measured).
TIP_ANGLE_TOL = 1e-5

E, NU, RHO, R, L, D = 60.0e9, 0.33, 6450.0, 0.0005, 0.2, 0.004


def _rod(density: float = RHO, disk_mass: float = 0.001) -> dict:
    return {
        "name": "one_segment",
        "backbone": {"youngs_modulus": E, "poisson_ratio": NU, "density": density, "radius": R},
        "segments": [
            {
                "length": L,
                "disks": 8,
                "disk_radius": 0.005,
                "disk_mass": disk_mass,
                "tendons": [{"offset": D, "angle_deg": 0.0}],
            }
        ],
    }


def test_closed_forms():
    props = robot_properties(softrod.compile_model(_rod()))
    EI = E * math.pi * R**4 / 4.0
    seg = props.segments[0]
    assert math.isclose(seg.EI, EI, rel_tol=ROUNDOFF)
    assert math.isclose(seg.GJ, E / (2 * (1 + NU)) * math.pi * R**4 / 2, rel_tol=ROUNDOFF)
    assert math.isclose(props.buckling_load, math.pi**2 * EI / (4 * L**2), rel_tol=ROUNDOFF)
    assert math.isclose(props.backbone_mass, RHO * math.pi * R**2 * L, rel_tol=ROUNDOFF)
    assert math.isclose(props.disks_mass, 8 * 0.001, rel_tol=ROUNDOFF)
    assert math.isclose(props.total_mass, props.backbone_mass + props.disks_mass)
    assert math.isclose(props.tendons[0].tension_90deg, (math.pi / 2) * EI / (D * L))
    record = props.to_dict()
    assert list(record) == [
        "robot", "model", "n_segments", "n_tendons", "total_length", "base", "segments",
        "mass", "tendons", "buckling_load", "buckling_formula",
    ]  # fmt: skip
    assert record["segments"][0]["EI"] == seg.EI


def test_tension_90deg_turns_the_tip_by_90_degrees():
    robot = _rod(density=0.0, disk_mass=0.0)
    tau = robot_properties(softrod.compile_model(robot)).tendons[0].tension_90deg
    sol = softrod.solve_static(robot, tensions=[tau])
    assert sol.success
    tangent = sol.rotations[-1][:, 2]
    angle = math.acos(float(np.clip(tangent @ np.array([0.0, 0.0, 1.0]), -1.0, 1.0)))
    assert abs(angle - math.pi / 2) < TIP_ANGLE_TOL
