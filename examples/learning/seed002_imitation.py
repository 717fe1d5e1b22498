"""Seed 002's imitation pipeline on WholeBodyGrasp-v0 and FlipSwitch-v0 (docs/learning.md).

    python examples/learning/seed002_imitation.py [--task FlipSwitch-v0] [--policy act]

1. 50 successful demonstrations from the scripted expert (noise-injected execution);
2. consecutive-duplicate-frame filter (App. E.2; inside the trainer);
3. behaviour cloning with action chunking and temporal ensembling;
4. success rate over 100 seeded episodes (seed 002 reports 73 % in simulation).
Same as `softrod demos ... && softrod bc ... --eval-episodes 100`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from softrod.learn import BCConfig, evaluate, load_bc_policy, record_demos, train_bc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="WholeBodyGrasp-v0")
    ap.add_argument("--policy", default="mlp", choices=["mlp", "act"])
    ap.add_argument("--demos", type=int, default=50)
    ap.add_argument("--iterations", type=int, default=10_000)
    ap.add_argument("--episodes", type=int, default=100)
    args = ap.parse_args()
    env_id = f"softrod/{args.task}"
    out = Path("runs") / f"{args.task}-bc-{args.policy}"
    demos = record_demos(env_id, args.demos, seed=0)
    path = demos.save(out / "demos.npz")
    print(demos.stats(), "->", path)
    # The switch's end looks like its start to a state-only policy: give it the time (docs).
    cfg = BCConfig(
        policy=args.policy, iterations=args.iterations, time_input=args.task == "FlipSwitch-v0"
    )
    res = train_bc(path, cfg, out)
    ev = evaluate(load_bc_policy(res.policy_path), env_id, episodes=args.episodes)
    ev.to_json(out / "eval.json")
    print(f"{args.task}: success {100 * ev.success_rate:.0f} % over {ev.n_episodes} episodes")


if __name__ == "__main__":
    main()
