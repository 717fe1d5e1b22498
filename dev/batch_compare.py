"""Answers of `solve_static_batch` saved and compared across code versions (paired runs).

Usage: PYTHONPATH=src python dev/batch_compare.py OUT.npz [REFERENCE.npz] [B]
Solves `softrod bench static-batch`'s B SoftManiSim loads (default 10000) and 200 random
mixed loads for each robot/control case of tests/test_static_batch.py (loads up to 6 rad of
bending: direct Newton and continuation, 1-3 segments, Kirchhoff and Cosserat, tension and
length control), one thread, and saves tips, status, stability and iterations to OUT.npz.
With REFERENCE.npz it prints, per set, the largest tip difference over items that succeed in
both, how many items changed status or stability, and the CPU time per item in each.
"""

from __future__ import annotations

import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from softrod.bench._static import _softmanisim_inputs, example_robot_path  # noqa: E402
from softrod.description import load_robot  # noqa: E402
from softrod.rods import compile_model, solve_static_batch  # noqa: E402
from test_static_batch import CASES, _model, _random_inputs  # noqa: E402


def main() -> None:
    out_path = sys.argv[1]
    ref_path = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2].endswith(".npz") else None
    n = int(sys.argv[-1]) if sys.argv[-1].isdigit() else 10000
    sets = {}
    model = compile_model(load_robot(example_robot_path("softmanisim")))
    items = _softmanisim_inputs(n, np.random.default_rng(0))
    sets["bench"] = (
        model,
        dict(
            tensions=np.array([kw["tensions"] for kw in items]),
            tip_force=np.array([kw["tip_force"] for kw in items]),
            distributed_force=items[0]["distributed_force"],
        ),
    )
    for robot, control in CASES:
        m = _model(robot)
        rng = np.random.default_rng(zlib.crc32(f"compare/{robot}/{control}".encode()))
        sets[f"{robot}/{control}"] = (m, _random_inputs(m, control, 200, rng))
    saved = {}
    for name, (m, inputs) in sets.items():
        solve_static_batch(m, threads=1, **{k: (v[:2] if np.ndim(v) == 2 else v)
                                            for k, v in inputs.items()})  # fmt: skip
        c0 = time.process_time()
        res = solve_static_batch(m, threads=1, **inputs)
        cpu = time.process_time() - c0
        stable = res.stable if res.stable is not None else np.zeros(len(res), bool)
        for key, value in (("tip", res.tip_position), ("status", res.status),
                           ("stable", stable), ("iterations", res.iterations),
                           ("cpu", np.array([cpu / len(res)]))):  # fmt: skip
            saved[f"{name}:{key}"] = value
        print(f"{name}: {len(res)} items, {res.n_failed} failed, {1e6 * cpu / len(res):.0f} us "
              f"CPU per item, {res.iterations.mean():.2f} iterations")  # fmt: skip
    np.savez(out_path, **saved)
    if ref_path is None:
        return
    ref = np.load(ref_path)
    for name in sets:
        ok = (ref[f"{name}:status"] == 0) & (saved[f"{name}:status"] == 0)
        diff = np.abs(ref[f"{name}:tip"][ok] - saved[f"{name}:tip"][ok]).max(initial=0.0)
        changed = np.count_nonzero(ref[f"{name}:status"] != saved[f"{name}:status"])
        unstable = np.count_nonzero(ref[f"{name}:stable"] != saved[f"{name}:stable"])
        ratio = ref[f"{name}:cpu"][0] / saved[f"{name}:cpu"][0]
        print(
            f"{name}: max tip difference {diff:.2e} m, status changed {changed}, stable "
            f"changed {unstable}, CPU per item ratio (reference / this) {ratio:.2f}"
        )


if __name__ == "__main__":
    main()
