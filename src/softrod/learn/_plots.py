"""Learning-curve plots (matplotlib, Agg backend; no display needed)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

__all__ = ["plot_learning_curve", "read_episodes"]

#: Episodes in the moving average of the learning curve.
SMOOTH_EPISODES = 100


def read_episodes(run_dir: str | Path) -> dict[str, np.ndarray]:
    """Columns of a run's `episodes.csv` as arrays (empty arrays if there is none)."""
    path = Path(run_dir) / "episodes.csv"
    cols: dict[str, list[float]] = {
        k: [] for k in ("steps", "return", "length", "final_distance", "success")
    }
    if path.is_file():
        with path.open() as f:
            for row in csv.DictReader(f):
                for k in cols:
                    cols[k].append(float(row[k]))
    return {k: np.asarray(v, dtype=float) for k, v in cols.items()}


def _smooth(y: np.ndarray, n: int) -> np.ndarray:
    if len(y) == 0:
        return y
    n = max(1, min(n, len(y)))
    c = np.cumsum(np.insert(np.nan_to_num(y), 0, 0.0))
    out = np.empty_like(y)
    for i in range(len(y)):
        lo = max(0, i - n + 1)
        out[i] = (c[i + 1] - c[lo]) / (i + 1 - lo)
    return out


def plot_learning_curve(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Plot episode return and final distance [mm] against steps; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = Path(run_dir)
    ep = read_episodes(run)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    if len(ep["steps"]):
        axes[0].plot(ep["steps"], ep["return"], ".", ms=1.5, alpha=0.3, color="tab:blue")
        axes[0].plot(ep["steps"], _smooth(ep["return"], SMOOTH_EPISODES), color="tab:blue")
        dist_mm = 1e3 * ep["final_distance"]
        axes[1].plot(ep["steps"], dist_mm, ".", ms=1.5, alpha=0.3, color="tab:red")
        axes[1].plot(ep["steps"], _smooth(dist_mm, SMOOTH_EPISODES), color="tab:red")
        if np.nanmax(dist_mm) > 0:
            axes[1].set_yscale("log")
    axes[0].set(xlabel="environment steps", ylabel="episode return", title="return")
    axes[1].set(
        xlabel="environment steps",
        ylabel="final distance [mm]",
        title=f"final distance ({SMOOTH_EPISODES}-episode mean)",
    )
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(out) if out is not None else run / "learning_curve.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
