"""Moment actuators (issue 20): a uniform internal body-frame moment over a segment, SoMo's
torsion axis included, in the static solver, its tip Jacobian, the CLI and the MuJoCo chain."""

from __future__ import annotations

import math

import numpy as np
import pytest

import softrod
from reference.differences import central_columns
from reference.robots import rod_dict
from softrod.description import DescriptionError, check_actuation, load_robot
from softrod.rods import compile_model, solve_static, tip_jacobian

#: Closed-form tolerance (issue 20): tip [m] and twist angle [rad].
CLOSED_TOL = 1e-9
#: tip_jacobian vs central differences of solve_static, relative (issue 20).
JAC_RTOL = 1e-6
#: Static solver vs the MuJoCo chain at N = 50 links: tip as a fraction of L, twist [rad].
CHAIN_TOL_L = 1e-3
#: RK4 steps for the closed forms: a rotation at constant strain is integrated to O(h^4), 9e-9
#: rad of twist at the default 32 steps over 0.76 rad, 4e-11 at 128.
STEPS = 128

L = 0.1
E = 5.0e6
RADIUS = 0.001
EI = E * math.pi * RADIUS**4 / 4
GJ = E / 3.0 * math.pi * RADIUS**4 / 2  # poisson 0.5


def _rod(segments: list[dict], model: str = "kirchhoff") -> softrod.RobotSpec:
    return load_robot(
        rod_dict("moment_rod", segments, youngs_modulus=E, radius=RADIUS, model=model)
    )


def _twist(R: np.ndarray) -> float:
    """Rotation angle of R about e_z (R a pure twist) [rad]."""
    return math.atan2(R[1, 0], R[0, 0])


@pytest.fixture(scope="module")
def twist_bend():
    """Segment 0 with a torsion and a bending actuator, segment 1 without."""
    return _rod(
        [
            {
                "length": L,
                "moment_actuators": [{"moment": [0, 0, 1]}, {"moment": [0, 1, 0]}],
            },
            {"length": 0.5 * L},
        ]
    )


def test_torsion_actuator_twists_by_tau_L_over_GJ(twist_bend):
    tau = 2e-5  # twist 0.68 rad
    sol = solve_static(twist_bend, moments=[tau, 0.0], steps=STEPS)
    assert sol.success
    np.testing.assert_allclose(sol.tip_position, [0, 0, 1.5 * L], atol=CLOSED_TOL)
    assert abs(_twist(sol.rotations[-1]) - tau * L / GJ) < CLOSED_TOL
    # The material carries tau e_z inside the segment and nothing beyond (no external load).
    mid = np.argmin(np.abs(sol.s - 0.5 * L))
    np.testing.assert_allclose(sol.internal_moment[mid], [0, 0, tau], atol=1e-15)
    np.testing.assert_allclose(sol.internal_moment[-1], 0.0, atol=1e-15)


def test_bending_actuator_bends_by_tau_L_over_EI(twist_bend):
    tau = 5e-6
    theta = tau * L / EI  # about body y: the tip turns toward y x e_z = +x
    sol = solve_static(twist_bend, moments=[0.0, tau], steps=STEPS)
    assert sol.success
    rad = L / theta
    arc = np.array([(1 - math.cos(theta)) * rad, 0.0, math.sin(theta) * rad])
    tangent = np.array([math.sin(theta), 0.0, math.cos(theta)])
    np.testing.assert_allclose(sol.tip_position, arc + 0.5 * L * tangent, atol=CLOSED_TOL)
    # The same arc as the pcc method (load-free).
    pcc = solve_static(twist_bend, moments=[0.0, tau], method="pcc", steps=STEPS)
    np.testing.assert_allclose(pcc.tip_position, sol.tip_position, atol=CLOSED_TOL)


@pytest.mark.parametrize("control", ["tension", "length"])
def test_tip_jacobian_moment_columns_match_central_differences(control):
    robot = _rod(
        [
            {
                "length": L,
                "disks": 2,
                "disk_radius": 0.004,
                "tendons": [{"offset": 0.003, "angle_deg": 30, "stiffness": 200.0}],
                "moment_actuators": [{"moment": [0, 0, 1]}, {"moment": [1, 0.5, 0]}],
            },
            {"length": 0.5 * L, "moment_actuators": [{"moment": [0, 1, 0.3]}]},
        ],
        model="cosserat",
    )
    model = compile_model(robot)
    tau = np.array([2e-5, 1e-5, -5e-6])
    kw: dict = {"gravity": [0, -1.0, 0]}
    if control == "tension":
        kw["tensions"] = [0.05]
    else:
        kw["lengths"] = [0.999 * L]
    sol = solve_static(model, moments=tau, **kw)
    assert sol.success
    J = tip_jacobian(model, sol, moments=True)
    assert J.shape == (3, 4)
    fd = central_columns(
        lambda x: solve_static(model, moments=x, guess=sol, rtol=1e-12, **kw).tip_position,
        tau,
        1e-5 * np.abs(tau),
    )
    assert np.abs(J[:, 1:] - fd).max() <= JAC_RTOL * np.abs(fd).max()
    np.testing.assert_allclose(J[:, :1], tip_jacobian(model, sol), rtol=1e-12, atol=0)


def test_bad_moment_inputs_name_the_field(twist_bend):
    with pytest.raises(DescriptionError, match=r"moments must have 2 values, got 3"):
        check_actuation(twist_bend, moments=[0, 0, 0])
    with pytest.raises(ValueError, match=r"moments\[1\] must be finite, got nan"):
        solve_static(twist_bend, moments=[0.0, float("nan")])
    with pytest.raises(ValueError, match=r"moments must have 0 values"):
        solve_static(_rod([{"length": L}]), moments=[1.0])
    with pytest.raises(
        DescriptionError, match=r"segments\[0\]\.moment_actuators\[0\]\.torque: extra inputs"
    ):
        _rod([{"length": L, "moment_actuators": [{"moment": [0, 0, 1], "torque": 1}]}])


def test_mujoco_chain_moment_actuators_match_the_static_solver(twist_bend):
    import mujoco

    from softrod.mujoco import build_spec, chain_info, static_equilibrium

    info = chain_info(twist_bend, links=50)
    assert info.moment_actuators == ("moment_0", "moment_1")
    model = build_spec(twist_bend, links=50, gravity=(0.0, 0.0, 0.0)).compile()
    data = mujoco.MjData(model)
    tau = [2e-5, 5e-6]
    data.ctrl[[model.actuator(a).id for a in info.moment_actuators]] = tau
    assert static_equilibrium(model, data).success
    sol = solve_static(twist_bend, moments=tau, steps=STEPS)
    assert np.linalg.norm(data.site("tip").xpos - sol.tip_position) < CHAIN_TOL_L * 1.5 * L
    # Twist alone: the chain's torsion hinges carry tau each, the tip turns by tau L / GJ.
    data.ctrl[[model.actuator(a).id for a in info.moment_actuators]] = [tau[0], 0.0]
    assert static_equilibrium(model, data).success
    R = data.site("tip").xmat.reshape(3, 3)
    assert abs(_twist(R) - tau[0] * L / GJ) < CHAIN_TOL_L


def test_cli_moments(twist_bend, tmp_path, capsys):
    import json

    from softrod.cli import main

    path = tmp_path / "moment_rod.yaml"
    path.write_text(twist_bend.to_yaml())
    assert main(["solve", str(path), "--moments", "2e-5,5e-6", "--json"]) == 0
    out, _ = capsys.readouterr()
    ref = solve_static(twist_bend, moments=[2e-5, 5e-6])
    np.testing.assert_allclose(json.loads(out)["tip_position"], ref.tip_position, atol=1e-12)
    for bad in ("1,2,3", "1,nan"):
        assert main(["solve", str(path), "--moments", bad]) == 2
        _, err = capsys.readouterr()
        assert len(err.strip().splitlines()) == 1 and "--moments" in err
