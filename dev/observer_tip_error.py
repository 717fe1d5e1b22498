"""The tip error estimate of methods "observer" and "pcc" (issue 19 row 0.6; docs/stability.md,
"Accuracy: observer and pcc results").

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src .venv/bin/python dev/observer_tip_error.py [REPEATS]

For the cases of tests/test_tip_error_methods.py (tdcr3 with two tendons and a tip force, the
SoftManiSim robot under the `softrod bench static` kind of load) it prints, for five observer
updates from a cold start, the status, the boundary residual, `tip_error` and the true error
against a 2048-step shooting solve; then the CPU time of one warm `solve_static(...,
method="observer")` update with and without the estimate (median of REPEATS x 200 calls, in
turn, default 5), and the pcc results' `tip_error` / `model_error` with and without the tip
force. Lines are `case.metric: value`.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import softrod
from softrod.description import find_robot
from softrod.rods import compile_model

sys.path.insert(0, "tests")
from reference.robots import tdcr3_dict  # noqa: E402

CASES = {
    "tdcr3": (
        lambda: compile_model(softrod.load_robot(tdcr3_dict())),
        dict(tensions=[1.0, 0, 0, 0, 0, 0, 0, 0, 0.5], tip_force=[0.3, 0, 0]),
    ),
    "softmanisim": (
        lambda: compile_model(find_robot("softmanisim")),
        dict(tensions=[1.5, 1.0, 0, 0], tip_force=[0.8, -1.2, 0.9], distributed_force=[1, 1, 1]),
    ),
}


def main(repeats: int) -> None:
    for name, (build, loads) in CASES.items():
        model = build()
        fine = softrod.solve_static(model, steps=2048, error_estimate=False, **loads)
        sol = None
        for k in range(5):
            sol = softrod.solve_static(model, method="observer", guess=sol, **loads)
            true = float(np.linalg.norm(sol.tip_position - fine.tip_position))
            print(
                f"{name}.update{k}: status {sol.status} residual {sol.residual:.1e} "
                f"tip_error {sol.tip_error:.3e} true {true:.3e} ratio {sol.tip_error / true:.2f}"
            )
        # CPU time of one converged update, with and without the estimate, in turn.
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(repeats):
            for estimate in (False, True):
                t0 = time.process_time()
                for _ in range(200):
                    softrod.solve_static(
                        model, method="observer", guess=sol, error_estimate=estimate, **loads
                    )
                times[estimate].append((time.process_time() - t0) / 200 * 1e3)
        off, on = np.median(times[False]), np.median(times[True])
        print(f"{name}.observer_ms_without_estimate: {off:.4f}")
        print(f"{name}.observer_ms_with_estimate: {on:.4f}")
        print(f"{name}.estimate_cost_fraction: {on / off - 1.0:.3f}")
        tensions = loads["tensions"]
        for label, extra in (("load_free", {}), ("loaded", {k: v for k, v in loads.items()
                                                           if k != "tensions"})):  # fmt: skip
            pcc = softrod.solve_static(model, tensions, method="pcc", model_error=True, **extra)
            print(f"{name}.pcc_{label}.tip_error: {pcc.tip_error}")
            print(f"{name}.pcc_{label}.model_error_m: {pcc.model_error:.3e}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
