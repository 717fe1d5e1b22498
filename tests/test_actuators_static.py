"""Chambers in the exact static solver (issue 20): internal tendons at negative tension."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

import softrod
from reference.robots import rod_dict
from softrod.cli import main
from softrod.description import load_robot
from softrod.mujoco import PointLoad, build_spec, chain_info, static_equilibrium
from softrod.rods import compile_model, solve_static, tip_jacobian

#: Closed-form tip tolerance [m] (issue 20): the RK4 error of a constant-curvature arc is ~0.
ARC_TOL = 1e-9
#: Static solver vs the MuJoCo chain at N = 50 links, as a fraction of L (issue 20).
CHAIN_TOL_L = 1e-3
LINKS = 50

L = 0.2
E = 1.0e6
RADIUS = 0.005
EI = E * math.pi * RADIUS**4 / 4


def _rod(
    segments: list[dict], model: str = "kirchhoff", youngs_modulus: float = E
) -> softrod.RobotSpec:
    return load_robot(
        rod_dict(
            "pneumatic_rod", segments, youngs_modulus=youngs_modulus, radius=RADIUS, model=model
        )
    )


def _arc_tip(theta: float, length: float, toward: np.ndarray) -> np.ndarray:
    """Tip of a constant-curvature arc of `length` turned by theta in the plane (toward, z)."""
    if theta == 0.0:
        return np.array([0.0, 0.0, length])
    rad = length / theta
    return (1.0 - math.cos(theta)) * rad * toward + math.sin(theta) * rad * np.array([0, 0, 1.0])


@pytest.mark.parametrize("angle_deg", [0.0, 90.0, 210.0])
def test_chamber_uniform_moment_gives_the_constant_curvature_arc(angle_deg):
    area, d, p = 1e-4, 0.004, 5e3
    robot = _rod([{"length": L, "chambers": [{"area": area, "offset": d, "angle_deg": angle_deg}]}])
    sol = solve_static(robot, pressures=[p])
    assert sol.success
    a = math.radians(angle_deg)
    # A pressurised chamber lengthens its side: the segment bends away from it.
    away = -np.array([math.cos(a), math.sin(a), 0.0])
    kappa = p * area * d / EI
    np.testing.assert_allclose(np.linalg.norm(sol.curvature, axis=1), kappa, rtol=1e-9)
    assert np.linalg.norm(sol.tip_position - _arc_tip(kappa * L, L, away)) < ARC_TOL
    # No tendons: the user-facing tendon outputs stay empty.
    assert sol.tendon_tension.shape == (0,) and sol.tendon_length.shape == (0,)


def test_chamber_acts_on_its_own_segment_only():
    """A chamber in the second segment bends it alone (the cancelling internal tendon)."""
    area, d, p = 1e-4, 0.004, 4e3
    robot = _rod(
        [
            {"length": L},
            {"length": L, "chambers": [{"area": area, "offset": d, "angle_deg": 0.0}]},
        ]
    )
    # 32 RK4 steps per segment, as in the single-segment check (the default spreads 32 over both).
    sol = solve_static(robot, pressures=[p], steps=64)
    kappa = p * area * d / EI
    arc = _arc_tip(kappa * L, L, np.array([-1.0, 0.0, 0.0]))
    assert np.linalg.norm(sol.tip_position - (np.array([0.0, 0.0, L]) + arc)) < ARC_TOL
    first = sol.s <= L
    assert np.abs(sol.curvature[first & (sol.s < L - 1e-12)]).max() < 1e-9 * kappa


def test_chamber_and_tendon_with_equal_force_cancel():
    """Pressure force p A on a chamber and tension p A on a tendon at the same place cancel in
    bending (Kirchhoff) and the tendon's tension and length are what the user sees."""
    area, d, p = 1e-4, 0.004, 3e3
    seg = {
        "length": L,
        "disks": 4,
        "disk_radius": 0.01,
        "chambers": [{"area": area, "offset": d, "angle_deg": 45.0}],
        "tendons": [{"offset": d, "angle_deg": 45.0}],
    }
    robot = _rod([seg])
    sol = solve_static(robot, tensions=[p * area], pressures=[p])
    np.testing.assert_allclose(sol.tip_position, [0.0, 0.0, L], atol=ARC_TOL)
    assert sol.tendon_tension.tolist() == [p * area]
    assert sol.tendon_length.shape == (1,)
    # The tip Jacobian keeps the real tendons' columns; pressure columns when asked.
    assert tip_jacobian(robot, sol).shape == (3, 1)
    assert tip_jacobian(robot, sol, pressures=True).shape == (3, 2)
    assert tip_jacobian(robot, solve_static(robot, tensions=[p * area])).shape == (3, 1)


def test_calibrated_area_and_axial_force():
    """A_eff(p) scales the chamber force; on a Cosserat rod a centred chamber stretches it."""
    p, area, c1 = 2e3, 1e-4, -1e-5
    robot = _rod(
        [{"length": L, "chambers": [{"area": area, "offset": 0.0, "area_polynomial": [c1]}]}],
        model="cosserat",
    )
    sol = solve_static(robot, pressures=[p])
    force = p * area * (1 + c1 * p)
    stretch = sol.tip_position[2] - L
    assert stretch == pytest.approx(force * L / (E * math.pi * RADIUS**2), rel=1e-9)


def _pneumatic_robot() -> softrod.RobotSpec:
    return _rod(
        [
            {
                "length": 0.1,
                "disks": 4,
                "disk_radius": 0.01,
                "disk_mass": 0.0005,
                "tendons": [{"offset": 0.008, "angle_deg": a} for a in (0.0, 120.0, 240.0)],
            },
            {
                "length": 0.1,
                "disks": 4,
                "disk_radius": 0.01,
                "disk_mass": 0.0005,
                "chambers": [
                    {"area": 5e-5, "offset": 0.006, "angle_deg": 90.0},
                    {"area": 5e-5, "offset": 0.006, "angle_deg": 270.0},
                ],
            },
        ],
        # Stiffer than the closed-form rod: the chain's own error under gravity (its lumped
        # mass, ~2e-4 L at N = 50 for the softer rod) stays well inside the 0.1 % L checked.
        youngs_modulus=3 * E,
    )


def test_chambers_tendons_and_tip_load_match_the_mujoco_chain():
    robot = _pneumatic_robot()
    tensions, pressures = [0.3, 0.0, 0.1], [1.8e4, 3e3]
    gravity, tip_force = (-9.81, 0.0, 0.0), np.array([0.0, 0.01, 0.0])
    sol = softrod.solve_static(
        robot, tensions=tensions, pressures=pressures, gravity=gravity, tip_force=tip_force
    )
    assert sol.success
    model = build_spec(robot, links=LINKS, gravity=gravity).compile()
    data = mujoco.MjData(model)
    info = chain_info(robot, links=LINKS, gravity=gravity)
    # Controls: the tendons' tensions, then the chambers' pressures.
    data.ctrl[:] = [*tensions, *pressures]
    body, point = info.body_point(model, robot.total_length)
    res = static_equilibrium(model, data, [PointLoad(body, point, tip_force, np.zeros(3))])
    assert res.success
    err = np.linalg.norm(data.site("tip").xpos - sol.tip_position)
    assert err < CHAIN_TOL_L * robot.total_length
    # Gravity and the chambers both matter here: each moves the tip by > 5 % L on its own.
    loads = {"tensions": tensions, "tip_force": tip_force}
    no_gravity = softrod.solve_static(robot, pressures=pressures, **loads)
    no_pressure = softrod.solve_static(robot, gravity=gravity, **loads)
    for other in (no_gravity, no_pressure):
        assert np.linalg.norm(other.tip_position - sol.tip_position) > 0.05 * robot.total_length


def test_no_chambers_and_zero_pressure_change_nothing():
    robot = _pneumatic_robot()
    model = compile_model(robot)
    assert model.n_tendons == 3 and model.n_chambers == 2
    # Segment 1's chambers: own tendon plus the cancelling one over segment 0.
    assert model.with_chambers.n_tendons == 3 + 4
    plain = solve_static(robot, tensions=[0.6, 0.0, 0.0], gravity=[0, 0, -9.81])
    zero = solve_static(robot, tensions=[0.6, 0.0, 0.0], gravity=[0, 0, -9.81], pressures=[0, 0])
    np.testing.assert_array_equal(plain.positions, zero.positions)
    # Warm starts across pressures keep working.
    warm = solve_static(robot, tensions=[0.6, 0.0, 0.0], pressures=[1.5e4, 0], guess=plain)
    cold = solve_static(robot, tensions=[0.6, 0.0, 0.0], pressures=[1.5e4, 0])
    np.testing.assert_allclose(warm.tip_position, cold.tip_position, atol=1e-9)


@pytest.mark.parametrize(
    ("pressures", "match"),
    [
        ([1e3], r"pressures must have 2 values"),
        ([1e3, math.nan], r"pressures\[1\] must be finite"),
        ([3e5, 0.0], r"pressures\[0\] must be within segments\[1\]\.chambers\[0\]"),
    ],
)
def test_bad_pressures_name_the_input(pressures, match):
    data = _pneumatic_robot().to_dict()
    data["segments"][1]["chambers"][0]["pressure_range"] = [0.0, 2e5]
    with pytest.raises(ValueError, match=match):
        softrod.solve_static(load_robot(data), tensions=[0, 0, 0], pressures=pressures)


def test_pressures_with_length_control_are_solved():
    """Once refused; now the length law is solved around tension control
    (tests/test_pressure_statics.py checks it)."""
    data = _pneumatic_robot().to_dict()
    for t in data["segments"][0]["tendons"]:
        t["stiffness"] = 2e4
    robot = load_robot(data)
    sol = solve_static(robot, lengths=[0.1, 0.1, 0.1], pressures=[1e3, 0.0])
    assert sol.success and sol.tendon_tension.shape == (3,)


def test_cli_pressures(tmp_path, capsys):
    path = tmp_path / "pneumatic.yaml"
    path.write_text(_pneumatic_robot().to_yaml())
    code = main(["solve", str(path), "--pressures", "6000,1000", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    ref = solve_static(_pneumatic_robot(), pressures=[6e3, 1e3])
    assert '"tip_position"' in out
    import json

    np.testing.assert_allclose(json.loads(out)["tip_position"], ref.tip_position, atol=1e-12)
    code = main(["solve", str(path), "--pressures", "1,2,3"])
    _, err = capsys.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "--pressures" in err
