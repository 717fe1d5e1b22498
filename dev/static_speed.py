"""Time the warm sequences of `softrod bench static` (docs/stability.md, "Cost of a solve").

    PYTHONPATH=src python dev/static_speed.py [REPEATS] [--phases] [--classes] [--cpu]

Runs the bench's SoftManiSim sequence (300 warm-started solves, seed 0) and its tdcr3 warm
trajectory (100 solves) REPEATS times (default 3) in this process and prints the median solve
time of each run and the smallest of them (the least disturbed run on a shared machine), with
the mean Newton iterations. Pair two source trees on the same machine by running this script
under each, back to back:

    PYTHONPATH=/path/to/other/src python dev/static_speed.py 5
    PYTHONPATH=src python dev/static_speed.py 5

`--cpu` times each solve by this thread's CPU time instead of the wall clock: on a shared,
loaded machine the wall clock also counts the time other processes held the core, the CPU
time only this solve's work (what a before/after comparison needs). `--phases` adds a
per-phase breakdown of the solves nearest the median (inclusive timers on
the solver's private functions; the timers themselves cost a few percent). `--classes` splits
each sequence's solves by their number of continuation steps (0: Newton directly from the
warm start) and prints the count, median time and mean Newton iterations of each class: the
run's median sits in the class that holds it.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from softrod.bench._static import _softmanisim_inputs
from softrod.description import find_robot, load_robot
from softrod.rods import compile_model, solve_static


def _sequences() -> dict[str, tuple[Any, list[dict[str, Any]]]]:
    # The inputs of `run_static_bench` (same seed, same order of random draws).
    rng = np.random.default_rng(0)
    sms = compile_model(load_robot(find_robot("softmanisim")))
    sms_inputs = _softmanisim_inputs(300, rng)
    tdcr = compile_model(load_robot(find_robot("tdcr3")))
    g = np.array([0.0, 0.0, -9.81])
    ts = np.arange(100) / 100.0
    phase = rng.uniform(0, 2 * np.pi, size=9)
    traj = [
        dict(tensions=np.maximum(0.0, 1.5 * np.sin(2 * np.pi * 0.5 * tk + phase)), gravity=g)
        for tk in ts
    ]
    return {"softmanisim": (sms, sms_inputs), "tdcr3_warm": (tdcr, traj)}


_CLOCK = time.thread_time if "--cpu" in sys.argv else time.perf_counter


def _run(model: Any, inputs: list[dict[str, Any]], hook: Callable[[], None] | None = None):
    times, results, prev = [], [], None
    for kw in inputs:
        if hook is not None:
            hook()
        t0 = _CLOCK()
        sol = solve_static(model, guess=prev, **kw)
        times.append(_CLOCK() - t0)
        results.append(sol)
        prev = sol if sol.success else None
    return np.array(times), results


def _phase_timers() -> tuple[dict[str, float], Callable[[], None]]:
    """Wrap the solver's phases with inclusive timers; returns (accumulator, reset)."""
    import softrod.rods._shooting as shooting
    import softrod.rods._stability as stability
    import softrod.rods._static as static

    acc: dict[str, float] = defaultdict(float)

    def wrap(mod: Any, name: str, label: str) -> None:
        if not hasattr(mod, name):  # an older tree (paired runs)
            return
        f = getattr(mod, name)

        def timed(*a: Any, **k: Any) -> Any:
            t0 = _CLOCK()
            try:
                return f(*a, **k)
            finally:
                acc[label] += _CLOCK() - t0

        setattr(mod, name, timed)

    wrap(static, "check_inputs", "inputs (check_inputs)")
    wrap(static, "stable_equilibrium", "stability test")
    wrap(shooting, "_newton", "Newton kernel (_newton)")
    wrap(shooting, "_final_with_maps", "last evaluation with the maps")
    # Since s12-static19 one compiled call: Newton, its last evaluation with the maps and the
    # estimate's coarse integration; the estimate's Python is its coarse problem.
    wrap(shooting, "_newton_with_maps", "Newton + maps + estimate (kernel)")
    wrap(shooting, "_coarse_problem", "estimate's coarse problem")
    wrap(shooting, "_coarse_tip_error", "tip error estimate")
    wrap(shooting, "_refine", "refinement")
    wrap(shooting, "_assemble", "result (_assemble)")
    wrap(shooting, "_problem", "load arrays (_problem)")
    for name in ("_direct_ok", "_bending_number", "_tip_step_ok"):
        wrap(shooting, name, "path decisions")
    wrap(shooting, "_solve_once", "_solve_once (all of the solve)")
    del stability
    return acc, acc.clear


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    repeats = int(args[0]) if args else 3
    seqs = _sequences()
    for model, inputs in seqs.values():
        _run(model, inputs[:5])  # load the kernels
    for name, (model, inputs) in seqs.items():
        medians = []
        for _ in range(repeats):
            t, res = _run(model, inputs)
            medians.append(np.median(t) * 1e3)
        nit = np.mean([r.nit for r in res])
        runs = " ".join(f"{m:.3f}" for m in medians)
        print(f"{name}: median_ms min {min(medians):.3f} (runs {runs}); mean nit {nit:.2f}")
    if "--classes" in sys.argv:
        _classes(seqs)
    if "--phases" in sys.argv:
        acc, reset = _phase_timers()
        for name, (model, inputs) in seqs.items():
            rows: list[dict[str, float]] = []

            def hook(rows: list[dict[str, float]] = rows) -> None:
                if acc:
                    rows.append(dict(acc))
                reset()

            t, _ = _run(model, inputs, hook)
            hook()
            near = np.argsort(np.abs(t - np.median(t)))[: max(10, len(t) // 5)]
            total = float(np.mean(t[near]))
            head = f"the {near.size} solves nearest the median, {total * 1e3:.3f} ms"
            print(f"{name} phases ({head}):")
            for label in sorted({k for r in rows for k in r}):
                v = float(np.mean([rows[i].get(label, 0.0) for i in near]))
                print(f"  {label:32s} {v * 1e3:7.4f} ms {100 * v / total:5.1f} %")


def _classes(seqs: dict[str, tuple[Any, list[dict[str, Any]]]]) -> None:
    """Per sequence: solves by continuation steps (calls of the step rule), with their times."""
    import softrod.rods._shooting as shooting

    rule = shooting._next_load_step
    steps = [0]

    def counted(*a: Any) -> Any:
        steps[0] += 1
        return rule(*a)

    shooting._next_load_step = counted
    try:
        for name, (model, inputs) in seqs.items():
            per: list[int] = []

            def hook(per: list[int] = per) -> None:
                per.append(steps[0])
                steps[0] = 0

            t, res = _run(model, inputs, hook)
            hook()
            k = np.array(per[1:])
            print(f"{name} classes (continuation steps: solves, median ms, mean nit):")
            for n in sorted(set(k.tolist())):
                on = k == n
                nit = np.mean([r.nit for r, o in zip(res, on, strict=True) if o])
                print(f"  {n:3d}: {on.sum():4d}  {np.median(t[on]) * 1e3:7.3f}  {nit:5.1f}")
    finally:
        shooting._next_load_step = rule


if __name__ == "__main__":
    main()
