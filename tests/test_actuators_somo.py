"""SoMo's torque actuation imports as moment actuators (issue 20), uniform at any bend; the earlier
chamber import stays as actuation "chambers": the seven public definition files."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest
import yaml

from softrod.mujoco import build_spec, static_equilibrium
from softrod.somo import import_somo

DATA = Path(__file__).parent / "data" / "somo"
DEFINITIONS = sorted(p for p in DATA.glob("*.yaml") if "trajectory" not in p.name)
#: SoMo's chain bends by N tau / kappa under the input tau on each of its N joints. The
#: continuum bends tau L / EI; with the default stiffness rule "somo" (SoMo's eq. 8 beam) that is
#: about 2.1 x SoMo's chain (measured 2.07-2.14 on these files), with rule "chain" 1.15-1.32 x.
#: The bounds say "the same order, the documented factor", not an exact match.
RATIO_BOUNDS = {"somo": (1.8, 2.4), "chain": (1.0, 1.5)}
#: Small-deflection input: SoMo's chain turns by this much [rad].
SMALL_ANGLE = 0.05


def test_all_seven_files_import_with_actuation():
    assert len(DEFINITIONS) == 7
    for path in DEFINITIONS:
        res = import_somo(path)
        data = yaml.safe_load(path.read_text())
        bending = sum(
            1
            for act in data["actuator_definitions"]
            for jd in act["joint_definitions"]
            if list(jd["axis"])[2] == 0
        )
        # Every bending axis, and the one torsion axis SoMo's test manipulator has.
        torsion = int(path.name == "manipulator_test_def.yaml")
        assert res.robot.n_moments == bending + torsion, path.name
        assert res.robot.n_pressures == 0 and not res.pressure_of_axis
        assert sorted(res.moment_of_axis.values()) == list(range(res.robot.n_moments))
        assert not any("no tendon equivalent" in n for n in res.notes)
        assert any("-> moment_actuators" in n for n in res.notes)
        old = import_somo(path, actuation="chambers")
        assert old.robot.n_pressures == bending, path.name
        assert any("-> chambers" in n for n in old.notes)


def _moment_ctrl(model, res, axis: tuple[int, int]) -> int:
    """The MuJoCo ctrl index of SoMo's (actuator, axis) in an imported robot's chain."""
    return model.actuator(f"moment_{res.moment_of_axis[axis]}").id


@pytest.mark.parametrize("rule", ["somo", "chain"])
@pytest.mark.parametrize("path", DEFINITIONS, ids=lambda p: p.stem)
def test_input_bends_like_somo(path, rule):
    res = import_somo(path, rule=rule)
    act0 = yaml.safe_load(path.read_text())["actuator_definitions"][0]
    kappa, n = act0["joint_definitions"][0]["spring_stiffness"], act0["n_segments"]
    model = build_spec(res.robot, links=sum(res.n_links), gravity=(0.0, 0.0, 0.0)).compile()
    data = mujoco.MjData(model)
    tau = SMALL_ANGLE * kappa / n
    # A positive torque about the joint axis a turns the tip toward a x e_z (right hand).
    for axis in (0, 1):
        a = np.asarray(act0["joint_definitions"][axis]["axis"], dtype=float)
        data.ctrl[:] = 0.0
        data.ctrl[_moment_ctrl(model, res, (0, axis))] = tau
        assert static_equilibrium(model, data).success
        z = data.site("tip").xmat.reshape(3, 3)[:, 2]
        assert z @ np.cross(a, [0.0, 0.0, 1.0]) > 0.9 * np.linalg.norm(z[:2])
        if axis == 0:  # the joint whose stiffness the backbone maps
            ratio = math.acos(min(1.0, z[2])) / (n * tau / kappa)
            lo, hi = RATIO_BOUNDS[rule]
            assert lo < ratio < hi, (path.name, ratio)


def test_ball_arm_trajectory_columns_are_the_moments():
    res = import_somo(DATA / "bb_arm.yaml")
    traj = yaml.safe_load((DATA / "bb_arm_trajectory.yaml").read_text())
    row = traj["config"]["setpoints"]["main"][0]
    # [time, act0_ax0, act0_ax1, act1_ax0, ...]: SoMo's order is the moment order (the
    # pressure order of the chamber import).
    assert len(row) - 1 == res.robot.n_moments
    assert [res.moment_of_axis[(a, x)] for a in range(5) for x in range(2)] == list(range(10))
    old = import_somo(DATA / "bb_arm.yaml", actuation="chambers")
    assert [old.pressure_of_axis[(a, x)] for a in range(5) for x in range(2)] == list(range(10))


def test_uniform_moment_twin_is_the_moment_import():
    """`uniform_moment_twin` of the chamber import is the moment import (moments A d = 1 per
    unit input, to round-off); of the moment import it is the robot itself."""
    from softrod.somo import uniform_moment_twin

    res = import_somo(DATA / "manipulator_test_def.yaml", world_scale=20.0)
    same, order = uniform_moment_twin(res.robot)
    assert same is res.robot and order.tolist() == [0, 1, 2]
    old = import_somo(DATA / "manipulator_test_def.yaml", world_scale=20.0, actuation="chambers")
    twin, order = uniform_moment_twin(old.robot)
    assert order.tolist() == [0, 1, 2]  # pressures (axes 0, 1), then the torsion moment
    got = [act.moment for act in twin.segments[0].moment_actuators]
    want = [act.moment for act in res.robot.segments[0].moment_actuators]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


#: Rule "somo" inverts eq. 8, kappa = 2 N^2 L^2 K_b / (3 N - 1) = 6 N EI / ((3 N - 1) L), so
#: under SoMo's uniform torque the continuum turns tau L / EI = 6 N / (3 N - 1) x the chain's
#: N tau / kappa: the 2.07-2.14 above is this factor (SoMo's chain is ~2x stiffer than the beam
#: eq. 8 calibrates it to, §B Ambiguity 1), not an error of the mapping. Rule "midpoint"
#: (kappa = EI / h) gives the continuum SoMo's own response to its actuation: factor 1.
#: Tolerance on the factor (the chain at sum(n_links) links, SMALL_ANGLE).
FACTOR_RTOL = 0.02


@pytest.mark.parametrize("path", DEFINITIONS, ids=lambda p: p.stem)
def test_bend_factor_is_eq8s_and_midpoint_matches_somo(path):
    act0 = yaml.safe_load(path.read_text())["actuator_definitions"][0]
    kappa, n = act0["joint_definitions"][0]["spring_stiffness"], act0["n_segments"]
    tau = SMALL_ANGLE * kappa / n
    for rule, factor in (("somo", 6 * n / (3 * n - 1)), ("midpoint", 1.0)):
        res = import_somo(path, rule=rule)
        model = build_spec(res.robot, links=sum(res.n_links), gravity=(0.0, 0.0, 0.0)).compile()
        data = mujoco.MjData(model)
        data.ctrl[_moment_ctrl(model, res, (0, 0))] = tau
        assert static_equilibrium(model, data).success
        z = data.site("tip").xmat.reshape(3, 3)[:, 2]
        ratio = math.acos(min(1.0, z[2])) / (n * tau / kappa)
        assert ratio == pytest.approx(factor, rel=FACTOR_RTOL), (path.name, rule)


#: The ball arm's chain at the trajectory run's timestep (2e-3 s, damping ratio 0.05; the
#: default 0.005 diverges at t = 20 s) against the same chain at 5e-4 s: tip at t = 2 s
#: (after the first 1 s ramp of act0/act1 axis 1 to 60), measured (0.325898, 0, 7.409547) m at
#: 5e-4 s, 2.9e-4 L from the 2e-3 s run's (0.323759, 0, 7.410011) m (8.4e-4 L at 2.5 s).
BALL_ARM_TIP_5E4 = np.array([0.325898, 0.0, 7.409547])
BALL_ARM_DT_TOL = 1e-3  # [L]
#: Quasi-static lag at t = 2 s: the exact static shape for the inputs at 2 s has the tip
#: 1.495 L from the chain's (the arm's first bending period is ~12 s, the ramp 1 s).
BALL_ARM_LAG_2S = 1.6  # [L]


def test_ball_arm_follows_the_first_two_seconds_at_2ms():
    from softrod.somo import follow_trajectory, read_somo_trajectory

    res = import_somo(DATA / "bb_arm.yaml")
    traj = read_somo_trajectory(DATA / "bb_arm_trajectory.yaml")
    assert traj.inputs.shape == (11, 10) and traj.duration == 55.0
    run = follow_trajectory(res, traj, t_end=2.0, timestep=2e-3, sample_dt=1.0,
                            options={"damping_ratio": 0.05})  # fmt: skip
    assert run.unstable_at is None and run.steps == 1000
    # At rest under zero input (t <= 1 s) the chain is the static solve.
    assert np.all(run.tip_error[run.t <= 1.0] < 1e-9 * run.length)
    L = run.length
    assert np.linalg.norm(run.tip_chain[-1] - BALL_ARM_TIP_5E4) < BALL_ARM_DT_TOL * L
    assert run.summary()["tip_error_max_rel"] < BALL_ARM_LAG_2S


def test_somo_trajectory_bad_input_names_the_field():
    from softrod.somo import read_somo_trajectory

    data = yaml.safe_load((DATA / "bb_arm_trajectory.yaml").read_text())
    data["settings"]["traj_type"] = "waveform"
    with pytest.raises(ValueError, match="settings.traj_type must be 'interp'"):
        read_somo_trajectory(data)


def test_follow_trajectory_drives_moments_and_chambers_alike():
    """The trajectory's columns are SoMo's driven axes in (actuator, axis) order for either
    import: SoMo's test manipulator (two bending axes and a torsion axis; chambers and a moment
    with actuation "chambers") follows the same short ramp to the same chain and static tips."""
    from softrod.somo import SomoTrajectory, follow_trajectory

    traj = SomoTrajectory(np.array([0.0, 0.1]), np.array([[0.0, 0.0, 0.0], [2.0, -1.0, 0.5]]))
    runs = [
        follow_trajectory(
            import_somo(DATA / "manipulator_test_def.yaml", actuation=a),
            traj,
            t_end=0.2,
            sample_dt=0.1,
        )  # fmt: skip
        for a in ("moments", "chambers")
    ]
    assert runs[0].steps == runs[1].steps == 100
    np.testing.assert_allclose(runs[0].tip_chain, runs[1].tip_chain, rtol=0, atol=1e-12)
    np.testing.assert_allclose(runs[0].tip_static, runs[1].tip_static, rtol=0, atol=1e-12)
    assert np.linalg.norm(runs[0].tip_static[-1] - runs[0].tip_static[0]) > 0.1 * runs[0].length
