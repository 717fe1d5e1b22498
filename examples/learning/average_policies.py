"""Average the actor weights of several SAC checkpoints of one run (stochastic weight averaging).

Late in a run the policy's final distance jumps by 1-3 mm from one 25k-step checkpoint to the
next (validation 3.6-6.5 mm for the Reach-v0 continuation in docs/learning.md); the average of
consecutive checkpoints' actors sits in the middle of the region they wander in and is steadier
than any one of them (Izmailov et al. 2018; Nikishin et al. 2018 for RL). Only the actor is
averaged: acting needs nothing else. The file written is an SB3 SAC .zip (critics of the last
checkpoint) that `softrod eval` reads like any other:

    python examples/learning/average_policies.py \
        runs/reach-ent20/checkpoints/sac_18{00,25,50,75}000_steps.zip -o runs/reach-ent20-swa.zip
    softrod eval runs/reach-ent20-swa.zip --env Reach-v0 --env-kwargs '{"error_gain": 100}'
"""

from __future__ import annotations

import argparse

import torch
from stable_baselines3 import SAC


def average(checkpoints: list[str], out: str) -> None:
    if len(checkpoints) < 2:
        raise ValueError(f"need at least two checkpoints, got {len(checkpoints)}")
    models = [SAC.load(c, device="cpu") for c in checkpoints]
    states = [m.policy.actor.state_dict() for m in models]
    if any(s.keys() != states[0].keys() for s in states) or any(
        s[k].shape != states[0][k].shape for s in states for k in s
    ):
        raise ValueError("checkpoints have different actor networks; average one run's only")
    mean = {k: torch.stack([s[k] for s in states]).mean(dim=0) for k in states[0]}
    last = models[-1]
    last.policy.actor.load_state_dict(mean)
    last.save(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoints", nargs="+", help="SAC .zip files of one run")
    p.add_argument("-o", "--out", required=True, help="output .zip")
    a = p.parse_args()
    torch.set_num_threads(1)
    try:
        average(a.checkpoints, a.out)
    except (ValueError, FileNotFoundError) as exc:
        p.error(str(exc))
    print(f"wrote {a.out} (actor = mean of {len(a.checkpoints)} checkpoints)")


if __name__ == "__main__":
    main()
