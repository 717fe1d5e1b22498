"""Dump or compare the answers of the static bench's sequences (docs/stability.md).

    PYTHONPATH=src python dev/static_compare.py dump OUT.npz
    python dev/static_compare.py diff A.npz B.npz
    PYTHONPATH=src python dev/static_compare.py truth [EVERY]

`dump` solves the bench's three sequences (`softrod bench static`, seed 0: 300 warm-started
SoftManiSim solves, the tdcr3 warm trajectory and its 100 cold solves) and saves every solve's
tip position, tip error estimate, success flag, status, stability verdict and Newton
iteration count, its node count (a refined answer has more) and message. `diff` prints, per
sequence, the largest tip move between two dumps, whether the success flags, statuses,
verdicts, per-solve iteration counts, node counts and messages agree, and the total
iterations of each. Pair two source trees
by dumping under each (`PYTHONPATH=/other/src python dev/static_compare.py dump base.npz`).
`truth` compares the tip error estimate of every EVERY-th solve (default 10) with its true
error, the tip distance to a solve of the same loads on a grid of 16 times as many steps, and
prints per sequence the range of estimate / true error and how many estimates fall below it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

_VERDICT = {None: -1, False: 0, True: 1}


def _sequences() -> dict[str, tuple[Any, list[dict[str, Any]], bool]]:
    from softrod.bench._static import _random_unit, _softmanisim_inputs
    from softrod.description import find_robot, load_robot
    from softrod.rods import compile_model

    # The inputs of `run_static_bench` (same seed, same order of random draws).
    rng = np.random.default_rng(0)
    sms = compile_model(load_robot(find_robot("softmanisim")))
    sms_inputs = _softmanisim_inputs(300, rng)
    tdcr = compile_model(load_robot(find_robot("tdcr3")))
    g = np.array([0.0, 0.0, -9.81])
    phase = rng.uniform(0, 2 * np.pi, size=9)
    traj = [
        dict(tensions=np.maximum(0.0, 1.5 * np.sin(2 * np.pi * 0.5 * tk + phase)), gravity=g)
        for tk in np.arange(100) / 100.0
    ]
    cold = [
        dict(
            tensions=rng.uniform(0, 3.0, size=9) * (rng.random(9) < 0.4),
            gravity=g,
            tip_force=0.2 * _random_unit(rng),
        )
        for _ in range(100)
    ]
    return {
        "softmanisim": (sms, sms_inputs, True),
        "tdcr3_warm": (tdcr, traj, True),
        "tdcr3_cold": (tdcr, cold, False),
    }


def dump(path: str) -> None:
    from softrod.rods import solve_static

    out: dict[str, np.ndarray] = {}
    for name, (model, inputs, warm) in _sequences().items():
        prev, rows, messages = None, [], []
        for kw in inputs:
            sol = solve_static(model, guess=prev if warm else None, **kw)
            err = np.nan if sol.tip_error is None else sol.tip_error
            rows.append(
                [
                    *sol.tip_position,
                    err,
                    sol.success,
                    sol.status,
                    _VERDICT[sol.stable],
                    sol.nit,
                    sol.s.shape[0],
                ]  # fmt: skip
            )
            messages.append(sol.message)
            prev = sol if sol.success else None
        out[name] = np.array(rows, dtype=float)
        out[name + ".message"] = np.array(messages)
    np.savez(path, **out)


def diff(a_path: str, b_path: str) -> None:
    a, b = np.load(a_path), np.load(b_path)
    for name in a.files:
        if name.endswith(".message"):
            continue
        x, y = a[name], b[name]
        move = float(np.max(np.linalg.norm(x[:, 0:3] - y[:, 0:3], axis=1)))
        err = np.nanmax(np.abs(x[:, 3] - y[:, 3]) / np.maximum(np.abs(x[:, 3]), 1e-300))
        same = {k: bool(np.array_equal(x[:, c], y[:, c])) for k, c in
                (("success", 4), ("status", 5), ("stable", 6), ("nit", 7))}  # fmt: skip
        if x.shape[1] > 8 and y.shape[1] > 8:
            same["nodes"] = bool(np.array_equal(x[:, 8], y[:, 8]))
        if name + ".message" in a.files and name + ".message" in b.files:
            same["message"] = bool(np.array_equal(a[name + ".message"], b[name + ".message"]))
        print(
            f"{name}: max tip move {move:.3g} m, tip_error rel change {err:.3g}, {same}, "
            f"iterations {int(x[:, 7].sum())} -> {int(y[:, 7].sum())}"
        )


#: The reference grid of `truth`: RK4's tip error falls 16^4 = 65536 times below the solve's.
_TRUTH_REFINEMENT = 16


def truth(every: str = "10") -> None:
    from softrod.rods import solve_static

    for name, (model, inputs, warm) in _sequences().items():
        prev, ratios = None, []
        steps = _TRUTH_REFINEMENT * model.step_seg.shape[0]
        for i, kw in enumerate(inputs):
            sol = solve_static(model, guess=prev if warm else None, **kw)
            prev = sol if sol.success else None
            if i % int(every) or not sol.success or sol.tip_error is None:
                continue
            fine = solve_static(model, guess=sol, steps=steps, error_estimate=False, **kw)
            true = float(np.linalg.norm(fine.tip_position - sol.tip_position))
            if fine.success and true > 0.0:
                ratios.append(sol.tip_error / true)
        r = np.array(ratios)
        print(
            f"{name}: {r.size} solves, estimate / true error {r.min():.3f} .. {r.max():.3f}, "
            f"median {np.median(r):.3f}, below 1: {int(np.sum(r < 1.0))}"
        )


if __name__ == "__main__":
    {"dump": dump, "diff": diff, "truth": truth}[sys.argv[1]](*sys.argv[2:])
