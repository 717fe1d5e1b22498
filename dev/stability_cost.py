"""Cost of the default stability check against the solve it checks (docs/stability.md).

    PYTHONPATH=src python dev/stability_cost.py [N]

SoftManiSim robot, N warm-started solves under random tip forces up to 2 N and f = [1, 1, 1] N/m
(the loads of `softrod bench static`); each solve (check_stability=False) and then its check
(`_stability.is_stable`) are timed in turn. Prints `stability_cost.<metric>: value` lines.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.description import find_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._stability import is_stable

n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
model = compile_model(find_robot("softmanisim"))
rng = np.random.default_rng(0)
forces = rng.normal(size=(n, 3))
forces *= rng.uniform(0, 2, (n, 1)) / np.linalg.norm(forces, axis=1, keepdims=True)
guess, solve_ms, check_ms, unstable = None, [], [], 0
for k in range(-5, n):  # five warm-up solves load the kernels
    f = forces[max(k, 0)]
    t0 = time.perf_counter()
    res = solve_static(
        model, [0.0] * 4, tip_force=f, distributed_force=[1, 1, 1], guess=guess,
        check_stability=False,
    )  # fmt: skip
    t1 = time.perf_counter()
    stable = is_stable(model, res)
    t2 = time.perf_counter()
    guess = res if res.success else None
    if k >= 0:
        solve_ms.append(1e3 * (t1 - t0))
        check_ms.append(1e3 * (t2 - t1))
        unstable += stable is False
print(f"stability_cost.solve_median_ms: {np.median(solve_ms):.4f}")
print(f"stability_cost.check_median_ms: {np.median(check_ms):.4f}")
print(f"stability_cost.ratio: {np.median(check_ms) / np.median(solve_ms):.3f}")
print(f"stability_cost.unstable_successes: {unstable}")
