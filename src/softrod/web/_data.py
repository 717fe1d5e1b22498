"""Recordings and sweep results for the browser twin, without any web library.

`RecordingTwin` shows a hardware recording replayed through a calibrated robot (the result of
`softrod hardware replay`'s `softrod.validate.replay_recording`): the measured tip path, the
model's, and the error per row. `SweepTwin` reads a sweep's Parquet result: its points as a
cloud coloured by a chosen column, picking a point by a ray (a click), and the picked design's
shape.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from softrod.web._twin import ModelView

__all__ = ["RecordingTwin", "SweepTwin", "colormap"]

#: Colours of `colormap` from low to high (viridis's ends and three stops), RGB 0-255.
_COLORMAP = np.array(
    [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]], dtype=float
)
#: Size [m] of the box that sweep axes other than tip coordinates are scaled into.
AXIS_BOX = 0.2
#: A click picks the point nearest the ray within this fraction of the cloud's size.
PICK_FRACTION = 0.05
#: Columns that are bookkeeping, never axes or colours.
_BOOKKEEPING = ("index", "elapsed_s")


def colormap(values: np.ndarray) -> np.ndarray:
    """(k, 3) uint8 colours for values (k,) scaled over their finite range (NaN: grey)."""
    v = np.asarray(values, dtype=float)
    out = np.full((len(v), 3), 128, dtype=np.uint8)
    finite = np.isfinite(v)
    if not finite.any():
        return out
    lo, hi = float(v[finite].min()), float(v[finite].max())
    x = (v[finite] - lo) / (hi - lo) if hi > lo else np.zeros(finite.sum())
    stops = np.linspace(0.0, 1.0, len(_COLORMAP))
    rgb = np.stack([np.interp(x, stops, _COLORMAP[:, c]) for c in range(3)], axis=1)
    out[finite] = np.round(rgb).astype(np.uint8)
    return out


class RecordingTwin:
    """A hardware recording replayed through a calibrated robot.

    replay : the `softrod.validate.replay_recording` result (`softrod hardware replay`'s
    machinery; the caller runs it: a library layer does not import the studies above it).
    After construction: t (k,) [s], measured (k, 3) [m] or None (no tip columns), predicted
    (k, 3) [m], ok (k,), error_mm (k,) or None, all in the recording's tracker frame.
    """

    def __init__(self, replay: Any) -> None:
        self.replay = replay
        rec = replay.recording
        self.name = replay.robot.name
        self.path = Path(rec.path)
        self.model = str(replay.model)
        self.t = np.asarray(rec.t, dtype=float)
        self.measured = None if rec.tip is None else np.asarray(rec.tip, dtype=float)
        self.predicted = np.asarray(replay.tip, dtype=float)
        self.ok = np.asarray(replay.ok, dtype=bool)
        # Euclidean tip error per row [mm] (as `softrod hardware replay` reports it).
        self.error_mm = (
            None
            if self.measured is None
            else 1e3 * np.linalg.norm(self.predicted - self.measured, axis=1)
        )
        self.displacement = np.asarray(rec.displacement, dtype=float)

    @property
    def rows(self) -> int:
        return int(self.t.shape[0])

    def row(self, i: int) -> dict[str, Any]:
        """Row i: t [s], measured and predicted tips [m], error [mm], success, displacements [m]."""
        if not 0 <= i < self.rows:
            raise ValueError(f"row must be in [0, {self.rows}), got {i}")
        return {
            "t": float(self.t[i]),
            "measured": None if self.measured is None else self.measured[i].copy(),
            "predicted": self.predicted[i].copy(),
            "error_mm": None if self.error_mm is None else float(self.error_mm[i]),
            "ok": bool(self.ok[i]),
            "displacement": self.displacement[i].copy(),
        }

    def summary(self) -> dict[str, float]:
        """Mean, median and max tip error [mm] and the converged fraction."""
        out = {"converged_fraction": float(self.ok.mean()), "seconds": self.replay.seconds}
        if self.error_mm is not None:
            e = self.error_mm
            out.update(
                mean_mm=float(e.mean()), median_mm=float(np.median(e)), max_mm=float(e.max())
            )
        return out


class SweepTwin:
    """A sweep's Parquet result as a point cloud (no web library involved).

    Points: the rows with status "ok"; axes `tip_x, tip_y, tip_z` [m] when the task wrote
    them (`static_tip`), else the first three numeric columns, each scaled into AXIS_BOX [m].
    `columns` are the numeric (integer and floating) columns a colour can follow; `task` the
    sweep's task. `shape(i)` draws a point's design wherever the sweep has a robot (module
    docstring of `shape`); a sweep without one (`grasp_trial`, robot-less user tasks) has none.
    """

    def __init__(self, path: str | Path) -> None:
        import pyarrow as pa

        from softrod.sweep import read_results

        self.path = Path(path)
        table = read_results(self.path)
        meta = table.schema.metadata or {}
        record = json.loads(meta.get(b"softrod.sweep", b"{}"))
        self.spec: dict[str, Any] = record.get("spec", {})
        self.name = str(record.get("name") or self.path.stem)
        data = table.to_pydict()
        status = np.asarray(data.get("status", ["ok"] * table.num_rows))
        keep = status == "ok"
        self.rows: list[dict[str, Any]] = [
            {k: data[k][i] for k in data} for i in np.flatnonzero(keep)
        ]
        self.n_failed = int((~keep).sum())
        self.task = str(record.get("task") or self.spec.get("task") or "static_tip")
        # Numbers only (integer and floating Arrow columns): text, flags and lists colour nothing.
        numeric = {
            f.name
            for f in table.schema
            if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)
        }
        self.columns = [
            k
            for k in data
            if k in numeric
            and k not in _BOOKKEEPING
            and _numeric([r[k] for r in self.rows]) is not None
        ]
        self.parameters = [k for k in self._parameter_names() if k in data]
        if {"tip_x", "tip_y", "tip_z"} <= set(self.columns):
            self.axes: tuple[str, ...] = ("tip_x", "tip_y", "tip_z")
            self.points = np.column_stack([self.column(c) for c in self.axes])
        else:
            self.axes = tuple(self.columns[:3])
            cols = [self.column(c) for c in self.axes]
            while len(cols) < 3:
                cols.append(np.zeros(len(self.rows)))
            self.points = np.column_stack([_scaled(c) for c in cols])
        self._robot: Any = None

    def _parameter_names(self) -> list[str]:
        design = self.spec.get("design") or {}
        return list((design.get("parameters") or {}).keys())

    def column(self, name: str) -> np.ndarray:
        """(k,) float values of a numeric column over the points (NaN where missing)."""
        vals = _numeric([r.get(name) for r in self.rows])
        if vals is None:
            raise ValueError(f"{name!r} is not a numeric column; columns: {self.columns}")
        return vals

    def colors(self, column: str) -> np.ndarray:
        """(k, 3) uint8 colours of the points by `column`."""
        return colormap(self.column(column))

    def pick(self, origin: Sequence[float], direction: Sequence[float]) -> int | None:
        """The point nearest the ray origin + s direction (s >= 0) within PICK_FRACTION of the
        cloud's size, or None."""
        if not len(self.points):
            return None
        o = np.asarray(origin, dtype=float)
        d = np.asarray(direction, dtype=float)
        d = d / np.linalg.norm(d)
        rel = self.points - o
        s = np.maximum(rel @ d, 0.0)
        dist = np.linalg.norm(rel - s[:, None] * d, axis=1)
        size = max(float(np.ptp(self.points, axis=0).max()), 1e-3)
        i = int(np.argmin(dist))
        return i if dist[i] <= PICK_FRACTION * size else None

    def describe(self, i: int) -> dict[str, Any]:
        """Row i's parameters and outputs (what the page's readout lists)."""
        row = self.rows[i]
        skip = {"error", "worker", "status"}
        return {k: v for k, v in row.items() if k not in skip}

    def robot(self) -> Any:
        """The sweep's robot description (RobotSpec), resolved as the sweep did: a file
        relative to the result's folder or the working directory, or a shipped name."""
        if self._robot is None:
            from softrod.description import find_robot, load_robot

            name = self.spec.get("robot")
            if name is None:
                raise ValueError(f"{self.path}: the sweep has no robot")
            self._robot = load_robot(find_robot(name, relative_to=self.path.parent))
        return self._robot

    def shape(self, i: int) -> ModelView:
        """The static shape of point i's design: the sweep's robot with the point's fields set,
        solved at its static inputs (tensions, lengths, tip loads, gravity) with the sweep's
        `method` and `steps` options (`static_tip`: the row's own solve). Other tasks with a
        robot get the same static shape of their design (their other inputs do not enter).
        Raises ValueError "no shape for task ..." when the sweep has no robot (`grasp_trial`:
        a MuJoCo grasp, no rod to re-solve)."""
        import copy
        import time

        from softrod.description import set_path, with_fields
        from softrod.rods import compile_model, solve_static

        if self.spec.get("robot") is None:
            why = (
                "a MuJoCo grasp trial of a two-finger gripper, no robot to re-solve"
                if self.task == "grasp_trial"
                else "the sweep has no robot"
            )
            raise ValueError(f"no shape for task {self.task!r}: {why}")
        row = self.rows[i]
        inputs = copy.deepcopy(dict(self.spec.get("inputs") or {}))
        fields = {}
        for path in self.parameters:
            if path.startswith("inputs."):
                set_path(inputs, path.split(".", 1)[1], row[path])
            else:
                fields[path] = row[path]
        robot = with_fields(self.robot(), fields) if fields else self.robot()
        static = ("tensions", "lengths", "tip_force", "tip_moment", "distributed_force", "gravity")
        loads = {k: v for k, v in inputs.items() if k in static}
        options = self.spec.get("task_options") or {}
        method = str(options.get("method", "shooting"))
        # The row's discretisation: `static_tip` compiles with its `steps` option.
        steps = options.get("steps") if self.task == "static_tip" else None
        t0 = time.perf_counter()
        sol = solve_static(compile_model(robot, steps=steps), method=method, **loads)
        return ModelView(
            name="exact",
            success=bool(sol.success),
            message=sol.message,
            positions=sol.positions,
            rotations=sol.rotations,
            tip_position=sol.tip_position,
            solve_time=time.perf_counter() - t0,
            tendon_tension=np.asarray(sol.tendon_tension, dtype=float),
            stable=sol.stable,
            arc_length=sol.s,
        )


def _numeric(values: list[Any]) -> np.ndarray | None:
    """Floats (bool as 0/1, None as NaN), or None when any value is text or a list."""
    out = np.empty(len(values))
    for i, v in enumerate(values):
        if v is None:
            out[i] = np.nan
        elif isinstance(v, (bool, int, float, np.integer, np.floating)):
            out[i] = float(v)
        else:
            return None
    if len(values) and np.all(np.isnan(out)):
        return None
    return out


def _scaled(values: np.ndarray) -> np.ndarray:
    """Values scaled onto [0, AXIS_BOX] [m] (a constant column sits at 0)."""
    v = np.nan_to_num(np.asarray(values, dtype=float))
    span = float(v.max() - v.min()) if len(v) else 0.0
    return (v - v.min()) * (AXIS_BOX / span) if span > 0 else np.zeros_like(v)
