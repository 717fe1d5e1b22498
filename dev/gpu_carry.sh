#!/bin/bash
# Pack what the lent GPU machine needs (wheels, Warp's warp.so, a Warp kernel cache compiled here
# ahead of time for sm_90) into parts that fit its transfer limit beside the working tree.
#
#   bash dev/warp_reach_gpu_check.sh prepare      # once: wheels + warp.so.xz under .dev/a, .dev/b
#   bash dev/gpu_carry.sh aot [ENVS]              # here: compile the Warp modules for sm_90 (slow on
#                                                 # 2 cores: ~5 min statics, ~10 min per env set)
#   bash dev/gpu_carry.sh pack                    # .dev/p1, .dev/p2, ... each <= PART bytes
#   (device) calls 1..n-1, carry .dev/pK:  mkdir -p /root/stash && cp .dev/pK/* /root/stash/
#   (device) call n, carry .dev/pN:        bash dev/gpu_carry.sh unpack && bash dev/gpu_figures.sh ...
#
# The device machine receives at most 64 MiB per call, the working tree included (~16 MB), and
# keeps files between calls only while it stays warm (30 s): make the calls back to back.
set -o pipefail
PART=${PART:-48000000}
case "$1" in
aot)
    rm -rf .dev/cache && mkdir -p .dev/cache
    WARP_CACHE_PATH=$PWD/.dev/cache OPENBLAS_NUM_THREADS=1 MUJOCO_GL=egl PYTHONPATH=src \
        ${PYTHON:-.venv/bin/python} dev/warp_aot.py --envs "${2:-Reach-v0,PlanarReach-v0,MagneticNavigate-v0}" --arch 90 || exit 1
    # Only the CUDA artefacts travel (the CPU objects are this machine's).
    find .dev/cache -name "*.o" -delete
    find .dev/cache -type d -empty -delete
    du -sh .dev/cache
    ;;
pack)
    [ -f .dev/a/warp.so.xz.aa ] || { echo "run dev/warp_reach_gpu_check.sh prepare first" >&2; exit 2; }
    rm -rf .dev/pay .dev/p[0-9]* && mkdir -p .dev/pay
    cat .dev/a/warp.so.xz.aa .dev/b/warp.so.xz.ab > .dev/pay/warp.so.xz
    cp -r .dev/b/whl .dev/b/warp_py.tar.xz .dev/b/warp.so.sha .dev/pay/
    [ -d .dev/cache ] && tar cJf .dev/pay/warpcache.tar.xz -C .dev cache
    tar cf .dev/payload.tar -C .dev/pay . && rm -rf .dev/pay
    split -b "$PART" -d -a 1 .dev/payload.tar .dev/payload.part. && rm .dev/payload.tar
    for f in .dev/payload.part.*; do k=$(( ${f##*.} + 1 )); mkdir -p .dev/p$k && mv "$f" .dev/p$k/; done
    du -sb .dev/p* && git ls-files -z | xargs -0 du -cb | tail -1
    ;;
unpack)
    # On the device: the stashed parts and this call's part, in order.
    mkdir -p ${STASH:-/root/stash} /tmp/pay && cp .dev/p*/payload.part.* ${STASH:-/root/stash}/ || exit 6
    cat ${STASH:-/root/stash}/payload.part.* | tar xf - -C /tmp/pay || exit 6
    S=/tmp/site
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $S /tmp/pay/whl/*.whl || exit 3
    tar xJf /tmp/pay/warp_py.tar.xz -C $S && mkdir -p $S/warp/bin || exit 4
    xz -d -T0 -c /tmp/pay/warp.so.xz > $S/warp/bin/warp.so || exit 5
    echo "warp.so sha256 $(sha256sum $S/warp/bin/warp.so | cut -c1-16) (expect $(cat /tmp/pay/warp.so.sha))"
    [ -f /tmp/pay/warpcache.tar.xz ] && mkdir -p /tmp/wc && tar xJf /tmp/pay/warpcache.tar.xz -C /tmp/wc \
        && echo "warp kernel cache: $(find /tmp/wc -name '*.cubin' | wc -l) CUDA modules (export WARP_CACHE_PATH=/tmp/wc/cache)"
    ;;
*)
    echo "usage: bash dev/gpu_carry.sh aot [ENVS] | pack | unpack" >&2; exit 2 ;;
esac
