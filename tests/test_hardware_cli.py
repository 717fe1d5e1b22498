"""Issue 15, items 4 and 5: `softrod hardware fit / replay`, the calibration block of a robot
description, bad recordings, standard errors and the bootstrap interval (docs/validation.md,
"hardware fit / replay")."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from softrod.cli import main
from softrod.datasets import TdcrRecording
from softrod.description import find_robot, load_robot
from softrod.dynamics import build_lgvi_model
from softrod.mujoco import build_spec
from softrod.rods import compile_model, solve_static
from softrod.validate import (
    HardwareParams,
    bootstrap_mean_interval,
    calibrate_hardware,
    calibrated_robot,
    hardware_study,
    motion_direction,
    predict_marker,
    read_recording,
    recording_path,
    replay_marker,
    standard_errors,
)
from softrod.validate._hardware import initial_params

#: The fit in these tests: every 40th train row (41 rows), 2 least-squares evaluations.
STRIDE = 40
MAX_NFEV = 2
#: Replay vs `predict_marker` on the same rows and parameters [m] (same arithmetic: the YAML
#: round trip of the parameters is exact).
SAME_TOL_M = 1e-9
#: A coarse fit still predicts val within this mean [mm] (the authors' parameters: 14.6 mm);
#: a wrong frame (yaw, axis) or unit (m vs mm) would be tens to thousands of mm off.
FRAME_MEAN_MM = 20.0
#: Rows of val replayed in the equality and MuJoCo checks.
FEW_ROWS = 12


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="") as fh:
        return list(csv.reader(fh))


def _write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fit") / "fitted.yaml"
    train = recording_path("ftdcr_v4", "train")
    code = main(
        ["hardware", "fit", "ftdcr_v4", "--data", str(train), "-o", str(out), "--json",
         "--stride", str(STRIDE), "--max-nfev", str(MAX_NFEV)]
    )  # fmt: skip
    assert code == 0
    return out


def test_fit_json_and_replay_json(
    fitted: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = fitted
    train = recording_path("ftdcr_v4", "train")
    out2 = tmp_path / "again.yaml"
    code, out, err = run(
        capsys, "hardware", "fit", "ftdcr_v4", "--data", train, "-o", out2, "--json",
        "--stride", 400, "--max-nfev", 1,
    )  # fmt: skip
    assert code == 0, err
    fit = json.loads(out)
    keys = (
        "params",
        "standard_errors",
        "standard_errors_message",
        "friction",
        "friction_message",
        "rmse_before_mm",
        "rmse_after_mm",
        "train_rows",
        "output",
    )
    assert set(keys) <= fit.keys()
    assert fit["friction"] is None and "mu fixed at 0" in fit["friction_message"]
    assert fit["train_rows"] == 5 and out2.is_file()

    val = recording_path("ftdcr_v4", "val")
    code, out, err = run(capsys, "hardware", "replay", path, "--data", val, "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert {"tip_mm", "rows", "model"} <= obj.keys()
    assert obj["model"] == "static"
    rec = read_recording(val)
    assert obj["rows"] == rec.rows == len(obj["tip_mm"]) == 443
    tip = np.array(obj["tip_mm"])
    assert tip.shape == (443, 3)
    # The recording's frame and units (mm): close to its own tip_x/y/z columns.
    raw = np.array([[float(r[i]) for i in (-3, -2, -1)] for r in _rows(val)[1:]])
    assert np.linalg.norm(tip - raw, axis=1).mean() < FRAME_MEAN_MM
    assert obj["mean_error_mm"] == pytest.approx(np.linalg.norm(tip - raw, axis=1).mean())


def test_fit_says_whether_it_converged(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The default cap lets the fit stop on SciPy's tolerances (5 rows: ~40 steps); a cap that
    # stops it first is reported, in the JSON and as a line of the text output.
    train = recording_path("ftdcr_v4", "train")
    out = tmp_path / "fit.yaml"
    code, text, err = run(
        capsys, "hardware", "fit", "ftdcr_v4", "--data", train, "-o", out, "--json",
        "--stride", 400,
    )  # fmt: skip
    assert code == 0, err
    fit = json.loads(text)
    assert fit["converged"] is True and "termination" in fit["message"]
    assert 1 < fit["nfev"] < 100
    code, text, err = run(
        capsys, "hardware", "fit", "ftdcr_v4", "--data", train, "-o", out, "--overwrite",
        "--stride", 400, "--max-nfev", 1,
    )  # fmt: skip
    assert code == 0, err
    assert "not converged: stopped after 1 trust-region step (--max-nfev 1)" in text


def test_fit_reports_progress_per_evaluation() -> None:
    # The callback sees every evaluation of the strided rows: the first is the start's RMSE.
    seen: list[tuple[int, float]] = []
    fit = calibrate_hardware(
        "ftdcr_v4", stride=400, max_nfev=1, progress=lambda n, r: seen.append((n, r))
    )
    assert [n for n, _ in seen] == list(range(1, len(seen) + 1)) and len(seen) > 1
    assert seen[0][1] == pytest.approx(fit.rmse_before_mm, rel=1e-12)


def test_fitted_description_loads_in_every_model(fitted: Path) -> None:
    spec = load_robot(fitted)
    assert spec.calibration is not None
    assert spec.calibration.servo_columns[0] == "servo_4_mm"  # the file's order
    assert spec.n_tendons == len(spec.calibration.pretension) == 9
    # Static solver.
    sol = solve_static(compile_model(spec), tensions=np.full(9, 0.5))
    assert sol.success
    # MuJoCo chain.
    model = build_spec(spec, links=6).compile()
    assert model.ntendon >= 9
    # LGVI.
    lgvi = build_lgvi_model(spec)
    assert lgvi is not None
    # The block survives a round trip; a description without it writes none.
    assert load_robot(spec.to_dict()) == spec
    assert "calibration" not in load_robot(find_robot("ftdcr_v4")).to_dict()


def test_replay_equals_predict_marker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    val = recording_path("ftdcr_v4", "val")
    rows = _rows(val)
    short = _write(tmp_path / "short.csv", rows[: FEW_ROWS + 1])
    p = HardwareParams(
        stiffness=(6000.0, 7500.0, 5000.0),
        pretension=(0.2, 0.8, 2.0),
        angle_offset=(0.05, -0.02, 0.01),
        marker_offset=0.006,
        translation=(0.001, -0.002, 0.003),
        tilt=(0.01, -0.02),
        backlash=2e-4,
    )
    rec = read_recording(short)
    spec = calibrated_robot("ftdcr_v4", p, servo_columns=list(rec.servo_columns))
    fitted = tmp_path / "p.yaml"
    spec.to_yaml(fitted)
    code, out, err = run(capsys, "hardware", "replay", fitted, "--data", short, "--json")
    assert code == 0, err
    got = np.array(json.loads(out)["tip_mm"]) * 1e-3
    want, ok = predict_marker("ftdcr_v4", p, rec.displacement)
    assert ok.all()
    np.testing.assert_allclose(got, want, rtol=0, atol=SAME_TOL_M)
    # The MuJoCo model through the same description (chain vs rod: within 1 mm).
    code, out, err = run(
        capsys, "hardware", "replay", fitted, "--data", short, "--json", "--model", "mujoco"
    )
    assert code == 0, err
    obj = json.loads(out)
    assert obj["model"] == "mujoco" and obj["rows"] == FEW_ROWS
    assert np.linalg.norm(np.array(obj["tip_mm"]) * 1e-3 - want, axis=1).max() < 1e-3


def _bad(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    rows = _rows(recording_path("ftdcr_v4", "val"))[:8]
    return _write(tmp_path / "bad.csv", edit(rows) or rows)


def _drop(rows: list[list[str]], name: str) -> list[list[str]]:
    i = rows[0].index(name)
    return [r[:i] + r[i + 1 :] for r in rows]


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda r: _drop(r, "servo_1_mm"), ["8 servo columns", "9 tendons"]),
        (lambda r: _drop(r, "tip_y"), ["missing column", "tip_y"]),
        (lambda r: r[4].__setitem__(5, "nan"), ["line 5", "servo_5_mm", "NaN"]),
        (lambda r: r[3].__setitem__(0, "1.0"), ["line 4", "timestamp", "non-monotonic"]),
    ],
    ids=["tendon-count", "missing-column", "nan-row", "time-order"],
)
def test_bad_recordings_fail_cleanly(
    edit, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    bad = _bad(tmp_path, edit)
    out = tmp_path / "fitted.yaml"
    code, stdout, err = run(capsys, "hardware", "fit", "ftdcr_v4", "--data", bad, "-o", out)
    assert code == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1 and str(bad) in err
    for w in words:
        assert w in err, err
    assert not out.exists() and not list(tmp_path.glob("*.partial*"))


def test_replay_bad_input(fitted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = fitted
    # Same tendon count, a column the robot was fitted on is missing (renamed).
    bad = _bad(tmp_path, lambda r: r[0].__setitem__(2, "servo_99_mm"))
    code, out, err = run(capsys, "hardware", "replay", path, "--data", bad, "--json")
    assert code == 2 and out == "" and "servo_4_mm" in err and str(bad) in err
    # A robot with a different tendon count than the recording.
    spec = load_robot(path).model_dump()
    spec["segments"][2]["tendons"] = spec["segments"][2]["tendons"][:2]
    spec["calibration"]["servo_columns"] = spec["calibration"]["servo_columns"][:8]
    spec["calibration"]["pretension"] = spec["calibration"]["pretension"][:8]
    eight = tmp_path / "eight.yaml"
    load_robot(spec).to_yaml(eight)
    val = recording_path("ftdcr_v4", "val")
    code, out, err = run(capsys, "hardware", "replay", eight, "--data", val, "--json")
    assert code == 2 and "9 servo columns" in err and "8 tendons" in err
    # A description without a calibration block; an unknown model.
    code, out, err = run(capsys, "hardware", "replay", "ftdcr_v4", "--data", val)
    assert code == 2 and "no calibration block" in err
    code, out, err = run(capsys, "hardware", "replay", path, "--data", val, "--model", "x")
    assert code == 2 and "--model" in err


def test_standard_errors_match_linear_regression() -> None:
    rng = np.random.default_rng(0)
    jac = rng.normal(size=(50, 3))
    r = rng.normal(size=50)
    se, msg = standard_errors(jac, r)
    assert msg == "ok" and se is not None
    cov = np.linalg.inv(jac.T @ jac) * (r @ r) / (50 - 3)
    np.testing.assert_allclose(se, np.sqrt(np.diag(cov)), rtol=1e-10)
    # A parameter the residuals do not depend on: not identifiable, named.
    jac[:, 1] = 0.0
    se, msg = standard_errors(jac, r, np.array(["a", "b", "c"]))
    assert se is None and "not identifiable" in msg and "b" in msg


def test_bootstrap_interval_and_direction() -> None:
    e = np.r_[np.full(10, 1.0), np.full(10, 3.0), np.full(10, 5.0)]
    blocks = np.repeat(["a", "b", "c"], 10)
    lo, hi = bootstrap_mean_interval(e, blocks, seed=1)
    assert 1.0 <= lo < 3.0 < hi <= 5.0
    assert (lo, hi) == bootstrap_mean_interval(e, blocks, seed=1)  # seeded
    assert bootstrap_mean_interval(np.full(30, 2.0), blocks, seed=2) == (2.0, 2.0)
    d = np.zeros((5, 9))
    d[1, 0], d[2, 0], d[3, 0], d[4, 0] = 1e-3, 2e-3, 1e-3, 1e-3
    np.testing.assert_array_equal(motion_direction(d), [0, 1, 1, -1, 0])


def test_friction_parameters_are_fitted_with_a_sequence_model() -> None:
    """The hook for the static solver's friction sequence: a stand-in whose stick band is a
    play on the commanded lengths and which ignores mu (so mu is not identifiable)."""
    train = read_recording(recording_path("ftdcr_v4", "train")).as_tdcr("ftdcr_v4")
    small = TdcrRecording(
        robot="ftdcr_v4", split="train", t=train.t[:200:25], pattern=train.pattern[:200:25],
        displacement=train.displacement[:200:25], servo_ids=(), tip=train.tip[:200:25],
    )  # fmt: skip
    seen: list[tuple[float, float]] = []

    def sequence(spec, lengths, mu, band):  # type: ignore[no-untyped-def]
        seen.append((mu, band))
        model = compile_model(spec)
        ell = lengths.copy()
        for i in range(1, len(ell)):
            ell[i] = np.clip(ell[i - 1], lengths[i] - band, lengths[i] + band)
        tips, tangents = [], []
        for row in ell:
            sol = solve_static(model, lengths=row)
            tips.append(sol.tip_position)
            tangents.append(np.asarray(sol.tip_rotation)[:, 2])
        return np.array(tips), np.array(tangents), np.ones(len(ell), dtype=bool)

    fit = calibrate_hardware("ftdcr_v4", small, stride=1, max_nfev=1, sequence_model=sequence)
    assert fit.extra["friction"] is not None
    assert set(fit.extra["friction"]) == {"mu", "stick_band"}
    assert len({s[1] for s in seen}) > 1  # the stick band was varied
    assert fit.extra["standard_errors"] is None
    assert "mu" in fit.extra["standard_errors_message"]
    # Without friction the sequence is the plain replay.
    spec = calibrated_robot("ftdcr_v4", initial_params("ftdcr_v4"))
    a, _ = replay_marker(spec, small.displacement[:3])
    b, _ = replay_marker(spec, small.displacement[:3], sequence_model=sequence, friction=(0, 0))
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_validate_hardware_study_keys(tmp_path: Path) -> None:
    obj = hardware_study(
        tmp_path, robots=("ftdcr_v4",), stride=400, max_nfev=1, mujoco=False, seed=7
    )
    e = obj["robots"]["ftdcr_v4"]
    m = e["models"]["static"]
    # Today's keys stay; the new ones are added.
    for key in (
        "mean_mm",
        "median_mm",
        "max_mm",
        "converged_fraction",
        "seconds",
        "mean_ci_mm",
        "pulling_mean_mm",
        "releasing_mean_mm",
    ):
        assert key in m
    for key in (
        "params",
        "train_rmse_after_mm",
        "val_rows",
        "val_uncalibrated_static_mean_mm",
        "standard_errors",
        "friction",
        "bootstrap",
        "fitted_description",
    ):
        assert key in e
    assert e["bootstrap"]["seed"] == 7
    lo, hi = m["mean_ci_mm"]
    assert lo <= m["mean_mm"] <= hi
    assert math.isfinite(m["pulling_mean_mm"]) and math.isfinite(m["releasing_mean_mm"])
    cal = load_robot(e["fitted_description"]).calibration
    assert cal is not None
    # The validation fits and replays the tension play (friction behind a compliance).
    assert cal.backlash_per_tension == e["params"]["backlash_per_tension_m_per_N"] > 0.0
    assert e["standard_errors"] is None or "backlash_per_tension_m_per_N" in e["standard_errors"]
    assert (tmp_path / "hardware_ftdcr_v4_loops.png").is_file()
    assert obj["val_mean_tip_error_mm"]["ftdcr_v4"]["static"] == m["mean_mm"]
