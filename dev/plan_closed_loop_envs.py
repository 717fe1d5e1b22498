"""Open vs closed loop of one model's plans in the eight benchmark environments (issue 17, 7).

Plans with `--model` (noload needs no network; nn loads the cached network of
`softrod plan --benchmark --epochs N`), executes each plan open loop and closed loop on the
ground truth and prints the final distances, collisions, corrections, replans and guard stops:

    PYTHONPATH=src python dev/plan_closed_loop_envs.py --model noload --budget 5
    PYTHONPATH=src python dev/plan_closed_loop_envs.py --model nn --epochs 150
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from softrod.planning import (
    BenchmarkConfig,
    execute_plan_closed_loop,
    load_environment,
    plan_environment,
    prepare_models,
)
from softrod.planning._benchmark import shipped_environments


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="noload", choices=("nn", "noload"))
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--envs", default="")
    ap.add_argument("--cl", action="append", default=[], help="ClosedLoopConfig field=value")
    args = ap.parse_args()
    cfg = BenchmarkConfig()
    cfg = dataclasses.replace(
        cfg, planner=dataclasses.replace(cfg.planner, time_budget_s=args.budget)
    )
    if args.epochs is not None:
        cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, epochs=args.epochs))
    for item in args.cl:
        key, value = item.split("=")
        cl = dataclasses.replace(
            cfg.closed_loop,
            **{
                key: type(getattr(cfg.closed_loop, key))(
                    eval(value)  # noqa: S307 (a dev switch)
                )
            },
        )
        cfg = dataclasses.replace(cfg, closed_loop=cl)
    models = prepare_models(cfg, need_network=args.model == "nn")
    reached = [0, 0]
    for path in shipped_environments():
        env = load_environment(path)
        if args.envs and env.name not in args.envs.split(","):
            continue
        t0 = time.perf_counter()
        plan, exe = plan_environment(models, env, args.model, cfg)
        if exe is None:
            print(f"{env.name}: no plan")
            continue
        t1 = time.perf_counter()
        closed = execute_plan_closed_loop(models, env, plan, args.model, cfg)
        t2 = time.perf_counter()
        reached[0] += exe.in_goal and not exe.collision
        reached[1] += closed.in_goal and not closed.collision
        print(
            f"{env.name}: open {exe.distance_m * 100:5.1f} cm{' HIT' if exe.collision else ''}"
            f" (frame {exe.collision_frame}) | closed {closed.distance_m * 100:5.1f} cm"
            f"{' HIT' if closed.collision else ''} (frame {closed.collision_frame}), "
            f"{closed.corrections} corr, {closed.replans} replans, {closed.guard_stops} guard, "
            f"tries [{', '.join(f'{d * 100:.1f}' for d in closed.distances_m)}] | "
            f"plan {t1 - t0:.1f} s, closed {t2 - t1:.1f} s",
            flush=True,
        )
    print(f"in goal without collision: open {reached[0]}, closed {reached[1]}")
    np.set_printoptions(precision=3)


if __name__ == "__main__":
    main()
