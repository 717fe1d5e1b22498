"""How the planning ground truth answers small set-point changes (issue 17, item 7).

From a few end states reached by a whole approach (vented -> q0 at the pump rate), compare the
tip displacement of the ground-truth arm with the no-load (PCC) model's for set-point steps of
1, 3 and 10 % of p_max on each segment, made three ways:

* in place: from the settled end state, ramp to q0 + dq and hold;
* re-approach: retreat to a point between start and q0 (half way), then approach q0 + dq;
* fresh approach: reset at the start and approach q0 + dq (what the open-loop plan does).

Prints, per state and step, |tip move| of the truth and of the model, and the ratio of the
truth's move projected on the model's direction. Then, for four end states, how far the end of
three consecutive cycles q0 -> (1 - r) q0 -> q0 lies from the first approach's end, for retreat
depths r = 0.5, 1 (to the start), 1.5 and 2 (beyond it), and how far the vented arm after one
cycle lies from the vented arm before it. Run:

    PYTHONPATH=src python dev/plan_truth_response.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from softrod.planning import edge_commands
from softrod.pneumatic import GroundTruthArm, NoLoadModel, compile_pneumatic

ARM = Path(__file__).resolve().parents[1] / "examples" / "robots" / "pneumatic_arm3.yaml"
RATE_PER_FRAME = 275790.0 * 0.05
HOLD = 14


def edge(q_from: np.ndarray, q_to: np.ndarray, hold: int = HOLD) -> np.ndarray:
    cmd, nf = edge_commands(q_from[None], q_to[None], RATE_PER_FRAME, hold)
    return cmd[0, : int(nf[0])]


def show(label: str, move: np.ndarray, model: np.ndarray) -> str:
    """|move| [mm] and its component along the model's move, as a fraction of |model|."""
    scale = max(float(np.linalg.norm(model)), 1e-12)
    along = float(move @ model) / scale**2
    return f"{label} {np.linalg.norm(move) * 1e3:6.2f} ({along:+.2f})"


def main() -> None:
    arm = compile_pneumatic(ARM)
    truth = GroundTruthArm(arm)
    pcc = NoLoadModel(arm)
    pmax = arm.pressure_max
    states = {
        "env4-like": np.array([0.3, 0.5, -0.2]),
        "env1-like": np.array([-0.5, -0.2, 0.3]),
        "curl": np.array([-0.8, -0.6, -0.4]),
    }
    zero = np.zeros(3)
    for name, frac in states.items():
        q0 = frac * pmax
        truth.reset(zero)
        base_fresh = truth.run(edge(zero, q0))[-1, -1]
        print(
            f"\n{name}: q0 = {frac} p_max, truth tip {base_fresh[:2]}, "
            f"PCC tip {pcc.backbone(q0)[-1, :2]}"
        )
        for size in (0.01, 0.03, 0.1):
            for i in range(3):
                for sign in (1, -1):
                    dq = np.zeros(3)
                    dq[i] = sign * size * pmax[i]
                    q1 = np.clip(q0 + dq, arm.pressure_lower, arm.pressure_upper)
                    model = pcc.backbone(q1)[-1, :2] - pcc.backbone(q0)[-1, :2]
                    # In place.
                    truth.reset(zero)
                    a = truth.run(edge(zero, q0))[-1, -1]
                    b = truth.run(edge(q0, q1))[-1, -1]
                    inplace = b[:2] - a[:2]
                    # Retreat half way, re-approach q1.
                    mid = 0.5 * q0
                    truth.run(edge(q0, mid))
                    c = truth.run(edge(mid, q1))[-1, -1]
                    reapp = c[:2] - a[:2]
                    # Fresh approach to q1.
                    truth.reset(zero)
                    d = truth.run(edge(zero, q1))[-1, -1]
                    fresh = d[:2] - base_fresh[:2]
                    # Retreat half way and re-approach q0 itself (repeatability).
                    truth.run(edge(q1, mid))
                    e = truth.run(edge(mid, q0))[-1, -1]
                    rep = e[:2] - base_fresh[:2]
                    scale = max(float(np.linalg.norm(model)), 1e-12)
                    print(
                        f"  seg {i} {sign * size:+.2f}: model {scale * 1e3:6.2f} mm | "
                        + " | ".join(
                            [
                                show("in place", inplace, model),
                                show("re-approach", reapp, model),
                                show("fresh", fresh, model),
                            ]
                        )
                        + f" | return to q0 off by {np.linalg.norm(rep) * 1e3:5.2f} mm"
                    )


def retreat_depth() -> None:
    arm = compile_pneumatic(ARM)
    truth = GroundTruthArm(arm)
    pmax = arm.pressure_max
    zero = np.zeros(3)
    print("\ncycles q0 -> (1 - r) q0 -> q0: end off the first approach's end [mm]")
    for frac in ([0.3, 0.5, -0.2], [-0.5, -0.2, 0.3], [0.6, -0.3, 0.5], [-0.2, 0.7, 0.7]):
        q0 = np.array(frac) * pmax
        truth.reset(zero)
        first = truth.run(edge(zero, q0))[-1, -1]
        out = []
        for depth in (0.5, 1.0, 1.5, 2.0):
            x = np.clip(q0 * (1.0 - depth), arm.pressure_lower, arm.pressure_upper)
            truth.reset(zero)
            truth.run(edge(zero, q0))
            errs = []
            for _ in range(3):
                truth.run(edge(q0, x))
                end = truth.run(edge(x, q0))[-1, -1]
                errs.append(np.linalg.norm(end[:2] - first[:2]) * 1e3)
            out.append(f"r {depth}: " + " ".join(f"{e:5.1f}" for e in errs))
        truth.reset(zero)
        truth.run(edge(zero, q0))
        vented = truth.run(edge(q0, zero, 40))[-1, -1]
        truth.reset(zero)
        before = truth.backbone()[-1]
        off = np.linalg.norm(vented[:2] - before[:2]) * 1e3
        print(f"{frac}: " + " | ".join(out) + f" | vented after a cycle off by {off:.1f} mm")


if __name__ == "__main__":
    main()
    retreat_depth()
