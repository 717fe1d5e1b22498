"""Measured data for calibration: tendon inputs, optional tip loads and the measured tip position.

CSV layout (one row per measurement, SI units, a header row naming the columns):

| columns | meaning |
|---|---|
| `tension_0 ..` [N] or `length_0 ..` [m] (n_t columns) | tendon inputs, in input order |
| `tip_force_x, tip_force_y, tip_force_z` [N] (optional) | world-frame load at the tip |
| `x, y, z` [m] | measured tip position (world frame) |
| `time` [s], `trajectory` (optional) | for rollouts: sample time and trajectory id |

Rows of one trajectory are consecutive with increasing time; the inputs of a row are held from
the previous row's time to this one's (`softrod.sysid.simulate_trajectories`).
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Measurements", "read_measurements"]

_INPUT = re.compile(r"^(tension|length)_(\d+)$")
_FORCE = ("tip_force_x", "tip_force_y", "tip_force_z")
_TIP = ("x", "y", "z")


@dataclass(frozen=True, eq=False)
class Measurements:
    """m measurements of a robot with n_t tendons.

    inputs : (m, n_t) tensions [N] or commanded tendon lengths [m] (see `input_kind`).
    input_kind : "tension" or "length".
    tip_position : (m, 3) measured tip [m].
    tip_force : (m, 3) world-frame tip load [N] (zeros when not measured).
    time : (m,) [s] or None; trajectory : (m,) int or None (rollout data).
    """

    inputs: np.ndarray
    input_kind: str
    tip_position: np.ndarray
    tip_force: np.ndarray
    time: np.ndarray | None = None
    trajectory: np.ndarray | None = None

    def __post_init__(self) -> None:
        m = self.tip_position.shape[0]
        if self.input_kind not in ("tension", "length"):
            raise ValueError(f"input_kind must be 'tension' or 'length', got {self.input_kind!r}")
        if self.inputs.ndim != 2 or self.inputs.shape[0] != m:
            raise ValueError(f"inputs must have shape ({m}, n_t), got {self.inputs.shape}")
        if self.tip_position.shape != (m, 3) or self.tip_force.shape != (m, 3):
            raise ValueError("tip_position and tip_force must have shape (m, 3)")
        if m == 0:
            raise ValueError("measurements: no rows")
        for name in ("inputs", "tip_position", "tip_force"):
            arr = getattr(self, name)
            if not np.all(np.isfinite(arr)):
                row = int(np.argwhere(~np.isfinite(arr))[0, 0])
                raise ValueError(f"measurements: {name} of row {row} is not finite")
        if self.input_kind == "tension" and np.any(self.inputs < 0):
            row = int(np.argwhere(self.inputs < 0)[0, 0])
            raise ValueError(f"measurements: tensions must be >= 0 (tendons only pull), row {row}")
        if self.input_kind == "length" and np.any(self.inputs <= 0):
            row = int(np.argwhere(self.inputs <= 0)[0, 0])
            raise ValueError(f"measurements: tendon lengths must be > 0 [m], row {row}")
        if (self.time is None) != (self.trajectory is None):
            raise ValueError("measurements: give both time and trajectory, or neither")

    @property
    def n_samples(self) -> int:
        return int(self.tip_position.shape[0])

    @property
    def n_tendons(self) -> int:
        return int(self.inputs.shape[1])

    @property
    def is_trajectory(self) -> bool:
        return self.time is not None

    def subset(self, rows: np.ndarray | slice) -> Measurements:
        """The measurements of the selected rows."""
        return Measurements(
            inputs=self.inputs[rows],
            input_kind=self.input_kind,
            tip_position=self.tip_position[rows],
            tip_force=self.tip_force[rows],
            time=None if self.time is None else self.time[rows],
            trajectory=None if self.trajectory is None else self.trajectory[rows],
        )

    def with_tip(self, tip_position: np.ndarray) -> Measurements:
        """The same inputs with another tip position (m, 3) [m] (synthetic data)."""
        return Measurements(
            self.inputs,
            self.input_kind,
            np.asarray(tip_position, float),
            self.tip_force,
            self.time,
            self.trajectory,
        )

    def to_csv(self, path: str | Path) -> None:
        """Write in the layout of the module docstring (full float precision)."""
        header = [f"{self.input_kind}_{i}" for i in range(self.n_tendons)]
        cols = [self.inputs]
        if np.any(self.tip_force):
            header += list(_FORCE)
            cols.append(self.tip_force)
        header += list(_TIP)
        cols.append(self.tip_position)
        if self.time is not None and self.trajectory is not None:
            header += ["time", "trajectory"]
            cols += [self.time[:, None], self.trajectory[:, None]]
        table = np.hstack(cols)
        with Path(path).open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            for row in table:
                writer.writerow([repr(float(v)) for v in row])


def read_measurements(path: str | Path, n_tendons: int | None = None) -> Measurements:
    """Read a CSV in the layout of the module docstring.

    n_tendons : expected number of tendon columns (the robot's), checked when given.
    Raises ValueError naming the file, the column and the row for every problem.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"data file not found: {path}")
    with path.open(newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"{path}: empty file (expected a header row)")
    header = [c.strip() for c in rows[0]]
    if len(set(header)) != len(header):
        dup = next(c for c in header if header.count(c) > 1)
        raise ValueError(f"{path}: column {dup!r} appears twice")
    body = rows[1:]
    if not body:
        raise ValueError(f"{path}: no data rows below the header")
    values = np.empty((len(body), len(header)))
    for r, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise ValueError(f"{path}: line {r} has {len(row)} values, the header {len(header)}")
        for c, cell in enumerate(row):
            try:
                v = float(cell)
            except ValueError:
                raise ValueError(
                    f"{path}: line {r}, column {header[c]!r}: not a number: {cell.strip()!r}"
                ) from None
            if not math.isfinite(v):
                raise ValueError(f"{path}: line {r}, column {header[c]!r}: must be finite")
            values[r - 2, c] = v
    col = {name: values[:, i] for i, name in enumerate(header)}

    # Tendon inputs: one kind, indices 0..n-1 without gaps.
    found: dict[str, dict[int, str]] = {"tension": {}, "length": {}}
    for name in header:
        m = _INPUT.match(name)
        if m:
            found[m.group(1)][int(m.group(2))] = name
    kinds = [k for k, v in found.items() if v]
    if len(kinds) != 1:
        raise ValueError(
            f"{path}: need tendon columns tension_0..tension_<n-1> [N] or length_0..length_<n-1>"
            f" [m] (one kind), got columns {header}"
        )
    kind = kinds[0]
    idx = sorted(found[kind])
    if idx != list(range(len(idx))):
        missing = sorted(set(range(max(idx) + 1)) - set(idx))
        raise ValueError(f"{path}: column {kind}_{missing[0]} is missing")
    if n_tendons is not None and len(idx) != n_tendons:
        raise ValueError(
            f"{path}: {len(idx)} {kind}_* columns, but the robot has {n_tendons} tendons"
        )
    inputs = np.column_stack([col[found[kind][i]] for i in idx])

    for name in _TIP:
        if name not in col:
            raise ValueError(f"{path}: the measured tip column {name!r} [m] is missing")
    tip = np.column_stack([col[n] for n in _TIP])
    given = [n for n in _FORCE if n in col]
    if given and len(given) != 3:
        raise ValueError(f"{path}: give all of {', '.join(_FORCE)} or none, got {given}")
    force = np.column_stack([col[n] for n in _FORCE]) if given else np.zeros_like(tip)
    time = col.get("time")
    traj = col.get("trajectory")
    if (time is None) != (traj is None):
        raise ValueError(f"{path}: give both 'time' and 'trajectory' columns, or neither")
    known = set(_TIP) | set(_FORCE) | {"time", "trajectory"} | set(found[kind].values())
    extra = [c for c in header if c not in known]
    if extra:
        raise ValueError(f"{path}: unknown column {extra[0]!r}")
    trajectory = None if traj is None else traj.astype(np.int64)
    return Measurements(inputs, kind, tip, force, time, trajectory)
