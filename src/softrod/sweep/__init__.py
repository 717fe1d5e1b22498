"""Design sweeps: a typed sweep file, stable point ids, Parquet results with resume, and a
local process pool or a Ray cluster as the backend.

>>> from softrod.sweep import count_points, run_sweep              # doctest: +SKIP
>>> count_points("examples/sweeps/static_grid.yaml")                # doctest: +SKIP
>>> run_sweep("examples/sweeps/static_grid.yaml", "out.parquet")    # doctest: +SKIP

See docs/sweep.md.
"""

from softrod.sweep._run import BACKENDS, SweepSummary, run_sweep
from softrod.sweep._spec import (
    GridDesign,
    PointSpec,
    RandomDesign,
    Span,
    SweepSpec,
    Uniform,
    Values,
    count_points,
    generate_points,
    load_sweep,
    point_id,
)
from softrod.sweep._store import read_results
from softrod.sweep._tasks import BUILTIN_TASKS, SweepPoint, resolve_task, static_tip

__all__ = [
    "BACKENDS",
    "BUILTIN_TASKS",
    "GridDesign",
    "PointSpec",
    "RandomDesign",
    "Span",
    "SweepPoint",
    "SweepSpec",
    "SweepSummary",
    "Uniform",
    "Values",
    "count_points",
    "generate_points",
    "load_sweep",
    "point_id",
    "read_results",
    "resolve_task",
    "run_sweep",
    "static_tip",
]
