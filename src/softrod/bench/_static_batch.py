"""`softrod bench static-batch`: throughput of `solve_static_batch` against the single-solve loop.

The problem is `bench static`'s SoftManiSim case (1 segment, 4 tendons; random tip forces
0-2 N in random directions, distributed load [1, 1, 1] N/m, random tensions on two adjacent
tendons). Metrics (`static_batch.<metric>`):
- loop_solves_per_s: `solve_static` in a Python loop on one core, each solve warm-started from
  the previous (the `bench static` protocol); loop_cold_solves_per_s: the same, cold.
- batch_<B>.solves_per_s_1_thread and batch_<B>.solves_per_s_<T>_threads: one batched call
  (cold items) on 1 thread and on T threads (numba's default: the cores); on a Warp device
  batch_<B>.solves_per_s_<device>.
- batch_<B>.speedup_1_thread: the 1-thread batch rate over loop_solves_per_s (per core);
  batch_<B>.cpu_speedup_1_thread and batch_<B>.cpu_speedup_1_thread_cold: per CPU second over
  the warm loop (the reference, `bench static`'s protocol) and over the cold loop (whose
  inputs the batch's cold items solve).
- converged_fraction (largest batch); max_tip_difference_m: largest tip difference between the
  largest batch and the loop's cold solves of the same inputs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from softrod.bench._static import _softmanisim_inputs, example_robot_path
from softrod.description import load_robot
from softrod.rods import StaticBatchResult, compile_model, solve_static, solve_static_batch

__all__ = ["run_static_batch_bench"]

#: Solves timed in the single-solve loops (enough for a stable rate, a few seconds at most).
N_LOOP = 300


def run_static_batch_bench(
    batches: Sequence[int] = (100, 1000, 10000),
    device: str = "cpu",
    threads: int | None = None,
    jacobian: bool = False,
    seed: int = 0,
) -> dict[str, float]:
    """Run the benchmark; returns {"static_batch.metric": value}."""
    import numba

    rng = np.random.default_rng(seed)
    model = compile_model(load_robot(example_robot_path("softmanisim")))
    n_max = max(batches)
    items = _softmanisim_inputs(max(n_max, N_LOOP), rng)
    tensions = np.array([kw["tensions"] for kw in items])
    tip_force = np.array([kw["tip_force"] for kw in items])
    dist = items[0]["distributed_force"]
    n_threads = threads if threads is not None else numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    out: dict[str, float] = {"static_batch.threads": float(n_threads)}

    # Single-solve loops on one core (after JIT), warm as `bench static` and cold.
    for kw in items[:3]:
        solve_static(model, **kw)
    for warm in (True, False):
        prev = None
        cold_tips = []
        t0, c0 = time.perf_counter(), time.process_time()
        for kw in items[:N_LOOP]:
            sol = solve_static(model, guess=prev if warm else None, **kw)
            prev = sol if sol.success else None
            cold_tips.append(sol.tip_position)
        name = "static_batch.loop" if warm else "static_batch.loop_cold"
        out[f"{name}_solves_per_s"] = N_LOOP / (time.perf_counter() - t0)
        out[f"{name}_solves_per_cpu_s"] = N_LOOP / (time.process_time() - c0)
    loop_rate = out["static_batch.loop_solves_per_s"]
    cpu_rate = 0.0  # of the last timed batch

    def timed(n: int, n_thr: int | None) -> tuple[float, StaticBatchResult]:
        nonlocal cpu_rate
        t0, c0 = time.perf_counter(), time.process_time()
        res = solve_static_batch(
            model,
            tensions=tensions[:n],
            tip_force=tip_force[:n],
            distributed_force=dist,
            device=device,
            threads=n_thr,
            jacobian=jacobian,
        )
        cpu_rate = n / (time.process_time() - c0)
        return n / (time.perf_counter() - t0), res

    # Compile / load the kernels before timing.
    timed(min(8, n_max), None if device != "cpu" else 1)
    for n in batches:
        key = f"static_batch.batch_{n}"
        if device == "cpu":
            rate_1, _ = timed(n, 1)
            out[f"{key}.solves_per_cpu_s_1_thread"] = cpu_rate
            out[f"{key}.cpu_speedup_1_thread"] = (
                cpu_rate / out["static_batch.loop_solves_per_cpu_s"]
            )
            out[f"{key}.cpu_speedup_1_thread_cold"] = (
                cpu_rate / out["static_batch.loop_cold_solves_per_cpu_s"]
            )
            rate_t, res = timed(n, n_threads)
            out[f"{key}.solves_per_s_1_thread"] = rate_1
            out[f"{key}.solves_per_s_{n_threads}_threads"] = rate_t
            out[f"{key}.speedup_1_thread"] = rate_1 / loop_rate
            out[f"{key}.speedup_{n_threads}_threads"] = rate_t / loop_rate
        else:
            rate_d, res = timed(n, None)
            out[f"{key}.solves_per_s_{device}"] = rate_d
            out[f"{key}.speedup_{device}"] = rate_d / loop_rate
    m = min(N_LOOP, len(res))
    out["static_batch.converged_fraction"] = float(np.mean(res.success))
    out["static_batch.max_tip_difference_m"] = float(
        np.abs(res.tip_position[:m] - np.array(cold_tips[:m])).max()
    )
    return out
