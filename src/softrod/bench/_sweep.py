"""`softrod bench sweep`: throughput of the sweep runner on the static task (points/s)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from softrod.sweep import run_sweep

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
    starts the pool's fork server), and the speedup of the largest count over one worker."""
    counts = workers or [1, 2]
    out: dict[str, float] = {}
    backends: list[Literal["process", "ray"]] = ["process", "ray"] if ray_backend else ["process"]
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            run_sweep(
                bench_spec(20, seed=99),
                Path(tmp) / f"warm_{backend}.parquet",
                backend=backend,
                workers=1,
                progress=False,
            )
            for w in counts:
                t0 = time.perf_counter()
                summary = run_sweep(
                    bench_spec(n_points),
                    Path(tmp) / f"{backend}_{w}.parquet",
                    backend=backend,
                    workers=w,
                    progress=False,
                )
                elapsed = time.perf_counter() - t0
                out[f"sweep.{backend}.w{w}.points_per_s"] = summary.n_run / elapsed
                out[f"sweep.{backend}.w{w}.errors"] = float(summary.n_errors)
            if len(counts) > 1 and 1 in counts:
                top = max(counts)
                out[f"sweep.{backend}.speedup_w{top}"] = (
                    out[f"sweep.{backend}.w{top}.points_per_s"]
                    / out[f"sweep.{backend}.w1.points_per_s"]
                )
    return out
