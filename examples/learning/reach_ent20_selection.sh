#!/bin/bash
# How the reported Reach-v0 policy was chosen (docs/learning.md, "Getting below 5 mm"): every
# number below is a `softrod eval` on validation seeds (20000-...), never the test seeds, except
# the last two lines. Needs the runs runs/reach-ent20 and runs/reach-ent20-prec (their
# checkpoints); writes examples/learning/results/reach_sac_ent20_selection.txt.
set -e -o pipefail
K='{"error_gain": 100}'
OUT=examples/learning/results/reach_sac_ent20_selection.txt
val() {  # val EPISODES POLICY -> mean final distance [mm] on validation seeds 20000-
    softrod eval "$2" --env Reach-v0 --env-kwargs "$K" --episodes "$1" --seed 20000 --json |
        python3 -c "import json,sys; print(f'{1e3 * json.load(sys.stdin)[\"final_distance_mean\"]:.2f}')"
}
ck() { echo "runs/$1/checkpoints/sac_$2_steps.zip"; }
swa() {  # swa OUT RUN STEP... -> averaged actor of the checkpoints
    local out=$1 run=$2; shift 2
    python examples/learning/average_policies.py $(for s in "$@"; do ck "$run" "$s"; done) -o "$out" >/dev/null
}
{
    echo "# actor averaging vs its members, 50 validation episodes each (mean final distance, mm)"
    for spec in "reach-ent20 1800000 1825000 1850000 1875000" \
                "reach-ent20 2025000 2050000 2075000 2100000" \
                "reach-ent20-prec 2025000 2050000 2075000 2100000"; do
        set -- $spec; run=$1; shift
        members=$(for s in "$@"; do val 50 "$(ck "$run" "$s")"; done | tr '\n' ' ')
        swa "${TMPDIR:-/tmp}/softrod_swa.zip" "$run" "$@"
        echo "$run $1-${!#}: members $members-> averaged $(val 50 "${TMPDIR:-/tmp}/softrod_swa.zip")"
    done
    echo "# candidates, 100 validation episodes (20000-20099): the lowest mean is the reported policy"
    for run in reach-ent20 reach-ent20-prec; do
        swa "runs/$run-swa.zip" "$run" 2175000 2200000 2225000 2250000
        echo "$run averaged 2175000-2250000: $(val 100 "runs/$run-swa.zip")"
    done
    echo "reach-ent20 single 2250000: $(val 100 "$(ck reach-ent20 2250000)")"
    echo "reach-ent20-prec single 2100000: $(val 100 "$(ck reach-ent20-prec 2100000)")"
    echo "# test (seeds 10000-10099), once for the selected policy; the last checkpoint for reference"
    for p in runs/reach-ent20-swa.zip "$(ck reach-ent20 2250000)"; do
        echo "$p: $(softrod eval "$p" --env Reach-v0 --env-kwargs "$K" --episodes 100 --json)"
    done
} | tee "$OUT"
