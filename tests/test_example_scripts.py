"""The scripts under examples/ stay runnable: each imports and answers `--help` (its usage, no
work done), and the ones that need no trained run or recorded data run for real, into a scratch
folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "examples").rglob("*.py"))
#: Seconds a script may take: `--help` imports softrod (and MuJoCo, torch) in 1-5 s here.
HELP_TIMEOUT = 120
#: Seconds for a real run of the cheap scripts below (10-40 s each on the 2-core machine).
RUN_TIMEOUT = 300
#: Least tip motion [mm] of a finger that closed (at 0 Pa each moves 0.0 mm).
FINGER_CLOSED_MM = 10.0


def test_examples_hold_scripts():
    assert len(SCRIPTS) >= 16, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_script_answers_help(script: Path, tmp_path: Path, run_script):
    proc = run_script([script, "--help"], tmp_path, HELP_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("usage:"), proc.stdout[:500]
    assert not any(tmp_path.iterdir()), "--help wrote files"


def test_env_gallery_renders_every_environment(tmp_path: Path, run_script):
    import imageio.v3 as iio

    import softrod.envs

    out = tmp_path / "gallery.png"
    script = ROOT / "examples" / "learning" / "env_gallery.py"
    proc = run_script([script, "-o", out, "--steps", "2"], tmp_path, RUN_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = iio.imread(out)
    rows = -(-len(softrod.envs.ENV_IDS) // 3)
    assert image.shape[:2] == (240 * rows, 320 * 3)
    assert image.std() > 10.0  # rendered scenes, not a blank canvas


def test_somo_scene_example_closes_the_fingers(tmp_path: Path, run_script):
    script = ROOT / "examples" / "somo" / "run_scene.py"
    scene = ROOT / "examples" / "somo" / "hand.yaml"
    proc = run_script([script, scene], tmp_path, RUN_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    moved = [float(m) for m in re.findall(r"tip moved ([0-9.]+) mm", proc.stdout)]
    # The hand's four fingers, each closed by tens of millimetres (32-44 mm at 60 kPa).
    assert len(moved) == 4 and min(moved) > FINGER_CLOSED_MM, proc.stdout
