"""One shooting-residual evaluation (`_static_kernels._evaluate` -> `_integrate`) of two
versions of `_static_kernels.py`, timed in one process (docs/batch.md, "Speed").

Usage: PYTHONPATH=src python dev/integrate_ab.py A.py B.py [N] [ROUNDS]
Copies both files to a temporary folder as two modules (their own numba caches there, never
beside the sources), then integrates N (default 300) of `softrod bench static-batch`'s
SoftManiSim loads from random base moments, with Newton's three sensitivity directions and
without, alternating A and B for ROUNDS rounds (default 9), and prints the median CPU time
per evaluation of each and whether their final states are bit-identical (without the tendon
lengths' sensitivities, which kernels since session 16 leave 0 without tension directions).
One process runs both: this VM's per-process speed states (docs/stability.md) cancel in the
ratio.
Compare main's kernel with this tree's:
    python dev/integrate_ab.py /work/main/src/softrod/rods/_static_kernels.py \
        src/softrod/rods/_static_kernels.py
"""

from __future__ import annotations

import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit

from softrod.bench._static import _softmanisim_inputs, example_robot_path
from softrod.description import load_robot
from softrod.rods import _batch, compile_model
from softrod.rods import _batch_kernels as K


def main() -> None:
    path_a, path_b = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 9
    folder = Path(tempfile.mkdtemp(prefix="integrate_ab_"))
    shutil.copy(path_a, folder / "kernels_a.py")
    shutil.copy(path_b, folder / "kernels_b.py")
    sys.path.insert(0, str(folder))
    versions = {
        "A": importlib.import_module("kernels_a"),
        "B": importlib.import_module("kernels_b"),
    }
    numba.set_num_threads(1)

    model = compile_model(load_robot(example_robot_path("softmanisim")))
    items = _softmanisim_inputs(n, np.random.default_rng(0))
    tau = np.array([kw["tensions"] for kw in items])
    loads = {
        "tip_force": np.array([kw["tip_force"] for kw in items]),
        "tip_moment": None,
        "distributed_force": items[0]["distributed_force"],
        "gravity": None,
    }
    mp = K._model_par(_batch._model_arrays(model, False))
    geo, base, node_mass = mp[0], mp[1], mp[2]
    forces = _batch._forces(_batch._check_loads(model, tau, None, loads))
    n_t = tau.shape[1]
    base_moment = np.random.default_rng(1).normal(scale=0.05, size=(n, 3))
    lds = [K._item_ld(geo, node_mass, forces[i], n_t) for i in range(n)]
    N_end = np.array([ld[0] for ld in lds])
    q_step = np.array([ld[1] for ld in lds])
    n_nodes, ny = model.n_nodes, 15 + n_t

    def runner(kernels):
        evaluate = kernels._evaluate

        @njit
        def run(base_moment, tau, N_end, q_step, ld0, n_dir, base, geo, z_out):
            Y = np.empty((n_nodes, ny))
            X = np.empty((n_nodes, 6))
            z = np.empty(z_out.shape[1])
            for i in range(base_moment.shape[0]):
                ld = (N_end[i], q_step[i], ld0[2], ld0[3], ld0[4])
                evaluate(base_moment[i], tau[i], n_dir, base, geo, ld, np.bool_(True), Y, X, z)
                z_out[i, :] = z

        return run

    runs = {name: runner(kernels) for name, kernels in versions.items()}
    times: dict[tuple[str, int], list[float]] = {}
    finals: dict[tuple[str, int], np.ndarray] = {}
    for r in range(rounds + 1):  # round 0 compiles
        for name, run in runs.items():
            for n_dir in (3, 0):
                z_out = np.empty((n, ny * (1 + n_dir)))
                c0 = time.process_time()
                run(base_moment, tau, N_end, q_step, lds[0], np.int64(n_dir), base, geo, z_out)
                dt = 1e6 * (time.process_time() - c0) / n
                if r:
                    times.setdefault((name, n_dir), []).append(dt)
                else:
                    # Without the lengths' sensitivities (the last n_t of each direction's block).
                    keep = np.ones(z_out.shape[1], bool)
                    for d in range(n_dir):
                        keep[ny * (1 + d) + 15 : ny * (2 + d)] = False
                    finals[(name, n_dir)] = z_out[:, keep]
    for n_dir in (3, 0):
        a, b = np.median(times[("A", n_dir)]), np.median(times[("B", n_dir)])
        same = np.array_equal(finals[("A", n_dir)], finals[("B", n_dir)])
        dz = np.abs(finals[("A", n_dir)] - finals[("B", n_dir)])
        diff = dz.max()
        # Per entry, relative to that entry's largest magnitude over the evaluations.
        rel = (dz / np.maximum(np.abs(finals[("A", n_dir)]).max(axis=0), 1e-300)).max()
        print(
            f"{n_dir} directions: A {a:.1f} us, B {b:.1f} us per evaluation (medians of {rounds}), "
            f"A / B {a / b:.2f}; final states bit-identical: {same} (largest difference "
            f"{diff:.1e}, {rel:.1e} of the entry's scale)"
        )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
