"""Sweep tasks: what runs at each design point, and the per-point runner used by every backend.

A task is a function `task(point: SweepPoint) -> Mapping[str, value]`. Values may be numbers,
booleans, strings, None, or lists / arrays of numbers; nested mappings are flattened with dots.
Built in:

* `static_tip`: `softrod.solve_static` of the point's robot; inputs `tensions` or `lengths`,
  `tip_force`, `tip_moment`, `distributed_force`, `gravity`; options `method`, `steps`. Returns
  the tip `tip_x, tip_y, tip_z` [m], `success`, `residual`, `nit`.
* `grasp_trial`: a MuJoCo grasp with a two-finger soft gripper (`softrod.somo.grasp_trial`).

A user task is named `package.module:function` (or `package.module.function`) or
`path/to/file.py:function` (relative to the sweep file).
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import math
import os
import socket
import sys
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from softrod.description import RobotSpec, load_robot, set_path, with_fields

__all__ = [
    "BUILTIN_TASKS",
    "RESERVED_COLUMNS",
    "SweepJob",
    "SweepPoint",
    "error_rows",
    "resolve_task",
    "run_chunk",
    "static_tip",
]

BUILTIN_TASKS: dict[str, str] = {
    "static_tip": "softrod.sweep._tasks:static_tip",
    "grasp_trial": "softrod.somo._grasp:grasp_trial",
}
#: Columns every result row has; task outputs and parameters may not use these names.
RESERVED_COLUMNS = ("point_id", "index", "status", "error", "elapsed_s", "worker")


@dataclass(frozen=True)
class SweepPoint:
    """What a task sees at one design point.

    robot : the sweep's robot with the point's description fields set (None without a robot).
    inputs : base inputs with the point's `inputs.*` values set. options : `task_options`.
    params : the point's parameter values (dotted path -> value). spec_dir : the sweep file's
    folder (for relative paths).
    """

    point_id: str
    index: int
    params: dict[str, Any]
    robot: RobotSpec | None
    inputs: dict[str, Any]
    options: dict[str, Any]
    spec_dir: Path


@dataclass(frozen=True)
class SweepJob:
    """Everything a worker needs besides the points (plain data: it is pickled to workers)."""

    task: str
    robot: dict[str, Any] | None
    inputs: dict[str, Any]
    options: dict[str, Any]
    spec_dir: str


# ---------------------------------------------------------------------------------------------
# Task lookup


def resolve_task(ref: str, spec_dir: str | Path = ".") -> Callable[[SweepPoint], Mapping[str, Any]]:
    """The task function a sweep file names (see the module docstring).

    Raises ValueError naming the task when it cannot be imported or is not callable.
    """
    target = BUILTIN_TASKS.get(ref, ref)
    if ":" in target:
        module_name, func_name = target.rsplit(":", 1)
    elif "." in target:
        module_name, func_name = target.rsplit(".", 1)
    else:
        raise ValueError(
            f"task {ref!r} is neither a built-in task ({', '.join(BUILTIN_TASKS)}) nor "
            "module:function"
        )
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_absolute():
            path = Path(spec_dir) / path
        if not path.is_file():
            raise ValueError(f"task {ref!r}: file not found: {path}")
        mod_key = f"_softrod_task_{abs(hash(str(path.resolve())))}"
        module = sys.modules.get(mod_key)
        if module is None:
            spec = importlib.util.spec_from_file_location(mod_key, path)
            if spec is None or spec.loader is None:
                raise ValueError(f"task {ref!r}: cannot load {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_key] = module
            try:
                spec.loader.exec_module(module)
            except Exception as exc:
                del sys.modules[mod_key]
                raise ValueError(f"task {ref!r}: importing {path} failed: {exc}") from None
    else:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f"task {ref!r}: cannot import {module_name}: {exc}") from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ValueError(f"task {ref!r}: {module_name} has no function {func_name!r}")
    return func  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# Built-in static task

_MODEL_CACHE: OrderedDict[str, Any] = OrderedDict()
_MODEL_CACHE_SIZE = 8
_STATIC_INPUTS = ("tensions", "lengths", "tip_force", "tip_moment", "distributed_force", "gravity")


def _compiled(robot: RobotSpec, steps: int | None) -> Any:
    """Compiled RodModel, cached per description (points that only change inputs share it)."""
    from softrod.rods import compile_model

    key = robot.model_dump_json() + f"|{steps}"
    model = _MODEL_CACHE.get(key)
    if model is None:
        model = compile_model(robot, steps=steps)
        _MODEL_CACHE[key] = model
        if len(_MODEL_CACHE) > _MODEL_CACHE_SIZE:
            _MODEL_CACHE.popitem(last=False)
    else:
        _MODEL_CACHE.move_to_end(key)
    return model


def static_tip(point: SweepPoint) -> dict[str, Any]:
    """Static tip pose of the point's robot (module docstring)."""
    from softrod.rods import solve_static

    if point.robot is None:
        raise ValueError("task static_tip needs a robot")
    unknown = sorted(set(point.inputs) - set(_STATIC_INPUTS))
    if unknown:
        raise ValueError(
            f"static_tip: unknown input {unknown[0]!r} (inputs: {', '.join(_STATIC_INPUTS)})"
        )
    opts = dict(point.options)
    method = str(opts.pop("method", "shooting"))
    steps = opts.pop("steps", None)
    if opts:
        raise ValueError(f"static_tip: unknown option {sorted(opts)[0]!r} (options: method, steps)")
    model = _compiled(point.robot, steps)
    res = solve_static(model, method=method, **point.inputs)
    tip = res.tip_position
    return {
        "tip_x": float(tip[0]),
        "tip_y": float(tip[1]),
        "tip_z": float(tip[2]),
        "success": bool(res.success),
        "residual": float(res.residual),
        "nit": int(res.nit),
    }


# ---------------------------------------------------------------------------------------------
# Per-point runner (all backends)


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
        return
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    elif isinstance(value, tuple):
        value = list(value)
    if isinstance(value, float) and not math.isfinite(value):
        value = float(value)  # NaN/inf are valid Parquet doubles
    if not (value is None or isinstance(value, bool | int | float | str | list)):
        raise ValueError(
            f"task output {prefix!r} has type {type(value).__name__}; return numbers, booleans, "
            "strings, None or lists of numbers"
        )
    out[prefix] = value


_SETUP_CACHE: dict[int, tuple[Callable[..., Any], RobotSpec | None]] = {}


def _setup(job: SweepJob) -> tuple[Callable[..., Any], RobotSpec | None]:
    key = hash((job.task, repr(job.robot), job.spec_dir))
    cached = _SETUP_CACHE.get(key)
    if cached is None:
        func = resolve_task(job.task, job.spec_dir)
        robot = load_robot(job.robot) if job.robot is not None else None
        cached = _SETUP_CACHE[key] = (func, robot)
    return cached


def _make_point(
    job: SweepJob, robot: RobotSpec | None, index: int, pid: str, params: dict[str, Any]
) -> SweepPoint:
    """The point's `SweepPoint`: the base inputs and robot with its parameter values set."""
    inputs = copy.deepcopy(job.inputs)
    fields: dict[str, Any] = {}
    for path, value in params.items():
        if path.startswith("inputs."):
            set_path(inputs, path.split(".", 1)[1], copy.deepcopy(value))
        else:
            fields[path] = value
    point_robot = robot
    if fields:
        if robot is None:
            raise ValueError(
                f"parameter {next(iter(fields))!r} is a description field, but the sweep "
                "has no robot"
            )
        point_robot = with_fields(robot, fields)
    return SweepPoint(
        pid, index, dict(params), point_robot, inputs, dict(job.options), Path(job.spec_dir)
    )


def _finish_row(row: dict[str, Any], result: Any, params: dict[str, Any]) -> None:
    """Check a task's output mapping and add its flattened columns to `row`."""
    if not isinstance(result, Mapping):
        raise ValueError(f"task returned {type(result).__name__}, expected a mapping")
    flat: dict[str, Any] = {}
    _flatten("", result, flat)
    clash = [k for k in flat if k in RESERVED_COLUMNS or k in params]
    if clash:
        raise ValueError(f"task output {clash[0]!r} clashes with a reserved or parameter column")
    row.update(flat)


def _run_point(
    job: SweepJob,
    func: Callable[..., Any],
    robot: RobotSpec | None,
    index: int,
    pid: str,
    params: dict[str, Any],
    worker: str,
    point: SweepPoint | None = None,
) -> dict[str, Any]:
    """One point's row; `point`: the point already made from these arguments (`_make_point`),
    so the chunk runner does not set the description's fields twice."""
    t0 = time.perf_counter()
    row: dict[str, Any] = {"point_id": pid, "index": index, "status": "ok", "error": None}
    row.update(params)
    try:
        if point is None:
            point = _make_point(job, robot, index, pid, params)
        _finish_row(row, func(point), params)
    except Exception as exc:  # noqa: BLE001 - a failing point is recorded, the sweep goes on
        row["status"] = "error"
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
        row["error"] = f"{type(exc).__name__}: {exc}{where}"
    row["elapsed_s"] = time.perf_counter() - t0
    row["worker"] = worker
    return row


# ---------------------------------------------------------------------------------------------
# Batched static points: one `solve_static_batch` per robot of a chunk

#: Least points of one robot in a chunk that go through one batched solve (fewer: one by one).
MIN_BATCH = 2
#: `static_tip` inputs a batch takes per item (the others are the (3,) load vectors).
_BATCH_VECTORS = ("tip_force", "tip_moment", "distributed_force", "gravity")


def _batch_key(point: SweepPoint) -> tuple[str, Any, str] | None:
    """(robot JSON, steps, control) of a `static_tip` point that a batch solves as
    `solve_static` would (single shooting, no options beyond `steps`), else None."""
    opts = dict(point.options)
    if point.robot is None or str(opts.pop("method", "shooting")) != "shooting":
        return None
    steps = opts.pop("steps", None)
    if opts or set(point.inputs) - set(_STATIC_INPUTS):
        return None
    if "tensions" in point.inputs and "lengths" in point.inputs:
        return None
    control = "lengths" if "lengths" in point.inputs else "tensions"
    return point.robot.model_dump_json(), steps, control


def _static_group(
    job: SweepJob,
    robot: RobotSpec | None,
    group: list[tuple[int, SweepPoint]],
    control: str,
    steps: Any,
    worker: str,
    rows: list[dict[str, Any] | None],
) -> None:
    """Solve a group of `static_tip` points of one robot in one `solve_static_batch` call
    (one thread: the sweep's workers are the parallelism) and fill their rows. Items the batch
    does not answer with success (multiple shooting, unstable, not converged) and any group the
    batch refuses run through `solve_static` one by one, so every row is what the per-point
    task returns (the batch's items are `solve_static`'s answers: same tip, residual, nit)."""
    from softrod.rods import solve_static_batch

    t0 = time.perf_counter()
    first = group[0][1]
    assert first.robot is not None
    try:
        model = _compiled(first.robot, steps)
        n_t = model.n_tendons

        def column(name: str, width: int) -> np.ndarray:
            rows = [np.asarray(p.inputs.get(name, np.zeros(width)), float) for _, p in group]
            if any(r.shape != (width,) for r in rows):
                raise ValueError(f"{name}: not ({width},) at every point")
            return np.array(rows)

        kwargs: dict[str, Any] = {name: column(name, 3) for name in _BATCH_VECTORS}
        kwargs[control] = column(control, n_t)
        batch = solve_static_batch(model, **kwargs, threads=1)
    except (ValueError, TypeError):
        # Inputs the batch refuses (shapes, values, routing): each point reports its own error.
        batch = None
    share = (time.perf_counter() - t0) / len(group)
    for item, (slot, point) in enumerate(group):
        if batch is None or not batch.success[item]:
            rows[slot] = _run_point(
                job, static_tip, robot, point.index, point.point_id, point.params, worker, point
            )
            continue
        tip = batch.tip_position[item]
        row: dict[str, Any] = {
            "point_id": point.point_id, "index": point.index, "status": "ok", "error": None,
        }  # fmt: skip
        row.update(point.params)
        result = {
            "tip_x": float(tip[0]),
            "tip_y": float(tip[1]),
            "tip_z": float(tip[2]),
            "success": True,
            "residual": float(batch.residual[item]),
            "nit": int(batch.iterations[item]),
        }
        try:
            _finish_row(row, result, point.params)
        except ValueError as exc:
            row.update(status="error", error=f"ValueError: {exc}")
        row["elapsed_s"] = share
        row["worker"] = worker
        rows[slot] = row


def _run_static_chunk(
    job: SweepJob,
    robot: RobotSpec | None,
    points: list[tuple[int, str, dict[str, Any]]],
    worker: str,
) -> list[dict[str, Any]]:
    """`static_tip` points: those of one robot (same description after the point's fields,
    same `steps`, same control) are solved in one batch; the rest one by one."""
    rows: list[dict[str, Any] | None] = [None] * len(points)
    groups: dict[tuple[str, Any, str], list[tuple[int, SweepPoint]]] = {}
    # Seconds spent making each grouped point, added to its row's `elapsed_s` below.
    made: dict[int, float] = {}
    for slot, (i, pid, params) in enumerate(points):
        t0 = time.perf_counter()
        try:
            point = _make_point(job, robot, i, pid, params)
            key = _batch_key(point)
        except Exception:  # noqa: BLE001 - the per-point runner records the error
            key = None
        if key is None:
            rows[slot] = _run_point(job, static_tip, robot, i, pid, params, worker)
        else:
            made[slot] = time.perf_counter() - t0
            groups.setdefault(key, []).append((slot, point))
    for (_, steps, control), group in groups.items():
        if len(group) < MIN_BATCH:
            for slot, p in group:
                rows[slot] = _run_point(
                    job, static_tip, robot, p.index, p.point_id, p.params, worker, p
                )
        else:
            _static_group(job, robot, group, control, steps, worker, rows)
    for slot, seconds in made.items():
        row = rows[slot]
        assert row is not None
        row["elapsed_s"] += seconds
    assert all(row is not None for row in rows)
    return rows  # type: ignore[return-value]


def error_rows(
    points: list[tuple[int, str, dict[str, Any]]], message: str, worker: str
) -> list[dict[str, Any]]:
    """One failed row per point [(index, point_id, params), ...], all with `message`."""
    return [
        {
            "point_id": pid,
            "index": i,
            "status": "error",
            "error": message,
            **params,
            "elapsed_s": 0.0,
            "worker": worker,
        }
        for i, pid, params in points
    ]


def ping() -> bool:
    """A worker's no-op: the process pool checks that its workers start."""
    return True


def run_chunk(job: SweepJob, points: list[tuple[int, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Run points [(index, point_id, params), ...] in this process; one row per point."""
    worker = f"{socket.gethostname()}:{os.getpid()}"
    try:
        func, robot = _setup(job)
    except Exception as exc:  # noqa: BLE001 - setup errors are recorded per point
        return error_rows(points, f"{type(exc).__name__}: {exc}", worker)
    if func is static_tip:
        return _run_static_chunk(job, robot, points, worker)
    return [_run_point(job, func, robot, i, pid, params, worker) for i, pid, params in points]
