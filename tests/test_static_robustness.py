"""Warm starts, failed solves and input errors of `solve_static`."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import softrod
from reference.robots import plain_rod_dict, tdcr3_dict
from softrod.rods import shooting_eval

#: Warm and cold solves of the same problem land on the same equilibrium to solver tolerance
#: (rtol 1e-12 on the scaled residual ~ 1e-13 m at the tip).
SAME_ANSWER_TOL = 1e-10  # [m]
SOLVE_RTOL = 1e-12
#: Scaled shooting residual of a returned shape: 10x the solver's default rtol (1e-10).
EQUILIBRIUM_RESIDUAL_TOL = 1e-9

TENSIONS = [2.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.3, 0.0, 1.0]
LOADS = {
    "tip_force": [0.05, -0.1, 0.02],
    "tip_moment": [0.002, 0.0, -0.001],
    "distributed_force": [0.0, 0.3, 0.0],
    "gravity": [0.0, 0.0, -9.81],
}
#: A tip force no thin NiTi rod carries: 1 MN.
ABSURD_FORCE = [1e6, 0.0, 0.0]

ARRAY_FIELDS = (
    "s",
    "positions",
    "rotations",
    "curvature",
    "strain",
    "internal_force",
    "internal_moment",
    "tendon_tension",
    "tendon_length",
    "base_moment",
)


def _assert_all_finite(sol: softrod.StaticResult) -> None:
    for name in ARRAY_FIELDS:
        assert np.all(np.isfinite(getattr(sol, name))), name
    assert math.isfinite(sol.residual) and math.isfinite(sol.load_scale)


# ---------------------------------------------------------------------------------------------
# Warm start


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_warm_start_fewer_iterations_same_answer(model):
    robot = tdcr3_dict(model)
    first = softrod.solve_static(robot, TENSIONS, rtol=SOLVE_RTOL, **LOADS)
    # A neighbouring problem (as in a control loop): 5% more tip force, one tension changed.
    loads = dict(LOADS, tip_force=[0.0525, -0.105, 0.021])
    tensions = list(TENSIONS)
    tensions[4] = 1.6
    cold = softrod.solve_static(robot, tensions, rtol=SOLVE_RTOL, **loads)
    warm = softrod.solve_static(robot, tensions, rtol=SOLVE_RTOL, guess=first, **loads)
    assert cold.success and warm.success
    assert warm.nit < cold.nit
    assert warm.nfev < cold.nfev
    np.testing.assert_allclose(warm.positions, cold.positions, rtol=0, atol=SAME_ANSWER_TOL)


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_warm_start_from_the_answer_needs_no_iteration(model):
    """Re-solving an unchanged problem from its own equilibrium (a control loop holding its
    input) must return at once: the guess already satisfies the residual."""
    robot = tdcr3_dict(model)
    first = softrod.solve_static(robot, TENSIONS, **LOADS)
    again = softrod.solve_static(robot, TENSIONS, guess=first, **LOADS)
    assert again.success
    assert again.nit == 0, f"nit={again.nit}, residual {first.residual:.1e} at the guess"
    np.testing.assert_allclose(again.positions, first.positions, rtol=0, atol=SAME_ANSWER_TOL)


def test_warm_start_length_control(tdcr3):
    lengths = np.repeat([0.062, 0.124, 0.186], 3) - np.array(
        [2e-4, 0.0, 1e-4, 0.0, 1e-4, -2e-3, 5e-5, 0.0, 1e-4]
    )
    first = softrod.solve_static(tdcr3, lengths=lengths, rtol=SOLVE_RTOL, **LOADS)
    moved = lengths - 2e-5
    cold = softrod.solve_static(tdcr3, lengths=moved, rtol=SOLVE_RTOL, **LOADS)
    warm = softrod.solve_static(tdcr3, lengths=moved, rtol=SOLVE_RTOL, guess=first, **LOADS)
    assert cold.success and warm.success
    assert warm.nit <= cold.nit
    np.testing.assert_allclose(warm.tendon_tension, cold.tendon_tension, rtol=0, atol=1e-8)
    np.testing.assert_allclose(warm.positions, cold.positions, rtol=0, atol=SAME_ANSWER_TOL)


def test_guess_for_another_robot_is_rejected(tdcr3):
    other = softrod.solve_static(plain_rod_dict(), tip_force=[0.1, 0.0, 0.0])
    with pytest.raises(ValueError, match="guess"):
        softrod.solve_static(tdcr3, TENSIONS, guess=other)


# ---------------------------------------------------------------------------------------------
# Failed solves


@pytest.mark.parametrize("force", [ABSURD_FORCE, [1e300, -1e300, 0.0]])
def test_absurd_load_fails_cleanly(tdcr3, force):
    sol = softrod.solve_static(tdcr3, TENSIONS, tip_force=force)
    assert sol.success is False
    assert sol.status != 0
    assert "did not converge" in sol.message
    assert 0.0 <= sol.load_scale < 1.0
    _assert_all_finite(sol)
    assert sol.positions.shape == (sol.s.shape[0], 3)


def test_max_iter_zero_is_consistent(tdcr3):
    """max_iter=0 allows no direct Newton step: the result must still be either the true
    equilibrium (reached by load continuation) or a reported, finite failure."""
    big = dict(LOADS, tip_force=[0.3, -0.2, 0.0])
    sol = softrod.solve_static(tdcr3, TENSIONS, max_iter=0, **big)
    _assert_all_finite(sol)
    if sol.success:
        ref = softrod.solve_static(tdcr3, TENSIONS, **big)
        np.testing.assert_allclose(sol.positions, ref.positions, rtol=0, atol=1e-8)
    else:
        assert sol.status != 0 and sol.message


@pytest.mark.parametrize("force", [30.0, 100.0, 1e3])
def test_result_is_an_equilibrium_at_load_scale(tdcr3, force):
    """Converged or not, the shape returned is the equilibrium at `load_scale` x (tensions,
    loads). Tip forces of 100 N and more (P L^2 / EI > 1000) make single shooting from the
    base ill-conditioned (growth ~exp(L sqrt(P/EI)) ~ 1e15), so these may fail."""
    loads = {"tip_force": [force, 0.0, 0.0], "gravity": [0.0, 0.0, -9.81]}
    sol = softrod.solve_static(tdcr3, TENSIONS, **loads)
    _assert_all_finite(sol)
    lam = sol.load_scale
    assert sol.success == (lam == 1.0)
    np.testing.assert_allclose(sol.tendon_tension, lam * np.array(TENSIONS), rtol=1e-15)
    scaled = {k: lam * np.array(v) for k, v in loads.items()}
    if "multiple shooting" in sol.message:
        # Heavy loads go through multiple shooting, where one integration from the base is
        # too ill-conditioned to check; restarting from the result must converge at once to
        # the same shape (the interval count may differ at the reduced load: shapes then
        # differ by the grid's frame error, measured 1.4e-6 m at 1000 N, P L^2 / EI ~ 1e4),
        # and the base moment must balance the loads on the returned shape.
        # Restarted like the result was made, so both sit on one grid: a converged
        # multiple-shooting answer is refined onto a finer grid by default, a failed one is not.
        again = softrod.solve_static(
            tdcr3, lam * np.array(TENSIONS), guess=sol, error_estimate=sol.success, **scaled
        )
        assert again.success and again.nit <= 3
        np.testing.assert_allclose(again.positions, sol.positions, rtol=0, atol=1e-5)
        arm = sol.tip_position - sol.positions[0]
        F = lam * np.array(loads["tip_force"])
        m_tip = np.cross(arm, F)
        # Gravity on this light robot is a small correction; bound it by its weight's moment.
        weight_moment = 9.81 * lam * 0.05 * np.linalg.norm(arm)
        assert np.linalg.norm(sol.base_moment - m_tip) <= weight_moment
        return
    ev = shooting_eval(tdcr3, sol.base_moment, lam * np.array(TENSIONS), **scaled)
    assert np.abs(ev.residual).max() <= EQUILIBRIUM_RESIDUAL_TOL
    np.testing.assert_allclose(ev.tip_position, sol.tip_position, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Input errors: one ValueError naming the field and the value

BAD_SOLVER_INPUTS = {
    "negative tension": (
        {"tensions": [-1.0] + TENSIONS[1:]},
        r"tensions\[0\] must be >= 0.*-1\.0",
    ),
    "wrong number of tensions": ({"tensions": TENSIONS[:-1]}, r"tensions must have 9 values.*8"),
    "NaN tension": ({"tensions": [math.nan] + TENSIONS[1:]}, r"tensions\[0\].*finite.*nan"),
    "tensions and lengths": (
        {"tensions": TENSIONS, "lengths": [0.1] * 9},
        r"tensions or lengths, not both",
    ),
    "wrong number of lengths": ({"lengths": [0.1] * 3}, r"lengths must have 9 values.*3"),
    "non-positive length": ({"lengths": [0.0] + [0.1] * 8}, r"lengths\[0\] must be > 0.*0\.0"),
    "NaN tip force": (
        {"tensions": TENSIONS, "tip_force": [0.0, math.nan, 0.0]},
        r"tip_force must be finite.*nan",
    ),
    "inf gravity": ({"tensions": TENSIONS, "gravity": [0.0, math.inf, 0.0]}, r"gravity.*inf"),
    "NaN distributed force": (
        {"tensions": TENSIONS, "distributed_force": [math.nan, 0.0, 0.0]},
        r"distributed_force must be finite.*nan",
    ),
    "short tip force": (
        {"tensions": TENSIONS, "tip_force": [0.0, 1.0]},
        r"tip_force must have 3 components.*\[0\.0, 1\.0\]",
    ),
    "long tip moment": (
        {"tensions": TENSIONS, "tip_moment": [0.0, 0.0, 1.0, 2.0]},
        r"tip_moment must have 3 components.*\[0\.0, 0\.0, 1\.0, 2\.0\]",
    ),
    "unknown method": (
        {"tensions": TENSIONS, "method": "newton"},
        r"method must be one of.*newton",
    ),
    "point load at the base": (
        {"tensions": TENSIONS, "point_loads": [(0.0, [0.0, 0.0, 1.0])]},
        r"point_loads\[0\]\.s must be in \(0, 0\.186\].*0\.0",
    ),
    "point load past the tip": (
        {"tensions": TENSIONS, "point_loads": [(0.05, [0, 0, 1]), (0.3, [0.0, 0.0, 1.0])]},
        r"point_loads\[1\]\.s must be in \(0, 0\.186\].*0\.3",
    ),
    "point load NaN position": (
        {"tensions": TENSIONS, "point_loads": [(math.nan, [0.0, 0.0, 1.0])]},
        r"point_loads\[0\]\.s.*nan",
    ),
    "point load short force": (
        {"tensions": TENSIONS, "point_loads": [(0.1, [0.0, 1.0])]},
        r"point_loads\[0\]\.force must have 3 components.*\[0\.0, 1\.0\]",
    ),
    "point load NaN moment": (
        {"tensions": TENSIONS, "point_loads": [(0.1, [0, 0, 0], [0.0, math.nan, 0.0])]},
        r"point_loads\[0\]\.moment must be finite.*nan",
    ),
    "point load missing force": (
        {"tensions": TENSIONS, "point_loads": [(0.1,)]},
        r"point_loads\[0\] must be \(s, force",
    ),
    "zero steps": ({"tensions": TENSIONS, "steps": 0}, r"steps must be >= 1.*0"),
    "negative rtol": ({"tensions": TENSIONS, "rtol": -1.0}, r"rtol.*-1"),
    "negative max_iter": ({"tensions": TENSIONS, "max_iter": -1}, r"max_iter.*-1"),
}


@pytest.mark.parametrize("case", sorted(BAD_SOLVER_INPUTS))
def test_bad_solver_input(tdcr3, case):
    kwargs, pattern = BAD_SOLVER_INPUTS[case]
    kwargs = dict(kwargs)
    tensions = kwargs.pop("tensions", None)
    with pytest.raises(ValueError, match=pattern) as info:
        softrod.solve_static(tdcr3, tensions, **kwargs)
    message = str(info.value)
    assert "\n" not in message  # one clear line
    assert "np.float64" not in message  # values as the user wrote them


def test_lengths_need_tendon_stiffness():
    robot = tdcr3_dict()
    del robot["segments"][1]["tendons"][2]["stiffness"]
    with pytest.raises(ValueError, match=r"segments\[1\]\.tendons\[2\]\.stiffness"):
        softrod.solve_static(robot, lengths=[0.1] * 9)
    # Tension control does not need it.
    assert softrod.solve_static(robot, [0.1] * 9).success


def test_shooting_eval_checks_unknowns(tdcr3):
    with pytest.raises(ValueError, match=r"x must have 3 values.*4"):
        shooting_eval(tdcr3, np.zeros(4), TENSIONS)
    with pytest.raises(ValueError, match=r"x must have 12 values.*3"):
        shooting_eval(tdcr3, np.zeros(3), lengths=[0.1] * 9)


def test_input_errors_are_raised_before_solving(tdcr3):
    """The error names the first bad field even when other inputs are fine and large."""
    with pytest.raises(ValueError, match=re.escape("tensions[3]")):
        softrod.solve_static(tdcr3, [1.0, 1.0, 1.0, -0.5, 0, 0, 0, 0, 0], **LOADS)
