#!/bin/bash
# The GPU figures of issue 16 in one short device call (device time is scarce: ~8 minutes).
# Wheels and warp.so travel as in dev/warp_reach_gpu_check.sh (`prepare` there; warp.so.xz split
# so that each carry stays under 64 MiB with the tree):
#   (device) call 1, carry .dev/a:  mkdir -p /root/stash && cp .dev/a/warp.so.xz.aa /root/stash/
#   (device) call 2 within the warm window, carry .dev/b:  bash dev/gpu_figures.sh [statics]
# Prints `case.metric: value` lines and writes them under $OUT. Default mode: the batched envs'
# world-steps/s (about 4 minutes after the install, each part under its own timeout).
set -o pipefail
export PYTHONUNBUFFERED=1 MUJOCO_GL=disable
S=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $S .dev/b/whl/*.whl || exit 3
tar xJf .dev/b/warp_py.tar.xz -C $S && mkdir -p $S/warp/bin || exit 4
cat /root/stash/warp.so.xz.aa .dev/b/warp.so.xz.ab | xz -d -T0 > $S/warp/bin/warp.so || exit 5
export PYTHONPATH=$S:$PWD/src
O="${OUT:-.}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$O/gpu.txt"
SR="python3 -c 'import sys; from softrod.cli import main; sys.exit(main(sys.argv[1:]))'"
if [ "$1" = statics ]; then
    # Batched exact statics on Warp (first call compiles ~60 s) and on the 16 CPU cores.
    timeout 200 python3 dev/static_batch_gpu.py --device cuda:0 2>&1 | tee "$O/static_batch_gpu.txt"
    timeout 150 bash -c "$SR bench static-batch --batch 1000,10000,100000" 2>&1 | tee "$O/static_batch_cpu.txt"
    exit 0
fi
# The kernels of all three configurations come from dev/warp_aot.py (its default --configs
# lean,no_lean,direct); a configuration missing there compiles on the GPU (~60 s per env).
# Reach-v0 at 4096 / 16384 / 65536 worlds in three configurations measured in turn per world
# count (a paired comparison): lean (make_batched's default, bit-for-bit MuJoCo Warp's defaults),
# no_lean (MuJoCo Warp's defaults: the configuration before) and direct (lean + direct_solve).
# 80 steps: a 50-step episode's reset included. Then the other two at 16384, lean and direct.
# PPO training is not part of this default mode (the lead adds it).
echo "== bench batched-envs Reach-v0 lean/no_lean/direct $(date -u +%T)"
timeout 150 bash -c "$SR bench batched-envs --envs Reach-v0 --worlds 4096,16384,65536 --steps 80 \
    --configs lean,no_lean,direct --device cuda:0" 2>&1 | tee "$O/bench_batched_reach.txt"
echo "== bench batched-envs PlanarReach-v0 $(date -u +%T)"
timeout 40 bash -c "$SR bench batched-envs --envs PlanarReach-v0 --worlds 16384 --steps 60 \
    --configs lean,direct --device cuda:0" 2>&1 | tee "$O/bench_batched_planar.txt"
echo "== bench batched-envs MagneticNavigate-v0 $(date -u +%T)"
timeout 50 bash -c "$SR bench batched-envs --envs MagneticNavigate-v0 --worlds 16384 --steps 60 \
    --configs lean,direct --device cuda:0" 2>&1 | tee "$O/bench_batched_magnetic.txt"
echo "== done $(date -u +%T)"
