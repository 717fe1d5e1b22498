"""Signal helpers for release tests: oscillation frequency and decay of a sampled signal."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["euler_bernoulli_f1", "oscillation"]


def euler_bernoulli_f1(EI: float, rho_A: float, length: float) -> float:
    """First cantilever frequency [Hz]: 1.8751^2 / (2 pi L^2) sqrt(EI / (rho A))."""
    return 1.8751**2 / (2 * math.pi * length**2) * math.sqrt(EI / rho_A)


def oscillation(t: np.ndarray, x: np.ndarray, center: float | None = None) -> tuple[float, float]:
    """(frequency [Hz], decay rate [1/s]) of an oscillating signal x(t).

    The frequency comes from the upward crossings of `center` (default: the mean of the last
    half), linearly interpolated, averaged over all whole periods; the decay rate from a
    log-linear fit of the half-period extrema |x - center| (0 for a steady amplitude).
    """
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    c = float(np.mean(x[x.shape[0] // 2 :])) if center is None else float(center)
    y = x - c
    up = np.flatnonzero((y[:-1] < 0) & (y[1:] >= 0))
    if up.size < 2:
        raise ValueError("oscillation needs at least two upward crossings")
    tc = t[up] - y[up] * (t[up + 1] - t[up]) / (y[up + 1] - y[up])
    freq = (tc.size - 1) / (tc[-1] - tc[0])
    # Extremum of |y| between consecutive crossings (both directions).
    cross = np.flatnonzero(np.sign(y[:-1]) != np.sign(y[1:]))
    peaks_t, peaks_a = [], []
    for a, b in zip(cross[:-1], cross[1:], strict=True):
        k = a + 1 + int(np.argmax(np.abs(y[a + 1 : b + 1])))
        peaks_t.append(t[k])
        peaks_a.append(abs(y[k]))
    if len(peaks_a) < 2:
        return float(freq), 0.0
    slope = np.polyfit(np.array(peaks_t), np.log(np.array(peaks_a)), 1)[0]
    return float(freq), float(-slope)
