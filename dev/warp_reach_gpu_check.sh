#!/bin/bash
# GPU check of softrod's batched envs (softrod.envs.make_batched, batched_reach) and of PPO on
# them, on a machine that cannot reach a package index and receives at most 64 MiB per transfer
# (the development workplace's lent GPU machine).
#
#   bash dev/warp_reach_gpu_check.sh prepare     # here: wheels + warp.so.xz in two parts, under .dev/
#   (device) call 1, carry .dev/a:  mkdir -p /root/stash && cp .dev/a/warp.so.xz.aa /root/stash/
#   (device) call 2 within the warm window, carry .dev/b:  bash dev/warp_reach_gpu_check.sh run
#       run: batched-envs benchmark (every batched env, 1024..16384 worlds), PPO on Reach-v0
#       (4096 worlds, 4 min, fine-error input error_gain 100) and its 100-episode evaluation;
#       each part under its own timeout, outputs in $OUT (about 8 minutes in all, most of it
#       kernel compilation and training).
#   run-reach: the earlier BatchedReach check (its test, `bench warp-reach --cross-check 10`).
#
# warp-lang's wheel is 149 MB (warp.so 299 MB, xz 78 MB): warp.so travels xz-compressed in two
# parts; warp-clang.so (CPU kernels only) stays behind. Python 3.12 wheels for the device image.
set -o pipefail
case "$1" in
prepare)
    grep -qx "/.dev/" .git/info/exclude 2>/dev/null || echo "/.dev/" >> .git/info/exclude
    rm -rf .dev && mkdir -p .dev/a .dev/b/whl .dev/tmp
    P="--no-deps --only-binary=:all: --python-version 3.12 --implementation cp"
    for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64; do
        P="$P --platform $p"
    done
    python3 -m pip download $P -d .dev/b/whl mujoco==4.0.0 mujoco-core==4.0.0 mujoco-warp==4.0.0 \
        gymnasium==1.4.0 farama-notifications pydantic pydantic-core annotated-types \
        typing-inspection typing_extensions || exit 1
    # skrl (PPO) and what it imports that the device image lacks (its python has torch, numpy,
    # scipy, numba): skrl's Requires-Dist is gymnasium, packaging, tensorboard, tqdm; tensorboard's
    # event writer needs protobuf and absl-py. Versions: those tested here.
    python3 -m pip download $P -d .dev/b/whl skrl==2.1.1 packaging==26.4 tqdm==4.70.1 \
        tensorboard==2.21.0 protobuf==7.36.2 absl-py==2.5.1 || exit 1
    python3 -m pip download $P -d .dev/tmp warp-lang==1.19.0 || exit 1
    (cd .dev/tmp && unzip -q warp_lang-*.whl && rm -rf warp/examples warp/tests warp/bin/warp-clang.so \
        && xz -T2 -9 -c warp/bin/warp.so > warp.so.xz && sha256sum warp/bin/warp.so | cut -c1-16 > ../b/warp.so.sha \
        && rm warp/bin/warp.so && tar cJf ../b/warp_py.tar.xz warp warp_lang-*.dist-info \
        && split -b 54M warp.so.xz warp.so.xz.) || exit 1
    mv .dev/tmp/warp.so.xz.aa .dev/a/ && mv .dev/tmp/warp.so.xz.ab .dev/b/ && rm -rf .dev/tmp
    du -sh .dev/a .dev/b
    ;;
run|run-reach)
    export PYTHONUNBUFFERED=1 MUJOCO_GL=disable
    S=/tmp/site
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $S .dev/b/whl/*.whl || exit 3
    tar xJf .dev/b/warp_py.tar.xz -C $S && mkdir -p $S/warp/bin || exit 4
    cat /root/stash/warp.so.xz.aa .dev/b/warp.so.xz.ab | xz -d -T0 > $S/warp/bin/warp.so || exit 5
    echo "warp.so sha256 $(sha256sum $S/warp/bin/warp.so | cut -c1-16) (expect $(cat .dev/b/warp.so.sha))"
    export PYTHONPATH=$S:$PWD/src
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    SR="python3 -c 'import sys; from softrod.cli import main; sys.exit(main(sys.argv[1:]))'"
    O="${OUT:-.}"
    if [ "$1" = run ]; then
        # Reach first (its kernels are the PPO run's too), then PPO, then the other envs.
        echo "== bench batched-envs Reach-v0 $(date -u +%T)"
        timeout 150 bash -c "$SR bench batched-envs --envs Reach-v0 --worlds 1024,4096,8192,16384 \
            --steps 300 --device cuda:0" 2>&1 | tee "$O/bench_batched_reach.txt"
        echo "== train Reach-v0 ppo 4096 worlds $(date -u +%T)"
        timeout 360 bash -c "$SR train Reach-v0 --algo ppo --num-envs 4096 --device cuda:0 \
            --max-minutes 4 --eval-episodes 100 -o $O/ppo_reach --overwrite \
            --env-kwargs '{\"error_gain\": 100}'" 2>&1 \
            | tee "$O/train_ppo_reach.txt" | awk '!/^ppo step/ || ++n % 25 == 1'
        ls "$O/ppo_reach" 2>/dev/null
        echo "== bench batched-envs others $(date -u +%T)"
        timeout 300 bash -c "$SR bench batched-envs \
            --envs PlanarReach-v0,ReachObstacle-v0,TrackTrajectory-v1,MagneticNavigate-v0 \
            --worlds 1024,4096,8192,16384 --steps 200 --device cuda:0" 2>&1 \
            | tee "$O/bench_batched_others.txt"
        echo "== done $(date -u +%T)"
        exit 0
    fi
    SOFTROD_WARP_DEVICE=cuda:0 timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_batched_reach.py | tail -3
    timeout 400 python3 -c "import sys; from softrod.cli import main; sys.exit(main(sys.argv[1:]))" \
        bench warp-reach --worlds 1024,4096,8192,16384 --steps 300 --device cuda:0 --cross-check 10 | tee "${OUT:-.}/bench_warp.txt"
    ;;
*)
    echo "usage: bash dev/warp_reach_gpu_check.sh prepare|run|run-reach" >&2; exit 2 ;;
esac
