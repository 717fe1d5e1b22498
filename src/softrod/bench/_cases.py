"""The benchmark cases, one per `softrod bench NAME` subcommand (in the order `--help` lists them).

Each case maps the subcommand's options onto the function that measures; heavy imports happen
inside, so that listing the cases imports nothing but this package.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from softrod.bench._case import BenchCase, BenchRun

__all__ = ["CASES", "PLANNING_KEYS", "PLANNING_ENV_KEYS"]

#: Summary entries of the planning benchmark printed as `planning.<key>`, in order.
PLANNING_KEYS = (
    "error_reduction",
    "orientation_error_reduction",
    "queries_per_s_batched",
    "queries_per_s_single",
    "plans_found",
    "median_plan_time_s",
    "nn_closer_count",
    "mean_distance_improvement_m",
    "nn_collisions",
    "noload_collisions",
)
#: Per-environment entries printed as `planning.<environment>.<key>`, in order.
PLANNING_ENV_KEYS = ("plan_time_s", "nn_distance_to_goal_m", "noload_distance_to_goal_m")
#: SciPy L-M solves of the static case (its default); never more than the solves it follows.
STATIC_N_SCIPY = 20


def _mujoco(
    out_dir: Path,
    config: Any = None,
    emit: Callable[[str], None] = print,
    advance: Callable[[str], None] | None = None,
) -> BenchRun:
    from softrod.bench._mujoco import run_mujoco_bench

    # The report's lines are printed as they are measured (the full protocol takes minutes).
    results = run_mujoco_bench(out_dir, config, emit=emit, advance=advance)
    return BenchRun({}, record=results)


def _static(n: int = 300, seed: int = 0) -> dict[str, float]:
    from softrod.bench._static import run_static_bench

    # The SciPy baseline re-solves the first of the n SoftManiSim cases: at most n of them.
    return run_static_bench(n_softmanisim=n, n_scipy=min(STATIC_N_SCIPY, n), seed=seed)


def _observer(n: int = 500, n_scipy: int = 10, seed: int = 0) -> dict[str, float]:
    from softrod.bench._observer import run_observer_bench

    t0 = time.perf_counter()
    out = run_observer_bench(n_steps=n, n_scipy=n_scipy, seed=seed)
    out["bench.wall_time_s"] = time.perf_counter() - t0
    return out


def _dynamics(elements: int = 20, pyelastica: bool = True) -> dict[str, float]:
    from softrod.bench._dynamics import run_dynamics_bench

    return run_dynamics_bench(elements=elements, pyelastica=pyelastica)


def _sweep(
    n: int = 2000, workers: Sequence[int] = (1, 2), ray_backend: bool = False
) -> dict[str, float]:
    from softrod.bench._sweep import run_sweep_bench

    return run_sweep_bench(n_points=n, workers=list(workers), ray_backend=ray_backend)


def _static_batch(
    batches: Sequence[int] = (100, 1000, 10000),
    device: str = "cpu",
    threads: int | None = None,
    jacobian: bool = False,
) -> dict[str, float]:
    from softrod.bench._static_batch import run_static_batch_bench

    return run_static_batch_bench(batches, device=device, threads=threads, jacobian=jacobian)


def _planning(
    config: Any = None, cache_dir: Path = Path("runs/planning"), log: Callable[[str], None] = print
) -> BenchRun:
    from softrod.planning import BenchmarkConfig, run_benchmark

    summary, _ = run_benchmark(config or BenchmarkConfig(), cache_root=cache_dir, log=log)
    metrics: dict[str, float | None] = {f"planning.{key}": summary[key] for key in PLANNING_KEYS}
    for env in summary["environments"]:
        for key in PLANNING_ENV_KEYS:
            metrics[f"planning.{env['name']}.{key}"] = env[key]
    return BenchRun(metrics, record=summary)


def _envs(
    env_ids: Sequence[str] | None = None, steps: int = 1000, workers: int = 2, seed: int = 0
) -> dict[str, float]:
    from softrod.bench._envs import bench_envs

    return bench_envs(env_ids, steps=steps, workers=workers, seed=seed)


def _warp_reach(
    worlds: Sequence[int] = (1024, 4096),
    steps: int = 200,
    device: str | None = None,
    seed: int = 0,
    cross_check: int = 0,
) -> dict[str, float]:
    """Raises ImportError when MuJoCo Warp is missing (`softrod[warp]`)."""
    from softrod.envs.batched_reach import bench_batched_reach, cross_check_seeds

    out = {}
    if cross_check > 0:
        for key, value in cross_check_seeds(cross_check, device=device).items():
            out[f"Reach-warp.cross_check.{key}"] = value
    for n in worlds:
        for key, value in bench_batched_reach(n, steps=steps, device=device, seed=seed).items():
            out[f"Reach-warp.worlds_{n}.{key}"] = value
    return out


#: `softrod bench batched-envs --configs`: make_batched's default, lean=False, direct_solve=True.
BATCHED_CONFIGS = ("lean", "no_lean", "direct")


def _batched_envs(
    env_ids: Sequence[str] | None = None,
    worlds: Sequence[int] = (1024, 4096),
    steps: int = 300,
    device: str | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    configs: Sequence[str] = ("lean",),
) -> dict[str, float]:
    """Raises ImportError when MuJoCo Warp is missing (`softrod[warp]`); `progress` gets a
    line per measurement (stderr in the CLI). `configs`, measured in turn per world count:
    "lean" (`make_batched`'s default, keys `batched_envs.ENV.worlds_N.*`), "no_lean"
    (`lean=False`, MuJoCo Warp's defaults) and "direct" (`direct_solve=True`), keys
    `batched_envs.ENV.CONFIG.worlds_N.*`."""
    from softrod.bench._batched_envs import bench_batched_env
    from softrod.envs import BATCHED_ENV_IDS

    for config in configs:
        if config not in BATCHED_CONFIGS:
            raise ValueError(f"configs must be in {BATCHED_CONFIGS}, got {config!r}")
    ids = [i.removeprefix("softrod/") for i in (env_ids or BATCHED_ENV_IDS)]
    out = {}
    for env in ids:
        for n in worlds:
            for config in configs:
                res = bench_batched_env(
                    env,
                    n,
                    steps=steps,
                    device=device,
                    seed=seed,
                    lean=config != "no_lean",
                    direct_solve=config == "direct",
                )
                prefix = f"batched_envs.{env}." + ("" if config == "lean" else f"{config}.")
                for key, value in res.items():
                    out[f"{prefix}worlds_{n}.{key}"] = value
                if progress is not None:
                    progress(f"{env} {config} {n} worlds: {res['steps_per_s']:.0f} world-steps/s")
    return out


def _web(
    n: int = 200,
    links: int = 20,
    browser: bool = True,
    viewport: tuple[int, int] = (1280, 800),
    gl: str = "swiftshader",
    frame_limit: bool = True,
) -> dict[str, Any]:
    """Raises ImportError when viser is missing (`softrod[web]`)."""
    from softrod.bench._web import run_web_bench

    return run_web_bench(
        n=n, links=links, browser=browser, viewport=viewport, gl=gl, frame_limit=frame_limit
    )


#: Every benchmark, by subcommand name.
CASES: dict[str, BenchCase] = {
    case.name: case
    for case in (
        BenchCase(
            "mujoco",
            "Accuracy (static, tendons, dynamics) and speed of the MuJoCo chain; writes a report.",
            _mujoco,
            streams=True,
        ),
        BenchCase(
            "static",
            "Static solver speed and accuracy (SoftManiSim robot, 3-segment TDCR, SciPy L-M).",
            _static,
        ),
        BenchCase(
            "static-batch",
            "Batched static solves per second (solve_static_batch, 1 and all threads or a GPU) "
            "against the single-solve loop's per-core rate (SoftManiSim robot).",
            _static_batch,
        ),
        BenchCase(
            "observer",
            "Observer vs warm-started shooting vs SciPy L-M (SoftManiSim Fig. 4 protocol).",
            _observer,
        ),
        BenchCase(
            "dynamics",
            "LGVI release test (TPU and steel rods): speed, f1 vs Euler-Bernoulli, energy; "
            "PyElastica.",
            _dynamics,
        ),
        BenchCase(
            "sweep",
            "Sweep throughput [points/s] of the static task for each worker count.",
            _sweep,
        ),
        BenchCase(
            "planning",
            "The planning benchmark (same as `softrod plan --benchmark`), as `case.metric: value`.",
            _planning,
        ),
        BenchCase(
            "envs",
            "Steps per second of every environment, in one process and with N async workers.",
            _envs,
        ),
        BenchCase(
            "warp-reach",
            "Reach-v0 batched on a GPU with MuJoCo Warp: world-steps per second (needs "
            "softrod[warp]).",
            _warp_reach,
        ),
        BenchCase(
            "batched-envs",
            "Every batched environment (softrod.envs.make_batched, MuJoCo Warp) on a device: "
            "world-steps per second for each world count (needs softrod[warp]).",
            _batched_envs,
        ),
        BenchCase(
            "web",
            "Browser twin slider-to-shape latency (exact solver, MuJoCo chain; server side and "
            "in headless Chromium), median and p95 [ms].",
            _web,
        ),
    )
}
