"""How a trained InHandRotate-v1 policy fails: over seeded episodes, the failures' final tilt,
rotation and drops (a failure can be several of these).

    python examples/learning/in_hand_failures.py \
        runs/inhand-s0-250k/checkpoints/sac_240000_steps.zip --episodes 30 --seed 20000

Success (the task's) needs the cube upright (tilt <= 20 deg), on the palm and turned by >= 90 deg
about the palm normal; a cube rolled onto a side face ends with a tilt near 90 deg.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from softrod.envs.in_hand_rotate_v1 import SUCCESS_ROTATION, UPRIGHT_TILT
from softrod.learn import evaluate, load_config, load_sb3_policy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("policy", type=Path, help="A SAC .zip of an InHandRotate-v1 run.")
    ap.add_argument("--episodes", type=int, default=30)
    ap.add_argument("--seed", type=int, default=20_000, help="First reset seed (validation).")
    args = ap.parse_args()
    # The run's env kwargs (e.g. tilt_weight) from its config.yaml, beside or above checkpoints/.
    cfg = next(
        (p / "config.yaml" for p in args.policy.parents if (p / "config.yaml").is_file()), None
    )
    kwargs = dict(getattr(load_config(cfg), "env_kwargs", {}) or {}) if cfg else {}
    res = evaluate(
        load_sb3_policy(args.policy),
        "softrod/InHandRotate-v1",
        episodes=args.episodes,
        seed=args.seed,
        env_kwargs=kwargs,
    )
    fail = ~res.success
    fi = {k: res.final_info[k][fail] for k in ("rotation", "tilt", "dropped")}
    out = {
        "policy": str(args.policy),
        "episodes": args.episodes,
        "seed": args.seed,
        "successes": int(res.success.sum()),
        "failures": int(fail.sum()),
        "tilted": int((fi["tilt"] > UPRIGHT_TILT).sum()),
        "dropped": int(fi["dropped"].sum()),
        "under_target_rotation": int((fi["rotation"] < SUCCESS_ROTATION).sum()),
        "failure_tilt_deg": [round(math.degrees(t), 1) for t in fi["tilt"]],
        "failure_rotation_rad": [round(float(r), 2) for r in fi["rotation"]],
        "rotation_mean_rad": float(np.mean(res.final_info["rotation"])),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
