"""Cost of the default stability check against the solve it checks (docs/stability.md).

    PYTHONPATH=src python dev/stability_cost.py [N]

SoftManiSim robot, N warm-started solves under random tip forces up to 2 N and f = [1, 1, 1] N/m
(the loads of `softrod bench static`); each solve (check_stability=False, error_estimate=False:
the solve the check was first compared with) and then its check (`_stability.is_stable`: the
grouped transfer maps) and the check on every step (the test before the grouping) are timed
in turn. Prints `stability_cost.<metric>: value` lines.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.description import find_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._stability import _second_variation_inertia, is_stable, stability_maps

n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
model = compile_model(find_robot("softmanisim"))
rng = np.random.default_rng(0)
forces = rng.normal(size=(n, 3))
forces *= rng.uniform(0, 2, (n, 1)) / np.linalg.norm(forces, axis=1, keepdims=True)
guess, solve_ms, check_ms, step_ms, unstable, differ, groups = None, [], [], [], 0, 0, []
for k in range(-5, n):  # five warm-up solves load the kernels
    f = forces[max(k, 0)]
    t0 = time.perf_counter()
    res = solve_static(
        model, [0.0] * 4, tip_force=f, distributed_force=[1, 1, 1], guess=guess,
        check_stability=False, error_estimate=False,
    )  # fmt: skip
    t1 = time.perf_counter()
    stable = is_stable(model, res)
    t2 = time.perf_counter()
    maps = stability_maps(model, res)
    per_step = None if maps is None else bool(_second_variation_inertia(maps) == 0)
    t3 = time.perf_counter()
    guess = res if res.success else None
    if k >= 0:
        solve_ms.append(1e3 * (t1 - t0))
        check_ms.append(1e3 * (t2 - t1))
        step_ms.append(1e3 * (t3 - t2))
        unstable += stable is False
        differ += stable != per_step
        grouped = stability_maps(model, res, grouped=True)
        groups.append(0 if grouped is None else grouped.shape[0])
print(f"stability_cost.solve_median_ms: {np.median(solve_ms):.4f}")
print(f"stability_cost.check_median_ms: {np.median(check_ms):.4f}")
print(f"stability_cost.ratio: {np.median(check_ms) / np.median(solve_ms):.3f}")
print(f"stability_cost.per_step_check_median_ms: {np.median(step_ms):.4f}")
print(f"stability_cost.per_step_ratio: {np.median(step_ms) / np.median(solve_ms):.3f}")
print(f"stability_cost.median_intervals: {np.median(groups):.0f} (steps: {model.n_nodes - 1})")
print(f"stability_cost.verdicts_differing_from_per_step: {differ}")
print(f"stability_cost.unstable_successes: {unstable}")
