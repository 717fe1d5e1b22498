"""Pressures everywhere in the exact static solver (issue 20): the tip Jacobian's pressure
columns, pressures with length control, and bad pressure inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import softrod
from reference.differences import central_columns
from reference.robots import rod_dict
from softrod.description import load_robot
from softrod.rods import solve_static, tip_jacobian

#: Analytic Jacobian columns vs central finite differences of solve_static (issue 20).
FD_RTOL = 1e-6
#: Closed-form and cross-mode tip tolerance [m] (issue 20).
TIP_TOL = 1e-9
#: Relative finite-difference step (central differences: truncation ~ step^2, round-off of
#: the 1e-13 solves ~ 1e-13 / step; 1e-4 keeps both near 1e-9).
FD_STEP = 1e-4

L = 0.2
E = 3.0e6
RADIUS = 0.005
EI = E * math.pi * RADIUS**4 / 4
GRAVITY = (-9.81, 0.0, 0.0)


def _robot(model: str = "kirchhoff", stiffness: float | None = 2e4) -> softrod.RobotSpec:
    """Two segments: three tendons in the first, two chambers (one calibrated) in the second."""
    tendon = {} if stiffness is None else {"stiffness": stiffness}
    segments = [
        {
            "length": 0.1,
            "disks": 4,
            "disk_radius": 0.01,
            "disk_mass": 0.0005,
            "tendons": [{"offset": 0.008, "angle_deg": a, **tendon} for a in (0.0, 120.0, 240.0)],
        },
        {
            "length": 0.1,
            "disks": 4,
            "disk_radius": 0.01,
            "disk_mass": 0.0005,
            "chambers": [
                {"area": 5e-5, "offset": 0.006, "angle_deg": 90.0},
                {
                    "area": 5e-5,
                    "offset": 0.006,
                    "angle_deg": 270.0,
                    "area_polynomial": [-2e-6, 1e-11],
                },
            ],
        },
    ]
    return load_robot(
        rod_dict("pneumatic_tdcr", segments, youngs_modulus=E, radius=RADIUS, model=model)
    )


def _assert_columns(analytic: np.ndarray, fd: np.ndarray) -> None:
    for k in range(fd.shape[1]):
        err = np.abs(analytic[:, k] - fd[:, k]).max()
        assert err <= FD_RTOL * np.abs(fd[:, k]).max(), (k, err)


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_pressure_columns_match_finite_differences_under_tension_control(model):
    robot = _robot(model)
    tensions, pressures = np.array([0.3, 0.02, 0.1]), np.array([1.8e4, 6e3])
    sol = solve_static(robot, tensions=tensions, pressures=pressures, gravity=GRAVITY)
    assert sol.success
    J = tip_jacobian(robot, sol, pressures=True)
    assert J.shape == (3, 5)
    # Without pressures=True: the tendon columns alone, now also at nonzero pressure.
    np.testing.assert_array_equal(tip_jacobian(robot, sol), J[:, :3])

    def tip(p: np.ndarray) -> np.ndarray:
        return solve_static(
            robot, tensions=tensions, pressures=p, gravity=GRAVITY, guess=sol, rtol=1e-13
        ).tip_position

    _assert_columns(J[:, 3:], central_columns(tip, pressures, FD_STEP * pressures))

    def tip_t(t: np.ndarray) -> np.ndarray:
        return solve_static(
            robot, tensions=t, pressures=pressures, gravity=GRAVITY, guess=sol, rtol=1e-13
        ).tip_position

    _assert_columns(J[:, :3], central_columns(tip_t, tensions, np.full(3, 1e-4)))


def test_pressure_and_length_columns_match_finite_differences_under_length_control():
    robot = _robot()
    pressures = np.array([1.5e4, 3e3])
    rest = solve_static(robot).tendon_length
    # Tendon 0 pulled 1 mm (taut), the others left long (slack under the pressures' bend).
    lengths = rest - np.array([1e-3, -1e-3, -1e-3])
    sol = solve_static(robot, lengths=lengths, pressures=pressures, gravity=GRAVITY)
    assert sol.success and sol.tendon_tension[0] > 0
    assert sol.tendon_tension[1] == 0.0 and sol.tendon_tension[2] == 0.0
    J = tip_jacobian(robot, sol, pressures=True)

    def tip(p: np.ndarray) -> np.ndarray:
        return solve_static(
            robot, lengths=lengths, pressures=p, gravity=GRAVITY, guess=sol, rtol=1e-13
        ).tip_position

    _assert_columns(J[:, 3:], central_columns(tip, pressures, FD_STEP * pressures))

    def tip_l(lv: np.ndarray) -> np.ndarray:
        return solve_static(
            robot, lengths=lv, pressures=pressures, gravity=GRAVITY, guess=sol, rtol=1e-13
        ).tip_position

    fd = central_columns(tip_l, lengths, np.full(3, 1e-7))
    _assert_columns(J[:, :1], fd[:, :1])
    # A slack tendon's length does not move the tip.
    np.testing.assert_array_equal(J[:, 1:3], 0.0)
    assert np.abs(fd[:, 1:3]).max() < 1e-12


def _one_segment(stiffness: float, tendon_offset: float) -> softrod.RobotSpec:
    segments = [
        {
            "length": L,
            "disks": 4,
            "disk_radius": 0.01,
            "chambers": [{"area": 1e-4, "offset": 0.004}],
            "tendons": [{"offset": tendon_offset, "angle_deg": 0.0, "stiffness": stiffness}],
        }
    ]
    return load_robot(
        rod_dict("chamber_and_tendon", segments, youngs_modulus=E, radius=RADIUS, density=None)
    )


def _arc_tip(kappa: float) -> np.ndarray:
    """Tip of a constant-curvature arc of length L bending toward -x (chamber at +x)."""
    theta = kappa * L
    return np.array([-(1.0 - math.cos(theta)) / kappa, 0.0, math.sin(theta) / kappa])


def test_length_control_with_pressure_closed_forms():
    area, d, p, k, d_t = 1e-4, 0.004, 1e4, 5e3, 0.008
    robot = _one_segment(k, d_t)
    kappa_free = p * area * d / EI
    # A tendon given more length than its path needs stays slack: the chamber's arc p A d / EI.
    slack = solve_static(robot, lengths=[1.1 * L], pressures=[p])
    assert slack.success and slack.tendon_tension.tolist() == [0.0]
    assert np.linalg.norm(slack.tip_position - _arc_tip(kappa_free)) < TIP_TOL
    # A taut tendon on the chamber's side (the outer side, path L (1 + kappa d_t)) pulls
    # back with tau = k (L (1 + kappa d_t) - L_cmd): EI kappa = p A d - tau d_t, linear in kappa.
    L_cmd = L * (1.0 + 0.2 * kappa_free * d_t)
    kappa = (p * area * d - k * d_t * (L - L_cmd)) / (EI + k * L * d_t**2)
    taut = solve_static(robot, lengths=[L_cmd], pressures=[p])
    assert taut.success
    tau = k * (L * (1.0 + kappa * d_t) - L_cmd)
    assert 0.0 < kappa < kappa_free and tau > 0.0
    assert taut.tendon_tension[0] == pytest.approx(tau, rel=1e-9)
    np.testing.assert_allclose(np.linalg.norm(taut.curvature, axis=1), kappa, rtol=1e-9)
    assert np.linalg.norm(taut.tip_position - _arc_tip(kappa)) < TIP_TOL
    assert taut.stable is None  # as for every length-controlled solve


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_length_control_agrees_with_tension_control_at_its_tensions(model):
    robot = _robot(model)
    pressures = [2e4, 0.0]
    rest = solve_static(robot).tendon_length
    lengths = rest - np.array([1.5e-3, 0.5e-3, -1e-3])
    loads = {"pressures": pressures, "gravity": GRAVITY, "tip_force": [0.0, 0.01, 0.0]}
    sol = solve_static(robot, lengths=lengths, **loads)
    assert sol.success and sol.inputs.lengths is not None
    assert sol.tendon_tension.shape == (3,) and sol.tendon_length.shape == (3,)
    # The tensions satisfy the length law of each tendon ...
    stretch = np.maximum(sol.tendon_length - lengths, 0.0)
    np.testing.assert_allclose(sol.tendon_tension, 2e4 * stretch, rtol=1e-9, atol=1e-12)
    # ... and tension control at those tensions is the same equilibrium.
    ref = solve_static(robot, tensions=sol.tendon_tension, **loads)
    assert np.abs(ref.positions - sol.positions).max() < TIP_TOL
    # Warm starts: from the answer (no step) and from a nearby pressure.
    again = solve_static(robot, lengths=lengths, guess=sol, **loads)
    assert np.linalg.norm(again.tip_position - sol.tip_position) < TIP_TOL
    near = solve_static(robot, lengths=lengths, **{**loads, "pressures": [1.8e4, 0.0]})
    warm = solve_static(robot, lengths=lengths, guess=near, **loads)
    assert np.linalg.norm(warm.tip_position - sol.tip_position) < TIP_TOL


def test_bad_pressures_name_the_input():
    robot = _robot()
    rest = solve_static(robot).tendon_length
    for kwargs in ({"tensions": [0, 0, 0]}, {"lengths": rest}):
        with pytest.raises(ValueError, match=r"pressures must have 2 values, got 3"):
            solve_static(robot, pressures=[1e3, 0.0, 0.0], **kwargs)
        with pytest.raises(ValueError, match=r"pressures\[1\] must be finite"):
            solve_static(robot, pressures=[1e3, math.inf], **kwargs)
    with pytest.raises(ValueError, match="pressures with length control need method 'shooting'"):
        solve_static(robot, lengths=rest, pressures=[1e3, 0.0], method="pcc")
    # A chamber beyond the disk radius is refused when the description loads.
    data = robot.to_dict()
    data["segments"][1]["chambers"][0]["offset"] = 0.011
    with pytest.raises(ValueError, match=r"segments\[1\]\.chambers\[0\]\.offset must be <="):
        load_robot(data)
