"""Cost and quality of the default tip error estimate (docs/stability.md, "Accuracy").

    PYTHONPATH=src python dev/accuracy_cost.py [N]

The SoftManiSim case of `softrod bench static` (same inputs, seed 0): N warm-started solves,
each run twice in turn, with error_estimate=False and with the default (estimate, refinement
where it exceeds 1e-6 L); both with the default stability check. Every tenth default result's
estimate is compared with the true error (a 2048-step solve). Prints
`accuracy_cost.<metric>: value` lines.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.bench._static import _softmanisim_inputs
from softrod.description import find_robot
from softrod.rods import compile_model, solve_static

n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
model = compile_model(find_robot("softmanisim"))
inputs = _softmanisim_inputs(n, np.random.default_rng(0))
off_ms, on_ms, results = [], [], []
g_off = g_on = None
for k in range(-5, n):  # five warm-up solves load the kernels
    kw = inputs[max(k, 0)]
    t0 = time.perf_counter()
    r_off = solve_static(model, guess=g_off, error_estimate=False, **kw)
    t1 = time.perf_counter()
    r_on = solve_static(model, guess=g_on, **kw)
    t2 = time.perf_counter()
    g_off = r_off if r_off.success else None
    g_on = r_on if r_on.success else None
    if k >= 0:
        off_ms.append(1e3 * (t1 - t0))
        on_ms.append(1e3 * (t2 - t1))
        results.append(r_on)
ratios = []
for i in range(0, n, 10):
    fine = solve_static(model, steps=2048, error_estimate=False, **inputs[i])
    true = float(np.linalg.norm(results[i].tip_position - fine.tip_position))
    if results[i].tip_error is not None and true > 0:
        ratios.append(results[i].tip_error / true)
L = model.total_length
est = [r.tip_error for r in results if r.tip_error is not None]
print(f"accuracy_cost.median_ms_without_estimate: {np.median(off_ms):.4f}")
print(f"accuracy_cost.median_ms_default: {np.median(on_ms):.4f}")
print(f"accuracy_cost.ratio: {np.median(on_ms) / np.median(off_ms):.3f}")
print(f"accuracy_cost.with_estimate: {len(est)} of {n}")
print(f"accuracy_cost.refined: {sum(r.s.size > model.n_nodes for r in results)}")
print(f"accuracy_cost.max_tip_error_over_L: {max(est) / L:.2e}")
print(f"accuracy_cost.estimate_over_true: {min(ratios):.2f} .. {max(ratios):.2f}")
