"""SoMo's torque actuation in the exact static solver (issue 20): the seven public definition
files bend under input by SoMo's torque per unit input, SoMo's own actuation test (torsion axis
included) is reproduced, and the upright heavy arm droops."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
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


def test_torsion_axis_is_a_moment_actuator():
    """SoMo's own actuation test also drives the torsion joint (axis 3): a chamber cannot twist,
    so it imports as a moment actuator (SoMo's torque per unit input, world-scaled) and the
    "not mapped" note is gone; the bending axes stay chambers (`pressure_of_axis`)."""
    res = import_somo(DATA / "manipulator_test_def.yaml")
    assert not any("torsion" in n and "not mapped" in n for n in res.notes)
    assert res.moment_of_axis == {(0, 2): 0}
    assert res.pressure_of_axis == {(0, 0): 0, (0, 1): 1}
    assert res.robot.segments[0].moment_actuators[0].moment == (0.0, 0.0, 1.0)
    scaled = import_somo(DATA / "manipulator_test_def.yaml", world_scale=20.0)
    assert scaled.robot.segments[0].moment_actuators[0].moment == (0.0, 0.0, 1.0 / 20.0**2)


def _somo_test_input(robot, res, axis_nr: int, torque: float) -> dict:
    """softrod's inputs for SoMo's apply_actuation_torques([0], [axis_nr], [torque])."""
    pressures = np.zeros(robot.n_pressures)
    moments = np.zeros(robot.n_moments)
    if (0, axis_nr) in res.pressure_of_axis:
        pressures[res.pressure_of_axis[(0, axis_nr)]] = torque
    else:
        moments[res.moment_of_axis[(0, axis_nr)]] = torque
    return {"pressures": pressures, "moments": moments}


@pytest.mark.parametrize("num_axes", [1, 2, 3])
def test_somo_manipulator_actuation_test_reproduced(num_axes):
    """SoMo's tests/test_manipulator_actuation.py: the test manipulator with its first
    `num_axes` joint definitions (planar when 1) takes, axis by axis, the slow torque ramp
    50 sin(5e-5 i), i < 1000 / num_axes, on every joint of that axis. SoMo checks that it
    instantiates and actuates; here every axis's ramp is followed quasi-statically (warm-started
    static solves) and the ramp's last torque turns the actuator by exactly tau L / K about
    that axis (K = EI bending, GJ torsion), bending toward a x e_z, twisting about e_z."""
    d = yaml.safe_load((DATA / "manipulator_test_def.yaml").read_text())
    act = d["actuator_definitions"][0]
    act["joint_definitions"] = act["joint_definitions"][:num_axes]
    if num_axes == 1:
        act["planar_flag"] = 1
    res = import_somo(d)
    robot = res.robot
    model = compile_model(robot)
    L = float(model.seg_length[0])
    steps = int(1000 / num_axes)
    for axis_nr in range(num_axes):
        a = np.asarray(act["joint_definitions"][axis_nr]["axis"], dtype=float)
        sol = None
        for i in np.linspace(0, steps - 1, 4).astype(int):
            torque = 50 * math.sin(0.00005 * i)
            sol = softrod.solve_static(
                model, guess=sol, **_somo_test_input(robot, res, axis_nr, torque)
            )
            assert sol.success
        assert sol is not None
        R = sol.rotations[-1]
        k = int(np.argmax(np.abs(a)))
        # SoMo's torque per unit input (world scale 1, the import's default).
        angle = torque * L / float(model.K_bt[0, k])
        if k == 2:
            assert math.atan2(R[1, 0], R[0, 0]) == pytest.approx(angle, rel=ANGLE_RTOL)
            np.testing.assert_allclose(R[:, 2], [0, 0, 1], atol=1e-12)
        else:
            assert math.acos(min(1.0, R[2, 2])) == pytest.approx(angle, rel=ANGLE_RTOL)
            toward = np.cross(a, [0.0, 0.0, 1.0])[:2]
            assert R[:2, 2] @ toward > 0.99 * np.linalg.norm(R[:2, 2])


def test_somo_actuation_test_in_the_mujoco_chain():
    """The same three-axis actuation in the MuJoCo chain (SoMo's N = 5 links is coarse; N = 50):
    all three axes at the ramp's last torque, settled, vs the static solver (< 1e-3 L)."""
    from softrod.mujoco import build_spec, chain_info, static_equilibrium

    res = import_somo(DATA / "manipulator_test_def.yaml")
    robot = res.robot
    torque = 50 * math.sin(0.00005 * 332)
    pressures = [torque, torque]
    moments = [torque]
    info = chain_info(robot, links=50)
    model = build_spec(robot, links=50, gravity=(0.0, 0.0, 0.0)).compile()
    data = mujoco.MjData(model)
    ids = [model.actuator(a).id for a in (*info.pressure_actuators, *info.moment_actuators)]
    data.ctrl[ids] = [*pressures, *moments]
    assert static_equilibrium(model, data).success
    sol = softrod.solve_static(robot, pressures=pressures, moments=moments)
    assert sol.success
    L = robot.total_length
    assert np.linalg.norm(data.site("tip").xpos - sol.tip_position) < 1e-3 * L


def test_upright_heavy_ball_arm_droops():
    """Issue 15: the 7.5 m ball-playing arm standing upright under gravity is no column."""
    robot = import_somo(DATA / "bb_arm.yaml").robot
    L = robot.total_length
    sol = softrod.solve_static(robot, gravity=(0.0, 0.0, -9.81))
    assert sol.success and sol.stable is True
    assert np.linalg.norm(sol.tip_position[:2]) > 0.25 * L
    assert sol.tip_position[2] < 0.0
