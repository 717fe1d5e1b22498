"""`softrod hardware fit / replay` as library calls: recordings read from any CSV file with one
clear error per bad input, one calibrated robot description written atomically, and a replay
that returns the recording's frame and units.

Recording format (the seed-002 motion-capture files, `data/opencr-mujoco/data/sysid/`): a header
row, then one row per sample; `timestamp` [s], optional `pattern_label`, the tendon
displacements `servo_<id>_mm` (positive = pulled in) and the marker `tip_x`, `tip_y`, `tip_z`,
lengths in mm. Rows are in time order (the replay carries state from row to row).
"""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml

from softrod.datasets import TdcrRecording, data_root
from softrod.description import RobotSpec, TendonFrictionSpec, find_robot, load_robot
from softrod.validate._hardware import (
    DEFAULT_MAX_NFEV,
    DEFAULT_STRIDE,
    FRICTION_INITIAL,
    ROBOTS,
    HardwareFit,
    SequenceModel,
    calibrate_hardware,
    calibrated_robot,
    description_friction,
    friction_sequence,
    initial_params,
    replay_marker,
    tip_errors_mm,
)
from softrod.validate._records import write_text_atomic

__all__ = [
    "HardwareDataError",
    "Recording",
    "Replay",
    "fit_recording",
    "fit_summary",
    "fitted_robot",
    "read_recording",
    "recording_path",
    "replay_recording",
    "write_fitted",
]

#: Column names of the recording format.
TIME_COLUMN = "timestamp"
PATTERN_COLUMN = "pattern_label"
TIP_COLUMNS = ("tip_x", "tip_y", "tip_z")
SERVO_PREFIX = "servo_"
#: Units of the recording's lengths -> metres.
RECORDING_UNIT = 1e-3
#: Why the fit has no friction today (its JSON says so next to `"friction": null`).
NO_FRICTION_MESSAGE = (
    "mu fixed at 0: fitted without --friction; rows are frictionless warm-started solves"
)
#: With --friction: what is fitted (solve_sequence's stick band is tension control only).
FRICTION_MESSAGE = (
    "mu fitted with softrod.rods.solve_sequence (capstan friction, state carried row to row); "
    "stick_band held at 0 (a tension band [N], tension control only; the length-command "
    "analogue is backlash)"
)

#: With --hole-wrap: the holes' own wrap is fitted too.
HOLE_WRAP_MESSAGE = "; hole_wrap fitted (the holes' own wrap angle [rad], friction where straight)"


class HardwareDataError(ValueError):
    """A recording or fitted description that cannot be used; the message names the file and
    the column or row (line numbers count the header as line 1)."""


@dataclass(frozen=True)
class Recording:
    """A recording read by `read_recording`.

    path; t : (k,) [s] from the first row; pattern : (k,) labels ('' without the column);
    servo_columns : the displacement columns used, in tendon order; displacement : (k, n) [m];
    tip : (k, 3) [m] or None without tip columns.
    """

    path: Path
    t: np.ndarray
    pattern: np.ndarray
    servo_columns: tuple[str, ...]
    displacement: np.ndarray
    tip: np.ndarray | None

    @property
    def rows(self) -> int:
        return int(self.t.shape[0])

    def as_tdcr(self, robot: str) -> TdcrRecording:
        """The recording as `softrod.datasets.TdcrRecording` (tips required)."""
        if self.tip is None:
            raise HardwareDataError(f"{self.path}: missing columns {', '.join(TIP_COLUMNS)}")
        return TdcrRecording(
            robot=robot,
            split=self.path.name,
            t=self.t,
            pattern=self.pattern,
            displacement=self.displacement,
            servo_ids=(),
            tip=self.tip,
        )


def recording_path(robot: str, split: str, root: str | Path | None = None) -> Path:
    """The `*_<split>.csv` recording of a seed-002 robot (train, val, tendon_pull)."""
    folder = data_root(root) / "opencr-mujoco" / "data" / "sysid" / robot
    matches = sorted(folder.glob(f"*_{split}.csv"))
    if not matches:
        raise FileNotFoundError(f"no *_{split}.csv in {folder}")
    return matches[0]


def _number(text: str, path: Path, line: int, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise HardwareDataError(
            f"{path}: line {line}, column {column}: not a number: {text.strip()!r}"
        ) from None
    if not math.isfinite(value):
        raise HardwareDataError(f"{path}: line {line}, column {column}: {text.strip()} (NaN row)")
    return value


def read_recording(
    path: str | Path,
    servo_columns: list[str] | tuple[str, ...] | None = None,
    n_tendons: int | None = None,
    need_tip: bool = True,
) -> Recording:
    """Read and check a recording CSV.

    servo_columns : the displacement columns in tendon order (a fitted robot's); default the
    file's `servo_*` columns in file order. n_tendons : the robot's tendon count, checked
    against the file's servo columns. need_tip : the tip columns must be there (fitting).

    Raises HardwareDataError naming the file and the column or line: missing columns, a short
    row, a value that is not a finite number (NaN rows), time going backwards, a tendon count
    that differs from the robot's; FileNotFoundError for a missing file.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"recording not found: {p}")
    with p.open(newline="") as fh:
        rows = [r for r in csv.reader(fh)]
    if not rows:
        raise HardwareDataError(f"{p}: empty file (expected a header row)")
    header = [h.strip() for h in rows[0]]
    in_file = [h for h in header if h.startswith(SERVO_PREFIX)]
    if n_tendons is not None and len(in_file) != n_tendons:
        raise HardwareDataError(
            f"{p}: {len(in_file)} servo columns ({SERVO_PREFIX}*) but the robot has {n_tendons} "
            "tendons"
        )
    columns = list(servo_columns) if servo_columns is not None else in_file
    if not columns:
        raise HardwareDataError(f"{p}: missing columns: no {SERVO_PREFIX}* column")
    required = [TIME_COLUMN, *columns, *(TIP_COLUMNS if need_tip else ())]
    missing = [c for c in required if c not in header]
    if missing:
        raise HardwareDataError(f"{p}: missing column(s) {', '.join(missing)}")
    has_tip = all(c in header for c in TIP_COLUMNS)
    idx = {c: header.index(c) for c in [*required, *(TIP_COLUMNS if has_tip else ())]}
    pat_idx = header.index(PATTERN_COLUMN) if PATTERN_COLUMN in header else None
    body = [(i + 2, r) for i, r in enumerate(rows[1:]) if any(f.strip() for f in r)]
    if not body:
        raise HardwareDataError(f"{p}: no data rows")
    t = np.empty(len(body))
    disp = np.empty((len(body), len(columns)))
    tip = np.empty((len(body), 3)) if has_tip else None
    pattern = []
    for k, (line, r) in enumerate(body):
        if len(r) != len(header):
            raise HardwareDataError(
                f"{p}: line {line}: {len(r)} fields, the header has {len(header)}"
            )
        t[k] = _number(r[idx[TIME_COLUMN]], p, line, TIME_COLUMN)
        if k and t[k] < t[k - 1]:
            raise HardwareDataError(
                f"{p}: line {line}: {TIME_COLUMN} {r[idx[TIME_COLUMN]].strip()} is before the "
                "previous row's (non-monotonic time: rows must be in time order)"
            )
        for j, c in enumerate(columns):
            disp[k, j] = _number(r[idx[c]], p, line, c)
        if tip is not None:
            for j, c in enumerate(TIP_COLUMNS):
                tip[k, j] = _number(r[idx[c]], p, line, c)
        pattern.append(r[pat_idx] if pat_idx is not None else "")
    return Recording(
        path=p,
        t=t - t[0],
        pattern=np.array(pattern),
        servo_columns=tuple(columns),
        displacement=disp * RECORDING_UNIT,
        tip=None if tip is None else tip * RECORDING_UNIT,
    )


def fit_recording(
    robot: str,
    data: str | Path,
    stride: int = DEFAULT_STRIDE,
    max_nfev: int = DEFAULT_MAX_NFEV,
    sequence_model: SequenceModel | None = None,
    friction: bool = False,
    hole_wrap: bool = False,
    tension_backlash: bool = False,
    lag: bool = False,
    passthrough: bool = False,
    progress: Callable[[int, float], None] | None = None,
) -> HardwareFit:
    """Calibrate `robot` (ftdcr_v4 or ftdcr_v6) on the recording `data` only (every `stride`-th
    row; `calibrate_hardware`). `extra` adds `data`, `rows`, `stride`, `servo_columns` and
    `friction_message` to the calibration's standard errors and friction.

    friction : also fit the tendon friction coefficient mu with `friction_sequence` (the strided
    rows as one sequence in time order; stick band held at 0). hole_wrap : with friction, also
    fit the holes' own wrap angle (`tendon_friction.hole_wrap`, friction where the robot is
    straight). tension_backlash : also fit the play per newton of tendon tension
    (`calibration.backlash_per_tension`; with friction both are fitted). lag : also fit a
    first-order lag of the displacements over the recording's time
    (`calibration.lag_time_constant`, `lag_fraction`; `calibrate_hardware`). passthrough : also
    fit the coupling between segments, the distal tendons' radius in the proximal disks (one
    scale per distal segment, written as the tendons' `offsets` routing; `passthrough_routing`).
    sequence_model :
    another stateful model instead (its mu and stick band both fitted). progress : called after
    each evaluation of the train rows with (evaluations so far, their RMSE [mm])."""
    if robot not in ROBOTS:
        raise ValueError(
            f"ROBOT must be one of {', '.join(ROBOTS)} (robots with priors), got {robot!r}"
        )
    if stride < 1 or max_nfev < 1:
        raise ValueError(f"stride and max_nfev must be >= 1, got {stride} and {max_nfev}")
    n_t = calibrated_robot(robot, initial_params(robot)).n_tendons
    rec = read_recording(data, n_tendons=n_t)
    friction = friction or hole_wrap
    own = friction and sequence_model is None
    model = friction_sequence if own else sequence_model
    fit = calibrate_hardware(
        robot,
        rec.as_tdcr(robot),
        stride=stride,
        max_nfev=max_nfev,
        sequence_model=model,
        friction0=(FRICTION_INITIAL[0], 0.0) if own else FRICTION_INITIAL,
        fit_stick_band=not own,
        fit_hole_wrap=hole_wrap and model is not None,
        tension_backlash=tension_backlash,
        lag=lag,
        passthrough=passthrough,
        progress=progress,
    )
    message = (
        (FRICTION_MESSAGE + HOLE_WRAP_MESSAGE if hole_wrap else FRICTION_MESSAGE)
        if own
        else "fitted"
    )
    fit.extra.update(
        data=str(rec.path),
        rows=rec.rows,
        stride=stride,
        servo_columns=list(rec.servo_columns),
        friction_message=NO_FRICTION_MESSAGE if model is None else message,
    )
    return fit


def fit_summary(fit: HardwareFit) -> dict[str, Any]:
    """The `softrod hardware fit --json` object (without `output`): parameters and their
    standard errors, friction (None when mu is held at 0, with `friction_message`), train RMSE
    before/after [mm], rows, evaluations, time."""
    return {
        "robot": fit.robot,
        "data": fit.extra.get("data"),
        "rows": fit.extra.get("rows"),
        "stride": fit.extra.get("stride"),
        "train_rows": fit.train_rows,
        "params": fit.params.as_dict(),
        "initial_params": fit.initial.as_dict(),
        "standard_errors": fit.extra.get("standard_errors"),
        "standard_errors_message": fit.extra.get("standard_errors_message"),
        "friction": fit.extra.get("friction"),
        "friction_message": fit.extra.get("friction_message"),
        "rmse_before_mm": fit.rmse_before_mm,
        "rmse_after_mm": fit.rmse_after_mm,
        "nfev": fit.nfev,
        "converged": fit.converged,
        "seconds": fit.seconds,
        "message": fit.message,
    }


def fitted_robot(fit: HardwareFit) -> RobotSpec:
    """The calibrated robot description of `fit` (with its `calibration:` block, and a
    `tendon_friction: {mu, stick_band}` block when the fit has friction)."""
    data = fit.extra.get("data")
    spec = calibrated_robot(
        fit.robot,
        fit.params,
        servo_columns=fit.extra.get("servo_columns"),
        fitted_on=Path(data).name if data else None,
    )
    fric = fit.extra.get("friction")
    if fric is None:
        return spec
    block = TendonFrictionSpec(**fric)
    return load_robot({**spec.to_dict(), "tendon_friction": block.model_dump()})


def write_fitted(fit: HardwareFit, path: str | Path) -> RobotSpec:
    """Write the calibrated description of `fit` to `path` (YAML, atomically: a failure leaves
    no partial file) and return it. A fitted friction (`fit.extra["friction"]`) is written as
    the description's `tendon_friction: {mu, stick_band}` block (`replay_recording` uses it)."""
    spec = fitted_robot(fit)
    head = (
        f"# softrod hardware fit {fit.robot} --data {fit.extra.get('data')}: "
        f"{fit.train_rows} rows, train RMSE {fit.rmse_before_mm:.2f} -> "
        f"{fit.rmse_after_mm:.2f} mm\n"
        "# calibration: how the recording's servo columns and tracked tip map onto this robot "
        "(docs/validation.md, hardware fit / replay)\n"
    )
    data = spec.to_dict()
    block = data.get("tendon_friction")
    if block is not None and block.get("hole_wrap") == 0.0:
        # Without the holes' own wrap the block is written as before (mu, stick_band).
        del block["hole_wrap"]
    write_text_atomic(Path(path), head + yaml.safe_dump(data, sort_keys=False))
    return spec


@dataclass(frozen=True)
class Replay:
    """A replayed recording: tip (k, 3) [m] in the tracker frame, ok (k,) success flags, the
    recording, model name, the solve's wall-clock and CPU time [s] (this process)."""

    robot: RobotSpec
    recording: Recording
    model: str
    tip: np.ndarray
    ok: np.ndarray
    seconds: float
    cpu_seconds: float

    def as_json(self) -> dict[str, Any]:
        """The `softrod hardware replay --json` object: `tip_mm` (one [x, y, z] per row, the
        recording's frame and units), `rows`, `model`, plus errors when it has tip columns."""
        obj: dict[str, Any] = {
            "tip_mm": (self.tip / RECORDING_UNIT).tolist(),
            "rows": self.recording.rows,
            "model": self.model,
            "robot": self.robot.name,
            "data": str(self.recording.path),
            "converged_fraction": float(self.ok.mean()),
            "seconds": self.seconds,
            "cpu_seconds": self.cpu_seconds,
            "friction": _friction_json(self.robot) if self.model == "static" else None,
        }
        if self.recording.tip is not None:
            e = tip_errors_mm(self.tip, self.recording.tip)
            obj.update(
                mean_error_mm=float(e.mean()),
                median_error_mm=float(np.median(e)),
                max_error_mm=float(e.max()),
            )
        return obj


def _friction_json(spec: RobotSpec) -> dict[str, float] | None:
    """{mu, stick_band} of the description's friction block (None without one), and its
    hole_wrap [rad] where it has one."""
    f = description_friction(spec)
    if f is None:
        return None
    out = {"mu": f[0], "stick_band": f[1]}
    if spec.tendon_friction is not None and spec.tendon_friction.hole_wrap > 0.0:
        out["hole_wrap"] = float(spec.tendon_friction.hole_wrap)
    return out


def replay_recording(
    fitted: str | Path | RobotSpec,
    data: str | Path,
    model: Literal["static", "mujoco"] = "static",
    links: int | None = None,
) -> Replay:
    """Replay the recording `data` row by row in time order through a calibrated robot (a
    description with a `calibration:` block, `softrod hardware fit`).

    model : "static" (exact rod, warm starts from row to row; with the description's
    `tendon_friction` block through `friction_sequence`, the friction state carried from row to
    row) or "mujoco" (chain, `links`; no tendon friction).
    """
    if model not in ("static", "mujoco"):
        raise ValueError(f"--model must be static or mujoco, got {model!r}")
    spec = load_robot(fitted if isinstance(fitted, RobotSpec) else find_robot(fitted))
    cal = spec.calibration
    where = spec.name if isinstance(fitted, RobotSpec) else str(fitted)
    if cal is None:
        raise HardwareDataError(
            f"{where}: no calibration block (write one with `softrod hardware fit`)"
        )
    if cal.units != "mm":
        raise HardwareDataError(f"{where}: calibration.units must be mm, got {cal.units!r}")
    rec = read_recording(
        data, servo_columns=cal.servo_columns, n_tendons=spec.n_tendons, need_tip=False
    )
    t0, c0 = time.perf_counter(), time.process_time()
    tip, ok = replay_marker(spec, rec.displacement, model=model, links=links, t=rec.t)
    return Replay(
        robot=spec,
        recording=rec,
        model=model,
        tip=tip,
        ok=ok,
        seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0,
    )
