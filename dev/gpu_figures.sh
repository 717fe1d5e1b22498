#!/bin/bash
# The GPU figures of issue 16 in one device call (device time is scarce: 15 minutes a session,
# machine start and transfers included). Everything travels as dev/gpu_carry.sh packs it
# (wheels, warp.so, the Warp kernel cache compiled here for sm_90 by dev/warp_aot.py):
#
#   here:   bash dev/warp_reach_gpu_check.sh prepare && bash dev/gpu_carry.sh aot && bash dev/gpu_carry.sh pack
#   device: calls 1..n-1 carry .dev/pK and stash it (mkdir -p /root/stash && cp .dev/pK/* /root/stash/),
#           call n carries the last part:  bash dev/gpu_carry.sh unpack && bash dev/gpu_figures.sh [MODE]
#
# MODE: all (default: statics, envs, ppo, others; ~7.5 minutes), statics, envs, ppo, others;
# ppo_curve (PPO_MINUTES of Reach PPO with a snapshot a minute, then its distance-vs-minutes
# curve and validation selection; not in all), ppo_parallel (several PPO runs at once:
# dev/ppo_parallel.py), extra (statics at 1e6, ReachObstacle-v0 envs).
# Prints `case.metric: value` lines; each part under its own timeout; outputs also under $OUT.
set -o pipefail
export PYTHONUNBUFFERED=1 MUJOCO_GL=disable
S=/tmp/site
[ -f $S/warp/bin/warp.so ] || { echo "run 'bash dev/gpu_carry.sh unpack' first" >&2; exit 3; }
export PYTHONPATH=$S:$PWD/src
# The kernel cache compiled here ahead of time (a module missing from it compiles on the GPU).
[ -d /tmp/wc/cache ] && export WARP_CACHE_PATH=/tmp/wc/cache
O="${OUT:-.}"
MODE="${1:-all}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$O/gpu.txt"
SR="python3 -c 'import sys; from softrod.cli import main; sys.exit(main(sys.argv[1:]))'"
part() { [ "$MODE" = all ] || [ "$MODE" = "$1" ]; }

if part statics; then
    # Batched exact statics on Warp: default stability check, without it, with tip Jacobians,
    # B = 1e4..1e6 (20 s per case), and 100 items against the CPU solver and its stability test.
    echo "== statics $(date -u +%T)"
    timeout 120 python3 dev/static_batch_gpu.py --device cuda:0 --part-budget 20 2>&1 \
        | tee "$O/static_batch_gpu.txt"
fi
if part envs; then
    # Reach-v0, paired per world count: lean (make_batched's default, bit-for-bit MuJoCo Warp's
    # defaults), no_lean (the configuration before), direct (lean + direct_solve). 80 steps: a
    # 50-step episode's reset included.
    echo "== bench batched-envs Reach-v0 $(date -u +%T)"
    timeout 150 bash -c "$SR bench batched-envs --envs Reach-v0 --worlds 4096,16384,65536 --steps 80 \
        --configs lean,no_lean,direct --device cuda:0" 2>&1 | tee "$O/bench_batched_reach.txt"
fi
if part ppo; then
    # On-device PPO on Reach-v0 (4096 worlds, 3 minutes, the fine-error input as the best SAC
    # run), then the deterministic policy on the 100 test episodes (CPU env).
    echo "== train Reach-v0 ppo 4096 worlds, 3 minutes $(date -u +%T)"
    timeout 240 bash -c "$SR train Reach-v0 --algo ppo --num-envs 4096 --device cuda:0 \
        --max-minutes 3 --eval-episodes 100 -o /tmp/ppo_reach --overwrite \
        --env-kwargs '{\"error_gain\": 100}'" 2>&1 | tee "$O/train_ppo_reach.txt" \
        | awk '!/^ppo step/ || ++n % 25 == 1'
    cp /tmp/ppo_reach/summary.json "$O/ppo_summary.json" 2>/dev/null
fi
if part others; then
    echo "== bench batched-envs PlanarReach-v0, MagneticNavigate-v0 $(date -u +%T)"
    timeout 90 bash -c "$SR bench batched-envs --envs PlanarReach-v0,MagneticNavigate-v0 \
        --worlds 16384 --steps 60 --configs lean,direct --device cuda:0" 2>&1 \
        | tee "$O/bench_batched_others.txt"
fi
if [ "$MODE" = ppo_curve ]; then
    # On-device PPO on Reach-v0 for PPO_MINUTES (default 7.5) with the env options PPO_ENV
    # (default the fine-error input), direct-solve worlds (PPO_DIRECT=0: lean), extra train
    # options PPO_ARGS (e.g. "--init-log-std -1.5"), a policy snapshot every minute; then every
    # snapshot on the 100 test episodes (dev/ppo_curve.py: distance against minutes) and the
    # validation-selected one (examples/learning/seed_spread.py), all on this machine's CPUs.
    M=${PPO_MINUTES:-7.5}
    D=$([ "${PPO_DIRECT:-1}" = 1 ] && echo --direct-solve)
    echo "== train Reach-v0 ppo 4096 worlds, $M minutes $D ${PPO_ARGS:-} $(date -u +%T)"
    # shellcheck disable=SC2086  # D and PPO_ARGS are option lists
    timeout $(python3 -c "print(int(60 * $M + 120))") python3 -c \
        'import sys; from softrod.cli import main; sys.exit(main(sys.argv[1:]))' \
        train Reach-v0 --algo ppo --num-envs 4096 --device cuda:0 --max-minutes "$M" \
        --snapshot-minutes 1 $D ${PPO_ARGS:-} --eval-episodes 100 -o /tmp/ppo_reach --overwrite \
        --seed "${PPO_SEED:-0}" --env-kwargs "${PPO_ENV:-{\"error_gain\": 100\}}" 2>&1 \
        | tee "$O/train_ppo_reach.txt" | awk '!/^ppo step/ || ++n % 50 == 1'
    cp /tmp/ppo_reach/summary.json "$O/ppo_summary.json" 2>/dev/null
    cp /tmp/ppo_reach/policy.pt "$O/ppo_policy.pt" 2>/dev/null
    echo "== curve $(date -u +%T)"
    timeout 90 python3 dev/ppo_curve.py /tmp/ppo_reach --workers 12 -o "$O/ppo_curve.json" 2>&1 \
        | tee "$O/ppo_curve.txt"
    echo "== validation selection $(date -u +%T)"
    timeout 90 python3 examples/learning/seed_spread.py Reach-v0 --runs /tmp/ppo_reach \
        -o "$O/ppo_seed_spread.json" 2>&1 | tee "$O/ppo_seed_spread.txt"
fi
if [ "$MODE" = ppo_parallel ]; then
    # Several PPO runs at once on the GPU (PPO_RUNS, default dev/ppo_recipes.json: four recipes
    # against the exploration-noise / flat-reward floor of the ppo_curve run), PPO_MINUTES each,
    # then each run's curve and the validation selection per recipe (dev/ppo_parallel.py).
    M=${PPO_MINUTES:-7}
    echo "== ppo_parallel ${PPO_RUNS:-dev/ppo_recipes.json}, $M minutes $(date -u +%T)"
    timeout $(python3 -c "print(int(60 * $M + 200))") python3 dev/ppo_parallel.py \
        "${PPO_RUNS:-dev/ppo_recipes.json}" --minutes "$M" --out "$O" 2>&1 \
        | tee "$O/ppo_parallel.txt" | grep -v "curve.policy_"
fi
if [ "$MODE" = extra ]; then
    # The checked statics at B = 1e6 (the Warp batch's tip error estimate added since the H100
    # figures) and ReachObstacle-v0 with its model-sized contact buffers at 16384 worlds.
    echo "== statics 1e6 $(date -u +%T)"
    timeout 80 python3 dev/static_batch_gpu.py --device cuda:0 --sizes 1000000 --check 100 \
        --part-budget 15 2>&1 | grep -v "unchecked\|jacobian" | tee "$O/static_batch_gpu.txt"
    echo "== bench batched-envs ReachObstacle-v0 $(date -u +%T)"
    timeout 120 bash -c "$SR bench batched-envs --envs ReachObstacle-v0 --worlds 16384 --steps 60 \
        --configs lean --device cuda:0" 2>&1 | tee "$O/bench_batched_obstacle.txt"
fi
echo "== done $(date -u +%T)"
