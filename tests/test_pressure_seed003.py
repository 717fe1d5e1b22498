"""Seed 003's planar pneumatic arm as a description file (issue 20): its exact static solve is
the no-load PCC model where that model holds (no load) and differs from it under load."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

import softrod
from softrod.pneumatic import NoLoadModel, chamber_description, chamber_pressures
from softrod.rods import compile_model

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "examples" / "robots" / "pneumatic_arm3.yaml"
CHAMBERS = ROOT / "examples" / "seed003" / "pneumatic_arm3_chambers.yaml"
P_MAX = 137895.0
#: Unloaded plates vs D.1's arcs [m], [rad]: RK4's O(h^4) error on the arcs (measured 3.5e-10 m
#: and 4.7e-9 rad at 384 steps on the full-pressure case; 5.6e-9 m at 192, 2e-6 m at 32).
PLATE_TOL = 1e-9
ANGLE_TOL = 1e-8
STEPS = 384
#: In-plane weight of the ground-truth simulator's table (tilted 25 deg, downhill -y in the
#: arm's plane = world -x here).
G_IN_PLANE = 9.81 * math.sin(math.radians(25.0))
#: Mean tip distance exact-under-load vs no-load PCC over the 27 extreme configurations
#: (docs/actuators.md), and its tolerance.
LOADED_MEAN_TIP_M = 0.146
LOADED_MEAN_ATOL = 1e-3


def _plates(robot: softrod.RobotSpec, sol: softrod.StaticResult, steps: int | None) -> np.ndarray:
    """Plate poses (n_plates - 1, 3) of a solve in the arm's plane: (x, y, theta) with
    x = world z, y = world x (the base plate is left out)."""
    model = compile_model(robot, steps=steps)
    idx = [int(np.argmin(np.abs(sol.s - s))) for s in model.disk_s]
    p, R = sol.positions[idx], sol.rotations[idx]
    return np.c_[p[:, 2], p[:, 0], np.arctan2(R[:, 0, 2], R[:, 2, 2])]


def test_the_file_is_the_generated_description_and_reads_as_the_pcc_arm():
    robot = softrod.load_robot(CHAMBERS)
    assert robot.to_dict() == chamber_description(softrod.load_robot(ARM)).to_dict()
    assert robot.model == "cosserat" and robot.n_pressures == 6
    q = np.array([1e5, -6e4, 1.2e5])
    np.testing.assert_array_equal(NoLoadModel(robot).backbone(q), NoLoadModel(ARM).backbone(q))
    np.testing.assert_array_equal(chamber_pressures(robot, q), [0, -1e5, -6e4, 0, 0, -1.2e5])
    with pytest.raises(ValueError, match="q must have 3 values"):
        chamber_pressures(robot, [1e5, 0.0])


@pytest.mark.parametrize("q", [(1e5, -6e4, 1.2e5), (P_MAX, P_MAX, P_MAX), (-P_MAX, 0.0, 7e4)])
def test_unloaded_exact_solve_is_the_pcc_model(q):
    robot = softrod.load_robot(CHAMBERS)
    sol = softrod.solve_static(robot, pressures=chamber_pressures(robot, q), steps=STEPS)
    assert sol.success
    plates = _plates(robot, sol, STEPS)
    pcc = NoLoadModel(robot).backbone(np.array(q))[1:]
    assert np.linalg.norm(plates[:, :2] - pcc[:, :2], axis=1).max() < PLATE_TOL
    dtheta = np.angle(np.exp(1j * (plates[:, 2] - pcc[:, 2])))
    assert np.abs(dtheta).max() < ANGLE_TOL


def test_loaded_exact_solve_shows_what_pcc_leaves_out():
    """The 27 extreme configurations of D.2 under the tilted table's in-plane weight."""
    robot = softrod.load_robot(CHAMBERS)
    pcc = NoLoadModel(robot)
    dist = []
    for q in itertools.product((-P_MAX, 0.0, P_MAX), repeat=3):
        sol = softrod.solve_static(
            robot, pressures=chamber_pressures(robot, q), gravity=(-G_IN_PLANE, 0.0, 0.0)
        )
        assert sol.success, q
        tip = np.array([sol.tip_position[2], sol.tip_position[0]])
        dist.append(np.linalg.norm(tip - pcc.backbone(np.array(q))[-1, :2]))
    assert min(dist) > 0.02
    assert np.mean(dist) == pytest.approx(LOADED_MEAN_TIP_M, abs=LOADED_MEAN_ATOL)
