"""GPU recipe for batched exact statics on NVIDIA Warp (issue 16 part 1): solves/s of
`softrod.rods._batch_warp.solve_batch_warp` for the SoftManiSim robot (tensions 0-3 N on its four
tendons, a 3-D tip force up to 1 N, seeded) at batch 1e4, 1e5, 1e6, in three cases: `checked`
(the default stability check, on the device), `unchecked` (`check_stability=False`) and
`jacobian` (tip Jacobians, default check); then a cross-check of 100 items against the CPU
(tip error against `solve_static`, the device's stability verdicts against the numba batch's
test at the same answers, flagged count, and the device's tip error estimate: its max and
median over the converged items and how many exceed 1e-6 L, the items `solve_static_batch`
would refine on the CPU).
The cross-check's items are the benchmark's distribution plus a fifth of axial tip loads of
0.2-4 x the robot's Euler load pi^2 EI / (4 L^2), so that both verdicts occur.

    PYTHONPATH=src python3 dev/static_batch_gpu.py --device cuda:0
    PYTHONPATH=src python3 dev/static_batch_gpu.py --device cpu --sizes 100,1000 --check 20

Needs numpy, scipy, pydantic, numba and warp-lang only (no MuJoCo, no torch). Prints
`static_batch_gpu.<case>.<metric>: value` lines, flushed as they come. Timings include the
host<->device copies of inputs and results and a warm-up call of each size; the first call of
a case compiles the kernels (or loads them from Warp's cache) and is reported apart as
`first_call_s`. Each part has its own time budget (`--part-budget` seconds: sizes not started
within it are reported `skipped`), so one unattended run ends.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import warp as wp

from softrod.description import find_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._batch_types import BatchLoads
from softrod.rods._batch_warp import (
    _stability_on_cpu,
    bench_batch_warp,
    random_loads,
    solve_batch_warp,
)
from softrod.rods._stability import STATUS_UNSTABLE


def _check_loads(model, n: int) -> BatchLoads:
    """n items: the benchmark's inputs, a fifth of them replaced by axial tip loads of 0.2-4 x
    pi^2 EI_min / (4 L^2) against the base axis, slightly off axis, with small tensions."""
    loads = random_loads(model, n, 2)
    tau = loads.actuation.copy()
    force = loads.tip_force.copy()
    rng = np.random.default_rng(3)
    k = n // 5
    critical = np.pi**2 * float(model.K_bt[:, :2].min()) / (4.0 * model.total_length**2)
    axis = model.base_rotation[:, 2]
    size = critical * np.linspace(0.2, 4.0, k)
    side = 1e-3 * critical * rng.normal(size=(k, 3))
    force[n - k :] = -size[:, None] * axis[None, :] + side
    # Tensions of 0-0.15 N on them: the section Newton runs, yet the rod stays near straight.
    tau[n - k :] *= 0.05
    z = np.zeros((n, 3))
    return BatchLoads("tension", tau, force, z, z.copy(), z.copy())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda:0", help="Warp device: cuda:0, cpu, ...")
    ap.add_argument("--sizes", default="10000,100000,1000000", help="batch sizes")
    ap.add_argument("--check", type=int, default=100, help="items checked against the CPU")
    ap.add_argument("--part-budget", type=float, default=40.0, help="seconds per case")
    args = ap.parse_args()
    sizes = tuple(int(float(s)) for s in args.sizes.split(","))
    wp.config.quiet = True
    wp.init()
    name = wp.get_device(args.device).name
    print(f"static_batch_gpu.device: {name}", flush=True)
    model = compile_model(find_robot("softmanisim"))

    def emit(prefix: str, metrics: dict[str, float]) -> None:
        for key, value in metrics.items():
            print(f"static_batch_gpu.{prefix}.{key}: {value:.6g}", flush=True)

    cases = {
        "checked": dict(jacobian=False, check_stability=True),
        "unchecked": dict(jacobian=False, check_stability=False),
        "jacobian": dict(jacobian=True, check_stability=True),
    }
    for case, kw in cases.items():
        deadline = time.perf_counter() + args.part_budget
        try:
            emit(case, bench_batch_warp(model, sizes, args.device, deadline=deadline, **kw))
        except Exception as exc:  # keep the other parts of an unattended run
            print(f"static_batch_gpu.{case}.error: {type(exc).__name__}: {exc}", flush=True)

    # Cross-check: items against the CPU solver and the CPU batch's stability test.
    n = args.check
    loads = _check_loads(model, n)
    t0 = time.perf_counter()
    res = solve_batch_warp(
        model,
        loads,
        device=args.device,
        guess=None,
        jacobian=False,
        shapes=False,
        rtol=1e-10,
        max_iter=30,
    )
    dt = time.perf_counter() - t0
    assert res.stable is not None
    # The CPU's verdicts: the numba batch's test (`_stability_batch`) at the same answers.
    both = np.flatnonzero(np.isin(res.status, (0, STATUS_UNSTABLE)))
    cpu_stable = _stability_on_cpu(model, loads, res.unknowns, both)
    err = 0.0
    for i in range(n):
        ref = solve_static(model, loads.actuation[i], tip_force=loads.tip_force[i])
        if res.success[i] and ref.success:
            err = max(err, float(np.abs(res.tip_position[i] - ref.tip_position).max()))
    # The device's tip error estimate (`_final_kernel`): NaN = none (the front end refines).
    est = res.tip_error if res.tip_error is not None else np.full(n, np.nan)
    conv = np.isin(res.status, (0, STATUS_UNSTABLE))
    bound = 1e-6 * model.total_length
    emit(
        "check",
        {
            "items": float(n),
            "max_tip_error_m": err,
            "estimate_max_m": float(np.nanmax(est[conv])) if conv.any() else float("nan"),
            "estimate_median_m": float(np.nanmedian(est[conv])) if conv.any() else float("nan"),
            "estimate_missing": float(np.sum(conv & np.isnan(est))),
            "estimate_above_tol": float(np.sum(conv & (est > bound))),
            "flagged": float(np.sum(~res.success)),
            "unstable": float(np.sum(res.status == STATUS_UNSTABLE)),
            "verdicts_compared": float(both.size),
            "verdicts_differing": float(np.sum(res.stable[both] != cpu_stable)),
            "seconds": dt,
        },
    )


if __name__ == "__main__":
    main()
