"""`softrod bench sweep`: throughput of the sweep runner on the static task (points/s)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from softrod.sweep import read_results, run_sweep

__all__ = ["bench_spec", "run_sweep_bench"]


def bench_spec(n_points: int, seed: int = 0) -> dict[str, Any]:
    """A random design of `n_points` static solves of the seed-002 TDCR (tdcr3)."""
    return {
        "name": "bench_static",
        "robot": "tdcr3",
        "task": "static_tip",
        "inputs": {"tensions": [0.0] * 9},
        "design": {
            "kind": "random",
            "n": n_points,
            "parameters": {
                "backbone.youngs_modulus": {"low": 4.0e10, "high": 8.0e10},
                "inputs.tensions.0": {"low": 0.0, "high": 2.0},
                "inputs.tensions.4": {"low": 0.0, "high": 2.0},
                "inputs.tensions.8": {"low": 0.0, "high": 2.0},
            },
        },
        "seed": seed,
    }


def run_sweep_bench(
    n_points: int = 2000, workers: list[int] | None = None, ray_backend: bool = False
) -> dict[str, float]:
    """`sweep.<backend>.w<N>.points_per_s` for each worker count (after a warm-up run that
    starts the pool's fork server), and the speedup of the largest count over one worker.
    Ray is timed on a running local instance of N CPUs (a cluster is up before a sweep);
    `sweep.ray.w<N>.startup_s` is the time to start it and warm its workers, and
    `sweep.<backend>.w<N>.efficiency` the points' summed time / (wall time * N)."""
    counts = workers or [1, 2]
    out: dict[str, float] = {}
    backends: list[Literal["process", "ray"]] = ["process", "ray"] if ray_backend else ["process"]
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            if backend == "process":
                _warm(backend, 1, Path(tmp))
            for w in counts:
                t0 = time.perf_counter()
                if backend == "ray":
                    _ray_start(w)
                    _warm(backend, w, Path(tmp))
                    out[f"sweep.ray.w{w}.startup_s"] = time.perf_counter() - t0
                try:
                    t0 = time.perf_counter()
                    summary = run_sweep(
                        bench_spec(n_points),
                        Path(tmp) / f"{backend}_{w}.parquet",
                        backend=backend,
                        workers=w,
                        progress=False,
                    )
                    elapsed = time.perf_counter() - t0
                finally:
                    if backend == "ray":
                        import ray

                        ray.shutdown()
                out[f"sweep.{backend}.w{w}.points_per_s"] = summary.n_run / elapsed
                # Share of the workers' wall time spent inside points (1 - dispatch overhead);
                # other load on the cores moves it much less than points/s.
                busy = sum(read_results(summary.output).column("elapsed_s").to_pylist())
                out[f"sweep.{backend}.w{w}.efficiency"] = busy / (elapsed * w)
                out[f"sweep.{backend}.w{w}.errors"] = float(summary.n_errors)
            if len(counts) > 1 and 1 in counts:
                top = max(counts)
                out[f"sweep.{backend}.speedup_w{top}"] = (
                    out[f"sweep.{backend}.w{top}.points_per_s"]
                    / out[f"sweep.{backend}.w1.points_per_s"]
                )
    return out


def _ray_start(cpus: int) -> None:
    import ray

    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)


def _warm(backend: Literal["process", "ray"], w: int, tmp: Path) -> None:
    """A small sweep: starts the fork server, or loads softrod into each Ray worker."""
    run_sweep(
        bench_spec(20 * w, seed=99),
        tmp / f"warm_{backend}_{w}.parquet",
        backend=backend,
        workers=w,
        progress=False,
    )
