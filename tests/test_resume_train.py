"""`softrod train` (SB3 SAC) killed with SIGKILL mid-run: every checkpoint on disk is complete
(written under a temporary name and renamed), and `--resume` continues from the newest one.

A resumed SAC run is not bit-identical to an uninterrupted one: periodic checkpoints hold the
policy and optimiser but not the replay buffer or the environments' state (SB3 saves neither
there), so the test checks integrity and continuation, not equal weights. Exact resumption is
what `softrod bc --resume` and the model.zip written on Ctrl-C/SIGTERM (with its replay buffer)
give; see docs/cli.md, "Long jobs: checkpoints and resume".
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from softrod.learn._sac import load_sac


def _steps(path: Path) -> int:
    return int(path.stem.split("_")[1])


def test_killed_training_resumes_from_its_newest_checkpoint(tmp_path):
    from softrod.cli import main

    run = tmp_path / "run"
    ckpts = run / "checkpoints"
    args = ["train", "PlanarReach-v0", "--steps", "1000000", "--learning-starts", "50",
            "--checkpoint-every", "60", "-o", str(run), "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-c", "from softrod.cli import _entry; _entry()", *args],
        env={**os.environ, "MUJOCO_GL": "egl"},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(ckpts.glob("sac_*_steps.zip"))) >= 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    saved = sorted(ckpts.glob("sac_*_steps.zip"), key=_steps)
    assert len(saved) >= 3 and not (run / "model.zip").exists()
    # Every checkpoint under its final name is complete (a kill mid-save leaves at most a
    # hidden .partial file, which the next run in this folder deletes).
    for path in saved:
        assert load_sac(path, device="cpu").num_timesteps == _steps(path)

    newest = saved[-1]
    out = tmp_path / "resumed"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["train", "PlanarReach-v0", "--steps", "100", "--learning-starts", "50",
                   "--resume", str(newest), "-o", str(out), "--no-progress"])  # fmt: skip
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 100 and summary["interrupted"] is False
    assert load_sac(out / "model.zip", device="cpu").num_timesteps == _steps(newest) + 100
    assert not list(out.rglob(".*partial*"))
