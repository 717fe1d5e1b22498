"""Every benchmark: cases as data (`CASES`, one per `softrod bench NAME`) plus one runner
(`run_case`) that prints `case.metric: value` lines (or one JSON object).

Benchmarks sit above what they measure and load robots from the shipped descriptions by name;
no library layer imports this package. Heavy dependencies are imported when a case runs.
"""

from typing import TYPE_CHECKING, Any

from softrod.bench._case import BenchCase, BenchRun, format_metric, print_run, run_case
from softrod.bench._cases import CASES

if TYPE_CHECKING:
    from softrod.bench._dynamics import run_dynamics_bench
    from softrod.bench._envs import bench_envs
    from softrod.bench._mujoco import BenchConfig, bench_units, plot_static, run_mujoco_bench
    from softrod.bench._observer import run_observer_bench
    from softrod.bench._static import example_robot_path, run_static_bench
    from softrod.bench._sweep import run_sweep_bench
    from softrod.bench._web import GL_ARGS, BrowserStalled

__all__ = [
    "CASES",
    "GL_ARGS",
    "BenchCase",
    "BrowserStalled",
    "BenchConfig",
    "BenchRun",
    "bench_envs",
    "bench_units",
    "example_robot_path",
    "format_metric",
    "plot_static",
    "print_run",
    "run_case",
    "run_dynamics_bench",
    "run_mujoco_bench",
    "run_observer_bench",
    "run_static_bench",
    "run_sweep_bench",
]


def __getattr__(name: str) -> Any:
    # Runners load on first use: listing the cases (the CLI) imports no solver or optional layer.
    if name in ("example_robot_path", "run_static_bench"):
        from softrod.bench import _static

        return getattr(_static, name)
    if name == "run_observer_bench":
        from softrod.bench._observer import run_observer_bench

        return run_observer_bench
    if name in ("BenchConfig", "bench_units", "plot_static", "run_mujoco_bench"):
        from softrod.bench import _mujoco

        return getattr(_mujoco, name)
    if name == "run_dynamics_bench":
        from softrod.bench._dynamics import run_dynamics_bench

        return run_dynamics_bench
    if name == "bench_envs":
        from softrod.bench._envs import bench_envs

        return bench_envs
    if name == "run_sweep_bench":
        from softrod.bench._sweep import run_sweep_bench

        return run_sweep_bench
    if name in ("BrowserStalled", "GL_ARGS"):
        from softrod.bench import _web

        return getattr(_web, name)
    raise AttributeError(f"module 'softrod.bench' has no attribute {name!r}")
