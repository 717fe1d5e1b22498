"""Final distance against training time of one `softrod train --algo ppo --snapshot-minutes M`
run (issue 16's "Reach to <= 5 mm in <= 15 minutes" question): every policy snapshot and the
final policy evaluated on the 100 test episodes (reset seeds 10000-10099, the CPU env,
deterministic policy), one process per snapshot.

    PYTHONPATH=src python3 dev/ppo_curve.py runs/Reach-v0-ppo-0 [--workers 8] [-o curve.json]

Prints `ppo_curve.<file>.<metric>: value` lines (wall_time_s, transitions, final_distance_mm,
median_mm, success); the curve is for reporting only: choosing a snapshot is done on the
validation seeds (examples/learning/seed_spread.py).
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

TEST_SEED, TEST_EPISODES = 10_000, 100


def _evaluate(path: str) -> dict:
    import torch

    torch.set_num_threads(1)
    from softrod.learn import evaluate
    from softrod.learn.device_ppo import load_ppo_policy

    policy = load_ppo_policy(path)
    res = evaluate(
        policy, policy.env_id, episodes=TEST_EPISODES, seed=TEST_SEED, env_kwargs=policy.env_kwargs
    )
    d = np.asarray(res.final_distance, dtype=float)
    return {
        "final_distance_mm": round(1e3 * float(np.nanmean(d)), 3),
        "std_mm": round(1e3 * float(np.nanstd(d)), 3),
        "median_mm": round(1e3 * float(np.nanmedian(d)), 3),
        "success": float(np.mean(res.success)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("-o", "--out", type=Path)
    args = ap.parse_args()
    summary = json.loads((args.run / "summary.json").read_text())
    rows = [dict(r) for r in summary.get("snapshots", [])]
    rows.append(
        {
            "file": "policy.pt",
            "step": summary["timesteps"],
            "transitions": summary["transitions"],
            "wall_time_s": summary["wall_time_s"],
        }
    )
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(_evaluate, [str(args.run / r["file"]) for r in rows]))
    for row, res in zip(rows, results, strict=True):
        row.update(res)
        name = Path(row["file"]).stem
        for key in ("wall_time_s", "transitions", "final_distance_mm", "median_mm", "success"):
            print(f"ppo_curve.{name}.{key}: {row[key]}", flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps({"run": str(args.run), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
