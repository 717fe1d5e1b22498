"""`solve_static_batch(guess=StaticResult)`: every item starts from one single solve."""

from __future__ import annotations

import dataclasses

import numpy as np

from softrod.description import find_robot, load_robot
from softrod.rods import compile_model, solve_static, solve_static_batch

#: Batch items and `solve_static` from the same guess: the same equilibrium (issue 16).
SAME_TIP = 1e-9


def test_a_single_result_warm_starts_every_item() -> None:
    model = compile_model(load_robot(find_robot("softmanisim")))
    rng = np.random.default_rng(1)
    force = [0.1, 0.0, -0.2]
    start = solve_static(model, np.full(model.n_tendons, 0.5), tip_force=force)
    tensions = 0.5 + rng.uniform(-0.2, 0.2, (4, model.n_tendons))
    tensions[3] += 2.0  # a large change: followed from the guess's inputs
    warm = solve_static_batch(model, tensions=tensions, tip_force=force, guess=start)
    cold = solve_static_batch(model, tensions=tensions, tip_force=force)
    assert warm.success.all() and warm.from_guess.all()
    assert warm.iterations[:3].sum() < cold.iterations[:3].sum()
    for i in range(4):
        one = solve_static(model, tensions[i], tip_force=force, guess=start)
        np.testing.assert_allclose(warm.tip_position[i], one.tip_position, rtol=0, atol=SAME_TIP)
    # A failed result is no starting point: the items start cold.
    failed = dataclasses.replace(start, success=False)
    again = solve_static_batch(model, tensions=tensions, tip_force=force, guess=failed)
    assert not again.from_guess.any()
    np.testing.assert_array_equal(again.tip_position, cold.tip_position)
