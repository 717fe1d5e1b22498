"""Central finite differences of a solver's output, the oracle of the Jacobian tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def central_columns(
    solve: Callable[[np.ndarray], np.ndarray], x: np.ndarray, steps: np.ndarray
) -> np.ndarray:
    """Central differences (m, n) of solve(x) (m,) over the inputs x (n,) with absolute steps
    (n,): column k is (solve(x + h_k e_k) - solve(x - h_k e_k)) / (2 h_k)."""
    cols = []
    for k, h in enumerate(steps):
        dx = np.zeros_like(x)
        dx[k] = h
        cols.append((solve(x + dx) - solve(x - dx)) / (2 * h))
    return np.array(cols).T
