"""Preloaded by the process pool's fork server: imports softrod and runs one tiny static solve,
so that every forked worker starts with the solver's compiled kernels already loaded (instead
of each worker loading them on its first point, ~0.5 s)."""

from __future__ import annotations

import os

# One thread per worker: the pool is the parallelism (BLAS or numba threads would oversubscribe).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numba  # noqa: E402

# Importing this module imported the `softrod` package, and with it numba, which read its
# settings then: reload them now, before any kernel runs, so the thread count above is the one
# the workers launch. (Kernels loaded from the cache never reload the settings; a worker's
# first compile would, find its threads launched with the old count and raise.)
numba.config.reload_config()  # type: ignore[attr-defined]

import softrod.sweep._tasks  # noqa: E402, F401  (the worker entry point)


def _warm() -> None:
    try:
        from softrod.description import load_robot
        from softrod.rods import solve_static

        robot = {
            "backbone": {"youngs_modulus": 1.0e9, "poisson_ratio": 0.3, "radius": 0.001},
            "segments": [
                {
                    "length": 0.1,
                    "disks": 2,
                    "disk_radius": 0.005,
                    "tendons": [{"offset": 0.004, "angle_deg": 0.0, "stiffness": 1.0e4}],
                }
            ],
        }
        solve_static(load_robot(robot), tensions=[0.1])
        solve_static(load_robot({**robot, "model": "cosserat"}), tensions=[0.1])
    except Exception:  # noqa: BLE001 - warming up is an optimization only
        pass


_warm()
