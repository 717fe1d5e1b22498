"""Cost of the friction fixed point on the hardware replay's length-controlled rows.

    PYTHONPATH=src python dev/friction_replay_cost.py [ROWS] [MU]

The first ROWS (default 120) rows of the ftdcr_v4 val recording as commanded lengths of the
authors' robot (`initial_params`, no fit), solved as one `solve_sequence` at friction MU
(default 0.1) for several `friction_tol`; prints the fixed-point solves per row, the CPU time
and the largest tip difference to a 1e-12 solution, then the frictionless time.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.rods import compile_model, solve_sequence, solve_static
from softrod.validate import read_recording, recording_path
from softrod.validate._hardware import _commanded, calibrated_robot, initial_params

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 120
mu = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
spec = calibrated_robot("ftdcr_v4", initial_params("ftdcr_v4"))
assert spec.calibration is not None
rec = read_recording(recording_path("ftdcr_v4", "val"))
model = compile_model(spec)
rest = np.asarray(solve_static(model, tensions=np.zeros(spec.n_tendons)).tendon_length)
lengths = _commanded(spec, spec.calibration, rest, rec.displacement[:rows])
solve_sequence(model, lengths=lengths[:3], mu=mu)  # load the kernels
ref = solve_sequence(model, lengths=lengths, mu=mu, friction_tol=1e-12).tip_position
for tol in (1e-10, 1e-8, 1e-6):
    t0 = time.process_time()
    seq = solve_sequence(model, lengths=lengths, mu=mu, friction_tol=tol)
    cpu = time.process_time() - t0
    print(
        f"friction_replay_cost.tol_{tol:g}: {seq.friction_iterations.mean():.2f} solves/row, "
        f"{1e3 * cpu / rows:.2f} ms/row CPU, tip vs 1e-12 "
        f"{np.abs(seq.tip_position - ref).max():.1e} m, success {seq.success.mean():.3f}"
    )
t0 = time.process_time()
solve_sequence(model, lengths=lengths, mu=0.0)
print(f"friction_replay_cost.mu_0: {1e3 * (time.process_time() - t0) / rows:.2f} ms/row CPU")
