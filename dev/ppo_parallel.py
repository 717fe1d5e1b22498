"""Several on-device PPO runs of one task at once on one GPU (recipes or training seeds), each
with a policy snapshot a minute, then every run's distance-against-minutes curve
(dev/ppo_curve.py) and, per recipe, the validation-selected snapshot of each seed on the test
episodes (examples/learning/seed_spread.py). For the lent GPU's few minutes: one call compares
recipes or gives a recipe its training seeds.

    python3 dev/ppo_parallel.py dev/ppo_recipes.json --minutes 7 --out "$OUT" [--device cuda:0]

The JSON is a list of runs: {"name": str, "recipe": str (runs of one recipe are its seeds),
"seed": int, "args": [extra `softrod train` options], "env_kwargs": {...}}. Runs share the GPU
(time-sliced), so each gets fewer transitions per minute than alone: compare recipes by the
transitions column, and time a recipe alone before quoting its minutes. Prints
`ppo_parallel.<name>.<metric>: value` lines.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

CLI = "import sys; from softrod.cli import main; sys.exit(main(sys.argv[1:]))"


def _script(path: Path, *args: object) -> str:
    """Run a Python script with this interpreter; its stdout (a failure shows as no lines)."""
    cmd = [sys.executable, str(path), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", type=Path)
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--num-envs", type=int, default=4096)
    ap.add_argument("--env", default="Reach-v0")
    ap.add_argument("--snapshot-minutes", type=float, default=1.0)
    args = ap.parse_args()
    runs = json.loads(args.runs.read_text())
    names = [r["name"] for r in runs]
    if len(set(names)) != len(names):
        raise SystemExit(f"{args.runs}: run names must be unique, got {names}")
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path("/tmp/ppo_parallel")
    procs = []
    # Every run starts at once; each writes its own log.
    for r in runs:
        cmd = [sys.executable, "-c", CLI, "train", args.env, "--algo", "ppo"]
        cmd += ["--num-envs", str(args.num_envs), "--device", args.device]
        cmd += [
            "--max-minutes",
            str(args.minutes),
            "--snapshot-minutes",
            str(args.snapshot_minutes),
        ]
        cmd += ["--seed", str(r.get("seed", 0)), "--eval-episodes", "100"]
        cmd += ["--env-kwargs", json.dumps(r.get("env_kwargs", {}))]
        cmd += [*r.get("args", []), "-o", str(work / r["name"]), "--overwrite"]
        log = (args.out / f"{r['name']}.log").open("w")
        procs.append((r, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log))
        print(f"ppo_parallel.{r['name']}.command: {' '.join(cmd[3:])}", flush=True)
    t0 = time.perf_counter()
    for r, p, log in procs:
        p.wait()
        log.close()
        print(f"ppo_parallel.{r['name']}.rc: {p.returncode}", flush=True)
    print(f"ppo_parallel.training_wall_s: {time.perf_counter() - t0:.1f}", flush=True)
    # The curves, then the validation selection per recipe (its runs are its seeds).
    here = Path(__file__).resolve().parent
    done = [r for r, p, _ in procs if (work / r["name"] / "summary.json").is_file()]
    for r in done:
        run = work / r["name"]
        summary = json.loads((run / "summary.json").read_text())
        (args.out / f"{r['name']}_summary.json").write_text(json.dumps(summary, indent=2))
        print(f"ppo_parallel.{r['name']}.transitions: {summary['transitions']}", flush=True)
        print(f"ppo_parallel.{r['name']}.transitions_per_s: {summary['transitions_per_s']:.0f}")
        curve = _script(
            here / "ppo_curve.py", run, "--workers", 4, "-o", args.out / f"{r['name']}_curve.json"
        )
        print(curve.replace("ppo_curve.", f"ppo_parallel.{r['name']}.curve."), flush=True)
    recipes: dict[str, list[str]] = {}
    for r in done:
        recipes.setdefault(r.get("recipe", r["name"]), []).append(str(work / r["name"]))
    spread = here.parent / "examples" / "learning" / "seed_spread.py"
    for recipe, paths in recipes.items():
        sel = _script(
            spread, args.env, "--runs", *paths, "-o", args.out / f"{recipe}_seed_spread.json"
        )
        lines = [ln for ln in sel.splitlines() if "test" in ln or ln.startswith("|")]
        for ln in lines:
            print(f"ppo_parallel.{recipe}.selection: {ln}", flush=True)


if __name__ == "__main__":
    main()
