"""How low can the calibrated model class go on val at all? (issue 15; docs/validation.md,
"The model class's own floor on val").

    PYTHONPATH=src python dev/hardware_capacity.py ROBOT OUT_DIR [--stride S] [--val-stride V]
    PYTHONPATH=src python dev/hardware_capacity.py ROBOT OUT_DIR --hold-marker
    PYTHONPATH=src python dev/hardware_capacity.py ROBOT OUT --with OPTION [--joint-only]

Fits `softrod hardware fit`'s model (the 15 parameters and the tension play, run to
convergence) three times: on the train file (the calibration), on the val file itself, and on
train + val as one recording (val was recorded right after train: `trainval.csv` in OUT_DIR,
the two files joined in time order), then replays every fit on the train and the val file (all
rows) and prints their errors. The fits on val are **not** calibrations (they see the held-out
rows): they measure the model class. A class that, fitted on val itself, cannot reach a target
on val cannot reach it from any train-only fit; a class that cannot fit train and val together
as well as each alone is misspecified for one of them (here: the three-segment patterns, which
only val holds). The fitted descriptions are left in OUT_DIR; `trainval.csv` can be passed to
the candidates' probes (`--fit-on`) for the same check with their extra parameters.

`--hold-marker`: one train fit with the marker offset held at the authors' value
(`AUTHOR_MARKER_OFFSET`, 8 mm, their pipeline's), replayed on train and val. A diagnostic of
which direction train leaves undetermined (ftdcr_v6's train fit puts the marker 23.7 mm beyond
the tip), chosen after the fits on val above: not a calibration.

`--with OPTION`: the fits with one of `softrod hardware fit`'s extra model options too
(`passthrough`, `lag`), or `backlash` (a constant play beside the tension play, the band
backlash + beta T: `calibrate_hardware(backlash=True)`, from 0.1 mm), to see whether it lowers
the misfit of the train + val fit (the capacity screen of a candidate); `--joint-only` runs the
train + val fit alone.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

import softrod.validate._hardware as hw
from softrod.validate import motion_direction, read_recording, recording_path
from softrod.validate._hardware import replay_marker
from softrod.validate._hardware_io import fit_recording, write_fitted

#: Start of the constant play (`--with backlash`) [m]: inside its bounds [0, 3 mm], not on 0.
CONSTANT_PLAY_START = 1e-4

sys.path.insert(0, str(Path(__file__).parent))
import hardware_rowprobe as rowprobe  # noqa: E402


def joined(robot: str, out: Path) -> Path:
    """train + val of `robot` as one CSV in time order (header once); raises if val does not
    start after train ends."""
    train, val = (recording_path(robot, s) for s in ("train", "val"))
    a, b = Path(train).read_text().splitlines(), Path(val).read_text().splitlines()
    if a[0] != b[0]:
        raise ValueError(f"{train} and {val} have different columns")
    t_end, t_start = float(a[-1].split(",")[0]), float(b[1].split(",")[0])
    if t_start <= t_end:
        raise ValueError(f"{val} starts at {t_start}, before {train} ends ({t_end})")
    path = out / "trainval.csv"
    path.write_text("\n".join(a + b[1:]) + "\n")
    t0, t_last = float(a[1].split(",")[0]), float(b[-1].split(",")[0])
    print(f"{robot}: train {t_end - t0:.0f} s, a gap of {t_start - t_end:.0f} s, then val "
          f"{t_last - t_start:.0f} s -> {path}")  # fmt: skip
    return path


def fit_constant_play(robot: str, path: Path, stride: int) -> hw.HardwareFit:
    """`fit_recording`'s fit (the 15 and the tension play) with a constant play too, from 0.1 mm
    (`fit_recording` has no option for it)."""
    n_t = hw.calibrated_robot(robot, hw.initial_params(robot)).n_tendons
    rec = read_recording(path, n_tendons=n_t)
    p0 = replace(hw.initial_params(robot), backlash=CONSTANT_PLAY_START)
    fit = hw.calibrate_hardware(
        robot, rec.as_tdcr(robot), stride=stride, initial=p0, backlash=True, tension_backlash=True
    )
    fit.extra.update(
        data=str(path), rows=rec.rows, stride=stride, servo_columns=list(rec.servo_columns)
    )
    se = fit.extra["standard_errors"]["backlash_m"]  # None where the Jacobian does not identify it
    se_text = "n/a" if se is None else f"{se * 1e6:.1f}"
    print(f"  constant play {fit.params.backlash * 1e6:.1f} +- {se_text} um, tension play "
          f"{fit.params.backlash_per_tension * 1e6:.1f} um/N")  # fmt: skip
    return fit


def errors(spec, rec) -> np.ndarray:
    tip, _ = replay_marker(spec, rec.displacement, t=rec.t)
    return np.linalg.norm(tip - rec.tip, axis=1) * 1e3


def main() -> None:
    args = sys.argv[1:]
    stride = rowprobe.option(args, "--stride", 8, int)
    val_stride = rowprobe.option(args, "--val-stride", 2, int)
    extra: dict[str, bool] = {}
    if "--with" in args:
        i = args.index("--with")
        extra[args[i + 1]] = True
        del args[i : i + 2]
        if not set(extra) <= {"passthrough", "lag", "backlash"}:
            raise SystemExit(f"--with takes passthrough, lag or backlash, got {list(extra)}")
    joint_only = "--joint-only" in args
    if joint_only:
        args.remove("--joint-only")
    hold = "--hold-marker" in args
    if hold:
        args.remove("--hold-marker")
        # The fit's bounds read this module constant: a 2 nm box holds the marker offset.
        m = hw.AUTHOR_MARKER_OFFSET
        hw.MARKER_BOUNDS = (m - 1e-9, m + 1e-9)
    robot, out = args[0], Path(args[1])
    out.mkdir(parents=True, exist_ok=True)
    data = {"train": (recording_path(robot, "train"), stride)}
    if not hold:
        data["val"] = (recording_path(robot, "val"), val_stride)
        data["train + val"] = (joined(robot, out), stride)
    if joint_only:
        data = {"train + val": data["train + val"]}
    specs = {}
    for name, (path, s) in data.items():
        t0 = time.time()
        fit = (
            fit_constant_play(robot, path, s)
            if "backlash" in extra
            else fit_recording(robot, path, stride=s, tension_backlash=True, **extra)
        )
        tag = "".join(f"_{k}" for k in extra) + ("_marker_held" if hold else "")
        stem = f"{robot}_{name.replace(' + ', '')}{tag}"
        specs[name] = write_fitted(fit, out / f"{stem}.yaml")
        print(f"fit on {name} (every {s}th row, {fit.train_rows} rows): {fit.nfev} evaluations, "
              f"converged {fit.converged}, RMSE {fit.rmse_after_mm:.2f} mm, "
              f"{time.time() - t0:.0f} s", flush=True)  # fmt: skip
    cols = next(iter(specs.values())).calibration.servo_columns
    recs = {
        s: read_recording(recording_path(robot, s), servo_columns=cols) for s in ("train", "val")
    }
    print(f"\n| {robot} fitted on | train mean / median [mm] | val mean / median [mm] | "
          "val pulling / releasing [mm] |")  # fmt: skip
    print("|---|---|---|---|")
    for name, spec in specs.items():
        e_tr, e_va = errors(spec, recs["train"]), errors(spec, recs["val"])
        d = motion_direction(recs["val"].displacement)
        pull, release = e_va[d > 0].mean(), e_va[d < 0].mean()
        print(f"| {name} | {e_tr.mean():.2f} / {np.median(e_tr):.2f} | {e_va.mean():.2f} / "
              f"{np.median(e_va):.2f} | {pull:.2f} / {release:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
