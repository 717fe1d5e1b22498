"""SoMo's torque actuation in the exact static solver (issue 20): the seven public definition
files bend under input by SoMo's torque per unit input, and the upright heavy arm droops."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import softrod
from softrod.rods import compile_model
from softrod.somo import import_somo

DATA = Path(__file__).parent / "data" / "somo"
DEFINITIONS = sorted(p for p in DATA.glob("*.yaml") if "trajectory" not in p.name)
#: SoMo's chain turns by this much under the test input [rad] (small: the closed form below is
#: exact at any angle, the small input keeps it comparable with SoMo's own linear response).
SMALL_ANGLE = 0.05
#: The uniform chamber moment gives an exact arc: RK4 leaves ~1e-12 relative.
ANGLE_RTOL = 1e-9


@pytest.mark.parametrize("path", DEFINITIONS, ids=lambda p: p.stem)
def test_torque_input_bends_the_first_actuator_by_tau_L_over_EI(path):
    """SoMo's apply_actuation_torques puts the same torque tau on every joint of one axis: the
    imported chamber carries the moment tau (SoMo's torque per unit input), so the first
    segment turns by tau L / EI about that axis, toward a x e_z, and nothing else moves it."""
    res = import_somo(path)
    robot = res.robot
    model = compile_model(robot)
    act0 = yaml.safe_load(path.read_text())["actuator_definitions"][0]
    kappa, n = act0["joint_definitions"][0]["spring_stiffness"], act0["n_segments"]
    tau = SMALL_ANGLE * kappa / n
    L0 = float(model.seg_length[0])
    end = int(np.argmin(np.abs(model.node_s - L0)))
    for axis_nr in (0, 1):
        a = np.asarray(act0["joint_definitions"][axis_nr]["axis"], dtype=float)
        pressures = np.zeros(robot.n_pressures)
        pressures[res.pressure_of_axis[(0, axis_nr)]] = tau
        sol = softrod.solve_static(robot, pressures=pressures)
        assert sol.success
        EI = float(model.K_bt[0, int(np.argmax(np.abs(a[:2])))])
        z = sol.rotations[end][:, 2]
        assert math.acos(min(1.0, z[2])) == pytest.approx(tau * L0 / EI, rel=ANGLE_RTOL)
        assert z[:2] @ np.cross(a, [0.0, 0.0, 1.0])[:2] > 0.99 * np.linalg.norm(z[:2])


def test_torsion_axis_is_reported_not_dropped():
    """SoMo's own actuation test also drives the torsion joint (axis 3); a chamber cannot
    twist, so the import says so in its notes."""
    res = import_somo(DATA / "manipulator_test_def.yaml")
    assert any("torsion" in n and "not mapped" in n for n in res.notes)


def test_upright_heavy_ball_arm_droops():
    """Issue 15: the 7.5 m ball-playing arm standing upright under gravity is no column."""
    robot = import_somo(DATA / "bb_arm.yaml").robot
    L = robot.total_length
    sol = softrod.solve_static(robot, gravity=(0.0, 0.0, -9.81))
    assert sol.success and sol.stable is True
    assert np.linalg.norm(sol.tip_position[:2]) > 0.25 * L
    assert sol.tip_position[2] < 0.0
