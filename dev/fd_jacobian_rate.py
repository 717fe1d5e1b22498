"""Rate of the Jacobian controller's finite differences, `TendonRobotPlant.jacobian(q, "fd")`.

Usage: PYTHONPATH=src NUMBA_NUM_THREADS=1 python dev/fd_jacobian_rate.py ROBOT N
(ROBOT a shipped robot name; N Jacobians timed after two warm-up calls; gravity, no mobile base,
every tension 0.3 N). Prints Jacobians per wall second and per CPU second (docs/batch.md).
"""

import sys
import time

import numpy as np

from softrod.control import TendonRobotPlant
from softrod.description import find_robot


def main(robot: str, n: int) -> None:
    plant = TendonRobotPlant(find_robot(robot), loads={"gravity": [0, 0, -9.81]}, mobile_base=False)
    q = np.zeros(plant.n_q)
    q[: plant.n_t] = 0.3
    plant.jacobian(q, "fd")
    plant.jacobian(q, "fd")
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        plant.jacobian(q, "fd")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"{robot} n_q={plant.n_q} n_t={plant.n_t}: {n / wall:.1f} Jacobians/s wall, "
        f"{n / cpu:.1f} per CPU s"
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
