"""Compile softrod's Warp kernels for a CUDA architecture ahead of time, on a machine without a GPU,
into a Warp kernel cache that travels with the GPU recipe (dev/gpu_figures.sh).

Device time is scarce (minutes per session) and a cold start compiles every Warp module on the GPU
machine (~60 s for the batched statics, ~60 s per batched environment). Warp's NVRTC is in its
wheel, so the same modules compile here for `--arch` (90: H100 / H200) without a driver; the GPU
machine then loads them from the cache (its log says "(cached)") as long as the module sources,
Warp's version and the module options are the same. Modules that MuJoCo Warp creates only on a
CUDA device, or with another block size, still compile there.

    WARP_CACHE_PATH=.dev/c/warpcache PYTHONPATH=src python dev/warp_aot.py \
        --envs Reach-v0,PlanarReach-v0,MagneticNavigate-v0 --arch 90

The environments are stepped twice with two worlds on Warp's CPU device, in each `--configs`
configuration, so that every kernel the step uses is defined (MuJoCo Warp builds some kernels
per model); then every module that was loaded is compiled for `--arch` as CUBIN (what Warp picks
when the driver's CUDA is older than its toolkit, as on the lent machines: driver 580 = CUDA
13.0, Warp 1.19's NVRTC 13.4) and, with `--ptx`, as PTX too.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", default="Reach-v0", help="batched env ids ('' for none)")
    ap.add_argument("--arch", type=int, default=90, help="CUDA compute capability (90: H100/H200)")
    ap.add_argument("--ptx", action="store_true", help="also write PTX (not only CUBIN)")
    ap.add_argument("--no-statics", action="store_true", help="skip rods/_batch_warp")
    ap.add_argument(
        "--configs",
        default="lean,no_lean,direct",
        help="make_batched configurations to define (bench batched-envs --configs): lean (the "
        "default), no_lean (lean=False), direct (direct_solve=True); each builds its own kernels",
    )
    args = ap.parse_args()
    if "WARP_CACHE_PATH" not in os.environ:
        raise SystemExit("set WARP_CACHE_PATH to the cache folder that will travel")

    import warp as wp
    from warp._src import context as wpc

    wp.config.quiet = True
    wp.init()
    t0 = time.perf_counter()
    if not args.no_statics:
        import softrod.rods._batch_warp as bw

        wp.compile_aot_module(bw, arch=args.arch)
        if args.ptx:
            wp.compile_aot_module(bw, arch=args.arch, use_ptx=True)
        print(f"warp_aot.statics_s: {time.perf_counter() - t0:.1f}", flush=True)

    from softrod.envs import make_batched

    options = {"lean": {}, "no_lean": {"lean": False}, "direct": {"direct_solve": True}}
    for env_id in filter(None, args.envs.split(",")):
        t1 = time.perf_counter()
        for config in filter(None, args.configs.split(",")):
            env = make_batched(env_id, 2, device="cpu", **options[config])
            env.reset(seed=0)
            act = np.zeros((2, *env.single_action_space.shape), dtype=np.float32)
            env.step(act)
            env.step(act)
        print(f"warp_aot.{env_id}.cpu_define_s: {time.perf_counter() - t1:.1f}", flush=True)
    # Every module that ran on the CPU, compiled for the GPU architecture.
    t2 = time.perf_counter()
    done = failed = 0
    for name, module in list(wpc.user_modules.items()):
        if not module.execs:
            continue
        try:
            wp.compile_aot_module(module, arch=args.arch)
            if args.ptx:
                wp.compile_aot_module(module, arch=args.arch, use_ptx=True)
            done += 1
        except Exception as exc:  # a module AOT cannot take compiles on the GPU instead
            failed += 1
            print(f"warp_aot.skipped: {name}: {type(exc).__name__}: {exc}"[:300], flush=True)
    print(f"warp_aot.modules_compiled: {done}", flush=True)
    print(f"warp_aot.modules_skipped: {failed}", flush=True)
    print(f"warp_aot.compile_s: {time.perf_counter() - t2:.1f}", flush=True)


if __name__ == "__main__":
    main()
