"""The grasp-type map of SoMo's Fig. 6 from a pinch_grasp.yaml sweep result.

    python examples/sweeps/plot_pinch_map.py pinch.parquet -o pinch_map.png

One panel per distal segment ratio (DSR): centring distance [mm] across, object width [mm] up,
each trial coloured by its grasp (pinch: dark, power: light, none: white). Also prints, per DSR,
the widths it pinch-grasps and the trial counts per grasp type, and the smallest DSR that
pinch-grasps every width; then the analysis behind docs/sysid.md (`details`): lifted trials,
`none` trials without contact, knocked-over boxes, tilt and shift of the pinched thin boxes, and
the smallest all-widths DSR under other pinch rules. `--compare OTHER` counts the trials of
OTHER (e.g. the 1 ms timestep sweep) that keep their class here.

    python examples/sweeps/plot_pinch_map.py pinch.parquet --compare pinch_dt1.parquet
"""

from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

from softrod.sweep import read_results  # noqa: E402

GRASPS = ("none", "power", "pinch")
#: Finger length [m] (softrod.somo.teeple_finger) and the boxes that count as thin [m].
FINGER_LENGTH = 0.1
THIN_WIDTH = 0.02
#: A box tilted more than this [deg] was knocked over.
KNOCKED_OVER_DEG = 60.0


def _key(r: dict) -> tuple[float, float, float]:
    # Rounded: a grid's start + k step and a listed value differ in the last bits.
    return tuple(round(r[f"inputs.{k}"], 9) for k in ("distal_ratio", "object_width", "centering"))


def smallest_full_dsr(rows: list[dict], rule) -> float | None:
    """Smallest DSR at which every width has a trial satisfying `rule` (None: no such DSR)."""
    widths = {r["inputs.object_width"] for r in rows}
    full = [
        d
        for d in sorted({r["inputs.distal_ratio"] for r in rows})
        if all(
            any(
                rule(r)
                for r in rows
                if r["inputs.distal_ratio"] == d and r["inputs.object_width"] == w
            )
            for w in widths
        )
    ]
    return full[0] if full else None


def details(rows: list[dict]) -> None:
    """Print the study's analysis (module docstring)."""
    lifted = sum(bool(r["lifted"]) for r in rows)
    none = [r for r in rows if r["grasp"] == "none"]
    over = [r for r in rows if r["object_tilt_deg"] > KNOCKED_OVER_DEG]
    n_thin_over = sum(r["inputs.object_width"] <= THIN_WIDTH + 1e-9 for r in over)
    trial_s = [r["elapsed_s"] for r in rows]
    print(f"trial time: {np.mean(trial_s):.2f} s mean, {sum(trial_s) / 60:.1f} min in all")
    print(f"lifted: {lifted} of {len(rows)}")
    print(f"none: {len(none)}, of them without contact: {sum(r['n_contacts'] == 0 for r in none)}")
    print(
        f"knocked over (tilt > {KNOCKED_OVER_DEG:.0f} deg): {len(over)}, of them boxes <= "
        f"{THIN_WIDTH * 1e3:.0f} mm: {n_thin_over}"
    )
    for d in sorted({r["inputs.distal_ratio"] for r in rows}):
        thin = [
            r
            for r in rows
            if r["inputs.distal_ratio"] == d
            and r["inputs.object_width"] <= THIN_WIDTH + 1e-9
            and r["grasp"] == "pinch"
        ]
        if thin:
            tilt = np.median([r["object_tilt_deg"] for r in thin])
            shift = 1e3 * np.median([r["object_shift"] for r in thin])
            print(
                f"DSR {d:.2f}: pinched thin boxes, median tilt {tilt:.0f} deg, shift {shift:.0f} mm"
            )

    def passive(r: dict, s: float | None) -> bool:
        d = r["inputs.distal_ratio"]
        return bool(r["lifted"]) and d > 0 and s is not None and s >= (1 - d) * FINGER_LENGTH - 1e-9

    rules = {
        "pinch (the classification)": lambda r: r["grasp"] == "pinch",
        "pinch, box within 20 deg of upright": lambda r: (
            r["grasp"] == "pinch" and r["object_tilt_deg"] <= 20
        ),
        "pinch, box within 10 deg of upright": lambda r: (
            r["grasp"] == "pinch" and r["object_tilt_deg"] <= 10
        ),
        "centre of pressure on the passive part (no fingertip region)": lambda r: passive(
            r, r["mean_contact_s"]
        ),
        "every contact on the passive part": lambda r: passive(r, r["min_contact_s"]),
    }
    for name, rule in rules.items():
        d = smallest_full_dsr(rows, rule)
        print(f"smallest all-widths DSR, {name}: " + ("none" if d is None else f"{d:.2f}"))


def compare(rows: list[dict], other: list[dict]) -> None:
    """How many trials of `other` have the same class as the matching trial of `rows`."""
    mine = {_key(r): r["grasp"] for r in rows}
    both = [r for r in other if _key(r) in mine]
    same = sum(mine[_key(r)] == r["grasp"] for r in both)
    print(f"compare: {same} of {len(both)} matching trials keep their class")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("-o", "--output", default="pinch_map.png")
    parser.add_argument("--compare", help="another sweep result to compare classes with")
    args = parser.parse_args()
    rows = [r for r in read_results(args.results).to_pylist() if r["status"] == "ok"]
    dsrs = sorted({r["inputs.distal_ratio"] for r in rows})
    widths = sorted({r["inputs.object_width"] for r in rows})
    cents = sorted({r["inputs.centering"] for r in rows})
    cmap = ListedColormap(["white", "#9ecae1", "#08519c"])
    n_cols = min(len(dsrs), 6)
    n_rows = -(-len(dsrs) // n_cols)
    fig, axes = plt.subplots(
        n_rows, n_cols, figsize=(2.6 * n_cols, 2.8 * n_rows), sharey=True, squeeze=False
    )
    for ax in axes.flat[len(dsrs) :]:
        ax.set_visible(False)
    axes = axes.flat[: len(dsrs)]
    full = []
    for ax, dsr in zip(axes, dsrs, strict=True):
        grid = np.full((len(widths), len(cents)), np.nan)
        for r in rows:
            if r["inputs.distal_ratio"] == dsr:
                i, j = widths.index(r["inputs.object_width"]), cents.index(r["inputs.centering"])
                grid[i, j] = GRASPS.index(r["grasp"])
        ax.imshow(grid, origin="lower", cmap=cmap, vmin=0, vmax=2, aspect="auto")
        step = max(1, len(cents) // 6)
        ax.set_xticks(
            range(0, len(cents), step), [f"{c * 1e3:.0f}" for c in cents[::step]], fontsize=7
        )
        ax.set_yticks(range(len(widths)), [f"{w * 1e3:.0f}" for w in widths], fontsize=7)
        ax.set_title(f"DSR {dsr:.2f}", fontsize=9)
        ax.set_xlabel("centring [mm]", fontsize=8)
        pinched = [w for i, w in enumerate(widths) if np.any(grid[i] == 2)]
        counts = ", ".join(f"{g} {int(np.sum(grid == k))}" for k, g in enumerate(GRASPS))
        print(
            f"DSR {dsr:.2f}: pinch-grasps widths {[round(w * 1e3) for w in pinched]} mm; "
            f"{counts} (of {grid.size} trials)"
        )
        if len(pinched) == len(widths):
            full.append(dsr)
    for ax in axes[::n_cols]:
        ax.set_ylabel("object width [mm]", fontsize=8)
    fig.suptitle("grasp type: pinch (dark), power (light), none (white)", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.output, dpi=150)
    print(
        "smallest DSR that pinch-grasps every width: "
        + (f"{min(full):.2f}" if full else "none in the sweep")
    )
    print(f"wrote {args.output}")
    details(rows)
    if args.compare:
        compare(rows, [r for r in read_results(args.compare).to_pylist() if r["status"] == "ok"])


if __name__ == "__main__":
    main()
