"""The grasp-type map of SoMo's Fig. 6 from a pinch_grasp.yaml sweep result.

    python examples/sweeps/plot_pinch_map.py pinch.parquet -o pinch_map.png

One panel per distal segment ratio (DSR): centring distance [mm] across, object width [mm] up,
each trial coloured by its grasp (pinch: dark, power: light, none: white). Also prints, per DSR,
the widths it pinch-grasps and the trial counts per grasp type, and the smallest DSR that
pinch-grasps every width.
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("-o", "--output", default="pinch_map.png")
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


if __name__ == "__main__":
    main()
