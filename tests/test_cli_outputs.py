"""Every command that writes a file follows one policy (issue 19, user flows): outputs are checked
before the work (existing file refused unless --overwrite, missing folder created), partial files
never stand under the final name, bad sizes are refused with one line, exit codes tell failure."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
import yaml

import softrod
import softrod.cli._dynamics_cmds  # noqa: F401  (registers the commands)
import softrod.cli._learn_cmds  # noqa: F401
import softrod.cli._mujoco_cmds  # noqa: F401
import softrod.cli._static_cmds  # noqa: F401
import softrod.cli._sysid_cmds  # noqa: F401
from softrod.cli import main
from softrod.cli._outputs import atomic_path
from softrod.sysid import Measurements, predict_tips


def _one_line_error(capsys, needle: str) -> None:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_plot_refuses_an_existing_file_and_a_huge_dpi(tmp_path, capsys):
    out = tmp_path / "shape.png"
    out.write_bytes(b"keep me")
    assert main(["plot", "tdcr3", "-o", str(out)]) == 2
    _one_line_error(capsys, "--overwrite")
    assert out.read_bytes() == b"keep me"
    assert main(["plot", "tdcr3", "-o", str(tmp_path / "x.png"), "--dpi", "100000"]) == 2
    _one_line_error(capsys, "--dpi")
    deep = tmp_path / "new" / "folder" / "shape.png"
    assert main(["plot", "tdcr3", "-o", str(deep), "--dpi", "20"]) == 0
    assert deep.is_file()
    assert main(["plot", "tdcr3", "-o", str(out), "--dpi", "20", "--overwrite"]) == 0
    assert out.read_bytes() != b"keep me"


def test_mjcf_links_are_bounded_and_outputs_not_clobbered(tmp_path, capsys):
    for bad, needle in (("0", "--links must be >= 1"), ("3000", "--links must be <= 300")):
        assert main(["mjcf", "tdcr3", "--links", bad, "-o", str(tmp_path / "r.xml")]) == 2
        _one_line_error(capsys, needle)
    out = tmp_path / "r.xml"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["mjcf", "tdcr3", "--links", "5", "-o", str(out)]) == 0
    assert main(["mjcf", "tdcr3", "--links", "5", "-o", str(out)]) == 2
    _one_line_error(capsys, "exists")
    # Nothing but the output itself is left in the folder (no temporary files).
    assert [p.name for p in tmp_path.iterdir()] == ["r.xml"]


def test_atomic_path_leaves_nothing_behind_on_interrupt(tmp_path):
    out = tmp_path / "video.mp4"
    with pytest.raises(KeyboardInterrupt), atomic_path(out) as part:
        part.write_bytes(b"half a video")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with atomic_path(out) as part:
        part.write_bytes(b"a whole video")
    assert [p.name for p in tmp_path.iterdir()] == ["video.mp4"]


def _measurements_csv(tmp_path, scale: float = 1.0):
    from softrod.description import find_robot

    spec = softrod.load_robot(find_robot("tdcr3"))
    rng = np.random.default_rng(0)
    tensions = rng.uniform(0.0, 1.0, (6, spec.n_tendons))
    clean = Measurements(tensions, "tension", np.zeros((6, 3)), np.zeros((6, 3)))
    data = clean.with_tip(predict_tips(spec, clean) * scale)
    path = tmp_path / "tips.csv"
    data.to_csv(path)
    return path


def test_calibrate_checks_outputs_before_the_fit(tmp_path, capsys):
    csv = _measurements_csv(tmp_path)
    out = tmp_path / "missing" / "folder" / "fit.yaml"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(
            [
                "calibrate",
                "tdcr3",
                "--data",
                str(csv),
                "--fit",
                "youngs_modulus",
                "-o",
                str(out),
                "--json",
            ]
        )
    assert rc == 0 and out.is_file()
    assert (out.parent / "fit.calibration.json").is_file()
    before = out.read_text()
    assert (
        main(["calibrate", "tdcr3", "--data", str(csv), "--fit", "youngs_modulus", "-o", str(out)])
        == 2
    )
    _one_line_error(capsys, "--overwrite")
    assert out.read_text() == before
    # Tips in millimetres: refused with a message about units, not "calibrated".
    (tmp_path / "mm").mkdir()
    mm = _measurements_csv(tmp_path / "mm", scale=1000.0)
    assert (
        main(
            [
                "calibrate",
                "tdcr3",
                "--data",
                str(mm),
                "--fit",
                "youngs_modulus",
                "-o",
                str(tmp_path / "mm.yaml"),
            ]
        )
        == 2
    )
    _one_line_error(capsys, "metres")


def test_import_somo_names_stay_in_the_folder_and_scale_is_warned(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "evil.yaml"
    # Two 1.0-unit actuators of SoMo's finger example: 2 m long at --world-scale 1.
    link = {"shape_type": "box", "dimensions": [0.46, 0.34, 0.1], "mass": 0.0025}
    joints = [
        {"joint_type": "revolute", "axis": [1, 0, 0], "spring_stiffness": 278.57},
        {"joint_type": "revolute", "axis": [0, 1, 0], "spring_stiffness": 557.14},
    ]
    act = {
        "actuator_length": 1.0,
        "n_segments": 10,
        "planar_flag": 0,
        "link_definition": link,
        "joint_definitions": joints,
    }
    definition = {"manipulator_name": "../escaped", "n_act": 2, "actuator_definitions": [act, act]}
    src.write_text(yaml.safe_dump(definition))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["import-somo", str(src)])
    assert rc == 0, capsys.readouterr().err
    assert not (tmp_path.parent / "escaped.yaml").exists()
    written = [p.name for p in tmp_path.iterdir() if p.name != "evil.yaml"]
    assert len(written) == 1 and written[0].endswith(".yaml") and "/" not in written[0]
    assert "--world-scale" in capsys.readouterr().err
    # The same name again is refused (one policy for every command).
    assert main(["import-somo", str(src)]) == 2
    _one_line_error(capsys, "--overwrite")


def test_train_refuses_an_existing_run_directory(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.zip").write_bytes(b"an earlier run")
    assert main(["train", "Reach-v0", "--steps", "10", "-o", str(run)]) == 2
    _one_line_error(capsys, "pass --overwrite to replace it, or another --out")
    assert (run / "model.zip").read_bytes() == b"an earlier run"


def test_killed_training_keeps_its_model_and_says_so(tmp_path):
    """SIGTERM mid-training (as a scheduler or Ctrl-C would stop it) saves the model reached so
    far, marks the summary interrupted and exits 130."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    run = tmp_path / "run"
    env = {**os.environ, "MUJOCO_GL": "egl"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from softrod.cli import _entry; _entry()",
            "train",
            "PlanarReach-v0",
            "--steps",
            "1000000",
            "--learning-starts",
            "50",
            "-o",
            str(run),
            "--no-progress",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # progress.csv appears when learning starts; stop the run a moment later.
        deadline = time.monotonic() + 120.0
        while not (run / "progress.csv").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.2)
        time.sleep(2.0)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted after" in err
    assert (run / "model.zip").is_file()
    assert json.loads((run / "summary.json").read_text())["interrupted"] is True


@pytest.mark.parametrize("ema_decay", [0.0, 0.99])
def test_killed_behaviour_cloning_resumes_to_the_same_weights(tmp_path, ema_decay):
    """A BC run SIGKILLed after a checkpoint and resumed ends with exactly the weights of an
    uninterrupted run (weights, their running average, optimiser and both random generators
    are checkpointed)."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    import torch

    from softrod.learn import BCConfig, record_demos
    from softrod.learn._bc import CHECKPOINT_FILE, train_bc

    torch.set_num_threads(1)
    demos = record_demos("softrod/FlipSwitch-v0", 1, seed=5, max_attempts=2)
    path = demos.save(tmp_path / "switch1.npz")
    cfg = dict(
        policy="mlp",
        iterations=4000,
        hidden=32,
        layers=1,
        chunk=5,
        batch_size=32,
        ema_decay=ema_decay,
    )
    whole = train_bc(
        path, BCConfig(**cfg), tmp_path / "whole", progress=False, checkpoint_every=100
    )
    assert not (whole.run_dir / CHECKPOINT_FILE).exists()

    run = tmp_path / "killed"
    code = (
        "import torch; torch.set_num_threads(1)\n"
        "from softrod.learn import BCConfig\n"
        "from softrod.learn._bc import train_bc\n"
        f"train_bc({str(path)!r}, BCConfig(**{cfg!r}), {str(run)!r}, progress=False,"
        " checkpoint_every=100)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ})
    try:
        deadline = time.monotonic() + 120.0
        while not (run / CHECKPOINT_FILE).exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert not (run / "policy.pt").exists()
    resumed = train_bc(
        path, BCConfig(**cfg), run, progress=False, resume=True, checkpoint_every=100
    )
    a = torch.load(whole.policy_path, weights_only=False)["state_dict"]
    b = torch.load(resumed.policy_path, weights_only=False)["state_dict"]
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert resumed.final_loss == whole.final_loss
    summary = json.loads((run / "summary.json").read_text())
    assert summary["resumed_from_iteration"] >= 100
    # No temporary files are left behind.
    assert not [p for p in run.iterdir() if p.name.startswith(".")]


def test_a_diverged_simulation_exits_1_with_its_json(capsys):
    """A time step far above the explicit stable one diverges: the JSON still prints, exit code 1
    (the default `--integrator auto` takes tdcr3 implicit: test_dynamics_implicit)."""
    import json

    argv = [
        "simulate",
        "tdcr3",
        "--duration",
        "0.01",
        "--dt",
        "1e-3",
        "--elements",
        "10",
        "--tensions",
        "2,0,0,0,0,0,0,0,0",
        "--integrator",
        "explicit",
        "--json",
    ]
    assert main(argv) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["success"] is False and "diverged" in out["message"]


@pytest.mark.parametrize(
    ("command", "needles"),
    [
        ("simulate", ("Simulated time [s]", "[m/s^2]", "[default: 1.0]")),
        ("solve", ("[m/s^2]", "[m]")),
        ("calibrate", ("Gravity [m/s^2]",)),
    ],
)
def test_help_keeps_units_and_defaults(command, needles, capsys):
    """Units in square brackets once vanished from --help (read as markup tags)."""
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for needle in needles:
        assert needle in text, needle
