"""Choose an action-chunking BC policy's temporal-ensembling weight on validation episodes, per
training run, then test the choice (issue 17 item 4: the ACT with temporal ensembling).

    python examples/learning/ensemble_select.py RUN_S0 RUN_S1 RUN_S2 --weights 0.01 0.1 1 3 \
        --iterations 6000 7500 9000 -o examples/learning/results/OUT.json

Each RUN is a `softrod bc ... --keep-candidates` directory. Every candidate
(`RUN/candidates/policy_<iteration>.pt`, those named by `--iterations`, else all) is run
ensembled with every weight k (exp(-k i), i = 0 for the oldest of the overlapping chunks'
predictions, as in ACT; seed 002's k is 0.01) on the validation episodes (reset seeds
20000-20049), and the (candidate, k) pair with the highest validation success (then the lower
mean final distance; on a full tie the later candidate, then the larger k) is evaluated on the
test episodes (10000-10099). Open-loop chunks are not a choice here: this measures the
ensembled policy only. Prints the per-run results and their mean +- population std over runs;
the JSON keeps every validation summary and every test episode and is written after each
evaluation, so `--reuse` continues an interrupted call without running what it holds again.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from softrod.learn import evaluate, load_bc_policy
from softrod.learn._bc import VAL_SEED as VALIDATION_SEED
from softrod.learn._bc import _val_key

VALIDATION_EPISODES = 50
TEST_SEED, TEST_EPISODES = 10_000, 100


def _candidates(run: Path, iterations: list[int] | None) -> list[tuple[int, Path]]:
    """(iteration, file) of a run's kept candidates in iteration order."""
    found = {int(p.stem.split("_")[1]): p for p in (run / "candidates").glob("policy_*.pt")}
    if not found:
        raise SystemExit(f"{run}: no candidates (train with `softrod bc --keep-candidates`)")
    if iterations is None:
        return sorted(found.items())
    return [(it, found[it]) for it in sorted(iterations) if it in found]


def _evaluate(path: Path, k: float, seed: int, episodes: int) -> dict:
    """Summary (and per-episode outcomes) of a candidate run ensembled with weight k."""
    pol = load_bc_policy(path)
    pol.set_temporal_ensemble(k)
    t = time.process_time()
    res = evaluate(pol, str(pol.env_id), episodes=episodes, seed=seed, env_kwargs=pol.env_kwargs)
    out = res.summary()
    out["cpu_s"] = round(time.process_time() - t, 1)
    out["final_distance"] = [float(d) for d in res.final_distance]
    out["success"] = [bool(s) for s in res.success]
    return out


def _key(row: dict) -> tuple[float, float, int, float]:
    """Validation order: `softrod bc`'s (success, then the lower mean final distance), then
    the later candidate and the larger k."""
    return (*_val_key(row), row["iteration"], row["temporal_ensemble"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="softrod bc run directories")
    ap.add_argument("--weights", nargs="+", type=float, default=[0.01], help="weights k >= 0")
    ap.add_argument("--iterations", nargs="+", type=int, help="candidates to compare [all]")
    ap.add_argument("--val-episodes", type=int, default=VALIDATION_EPISODES)
    ap.add_argument("--test-episodes", type=int, default=TEST_EPISODES)
    ap.add_argument("-o", "--out", type=Path, required=True, help="result JSON")
    ap.add_argument("--reuse", action="store_true", help="keep the evaluations OUT holds")
    args = ap.parse_args()
    if any(not np.isfinite(k) or k < 0 for k in args.weights):
        raise SystemExit(f"--weights must be finite and >= 0, got {args.weights}")

    old = json.loads(args.out.read_text()) if args.reuse and args.out.is_file() else {}
    doc = {
        "weights": args.weights,
        "validation": {"seed": VALIDATION_SEED, "episodes": args.val_episodes},
        "test": {"seed": TEST_SEED, "episodes": args.test_episodes},
        "runs": [],
    }
    # Held evaluations count only for the same episodes.
    if old and (old["validation"], old["test"]) != (doc["validation"], doc["test"]):
        raise SystemExit(f"--reuse: {args.out} holds other episodes; use another -o")
    held = {r["run"]: r for r in old.get("runs", [])}
    for run in args.runs:
        prev = held.get(str(run), {})
        have = {(r["iteration"], r["temporal_ensemble"]): r for r in prev.get("validation", [])}
        rows = []
        for it, path in _candidates(run, args.iterations):
            for k in args.weights:
                row = have.get((it, k))
                if row is None:
                    row = _evaluate(path, k, VALIDATION_SEED, args.val_episodes)
                    row.update(iteration=it, temporal_ensemble=k)
                    rows.append(row)
                    _write(args.out, doc, {"run": str(run), "validation": rows})
                else:
                    rows.append(row)
                print(f"{run} {it} k={k}: validation {row['success_rate']:.2f}", flush=True)
        # Selection is fixed before the test; a held test counts only for the same choice.
        best = max(rows, key=_key)
        sel = {"iteration": best["iteration"], "temporal_ensemble": best["temporal_ensemble"]}
        test = prev.get("test") if prev.get("selected") == sel else None
        if test is None:
            path = dict(_candidates(run, [sel["iteration"]]))[sel["iteration"]]
            test = _evaluate(path, sel["temporal_ensemble"], TEST_SEED, args.test_episodes)
        entry = {"run": str(run), "validation": rows, "selected": sel, "test": test}
        doc["runs"].append(entry)
        _write(args.out, doc, None)
        print(
            f"{run}: selected {best['iteration']} k={best['temporal_ensemble']} "
            f"(validation {best['success_rate']:.2f}) -> test {test['success_rate']:.2f}",
            flush=True,
        )
    rates = np.array([r["test"]["success_rate"] for r in doc["runs"]])
    doc["test_success_mean"], doc["test_success_std"] = float(rates.mean()), float(rates.std())
    doc["complete"] = True
    _write(args.out, doc, None)
    print(f"test success over {len(rates)} runs: {rates.mean():.2f} +- {rates.std():.2f}")


def _write(out: Path, doc: dict, partial: dict | None) -> None:
    """Write the JSON so far (`partial`: the run still being validated)."""
    runs = doc["runs"] + ([partial] if partial else [])
    d = {**doc, "runs": runs, "complete": doc.get("complete", False)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(d, indent=1) + "\n")


if __name__ == "__main__":
    main()
