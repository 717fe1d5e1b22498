"""Cost of one sweep point of `softrod bench sweep`'s design, in this process (no pool): the
chunk runner's time per point, and with `--profile` the top of its cProfile (docs/sweep.md,
"The idle machine, and a point made twice").

    PYTHONPATH=src python dev/sweep_point_cost.py [--points N] [--profile]
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path

from softrod.bench._sweep import bench_spec
from softrod.sweep import _run
from softrod.sweep._tasks import run_chunk


def main() -> None:
    args = sys.argv[1:]
    n = int(args[args.index("--points") + 1]) if "--points" in args else 1000
    sweep = _run.load_sweep(bench_spec(n + 100))
    job = _run._job(sweep, Path.cwd())
    points = [(p.index, p.point_id, p.params) for p in _run.generate_points(sweep)]
    # The first 100 points compile the kernels and fill the caches.
    run_chunk(job, points[:100])
    t0 = time.perf_counter()
    rows = run_chunk(job, points[100:])
    dt = time.perf_counter() - t0
    ok = sum(r["status"] == "ok" for r in rows)
    print(f"sweep point: {dt / n * 1e3:.3f} ms per point over {n} points ({ok} ok)")
    if "--profile" in args:
        cProfile.runctx("run_chunk(job, points[100:])", globals(), locals(), "/tmp/sweep.prof")
        pstats.Stats("/tmp/sweep.prof").sort_stats("cumulative").print_stats(20)


if __name__ == "__main__":
    main()
