"""Reproduce SoftManiSim's reacher with SAC (seed 000, App. F; docs/learning.md).

    python examples/learning/reach_sac.py --steps 300000 [--env ReachObstacle-v0]

Same as `softrod train Reach-v0 --steps 300000 --eval-episodes 100`. Writes runs/<env>-sac-<seed>/
(config, CSV/TensorBoard logs, checkpoints, learning_curve.png, eval.json). Table 6
hyperparameters (lr 3e-4, batch 64, gamma 0.99, buffer 50 000, 2 x 256 MLPs); one torch thread.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from softrod.learn import SACConfig, evaluate, load_sb3_policy, train_sac


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="Reach-v0")
    ap.add_argument("--steps", type=int, default=300_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episodes", type=int, default=100, help="evaluation episodes")
    args = ap.parse_args()
    env_id = f"softrod/{args.env}"
    run = Path("runs") / f"{args.env}-sac-{args.seed}"
    cfg = SACConfig(env_id=env_id, steps=args.steps, seed=args.seed)
    res = train_sac(cfg, run)
    print(f"trained {res.steps} steps in {res.wall_time:.0f} s ({res.steps_per_second:.0f}/s)")
    ev = evaluate(load_sb3_policy(run), env_id, episodes=args.episodes)
    ev.to_json(run / "eval.json")
    s = ev.summary()
    print(
        f"final distance {1e3 * s['final_distance_mean']:.1f} +- "
        f"{1e3 * s['final_distance_std']:.1f} mm, success {100 * s['success_rate']:.0f} %"
    )


if __name__ == "__main__":
    main()
