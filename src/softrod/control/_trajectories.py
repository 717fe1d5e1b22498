"""Reference tip trajectories of SoftManiSim's tracking experiments (ALGORITHMS.md A.3).

Each returns (t (k,) [s], x_d (k, 3) [m], xdot_d (k, 3) [m/s]), centred on `center`.
Periods and loop counts the paper leaves open default to 20 s per loop ([CHOICE]); `scale`
shrinks every length for robots with a smaller reach (1 = the paper's sizes).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["TRAJECTORIES", "make_trajectory"]

Trajectory = tuple[np.ndarray, np.ndarray, np.ndarray]


def _square_xy(phase: np.ndarray, side: float) -> np.ndarray:
    """Square of `side` in XY traversed at constant speed; phase in [0, 1) per loop."""
    p = np.mod(phase, 1.0) * 4.0
    h = side / 2.0
    out = np.zeros((phase.shape[0], 2))
    for k, (x0, y0, dx, dy) in enumerate(
        [(-h, -h, 1, 0), (h, -h, 0, 1), (h, h, -1, 0), (-h, h, 0, -1)]
    ):
        sel = (p >= k) & (p < k + 1)
        f = p[sel] - k
        out[sel, 0] = x0 + dx * side * f
        out[sel, 1] = y0 + dy * side * f
    # Start at the square's centre-left edge midpoint would jump; start at a corner instead.
    return out


def _finite_velocity(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.gradient(x, t, axis=0)


def square(t: np.ndarray, scale: float = 1.0, period: float = 20.0) -> np.ndarray:
    """Square of side 0.4 m in XY at constant speed."""
    xy = _square_xy(t / period, 0.4 * scale)
    return np.column_stack([xy, np.zeros_like(t)])


def figure_eight(t: np.ndarray, scale: float = 1.0, period: float = 20.0) -> np.ndarray:
    """x = 0.2 sin(2 pi t / (T/2)), y = 0.2 sin(2 pi t / T) (as printed: double frequency on x)."""
    a = 0.2 * scale
    return np.column_stack(
        [a * np.sin(4 * np.pi * t / period), a * np.sin(2 * np.pi * t / period), np.zeros_like(t)]
    )


def circle(t: np.ndarray, scale: float = 1.0, period: float = 20.0) -> np.ndarray:
    """Circle of radius 0.2 m in XY, starting at the centre's +x side."""
    a = 0.2 * scale
    w = 2 * np.pi * t / period
    return np.column_stack([a * (np.cos(w) - 1.0), a * np.sin(w), np.zeros_like(t)])


def helix(t: np.ndarray, scale: float = 1.0, period: float = 20.0) -> np.ndarray:
    """Helix of radius 0.2 m about Z, pitch 0.1 m per turn."""
    c = circle(t, scale, period)
    c[:, 2] = 0.1 * scale * t / period
    return c


def square_helix(t: np.ndarray, scale: float = 1.0, period: float = 20.0) -> np.ndarray:
    """Square of side 0.2 m in XY rising 0.02 m per loop along Z ("Moving Square")."""
    xy = _square_xy(t / period, 0.2 * scale)
    return np.column_stack([xy, 0.02 * scale * t / period])


TRAJECTORIES: dict[str, Callable[..., np.ndarray]] = {
    "square": square,
    "figure8": figure_eight,
    "circle": circle,
    "helix": helix,
    "square_helix": square_helix,
}


def make_trajectory(
    name: str,
    center: np.ndarray,
    dt: float = 0.01,
    loops: float = 1.0,
    scale: float = 1.0,
    period: float = 20.0,
) -> Trajectory:
    """Sample trajectory `name` every dt for `loops` periods, offset so it starts at `center`.

    Returns (t (k,), x_d (k, 3), xdot_d (k, 3)) in [s], [m], [m/s].
    """
    if name not in TRAJECTORIES:
        raise ValueError(f"trajectory must be one of {sorted(TRAJECTORIES)}, got {name!r}")
    if not (scale > 0 and period > 0 and dt > 0 and loops > 0):
        raise ValueError(
            f"scale, period, dt and loops must be > 0, got {scale}, {period}, {dt}, {loops}"
        )
    t = np.arange(0.0, loops * period + 0.5 * dt, dt)
    rel = TRAJECTORIES[name](t, scale, period)
    x_d = np.asarray(center, dtype=float)[None, :] + rel - rel[0]
    return t, x_d, _finite_velocity(t, x_d)
