"""Issue 15, item 4: tendon friction in `softrod hardware fit / replay` (`friction_sequence`
on `softrod.rods.solve_sequence`, the description's `tendon_friction` block)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from softrod.cli import main
from softrod.description import load_robot
from softrod.validate import (
    HardwareParams,
    calibrated_robot,
    predict_marker,
    read_recording,
    recording_path,
    replay_marker,
)
from softrod.validate._hardware import friction_sequence

#: The fit here: every 80th train row (21 rows), 1 least-squares evaluation (< 60 s alone).
STRIDE = 80
MAX_NFEV = 1
#: mu = 0 replays as the frictionless replay [m].
SAME_TOL_M = 1e-9
#: Rows of val replayed.
FEW_ROWS = 12
PARAMS = HardwareParams(
    stiffness=(6000.0, 7500.0, 5000.0),
    pretension=(0.2, 0.8, 2.0),
    angle_offset=(0.05, -0.02, 0.01),
    marker_offset=0.006,
    translation=(0.001, -0.002, 0.003),
    tilt=(0.01, -0.02),
)


def _short(tmp_path: Path) -> Path:
    with recording_path("ftdcr_v4", "val").open(newline="") as fh:
        rows = list(csv.reader(fh))[: FEW_ROWS + 1]
    path = tmp_path / "short.csv"
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


def _with_friction(tmp_path: Path, mu: float, servo_columns: list[str]) -> Path:
    spec = calibrated_robot("ftdcr_v4", PARAMS, servo_columns=servo_columns)
    path = tmp_path / f"mu{mu}.yaml"
    load_robot({**spec.to_dict(), "tendon_friction": {"mu": mu, "stick_band": 0.0}}).to_yaml(path)
    return path


def test_mu_zero_reproduces_the_frictionless_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = _short(tmp_path)
    rec = read_recording(short)
    want, ok = predict_marker("ftdcr_v4", PARAMS, rec.displacement)
    assert ok.all()
    fitted = _with_friction(tmp_path, 0.0, list(rec.servo_columns))
    assert main(["hardware", "replay", str(fitted), "--data", str(short), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["friction"] == {"mu": 0.0, "stick_band": 0.0}
    np.testing.assert_allclose(np.array(obj["tip_mm"]) * 1e-3, want, rtol=0, atol=SAME_TOL_M)
    # With friction the replay carries memory: it differs from the frictionless one.
    fitted = _with_friction(tmp_path, 0.2, list(rec.servo_columns))
    got, ok = replay_marker(load_robot(fitted), rec.displacement)
    assert ok.all()
    assert np.linalg.norm(got - want, axis=1).max() > 1e-5


def test_friction_sequence_takes_no_length_stick_band() -> None:
    spec = calibrated_robot("ftdcr_v4", PARAMS)
    with pytest.raises(ValueError, match="stick_band"):
        friction_sequence(spec, np.zeros((1, spec.n_tendons)), 0.1, 1e-4)


def _fit_ftdcr_v4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> tuple[Path, dict]:
    """`softrod hardware fit ftdcr_v4 ... OPTION` on the strided train file: (output, JSON)."""
    out = tmp_path / "fitted.yaml"
    train = recording_path("ftdcr_v4", "train")
    code = main(
        ["hardware", "fit", "ftdcr_v4", "--data", str(train), "-o", str(out), "--json",
         "--stride", str(STRIDE), "--max-nfev", str(MAX_NFEV), option]
    )  # fmt: skip
    assert code == 0
    return out, json.loads(capsys.readouterr().out)


def test_fit_with_friction_writes_the_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, fit = _fit_ftdcr_v4(tmp_path, capsys, "--friction")
    assert set(fit["friction"]) == {"mu", "stick_band"}
    assert 0.0 <= fit["friction"]["mu"] <= 1.0 and fit["friction"]["stick_band"] == 0.0
    assert "solve_sequence" in fit["friction_message"]
    block = yaml.safe_load(out.read_text())["tendon_friction"]
    assert block == pytest.approx(fit["friction"], rel=1e-12)
    short = _short(tmp_path)
    assert main(["hardware", "replay", str(out), "--data", str(short), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["friction"] == pytest.approx(fit["friction"], rel=1e-12)
    assert rep["rows"] == FEW_ROWS and rep["converged_fraction"] == 1.0


def test_tension_play_is_play_at_zero_per_tension_and_widens_with_tension() -> None:
    from softrod.validate._hardware import play, tension_play

    rng = np.random.default_rng(0)
    d = np.cumsum(rng.normal(0.0, 1e-4, size=(40, 3)), axis=0)
    every = np.ones(len(d), dtype=bool)
    flat = tension_play(d, 5e-5, 0.0, lambda i, e: np.full(3, 2.0), every)
    np.testing.assert_array_equal(flat, play(d, 5e-5))
    # A constant tension T: the play of width backlash + per_tension * T (after the first
    # solved row; the first row has no tension yet and follows the command).
    # A constant tension T from the first solved row on: the play of width backlash +
    # per_tension * T (the first row follows the command in both).
    wide = tension_play(d, 5e-5, 1e-4, lambda i, e: np.full(3, 2.0), every)
    np.testing.assert_array_equal(wide, play(d, 2.5e-4))
    assert np.abs(wide - d).max() > np.abs(flat - d).max()


def test_replay_with_tension_play_lags_the_command(tmp_path: Path) -> None:
    # A pull and its reversal: with the tension play the robot is bent further on the way back
    # at the same command (the effective displacement leads on release).
    short = _short(tmp_path)
    rec = read_recording(short)
    spec = calibrated_robot("ftdcr_v4", PARAMS, servo_columns=list(rec.servo_columns))
    d = np.r_[rec.displacement[:6], rec.displacement[4::-1]]
    base, ok0 = replay_marker(spec, d)
    cal = spec.calibration
    assert cal is not None
    played = spec.model_copy(
        update={"calibration": cal.model_copy(update={"backlash_per_tension": 1e-4})}
    )
    tips, ok = replay_marker(played, d)
    assert ok.all() and ok0.all()
    # Frictionless: out and back on one line; with the play: apart at equal command.
    assert np.linalg.norm(base[4] - base[6]) < 1e-9
    assert np.linalg.norm(tips[4] - tips[6]) > 1e-4
    # The static rod and the chain read the same block.
    chain, okc = replay_marker(played, d[:3], model="mujoco", links=10)
    assert okc.all() and np.isfinite(chain).all()


def test_fit_with_tension_backlash_writes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, fit = _fit_ftdcr_v4(tmp_path, capsys, "--tension-backlash")
    beta = fit["params"]["backlash_per_tension_m_per_N"]
    assert 0.0 <= beta <= 1e-3 and fit["friction"] is None
    assert yaml.safe_load(out.read_text())["calibration"]["backlash_per_tension"] == beta
    se = fit["standard_errors"]
    assert se is None or "backlash_per_tension_m_per_N" in se


def test_fit_friction_hole_wrap_and_tension_play_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 15 item 3 through the CLI on a short train file (25 rows, every 12th fitted, one
    # evaluation): capstan friction with the holes' own wrap and the tension play fitted
    # together, written to one file that replays through both (and through the friction alone).
    with recording_path("ftdcr_v4", "train").open(newline="") as fh:
        rows = list(csv.reader(fh))[:26]
    train = tmp_path / "train_short.csv"
    with train.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    out = tmp_path / "fitted.yaml"
    code = main(
        ["hardware", "fit", "ftdcr_v4", "--data", str(train), "-o", str(out), "--json",
         "--stride", "12", "--max-nfev", "1", "--friction", "--hole-wrap", "--tension-backlash"]
    )  # fmt: skip
    assert code == 0
    fit = json.loads(capsys.readouterr().out)
    assert set(fit["friction"]) == {"mu", "stick_band", "hole_wrap"}
    beta = fit["params"]["backlash_per_tension_m_per_N"]
    assert beta > 0.0
    se = fit["standard_errors"]
    assert se is None or {"mu", "hole_wrap_rad", "backlash_per_tension_m_per_N"} <= set(se)
    data = yaml.safe_load(out.read_text())
    assert data["tendon_friction"]["hole_wrap"] == pytest.approx(fit["friction"]["hole_wrap"])
    assert data["calibration"]["backlash_per_tension"] == beta
    short = _short(tmp_path)
    assert main(["hardware", "replay", str(out), "--data", str(short), "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert both["converged_fraction"] == 1.0 and both["friction"]["hole_wrap"] > 0.0
    # The same file without the play replays through friction_sequence: other tips.
    data["calibration"]["backlash_per_tension"] = 0.0
    alone = tmp_path / "friction_only.yaml"
    alone.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["hardware", "replay", str(alone), "--data", str(short), "--json"]) == 0
    fric = json.loads(capsys.readouterr().out)
    assert fric["converged_fraction"] == 1.0
    assert np.abs(np.array(fric["tip_mm"]) - np.array(both["tip_mm"])).max() > 1e-6
