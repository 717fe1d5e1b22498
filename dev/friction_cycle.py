"""Cost of tendon friction in the static solver: a pull/release cycle on ftdcr_v4.

    PYTHONPATH=src python dev/friction_cycle.py [MU]

The distal tendon of segment 3 (input 6) is pulled 0 -> 3 N in 25 steps and released in 25
(tension control, `solve_sequence`), once with friction MU (default 0.1) and once without.
Prints `friction_cycle.<metric>: value` lines: time per step, fixed-point solves per step, the
widest pull/release loop at equal command and the tip's return at zero command (the
numbers of docs/friction.md's cost table).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.description import find_robot
from softrod.rods import compile_model, solve_sequence

mu = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1
model = compile_model(find_robot("ftdcr_v4"))
tensions = np.zeros((50, model.n_tendons))
tensions[:, 6] = np.r_[np.linspace(0.0, 3.0, 25), np.linspace(3.0, 0.0, 25)]
solve_sequence(model, tensions=tensions[:3], mu=mu)  # load the kernels
for value in (mu, 0.0):
    t0 = time.perf_counter()
    seq = solve_sequence(model, tensions=tensions, mu=value)
    ms = 1e3 * (time.perf_counter() - t0) / tensions.shape[0]
    up, down = seq.tip_position[:25], seq.tip_position[25:][::-1]
    tag = f"friction_cycle.mu_{value:g}"
    print(f"{tag}.ms_per_step: {ms:.1f}")
    print(f"{tag}.solves_per_step: {seq.friction_iterations.mean():.2f}")
    print(f"{tag}.all_success: {bool(seq.success.all())}")
    print(f"{tag}.loop_max_mm: {1e3 * np.linalg.norm(up - down, axis=1).max():.3f}")
    print(f"{tag}.return_m: {np.linalg.norm(seq.tip_position[-1] - seq.tip_position[0]):.1e}")
