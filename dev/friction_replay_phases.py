"""Evaluations per row of the friction replay, by what asked for them.

    PYTHONPATH=src python dev/friction_replay_phases.py [MU]

The replay of dev/friction_replay_cost.py (ftdcr_v4 val, 443 rows, the authors' parameters with
a `tendon_friction: {mu: MU}` block, default 0.1) with the compiled loop's evaluations counted
by phase (`softrod.rods._friction.PHASES`: the row's first Jacobian, later Jacobians, chord
steps, the line search, moves of the tension scale) and the rows it hands to the per-step path
(fallbacks: their rows, fixed-point solves and residual evaluations, `StaticResult.nfev`).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from softrod.description import load_robot
from softrod.rods import _friction
from softrod.validate import read_recording, recording_path, replay_recording
from softrod.validate._hardware import calibrated_robot, initial_params

mu = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1
val = recording_path("ftdcr_v4", "val")
columns = list(read_recording(recording_path("ftdcr_v4", "train")).servo_columns)
spec = calibrated_robot("ftdcr_v4", initial_params("ftdcr_v4"), servo_columns=columns)

phases = np.zeros(len(_friction.PHASES), dtype=np.int64)
fallback = {"rows": 0, "solves": 0, "nfev": 0}
rows_compiled = [0]
kernel, step, solve = _friction._sequence_rows, _friction._step, _friction._solve_frozen


def counted_kernel(*args):  # type: ignore[no-untyped-def]
    done = kernel(*args)
    out = args[8]
    phases[:] += out.phases[:done].sum(axis=0)
    rows_compiled[0] += done
    return done


def counted_step(*args, **kw):  # type: ignore[no-untyped-def]
    fallback["rows"] += 1
    res = step(*args, **kw)
    fallback["solves"] += res[2]
    return res


def counted_solve(*args, **kw):  # type: ignore[no-untyped-def]
    res = solve(*args, **kw)
    fallback["nfev"] += int(res.nfev)
    return res


with tempfile.TemporaryDirectory() as tmp:
    fitted = Path(tmp) / "fitted.yaml"
    load_robot({**spec.to_dict(), "tendon_friction": {"mu": mu, "stick_band": 0.0}}).to_yaml(fitted)
    replay_recording(fitted, val)  # load (or compile) the kernels
    _friction._sequence_rows = counted_kernel
    _friction._step = counted_step
    _friction._solve_frozen = counted_solve
    rep = replay_recording(fitted, val)
n = rep.tip.shape[0]
per_row = phases / max(rows_compiled[0], 1)
print(f"friction_replay_phases: {n} rows at mu {mu:g}, {rows_compiled[0]} in the compiled loop")
for name, value, total in zip(_friction.PHASES, per_row, phases, strict=True):
    print(f"  {name:12s} {value:6.2f} evaluations / row ({total})")
print(f"  {'all':12s} {per_row.sum():6.2f} evaluations / row")
print(
    f"  fallbacks: {fallback['rows']} rows, {fallback['solves']} fixed-point solves, "
    f"{fallback['nfev']} evaluations (nfev)"
)
