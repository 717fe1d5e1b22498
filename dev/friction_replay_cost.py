"""Cost of the hardware replay with tendon friction: `softrod hardware replay` of a whole val file.

    PYTHONPATH=src python dev/friction_replay_cost.py [MU] [--save TIPS.npy] [--against TIPS.npy]
        [--repeats N]

The ftdcr_v4 val recording (443 rows) replayed through the authors' robot (`initial_params`, no
fit) with a `tendon_friction: {mu: MU}` block (default 0.1), as `softrod hardware replay
FITTED --data VAL.csv` does (`replay_recording`): one warm-up replay (numba loads or compiles
its kernels), then N timed ones (`--repeats`, default 3); prints the best CPU and wall time of
a replay [s], every replay's CPU time and the load average. `--save` writes the tips [m]
(443, 3); `--against` prints the largest tip difference [m] to tips saved by another tree (pair
it with main: run both trees in one batch).
Works on any tree that has `softrod hardware replay` (it uses only its public pieces).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from softrod.description import load_robot
from softrod.validate import read_recording, recording_path, replay_recording
from softrod.validate._hardware import calibrated_robot, initial_params

args = sys.argv[1:]
save = args[args.index("--save") + 1] if "--save" in args else None
against = args[args.index("--against") + 1] if "--against" in args else None
repeats = int(args[args.index("--repeats") + 1]) if "--repeats" in args else 3
plain = [a for i, a in enumerate(args) if not a.startswith("--") and args[i - 1][:2] != "--"]
mu = float(plain[0]) if plain else 0.1
val = recording_path("ftdcr_v4", "val")
columns = list(read_recording(recording_path("ftdcr_v4", "train")).servo_columns)
spec = calibrated_robot("ftdcr_v4", initial_params("ftdcr_v4"), servo_columns=columns)
with tempfile.TemporaryDirectory() as tmp:
    fitted = Path(tmp) / "fitted.yaml"
    load_robot({**spec.to_dict(), "tendon_friction": {"mu": mu, "stick_band": 0.0}}).to_yaml(fitted)
    replay_recording(fitted, val)  # load (or compile) the kernels
    cpu, best_wall = [], np.inf
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        rep = replay_recording(fitted, val)
        cpu.append(time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - t0)
print(
    f"friction_replay_cost: {rep.tip.shape[0]} rows at mu {mu:g}: best of {repeats} replays "
    f"{min(cpu):.2f} s CPU, {best_wall:.2f} s wall (load average {os.getloadavg()[0]:.1f}), "
    f"converged {rep.ok.mean():.3f}; every replay [s CPU]: {' '.join(f'{c:.2f}' for c in cpu)}"
)
if save:
    np.save(save, rep.tip)
if against:
    print(
        f"friction_replay_cost: tip vs {against}: {np.abs(rep.tip - np.load(against)).max():.1e} m"
    )
