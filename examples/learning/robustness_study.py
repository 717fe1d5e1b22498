"""Robustness of trained reaching policies to model error (issue 17 item 6).

Evaluates each policy on the same seeded episodes of `Reach-v0` with the robot perturbed by the
environment's domain-randomisation options (`randomize=`, docs/learning.md): one row per
perturbation, the mean / median final distance and the success rate. The perturbed robot is
drawn from the episode's reset seed, so every policy meets the same robots (a paired
comparison).

    python examples/learning/robustness_study.py shipped:Reach-v0 [runs/reach-dr/model.zip ...] \
        --episodes 50 --out examples/learning/results/robustness_reach.json

POLICY is `shipped:ENV`, a SAC run directory or .zip, or a BC policy.pt (what `softrod eval`
takes). Prints a markdown table (one column per policy) and writes every episode's outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

#: (row label, randomize options). Relative half-ranges r draw a factor in [1 - r, 1 + r] per
#: reset; issue 17's range is 0.2 on modulus and tendon stiffness. Joint friction is absolute
#: [N m] against Reach's joint stiffness of 0.021-0.044 N m / rad (0.002 N m holds a joint
#: still within ~0.05-0.1 rad); observation noise is in the observation's units (m for the
#: positions). Tendon friction is the capstan coefficient at the disk holes (docs/friction.md;
#: the ftdcr_v4 fit found 0.057, docs/validation.md), one per tendon in [0, value].
PERTURBATIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("nominal", {}),
    ("modulus +-10 %", {"modulus": 0.1}),
    ("modulus +-20 %", {"modulus": 0.2}),
    ("modulus +-30 %", {"modulus": 0.3}),
    ("tendon stiffness +-20 %", {"tendon_stiffness": 0.2}),
    ("tendon stiffness +-50 %", {"tendon_stiffness": 0.5}),
    ("modulus and tendon stiffness +-20 % (issue 17)", {"modulus": 0.2, "tendon_stiffness": 0.2}),
    ("disk mass +-30 %", {"disk_mass": 0.3}),
    ("damping +-50 %", {"damping": 0.5}),
    ("joint friction <= 0.5 mN m", {"joint_friction": 0.0005}),
    ("joint friction <= 2 mN m", {"joint_friction": 0.002}),
    ("observation noise 1 mm", {"observation_noise": 0.001}),
    ("observation noise 3 mm", {"observation_noise": 0.003}),
    ("action delay <= 1 step", {"action_delay": 1}),
    ("action delay <= 3 steps", {"action_delay": 3}),
    ("tendon friction mu <= 0.1", {"tendon_friction": 0.1}),
    ("tendon friction mu <= 0.3", {"tendon_friction": 0.3}),
)


def _load(spec: str) -> tuple[Any, dict[str, Any]]:
    # (policy, the environment kwargs it was trained with) for what `softrod eval` takes.
    from softrod.learn import (
        is_bc_policy,
        load_bc_policy,
        load_config,
        load_sb3_policy,
        load_shipped,
    )

    if spec.startswith("shipped:"):
        pol = load_shipped(spec.removeprefix("shipped:"))
        return pol, dict(pol.env_kwargs)
    path = Path(spec)
    if is_bc_policy(path):
        pol = load_bc_policy(path)
        return pol, dict(pol.env_kwargs)
    run = path if path.is_dir() else path.parent
    if run.name == "checkpoints":
        run = run.parent
    cfg = run / "config.yaml"
    kwargs = dict(getattr(load_config(cfg), "env_kwargs", {}) or {}) if cfg.is_file() else {}
    return load_sb3_policy(path), kwargs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("policies", nargs="+", help="shipped:ENV, SAC run dir / .zip, BC policy.pt")
    ap.add_argument("--env", default="Reach-v0", help="environment [Reach-v0]")
    ap.add_argument("--episodes", type=int, default=50, help="episodes per row [50]")
    ap.add_argument("--seed", type=int, default=10_000, help="first reset seed [10000: test]")
    ap.add_argument("--out", type=Path, default=None, help="JSON with every episode")
    ap.add_argument("--rows", default=None, help="comma-separated row indices (default all)")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    from softrod.learn import evaluate

    rows = PERTURBATIONS
    if args.rows:
        rows = tuple(PERTURBATIONS[int(i)] for i in args.rows.split(","))
    env_id = args.env if args.env.startswith("softrod/") else f"softrod/{args.env}"
    loaded = [(_load(p), p) for p in args.policies]
    out: dict[str, Any] = {"env": env_id, "episodes": args.episodes, "seed": args.seed, "rows": []}
    header = "| perturbation | " + " | ".join(
        f"{p}: mean +- sd [mm] (median), success" for _, p in loaded
    )
    print(header + " |")
    print("|---" * (1 + len(loaded)) + "|")
    for label, rnd in rows:
        cells, row = [], {"label": label, "randomize": rnd, "policies": {}}
        for (pol, kwargs), name in loaded:
            # The row's perturbation replaces whatever randomisation the policy trained with (a
            # randomisation-trained policy's "nominal" row is the nominal robot).
            kw = dict(kwargs)
            kw["randomize"] = rnd
            t0 = time.perf_counter()
            res = evaluate(pol, env_id, episodes=args.episodes, seed=args.seed, env_kwargs=kw)
            d = res.final_distance * 1e3
            succ = res.success
            row["policies"][name] = {
                "distance_mm": [float(x) for x in d],
                "success": [bool(x) for x in succ],
                "mean_mm": float(np.mean(d)),
                "std_mm": float(np.std(d)),
                "median_mm": float(np.median(d)),
                "success_rate": float(np.mean(succ)),
                "wall_s": time.perf_counter() - t0,
            }
            stats = f"{np.mean(d):.1f} +- {np.std(d):.1f} ({np.median(d):.1f})"
            cells.append(f"{stats}, {100 * np.mean(succ):.0f} %")
        out["rows"].append(row)
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(args.out.suffix + ".tmp")
        tmp.write_text(json.dumps(out, indent=1))
        tmp.replace(args.out)


if __name__ == "__main__":
    main()
