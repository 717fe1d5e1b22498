#!/bin/bash
# The GPU figures of issue 16 in one short device call (device time is scarce: ~8 minutes).
# Wheels and warp.so travel as in dev/warp_reach_gpu_check.sh (`prepare` there; warp.so.xz split
# so that each carry stays under 64 MiB with the tree):
#   (device) call 1, carry .dev/a:  mkdir -p /root/stash && cp .dev/a/warp.so.xz.aa /root/stash/
#   (device) call 2 within the warm window, carry .dev/b:  bash dev/gpu_figures.sh [statics]
# Prints `case.metric: value` lines and writes them under $OUT.
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
echo "== bench batched-envs Reach-v0 $(date -u +%T)"
timeout 100 bash -c "$SR bench batched-envs --envs Reach-v0 --worlds 4096,16384 --steps 300 \
    --device cuda:0" 2>&1 | tee "$O/bench_batched_reach.txt"
echo "== train Reach-v0 ppo 4096 worlds, 3 minutes $(date -u +%T)"
timeout 250 bash -c "$SR train Reach-v0 --algo ppo --num-envs 4096 --device cuda:0 \
    --max-minutes 3 --eval-episodes 100 -o /tmp/ppo_reach --overwrite \
    --env-kwargs '{\"error_gain\": 100}'" 2>&1 | tee "$O/train_ppo_reach.txt" | awk '!/^ppo step/ || ++n % 25 == 1'
cp /tmp/ppo_reach/*.json "$O/" 2>/dev/null
echo "== bench batched-envs others $(date -u +%T)"
timeout 70 bash -c "$SR bench batched-envs --envs PlanarReach-v0,MagneticNavigate-v0 --worlds 4096 \
    --steps 200 --device cuda:0" 2>&1 | tee "$O/bench_batched_others.txt"
echo "== done $(date -u +%T)"
