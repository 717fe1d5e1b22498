"""GPU recipe for batched exact statics on NVIDIA Warp (issue 16 part 1): solves/s of
`softrod.rods._batch_warp.solve_batch_warp` for the SoftManiSim robot (tensions 0-3 N on its four
tendons, a 3-D tip force up to 1 N, seeded) at batch 1e3..1e6, with and without tip Jacobians,
and a cross-check of random items against `solve_static` (max tip error, number flagged).

    PYTHONPATH=src python3 dev/static_batch_gpu.py --device cuda:0
    PYTHONPATH=src python3 dev/static_batch_gpu.py --device cpu --sizes 100,1000 --check 20

Needs numpy, scipy, pydantic, numba and warp-lang only (no MuJoCo, no torch). Prints
`static_batch_gpu.<metric>: value` lines. Timings include the host<->device copies of inputs and
results; the first call compiles the kernels (or loads them from Warp's cache) and is reported
apart as `first_call_s`.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import warp as wp

from softrod.description import find_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._batch_warp import bench_batch_warp, random_loads, solve_batch_warp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda:0", help="Warp device: cuda:0, cpu, ...")
    ap.add_argument("--sizes", default="1000,10000,100000,1000000", help="batch sizes")
    ap.add_argument("--check", type=int, default=100, help="items checked against solve_static")
    ap.add_argument("--no-jacobian", action="store_true", help="skip the runs with Jacobians")
    args = ap.parse_args()
    sizes = tuple(int(float(s)) for s in args.sizes.split(","))
    wp.config.quiet = True
    wp.init()
    name = wp.get_device(args.device).name
    print(f"static_batch_gpu.device: {name}")
    model = compile_model(find_robot("softmanisim"))

    def emit(prefix: str, metrics: dict[str, float]) -> None:
        for key, value in metrics.items():
            print(f"static_batch_gpu.{prefix}.{key}: {value:.6g}", flush=True)

    emit("plain", bench_batch_warp(model, sizes, args.device, jacobian=False))
    if not args.no_jacobian:
        emit("jacobian", bench_batch_warp(model, sizes, args.device, jacobian=True))

    # Cross-check: random items of the benchmark's distribution against the CPU solver.
    n = args.check
    loads = random_loads(model, n, 2)
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
    err = 0.0
    for i in range(n):
        ref = solve_static(model, loads.actuation[i], tip_force=loads.tip_force[i])
        if res.success[i] and ref.success:
            err = max(err, float(np.abs(res.tip_position[i] - ref.tip_position).max()))
    emit(
        "check",
        {
            "items": float(n),
            "max_tip_error_m": err,
            "flagged": float(np.sum(~res.success)),
            "seconds": dt,
        },
    )


if __name__ == "__main__":
    main()
