"""Spread of a learned result over training seeds (issue 17 item 2): one SAC or PPO run per seed,
each run's candidates (SAC checkpoints or PPO policy snapshots, and the final model) compared on
validation episodes, the selected one evaluated on the test episodes, then mean +- std over the
seeds.

    python examples/learning/seed_spread.py PlanarReach-v0 --runs runs/planar-s0 runs/planar-s1 \
        runs/planar-s2 -o examples/learning/results/planar_reach_sac_seeds.json

Validation: reset seeds 20000-20049 (disjoint from the test seeds); test: 10000-10099, the
episodes every other learned result in docs/learning.md is reported on. Selection is fixed before
the test: the lowest mean final distance on validation (`--select distance`), or the highest
validation success rate with ties broken by the mean return (`--select success`, for tasks whose
`info["distance"]` is not what success measures), or the best mean of a task metric the env reports
in its last step's `info` (`--select metric --metric KEY --goal min|max`, e.g. TrackTrajectory's
`tracking_error`, min; the snake's `progress`, max). `--metric KEY` is also reported (per seed and
over seeds) with any selection rule. The std is the population std over seeds.

    python examples/learning/seed_spread.py TrackTrajectory-v1 --runs runs/track-s0 runs/track-s1 \
        runs/track-s2 --select metric --metric tracking_error --goal min -o OUT.json
"""

from __future__ import annotations

import argparse
import json
import time
import zipfile
from pathlib import Path

import numpy as np

from softrod.learn import evaluate, load_config, load_sb3_policy

VALIDATION_SEED, VALIDATION_EPISODES = 20_000, 50
TEST_SEED, TEST_EPISODES = 10_000, 100


def _is_ppo(run: Path) -> bool:
    """Whether `run` is a `softrod train --algo ppo` run (policy.pt) rather than SAC's."""
    from softrod.learn.device_ppo import is_ppo_policy

    return (run / "policy.pt").is_file() and is_ppo_policy(run / "policy.pt")


def _candidates(run: Path) -> list[Path]:
    """A run's checkpoints (SAC) or policy snapshots (PPO, `--snapshot-minutes`) in step order,
    then its final model."""
    if _is_ppo(run):
        return sorted((run / "policies").glob("policy_*.pt")) + [run / "policy.pt"]
    ck = sorted(
        (run / "checkpoints").glob("sac_*_steps.zip"),
        key=lambda p: int(p.stem.split("_")[1]),
    )
    final = run / "model.zip"
    return ck + ([final] if final.is_file() else [])


def _load(path: Path):
    """The numpy policy of a candidate file (PPO .pt or SAC .zip)."""
    if path.suffix == ".pt":
        from softrod.learn.device_ppo import load_ppo_policy

        return load_ppo_policy(path)
    return load_sb3_policy(path)


def _sac_steps(path: Path) -> int | None:
    """Environment steps a SAC .zip has trained on (SB3's `num_timesteps`, which counts the
    steps of the runs it continued too); None for another file."""
    if path.suffix != ".zip" or not path.is_file():
        return None
    with zipfile.ZipFile(path) as z:
        return int(json.loads(z.read("data"))["num_timesteps"])


def _run_settings(run: Path, summary: dict) -> tuple[dict, int, int]:
    """A run's env kwargs, training seed and environment steps (transitions for PPO). A SAC
    run that continued another (`--resume`) counts the steps before it too: its summary has
    only its own."""
    if _is_ppo(run):
        cfg = summary["config"]
        return dict(cfg.get("env_kwargs") or {}), int(cfg["seed"]), int(summary["transitions"])
    cfg = load_config(run / "config.yaml")
    kwargs = dict(getattr(cfg, "env_kwargs", {}) or {})
    total = _sac_steps(run / "model.zip")
    return kwargs, int(cfg.seed), int(summary.get("steps", 0) if total is None else total)


def _metric(res, key: str | None) -> float | None:
    """Mean of a task metric over an evaluation's episodes (None without --metric)."""
    if key is None:
        return None
    if key not in res.final_info:
        raise ValueError(
            f"--metric {key!r}: the task's info has no such number at the last step "
            f"(it has {sorted(res.final_info)})"
        )
    return float(np.mean(res.final_info[key]))


def _score(res, select: str, key: str | None, goal: str) -> tuple[float, float]:
    """Sort key (lower is better) of an evaluation for the selection rule."""
    if select == "distance":
        return float(np.nanmean(res.final_distance)), 0.0
    if select == "metric":
        m = _metric(res, key)
        return (m if goal == "min" else -m), 0.0
    return -float(np.mean(res.success)), -float(np.mean(res.returns))


def _nulls(value):
    """`value` with every non-finite float, at any depth of dicts, lists and tuples, as None."""
    if isinstance(value, dict):
        return {k: _nulls(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nulls(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _test_means(per_seed: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Each seed's test mean final distance [m] (NaN where the task has none) and success rate."""
    dist = [p["test"]["final_distance_mean"] for p in per_seed]
    dist = np.array([np.nan if d is None else d for d in dist], dtype=float)
    return dist, np.array([p["test"]["success_rate"] for p in per_seed], dtype=float)


def _spread(env_id: str, args: argparse.Namespace, per_seed: list[dict], runs: int) -> dict:
    """The JSON written after each seed: the seeds so far and their mean +- population std
    (`complete` is False until every run of `--runs` is in)."""
    dist, succ = _test_means(per_seed)
    out = {
        "env_id": env_id,
        "selection": (
            f"per seed: {args.select} over {VALIDATION_EPISODES} validation episodes (reset seeds "
            f"{VALIDATION_SEED}-{VALIDATION_SEED + VALIDATION_EPISODES - 1}); test: "
            f"{TEST_EPISODES} episodes (reset seeds {TEST_SEED}-{TEST_SEED + TEST_EPISODES - 1})"
        ),
        "select": args.select,
        "goal": args.goal if args.select == "metric" else None,
        "complete": len(per_seed) == runs,
        "seeds": per_seed,
        "final_distance_mean_over_seeds": float(dist.mean()),
        "final_distance_std_over_seeds": float(dist.std()),
        "success_rate_mean_over_seeds": float(succ.mean()),
        "success_rate_std_over_seeds": float(succ.std()),
    }
    if args.metric:
        met = np.array([p["test"]["metric_mean"] for p in per_seed])
        out |= {
            "metric": args.metric,
            "metric_mean_over_seeds": float(met.mean()),
            "metric_std_over_seeds": float(met.std()),
        }
    # Tasks without a distance give NaN means and per-episode NaNs: JSON null, not the
    # non-standard NaN token, at every depth.
    return _nulls(out)


def _reusable(out: Path, env_id: str, args: argparse.Namespace) -> dict[str, dict]:
    """The seeds of an earlier output for the same task, selection rule and metric, by run."""
    if not out.is_file():
        return {}
    old = json.loads(out.read_text())
    same = (
        old.get("env_id") == env_id
        and old.get("select", args.select) == args.select
        and old.get("goal") == (args.goal if args.select == "metric" else None)
        and old.get("metric") == args.metric
    )
    return {p["run"]: p for p in old.get("seeds", [])} if same else {}


def _seed_result(run: Path, env_id: str, args: argparse.Namespace) -> dict:
    """One run: every candidate on the validation episodes, the selected one on the test
    episodes, and their numbers as the output JSON keeps them."""
    summary = json.loads((run / "summary.json").read_text())
    kwargs, train_seed, steps = _run_settings(run, summary)
    # Validation of every candidate, then the test of the selected one only.
    validation = []
    for cand in _candidates(run):
        res = evaluate(
            _load(cand),
            env_id,
            episodes=VALIDATION_EPISODES,
            seed=VALIDATION_SEED,
            env_kwargs=kwargs,
        )
        validation.append(
            {
                "file": str(cand.relative_to(run)),
                "success_rate": float(np.mean(res.success)),
                "final_distance_mean": res.summary()["final_distance_mean"],
                "return_mean": float(np.mean(res.returns)),
                "metric_mean": _metric(res, args.metric),
                "key": _score(res, args.select, args.metric, args.goal),
            }
        )
        print(
            f"{run.name} validation {cand.name}: success {validation[-1]['success_rate']:.2f}"
            f", distance {1e3 * (validation[-1]['final_distance_mean'] or np.nan):.2f} mm"
            + (f", {args.metric} {validation[-1]['metric_mean']:.4g}" if args.metric else ""),
            flush=True,
        )
    best = min(validation, key=lambda v: v["key"])
    t0 = time.perf_counter()
    test = evaluate(
        _load(run / best["file"]),
        env_id,
        episodes=TEST_EPISODES,
        seed=TEST_SEED,
        env_kwargs=kwargs,
    )
    return {
        "run": str(run),
        "train_seed": train_seed,
        "steps": steps,
        # This run's own training time (a resumed run: only what came after the resume).
        "wall_time_s": float(summary.get("wall_time_s", float("nan"))),
        "env_kwargs": kwargs,
        "validation": validation,
        "selected": best["file"],
        # Environment steps behind the selected weights (None for a PPO snapshot).
        "selected_steps": _sac_steps(run / best["file"]),
        "test": {
            **test.summary(),
            "eval_wall_time_s": round(time.perf_counter() - t0, 1),
            "final_distance": [round(float(d), 6) for d in test.final_distance],
            "success": [bool(s) for s in test.success],
            **(
                {
                    "metric": args.metric,
                    "metric_mean": _metric(test, args.metric),
                    "metric_per_episode": [
                        round(float(v), 6) for v in test.final_info[args.metric]
                    ],
                }
                if args.metric
                else {}
            ),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("env")
    ap.add_argument("--runs", type=Path, nargs="+", required=True, help="One run per seed.")
    ap.add_argument("--select", choices=("distance", "success", "metric"), default="distance")
    ap.add_argument("--metric", help="A numeric key of the task's last-step info to report.")
    ap.add_argument("--goal", choices=("min", "max"), default="min", help="For --select metric.")
    ap.add_argument("-o", "--out", type=Path, required=True, help="JSON with every number.")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="Keep the seeds an earlier -o OUT already holds for the same runs and selection "
        "(e.g. runs evaluated as each finished) instead of evaluating them again.",
    )
    args = ap.parse_args()
    if args.select == "metric" and args.metric is None:
        ap.error("--select metric needs --metric KEY")

    env_id = f"softrod/{args.env.removeprefix('softrod/')}"
    done = _reusable(args.out, env_id, args) if args.reuse else {}
    per_seed = []
    for run in args.runs:
        if str(run) in done:
            per_seed.append(done[str(run)])
            print(f"{run.name}: reused from {args.out}", flush=True)
        else:
            per_seed.append(_seed_result(run, env_id, args))
            t = per_seed[-1]["test"]
            print(
                f"{run.name} test ({per_seed[-1]['selected']}): success "
                f"{100 * t['success_rate']:.0f} %, "
                f"distance {1e3 * (t['final_distance_mean'] or np.nan):.2f} mm"
                + (f", {args.metric} {t['metric_mean']:.4g}" if args.metric else ""),
                flush=True,
            )
        # Written after every seed (reused ones too), so a later failure loses nothing done.
        out = _spread(env_id, args, per_seed, len(args.runs))
        args.out.write_text(json.dumps(out, indent=2, allow_nan=False) + "\n")

    dist, succ = _test_means(per_seed)
    cells = " | ".join(
        f"{1e3 * d:.1f} mm, {100 * s:.0f} %" for d, s in zip(dist, succ, strict=True)
    )
    print(
        f"| {args.env} | {cells} | {1e3 * dist.mean():.1f} +- {1e3 * dist.std():.1f} mm, "
        f"{100 * succ.mean():.0f} +- {100 * succ.std():.0f} % |"
    )
    if args.metric:
        print(
            f"{args.metric} per seed "
            + ", ".join(f"{p['test']['metric_mean']:.4g}" for p in per_seed)
            + f"; over seeds {out['metric_mean_over_seeds']:.4g}"
            + f" +- {out['metric_std_over_seeds']:.4g}"
        )


if __name__ == "__main__":
    main()
