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

import pytest

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


_BC_DEMOS = (
    "import numpy as np\n"
    "from softrod.learn import BCConfig, DemoSet\n"
    "rng = np.random.default_rng(0)\n"
    "demos = DemoSet('softrod/FlipSwitch-v0', [rng.normal(size=(12, 19))],"
    " [rng.normal(size=(12, 16))], [True], [1])\n"
    "cfg = BCConfig(policy='mlp', iterations=60, hidden=8, layers=1, chunk=2, batch_size=4,"
    " obs_noise='none')\n"
)


def test_killed_bc_resumes_only_under_its_own_version(tmp_path, monkeypatch):
    """`softrod bc` SIGKILLed right after its checkpoint of iteration 20: the checkpoint
    records the softrod version; a resume by another version is refused with one message
    naming the file and both versions; the same version resumes to an uninterrupted run's
    weights."""
    import torch

    import softrod.learn._bc as bc

    torch.set_num_threads(1)
    scope: dict = {}
    exec(_BC_DEMOS, scope)  # the same demonstrations and configuration as the killed run
    demos, cfg = scope["demos"], scope["cfg"]
    whole = bc.train_bc(demos, cfg, tmp_path / "whole", progress=False, checkpoint_every=20)
    run = tmp_path / "killed"
    code = (
        "import os, signal, torch\n"
        "torch.set_num_threads(1)\n"
        "import softrod.learn._bc as bc\n"
        "save = bc._save_atomic\n"
        "def kill_after(obj, path):\n"
        "    save(obj, path)\n"
        "    if obj.get('iteration', 0) >= 20:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "bc._save_atomic = kill_after\n"
        f"{_BC_DEMOS}"
        f"bc.train_bc(demos, cfg, {str(run)!r}, progress=False, checkpoint_every=20)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ}, timeout=300)
    assert proc.returncode == -signal.SIGKILL
    assert not (run / "policy.pt").exists()
    ckpt = torch.load(run / bc.CHECKPOINT_FILE, weights_only=False)
    assert (ckpt["iteration"], ckpt["softrod"]) == (20, bc.__version__)

    with monkeypatch.context() as m:
        m.setattr(bc, "__version__", "9.9.9")
        with pytest.raises(
            ValueError, match=r"checkpoint\.pt was written by softrod .*this is 9\.9\.9"
        ):
            bc.train_bc(demos, cfg, run, progress=False, resume=True, checkpoint_every=20)
    resumed = bc.train_bc(demos, cfg, run, progress=False, resume=True, checkpoint_every=20)
    a = torch.load(whole.policy_path, weights_only=False)["state_dict"]
    b = torch.load(resumed.policy_path, weights_only=False)["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert json.loads((run / "summary.json").read_text())["resumed_from_iteration"] == 20
