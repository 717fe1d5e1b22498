"""Put a trained policy into the package (`src/softrod/learn/shipped/<env>/`) with its provenance.

SAC: the candidates (checkpoints / model.zip of one run) are evaluated on validation episodes
(reset seeds 20000-20049) and the lowest mean final distance is shipped (its actor only, float32).
BC: the one policy.pt is shipped as it is. Either way the shipped file is then evaluated, as
`softrod eval shipped:ENV` loads it, on the test episodes (seeds 10000-10099), and those are the
numbers recorded next to it.

    python examples/learning/ship_policy.py Reach-v0 --run runs/ship-reach \
        --candidates runs/ship-reach/checkpoints/*.zip runs/ship-reach/model.zip \
        --command "softrod train Reach-v0 --steps 300000 ..." --seed 0
    python examples/learning/ship_policy.py WholeBodyGrasp-v0 --run runs/grasp-bc \
        --candidates runs/grasp-bc/policy.pt --command "softrod demos ..." --command "..."
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

from softrod.learn import (
    evaluate,
    export_sac_actor,
    load_bc_policy,
    load_config,
    load_sb3_policy,
    load_shipped,
    shipped_policies,
)

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "softrod" / "learn" / "shipped"
VALIDATION_SEED, VALIDATION_EPISODES = 20_000, 50
TEST_SEED, TEST_EPISODES = 10_000, 100


def _steps_of(path: Path, run_steps: int) -> int:
    """Environment steps of a checkpoint (`sac_<n>_steps.zip`) or of the run's final model."""
    m = re.search(r"_(\d+)_steps", path.name)
    return int(m.group(1)) if m else run_steps


def _wall_at(run: Path, steps: int, log_every: int) -> float:
    """Training wall time [s] of a SAC run when it had taken `steps` steps (progress.csv has
    one row every `log_every` steps, then one at the end)."""
    with (run / "progress.csv").open() as f:
        rows = list(csv.DictReader(f))
    times = [float(r["time/wall_time"]) for r in rows[: max(steps // log_every, 1)]]
    return times[-1] if times else float("nan")


def _wall_of_checkpoint(run: Path, checkpoint: Path) -> float:
    """Training wall time [s] to a checkpoint of a resumed run, whose progress.csv rows are not
    every `log_every` steps: from the run's config.yaml (written as training starts) to the
    checkpoint file."""
    return checkpoint.stat().st_mtime - (run / "config.yaml").stat().st_mtime


def _non_defaults(cfg) -> str:
    """The SAC settings of `cfg` that differ from Table 6's defaults, as ", name value" text."""
    from softrod.learn import SACConfig

    base = SACConfig(env_id=cfg.env_id)
    keys = ("batch_size", "buffer_size", "learning_rate", "learning_starts", "target_entropy")
    return "".join(f", {k} {getattr(cfg, k)}" for k in keys if getattr(cfg, k) != getattr(base, k))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("env")
    ap.add_argument("--run", type=Path, required=True, help="Run directory (summary.json).")
    ap.add_argument("--candidates", type=Path, nargs="+", required=True)
    ap.add_argument("--command", action="append", default=[], help="Training commands, in order.")
    ap.add_argument("--seed", type=int, default=0, help="Training seed.")
    ap.add_argument("--commit", default=None, help="Git commit the training ran [HEAD].")
    ap.add_argument(
        "--wall-offset",
        type=float,
        default=0.0,
        help="Training seconds before this run (--resume) [s].",
    )
    ap.add_argument("--step-offset", type=int, default=0, help="Steps before this run (--resume).")
    ap.add_argument("--note", default="", help="A sentence for PROVENANCE.md.")
    args = ap.parse_args()

    env_id = f"softrod/{args.env.removeprefix('softrod/')}"
    name = env_id.removeprefix("softrod/")
    summary_file = args.run / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else {}
    commit = (
        args.commit
        or subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    out = SHIPPED / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    provenance: dict = {"env_id": env_id, "train_seed": args.seed, "git_commit": commit}

    if args.candidates[0].suffix == ".zip":
        # SAC: select on validation episodes, ship the actor only.
        cfg = load_config(args.run / "config.yaml")
        kwargs = dict(getattr(cfg, "env_kwargs", {}) or {})
        run_steps = args.step_offset + int(summary.get("steps", getattr(cfg, "steps", 0)))
        validation = []
        for cand in args.candidates:
            res = evaluate(
                load_sb3_policy(cand),
                env_id,
                episodes=VALIDATION_EPISODES,
                seed=VALIDATION_SEED,
                env_kwargs=kwargs,
            )
            d = float(np.nanmean(res.final_distance))
            validation.append({"file": cand.name, "steps": _steps_of(cand, run_steps), "mean": d})
            print(f"validation {cand.name}: {1e3 * d:.2f} mm", flush=True)
        best = min(validation, key=lambda v: v["mean"])
        source = next(c for c in args.candidates if c.name == best["file"])
        export_sac_actor(source, out / "policy.npz", env_id, kwargs)
        provenance |= {
            "algorithm": "SAC (Stable-Baselines3, Table 6 defaults"
            + _non_defaults(cfg)
            + "); shipped: the actor only",
            "policy_file": "policy.npz",
            "env_kwargs": kwargs,
            "steps": best["steps"],
            "run_steps": run_steps,
            "wall_time_s": round(
                args.wall_offset
                + (
                    float(summary["wall_time_s"])
                    if best["steps"] == run_steps and "wall_time_s" in summary
                    else _wall_of_checkpoint(args.run, source)
                    if args.step_offset
                    else _wall_at(
                        args.run,
                        best["steps"] - args.step_offset,
                        int(getattr(cfg, "log_every", 1000)),
                    )
                ),
                1,
            ),
            "selection": (
                f"lowest mean final distance over {VALIDATION_EPISODES} validation episodes "
                f"(reset seeds {VALIDATION_SEED}-{VALIDATION_SEED + VALIDATION_EPISODES - 1}) "
                f"among {len(validation)} checkpoints of the run"
            ),
            "validation_final_distance_mean": validation,
        }
    else:
        # BC: the run's policy file as it is.
        shutil.copy(args.candidates[0], out / "policy.pt")
        provenance |= {
            "algorithm": "BC, chunked MLP (softrod bc defaults)",
            "policy_file": "policy.pt",
            "env_kwargs": load_bc_policy(args.candidates[0]).env_kwargs,
            "steps": int(summary["iterations"]),
            "wall_time_s": summary["wall_time_s"],
            "selection": "none (one training run; the test numbers below are its only evaluation)",
        }
    provenance["commands"] = list(args.command)
    provenance["eval_command"] = f"softrod eval shipped:{name} --json"
    # Provisional record so that `load_shipped` finds the policy, then the test evaluation.
    (out / "provenance.json").write_text(json.dumps(provenance, indent=2))
    if env_id not in shipped_policies():
        raise SystemExit(f"{out} is not found by shipped_policies()")
    t0 = time.perf_counter()
    res = evaluate(
        load_shipped(env_id),
        env_id,
        episodes=TEST_EPISODES,
        seed=TEST_SEED,
        env_kwargs=provenance["env_kwargs"],
    )
    provenance["test"] = {
        **res.summary(),
        "eval_wall_time_s": round(time.perf_counter() - t0, 1),
        "final_distance": [round(float(d), 6) for d in res.final_distance],
        "success": [bool(s) for s in res.success],
    }
    provenance["note"] = args.note
    (out / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n")
    t = provenance["test"]
    dist = t["final_distance_mean"]
    unit = "environment steps" if provenance["policy_file"].endswith(".npz") else "gradient steps"
    lines = [
        f"# Shipped policy: {name}",
        "",
        f"- algorithm: {provenance['algorithm']}",
        f"- file: `{provenance['policy_file']}`; environment kwargs: "
        f"`{json.dumps(provenance['env_kwargs'])}`",
        f"- training seed {args.seed}, {provenance['steps']} {unit}, "
        f"training wall time {provenance['wall_time_s']:.0f} s",
        f"- git commit of the training: {commit}",
        f"- selection: {provenance['selection']}",
        f"- test (reset seeds {TEST_SEED}-{TEST_SEED + TEST_EPISODES - 1}): success "
        f"{100 * t['success_rate']:.0f} %, final distance "
        + (
            f"{1e3 * dist:.1f} +- {1e3 * t['final_distance_std']:.1f} mm "
            f"(median {1e3 * t['final_distance_median']:.1f} mm)"
            if dist is not None
            else "n/a"
        ),
        f"- reproduce: `{provenance['eval_command']}` ({t['eval_wall_time_s']:.0f} s here)",
        "",
        "Training commands:",
        "",
        "```bash",
        *provenance["commands"],
        "```",
    ]
    if args.note:
        lines += ["", args.note]
    (out / "PROVENANCE.md").write_text("\n".join(lines) + "\n")
    print(json.dumps({k: v for k, v in t.items() if k not in ("final_distance", "success")}))


if __name__ == "__main__":
    main()
