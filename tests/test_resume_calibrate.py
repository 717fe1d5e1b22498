"""A calibration killed mid-fit (SIGKILL) resumes from its checkpoint to the same result.

The checkpoint is a journal of every model evaluation; `--resume` replays it to the optimizer,
which retraces its trajectory, rebuilds the static model's warm starts from the cold solves the
journal names, and carries on: the result is identical to an uninterrupted run's.
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
import warnings

import numpy as np
import pytest

import softrod
from softrod._jobs import Journal
from softrod.sysid import Measurements, calibrate, predict_tips, with_fields

GRAVITY = "0,0,-9.81"


def _data(robot, n: int = 8) -> Measurements:
    rng = np.random.default_rng(3)
    tensions = rng.uniform(0.0, 1.5, (n, robot.n_tendons))
    clean = Measurements(tensions, "tension", np.zeros((n, 3)), rng.uniform(-0.05, 0.05, (n, 3)))
    truth = with_fields(robot, {"backbone.youngs_modulus": 52e9})
    tips = predict_tips(truth, clean, gravity=[0.0, 0.0, -9.81])
    return clean.with_tip(tips + rng.normal(0.0, 2e-4, tips.shape))


def _args(robot_file, csv, out):
    return [
        "calibrate", str(robot_file), "--data", str(csv), "--fit", "youngs_modulus,pretension",
        "--gravity", GRAVITY, "-o", str(out), "--json",
    ]  # fmt: skip


def _run(args) -> tuple[int, dict]:
    from softrod.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main(args)
    return rc, (json.loads(buf.getvalue()) if rc == 0 else {})


def test_killed_calibration_resumes_to_the_same_fit(tdcr3, tmp_path):
    robot = softrod.load_robot(tdcr3)
    robot_file = tmp_path / "robot.yaml"
    robot.to_yaml(robot_file)
    csv = tmp_path / "tip.csv"
    _data(robot).to_csv(csv)
    out = tmp_path / "killed" / "fit.yaml"
    ckpt = out.with_name("fit.calibration.ckpt.jsonl")
    # The child's model sleeps per call so the kill lands mid-fit.
    code = (
        "import sys, time; from softrod.sysid import StaticTipModel as M; f = M.predict\n"
        "def slow(self, *a):\n    time.sleep(0.1)\n    return f(self, *a)\n"
        "M.predict = slow\nfrom softrod.cli import main\n"
        f"sys.exit(main({_args(robot_file, csv, out)!r}))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        n_lines = 0
        while time.monotonic() < deadline and proc.poll() is None:
            if ckpt.exists():
                n_lines = ckpt.read_text().count('"theta"')
                if n_lines >= 6:
                    break
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    # Killed: no result under the final names, no partial files; the checkpoint is readable.
    assert not out.exists() and not out.with_name("fit.calibration.json").exists()
    assert sorted(p.name for p in out.parent.iterdir()) == [ckpt.name]
    # Without --resume an existing checkpoint is not silently discarded.
    rc, _ = _run(_args(robot_file, csv, out))
    assert rc == 2
    rc, resumed = _run([*_args(robot_file, csv, out), "--resume"])
    assert rc == 0
    assert resumed["resumed_evaluations"] >= 6
    assert not ckpt.exists() and out.exists()
    assert sorted(p.name for p in out.parent.iterdir()) == ["fit.calibration.json", "fit.yaml"]

    rc, whole = _run(_args(robot_file, csv, tmp_path / "whole" / "fit.yaml"))
    assert rc == 0
    assert resumed["nfev"] == whole["nfev"]
    for key in ("youngs_modulus", "pretension", "rmse_after"):
        assert resumed[key] == whole[key]


def test_journal_of_another_calibration_is_refused(tdcr3, tmp_path):
    robot = softrod.load_robot(tdcr3)
    data = _data(robot, n=3)
    ckpt = tmp_path / "c.jsonl"
    calibrate(robot, data, ["youngs_modulus"], checkpoint=ckpt, max_nfev=2)
    with pytest.raises(ValueError, match="c.jsonl is the journal of a different calibration"):
        calibrate(robot, data, ["pretension"], checkpoint=ckpt, resume=True, max_nfev=2)


def test_truncated_checkpoint_is_repaired_and_resumed(tdcr3, tmp_path):
    """A record cut by the kill is dropped with a warning naming the file; the rest replays."""
    robot = softrod.load_robot(tdcr3)
    data = _data(robot, n=3)
    ckpt = tmp_path / "c.jsonl"
    whole = calibrate(robot, data, ["youngs_modulus"], checkpoint=ckpt)
    text = ckpt.read_text()
    ckpt.write_text(text[: len(text) // 2])
    with pytest.warns(UserWarning, match="c.jsonl: dropped"):
        again = calibrate(robot, data, ["youngs_modulus"], checkpoint=ckpt, resume=True)
    assert again.extra["resumed_evaluations"] >= 1
    assert again.values() == whole.values()
    # A damaged header cannot be trusted: the journal starts over (it is only a cache).
    ckpt.write_text('{"softrod_jou')
    with pytest.warns(UserWarning, match="damaged header"):
        Journal(ckpt, "calibration", {}, resume=True).close()
