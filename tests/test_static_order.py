"""Integration order of the static solver: RK4 on the grid set by `steps=`."""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from reference.robots import EXAMPLES_DIR, tdcr3_dict

#: Halving an RK4 step divides the global error by 2^4 = 16; the band allows the
#: higher-order terms still visible at 30 steps (measured 16.05-16.09).
ORDER_RATIO_RANGE = (14.0, 18.0)
#: Fine grid for the "exact" answer: 16x the finest tested grid, so its own error is < 1e-4
#: of the errors measured.
FINE_STEPS = 1920
#: Converge the Newton shooting far below the discretization errors measured (~1e-12 m).
SOLVE_RTOL = 1e-12
#: The default grid's tip error on the shipped robots (DEFAULT_STEPS_PER_LENGTH promises
#: < 1e-7 m) under moderate loads.
DEFAULT_GRID_TOL = 1e-7

LOADS = {
    "tip_force": [0.05, -0.1, 0.02],
    "tip_moment": [0.002, 0.0, -0.001],
    "distributed_force": [0.0, 0.3, 0.0],
    "gravity": [0.0, 0.0, -9.81],
}
TENSIONS = [2.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.3, 0.0, 1.0]


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_rk4_fourth_order(model):
    """Loaded tdcr3 (30 disks, so `steps` = 30, 60, 120 puts 1, 2, 4 steps between disks)."""
    robot = tdcr3_dict(model)
    fine = softrod.solve_static(robot, TENSIONS, steps=FINE_STEPS, rtol=SOLVE_RTOL, **LOADS)
    errors = []
    for steps in (30, 60, 120):
        sol = softrod.solve_static(robot, TENSIONS, steps=steps, rtol=SOLVE_RTOL, **LOADS)
        assert sol.success
        assert sol.s.shape[0] == steps + 1  # the grid really has that many steps
        errors.append(np.linalg.norm(sol.tip_position - fine.tip_position))
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    lo, hi = ORDER_RATIO_RANGE
    assert np.all((ratios > lo) & (ratios < hi)), (errors, ratios)


@pytest.mark.parametrize("name", ["tdcr3", "tdcr_modeling", "softmanisim"])
def test_default_grid_accuracy(name):
    robot = softrod.load_robot(EXAMPLES_DIR / f"{name}.yaml")
    n_t = robot.n_tendons
    tensions = np.linspace(0.2, 1.0, n_t) * (np.arange(n_t) % 2 == 0)
    loads = {"tip_force": [0.02, -0.01, 0.0], "gravity": [0.0, 0.0, -9.81]}
    sol = softrod.solve_static(robot, tensions, rtol=SOLVE_RTOL, **loads)
    fine = softrod.solve_static(robot, tensions, steps=FINE_STEPS, rtol=SOLVE_RTOL, **loads)
    assert np.linalg.norm(sol.tip_position - fine.tip_position) < DEFAULT_GRID_TOL
