"""Where a batched step's time goes: Warp kernel launches per control step of `make_batched`
(counted by wrapping `warp.launch`/`warp.launch_tiled`), and the PCG iterations MuJoCo Warp's
effective-metric solve needs until every world converged (docs/learning.md, batched section).

    python dev/batched_launches.py Reach-v0 64 '{"lean": false}'     # launches per step
    python dev/batched_launches.py Reach-v0 256 '{}' --pcg 20         # PCG iterations, 20 steps

Runs on Warp's CPU device (there the PCG loop runs all opt.iterations; on CUDA a graph while
loop stops when every world converged, which --pcg measures).
"""

from __future__ import annotations

import argparse
import collections
import json

import numpy as np
import warp as wp

wp.config.log_level = wp.LOG_WARNING

from softrod.envs import make_batched  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("env")
parser.add_argument("worlds", type=int)
parser.add_argument("kwargs", nargs="?", default="{}", help="make_batched kwargs (JSON)")
parser.add_argument("--pcg", type=int, default=0, help="steps over which to count PCG iterations")
args = parser.parse_args()
env = make_batched(args.env, args.worlds, device="cpu", **json.loads(args.kwargs))
env.reset(seed=0)
env.step_random()  # compiles every kernel
launches: collections.Counter[str] = collections.Counter()
iters: list[int] = []
state = {"it": 0, "open": False}
plain, tiled = wp.launch, wp.launch_tiled


def _count(kernel):  # type: ignore[no-untyped-def]
    launches[getattr(kernel, "key", str(kernel))] += 1


def launch(kernel, *a, **k):  # type: ignore[no-untyped-def]
    _count(kernel)
    return plain(kernel, *a, **k)


def launch_tiled(kernel, *a, **k):  # type: ignore[no-untyped-def]
    _count(kernel)
    out = tiled(kernel, *a, **k)
    key = getattr(kernel, "key", "")
    if "_pcg_init_tiled" in key:
        state["it"], state["open"] = 0, True
    elif "_pcg_pAp_step_and_check" in key and state["open"]:
        state["it"] += 1
        if k["outputs"][3].numpy()[0] <= 0:  # efm_nsolving: every world converged
            iters.append(state["it"])
            state["open"] = False
    return out


wp.launch, wp.launch_tiled = launch, launch_tiled
if args.pcg:
    for _ in range(args.pcg):
        env.step_random()
    h = np.array(iters)
    print(f"{args.env} {args.worlds} worlds: {len(h)} PCG solves, iterations until every world")
    print(f"  converged: median {np.median(h):.0f}, min {h.min()}, max {h.max()}")
else:
    env.step_random()
    # A PCG iteration: pAp/step, beta/p kernels, 5 metric products, 1 preconditioner solve.
    n_it = sum(c for key, c in launches.items() if "_pcg_pAp_step_and_check" in key)
    pcg = 8 * n_it
    print(f"{args.env} {args.worlds} worlds {args.kwargs}: {sum(launches.values())} launches per")
    print(f"  control step, {pcg} of them in {n_it} effective-metric PCG iterations (8 each)")
