"""Length (position) control of elastic pull-only tendons: round trips with tension control."""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from reference.robots import soft_rod_dict, tdcr3_dict

#: Tensions recovered from lengths: both solves converge to 1e-12 (scaled), and the length
#: residual tau - k (l - L) amplifies the 1e-16 relative round-off of l by k ~ 1e4 N/m.
TENSION_ATOL = 1e-8  # [N]
#: Shapes of the two solves: the same equilibrium to solver tolerance.
SHAPE_ATOL = 1e-10  # [m]
SOLVE_RTOL = 1e-12

LOADS = {"tip_force": [0.05, -0.1, 0.02], "gravity": [0.0, 0.0, -9.81]}
CASES = {
    "tdcr3_kirchhoff": (
        lambda: tdcr3_dict("kirchhoff"),
        [2.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.3, 0.0, 1.0],
    ),
    "tdcr3_cosserat": (
        lambda: tdcr3_dict("cosserat"),
        [1.0, 0.2, 0.0, 0.7, 0.0, 0.4, 0.0, 0.9, 0.1],
    ),
    "soft_rod_cosserat": (lambda: soft_rod_dict("cosserat"), [2.0, 0.0, 1.2, 1.5, 0.8]),
}


def _stiffness(robot: dict) -> np.ndarray:
    return np.array([t["stiffness"] for seg in robot["segments"] for t in seg.get("tendons", [])])


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip(name):
    """tensions -> path lengths -> commanded lengths l - tau/k -> the same tensions and shape;
    the zero-tension tendons are commanded 1 mm slack and come back with exactly zero."""
    make, tensions = CASES[name]
    robot = make()
    tensions = np.asarray(tensions)
    k = _stiffness(robot)
    by_tension = softrod.solve_static(robot, tensions, rtol=SOLVE_RTOL, **LOADS)
    assert by_tension.success
    lengths = by_tension.tendon_length - tensions / k
    lengths[tensions == 0] += 1e-3
    by_length = softrod.solve_static(robot, lengths=lengths, rtol=SOLVE_RTOL, **LOADS)
    assert by_length.success, by_length.message
    np.testing.assert_allclose(by_length.tendon_tension, tensions, rtol=0, atol=TENSION_ATOL)
    np.testing.assert_allclose(by_length.positions, by_tension.positions, rtol=0, atol=SHAPE_ATOL)
    # Path lengths reported under length control obey the tendon law.
    stretch = by_length.tendon_length - lengths
    np.testing.assert_allclose(
        by_length.tendon_tension, k * np.maximum(stretch, 0.0), rtol=0, atol=TENSION_ATOL
    )


def _slack_case(name: str):
    make, tensions = CASES[name]
    robot = make()
    tensions = np.asarray(tensions)
    by_tension = softrod.solve_static(robot, tensions, rtol=SOLVE_RTOL, **LOADS)
    lengths = by_tension.tendon_length - tensions / _stiffness(robot)
    lengths[tensions == 0] += 1e-3
    by_length = softrod.solve_static(robot, lengths=lengths, rtol=SOLVE_RTOL, **LOADS)
    assert by_length.success
    return robot, tensions, by_length


@pytest.mark.parametrize("name", sorted(CASES))
def test_slack_tendons_have_zero_tension(name):
    """Slack tendons (1 mm longer than their path) report exactly zero tension, never a
    round-off value of either sign (DESIGN.md: tendons only pull)."""
    _, tensions, by_length = _slack_case(name)
    slack = tensions == 0
    assert np.all(by_length.tendon_tension[slack] == 0.0), by_length.tendon_tension[slack]
    assert np.all(by_length.tendon_tension >= 0.0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_length_result_is_valid_tension_input(name):
    """The tensions of a length-controlled result drive the same shape under tension control
    (they must pass the `tensions >= 0` input check)."""
    robot, _, by_length = _slack_case(name)
    again = softrod.solve_static(robot, by_length.tendon_tension, rtol=SOLVE_RTOL, **LOADS)
    np.testing.assert_allclose(again.positions, by_length.positions, rtol=0, atol=SHAPE_ATOL)


def test_all_slack_is_the_unloaded_shape(tdcr3):
    """Every tendon longer than its path: no tension, the shape of the loads alone."""
    straight = np.repeat([0.062, 0.124, 0.186], 3)
    sol = softrod.solve_static(tdcr3, lengths=straight + 0.01, **LOADS)
    assert sol.success
    np.testing.assert_array_equal(sol.tendon_tension, 0.0)
    free = softrod.solve_static(tdcr3, np.zeros(9), **LOADS)
    np.testing.assert_allclose(sol.positions, free.positions, rtol=0, atol=SHAPE_ATOL)


def test_pcc_length_control_matches_shooting(tdcr3):
    """Without external loads and precurvature, constant curvature is exact, so both methods
    must solve the same tensions from the same commanded lengths."""
    straight = np.repeat([0.062, 0.124, 0.186], 3)
    lengths = straight - np.array([2e-4, 0.0, 1e-4, 0.0, 1e-4, -2e-3, 5e-5, 0.0, 1e-4])
    shoot = softrod.solve_static(tdcr3, lengths=lengths, rtol=SOLVE_RTOL)
    pcc = softrod.solve_static(tdcr3, lengths=lengths, method="pcc")
    assert shoot.success and pcc.success
    np.testing.assert_allclose(pcc.tendon_tension, shoot.tendon_tension, rtol=0, atol=TENSION_ATOL)
    # The default RK4 grid reproduces the arcs to ~1e-12 m here.
    np.testing.assert_allclose(pcc.positions, shoot.positions, rtol=0, atol=1e-9)
