"""User flows of issue 19, item 6, found by running the documented commands as a new user: the
output policy holds for every command that writes a file (sweep, demos, teleop included), an
interrupted render keeps no partial video, figures number tendons from 0 like the inputs, and
README and docs/cli.md agree on the demo's duration. The other bullets are tested beside their
commands (tests/test_cli_outputs.py, tests/test_sweep.py, tests/test_sysid.py)."""

from __future__ import annotations

import importlib.util
import re
import textwrap
from pathlib import Path

import pytest
import yaml

import softrod
import softrod.cli._learn_cmds  # noqa: F401  (registers the commands)
import softrod.cli._mujoco_cmds  # noqa: F401
import softrod.cli._sysid_cmds  # noqa: F401
from softrod.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _one_line_error(capsys: pytest.CaptureFixture[str], needle: str) -> None:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow not installed")
def test_sweep_follows_the_overwrite_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    task = tmp_path / "tasks.py"
    task.write_text(
        textwrap.dedent(
            """
            def task(point):
                return {"y": 2 * point.inputs["x"]}
            """
        )
    )
    spec = tmp_path / "s.yaml"
    design = {"kind": "grid", "parameters": {"inputs.x": {"values": [1, 2]}}}
    body = {"name": "s", "task": "tasks.py:task", "inputs": {"x": 0}, "design": design}
    spec.write_text(yaml.safe_dump(body))
    out = tmp_path / "r.parquet"
    argv = ["sweep", str(spec), "-o", str(out), "--workers", "1", "--no-progress"]
    assert main(argv) == 0
    capsys.readouterr()
    before = out.read_bytes()
    # Refused without a flag, the message names both ways on.
    assert main(argv) == 2
    _one_line_error(capsys, "--overwrite")
    assert out.read_bytes() == before
    assert main([*argv, "--resume", "--overwrite"]) == 2
    _one_line_error(capsys, "exclude each other")
    # --overwrite replaces it (another design: only its points are in the new file).
    design["parameters"]["inputs.x"]["values"] = [5]
    spec.write_text(yaml.safe_dump(body))
    assert main([*argv, "--overwrite"]) == 0
    from softrod.sweep import read_results

    assert read_results(out).column("y").to_pylist() == [10]


def test_recorded_demonstrations_are_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """`demos` and `teleop` record for minutes: an existing file is refused before recording."""
    old = tmp_path / "demos.npz"
    old.write_bytes(b"an hour of teleoperation")
    argv = ["demos", "FlipSwitch-v0", "-n", "1", "--no-progress"]
    assert main([*argv, "-o", str(old)]) == 2
    _one_line_error(capsys, "--overwrite")
    # The suffix is added as save() adds it: `-o demos` means demos.npz.
    assert main([*argv, "-o", str(tmp_path / "demos")]) == 2
    _one_line_error(capsys, "--overwrite")
    teleop = ["teleop", "PlanarReach-v0", "--backend", "script", "--keys", "..."]
    assert main([*teleop, "-o", str(old)]) == 2
    _one_line_error(capsys, "--overwrite")
    assert old.read_bytes() == b"an hour of teleoperation"


def test_teleop_overwrite_replaces_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    old = tmp_path / "keys.npz"
    old.write_bytes(b"old")
    argv = ["teleop", "PlanarReach-v0", "--backend", "script", "--keys", "..", "-o", str(old)]
    assert main([*argv, "--overwrite"]) == 0
    from softrod.learn import DemoSet

    assert DemoSet.load(old).n_episodes == 1


def test_interrupted_render_keeps_no_partial_video(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    """Ctrl-C mid-video: exit 130, no file under the final name, no temporary left behind, and
    an earlier video being replaced with --overwrite is kept whole."""
    import softrod.mujoco

    def half_a_video(model, data, path, **kw):
        Path(path).write_bytes(b"half a video")
        raise KeyboardInterrupt

    monkeypatch.setattr(softrod.mujoco, "render_video", half_a_video)
    out = tmp_path / "v.mp4"
    argv = ["render", "tdcr3", "--links", "3", "-o", str(out), "--duration", "0.1"]
    assert main(argv) == 130
    assert list(tmp_path.iterdir()) == []
    out.write_bytes(b"an earlier whole video")
    assert main([*argv, "--overwrite"]) == 130
    assert [p.name for p in tmp_path.iterdir()] == ["v.mp4"]
    assert out.read_bytes() == b"an earlier whole video"


def test_figures_number_tendons_from_zero_like_the_inputs():
    """The demo's panel titles name tendons by their input index and give that tendon's angle
    and segment; legends label tension k as τk."""
    from softrod.cli._demo import _tdcr_pulls, _tension_label
    from softrod.description import find_robot

    tendons = softrod.load_robot(find_robot("tdcr3")).tendon_list()
    for pull in _tdcr_pulls(quick=True):
        pulled = {k for k, t in enumerate(pull.pattern) if t > 0}
        named = re.findall(r"(\d+) \((?:segment (\d+), )?(\d+)°\)", pull.title)
        assert {int(k) for k, _, _ in named} == pulled, pull.title
        for k, segment, angle in named:
            seg, tendon = tendons[int(k)]
            assert float(angle) == pytest.approx(tendon.angle_deg % 360), pull.title
            if segment:
                assert int(segment) == seg, pull.title
    assert _tension_label([0.0, 2.0, 0.0, 1.5]) == "τ1 = 2, τ3 = 1.5 N"


def test_readme_and_cli_docs_agree_on_the_demo_duration():
    readme = (ROOT / "README.md").read_text()
    cli = (ROOT / "docs" / "cli.md").read_text()
    a = re.search(r"\((\d+) s by `make demo`", readme)
    b = re.search(r"MuJoCo part (\d+) s by `make demo`", cli)
    assert a and b and a.group(1) == b.group(1)


def test_no_help_text_offers_a_double_negative_flag(capsys: pytest.CaptureFixture[str]):
    """`bc --help` once listed `--no-dedup / --no-no-dedup [default: no-no-dedup]`."""
    from softrod.cli import app

    names = [c.name for c in app.registered_commands if c.name]
    assert "bc" in names
    for name in names:
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        assert "--no-no-" not in text, name
    assert main(["bc", "--help"]) == 0
    assert "--no-dedup" in capsys.readouterr().out


def test_cli_calibration_of_an_unidentifiable_pair_prints_null_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """From tendon data alone only offset / E matters: the CLI's JSON has null standard errors
    and says why (the docs' promise), into a folder that did not exist."""
    import json

    import numpy as np

    from softrod.description import find_robot
    from softrod.sysid import Measurements, predict_tips

    spec = softrod.load_robot(find_robot("tdcr3"))
    tensions = np.random.default_rng(4).uniform(0.0, 1.0, (8, spec.n_tendons))
    clean = Measurements(tensions, "tension", np.zeros((8, 3)), np.zeros((8, 3)))
    csv = tmp_path / "tips.csv"
    clean.with_tip(predict_tips(spec, clean)).to_csv(csv)
    out = tmp_path / "new" / "fit.yaml"
    argv = ["calibrate", "tdcr3", "--data", str(csv), "--fit", "youngs_modulus,offset"]
    assert main([*argv, "-o", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["stderr"]["youngs_modulus"] is None and payload["stderr"]["offset"] is None
    assert "not separately identifiable" in payload["message"]
    assert out.is_file()


def test_import_somo_into_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    link = {"shape_type": "box", "dimensions": [0.46, 0.34, 0.1], "mass": 0.0025}
    joints = [{"joint_type": "revolute", "axis": [1, 0, 0], "spring_stiffness": 278.57}]
    act = {
        "actuator_length": 1.0,
        "n_segments": 4,
        "planar_flag": 1,
        "link_definition": link,
        "joint_definitions": joints,
    }
    src = tmp_path / "finger.yaml"
    definition = {"manipulator_name": "finger", "n_act": 1, "actuator_definitions": [act]}
    src.write_text(yaml.safe_dump(definition))
    out = tmp_path / "a" / "b" / "finger_robot.yaml"
    assert main(["import-somo", str(src), "-o", str(out), "--world-scale", "0.05"]) == 0
    assert softrod.load_robot(out).n_segments >= 1
    # A folder given as the output file: one line, before any work.
    assert main(["import-somo", str(src), "-o", str(tmp_path / "a")]) == 2
    _one_line_error(capsys, "must be a file")
