"""The implicit step undamped (issue 21, docs/dynamics.md "Implicit step"): evidence and numbers.

* `strains`: tdcr3's 2 N tip-tendon pull, no damping, 30 elements, with the strain weight beta =
  1/4 (the midpoint rule, the former default) and 1/2 (the default): the largest element shear
  and axial strain and the recorded energy per step (beta = 1/4 grows until it diverges).
* `tendon`: tdcr3 and ftdcr_v4 pull / release over `--duration` s, default settings (undamped):
  success, automatic step, energy excursion relative to E0, Newton iterations per step.
* `cpu`: seed 002's steel rod and the TPU rod released undamped over 2 s at the defaults (auto)
  and with the implicit step: real-time factor in wall and in CPU time (`time.process_time`).

    PYTHONPATH=src NUMBA_NUM_THREADS=1 python dev/implicit_undamped.py [strains,tendon,cpu]
"""

from __future__ import annotations

import argparse
import functools
import math
import time

import numpy as np

import softrod.dynamics._simulate as _sim
from softrod.bench._dynamics import STEEL_ROD, TPU_ROD, _section
from softrod.description import find_robot, load_robot
from softrod.dynamics import build_lgvi_model, euler_bernoulli_f1, oscillation, simulate_dynamic
from softrod.rods import solve_static

TENDON, TENSION, ELEMENTS = 6, 2.0, 30


def _tensions(robot) -> np.ndarray:
    t = np.zeros(sum(len(s.tendons) for s in robot.segments))
    t[TENDON] = TENSION
    return t


def strains() -> None:
    robot = load_robot(find_robot("tdcr3"))
    model = build_lgvi_model(robot, elements=ELEMENTS)
    integrate = _sim._integrate
    for beta in (0.25, 0.5):
        # The stepping loop with another strain weight (a private argument of `_integrate`).
        _sim._integrate = functools.partial(integrate, newmark_beta=beta)
        try:
            res = simulate_dynamic(model, 0.04, tensions=_tensions(robot), integrator="implicit",
                                   sample_dt=1e-9)  # fmt: skip
        finally:
            _sim._integrate = integrate
        dp = res.positions[:, 1:] - res.positions[:, :-1]
        g = np.einsum("knji,knj->kni", res.frames[:, :-1], dp) / model.elem_len[None, :, None]
        g -= model.elem_g0a[None]
        shear = np.abs(g[:, :, :2]).max(axis=(1, 2))
        axial = np.abs(g[:, :, 2]).max(axis=1)
        print(f"beta {beta}: {res.message}")
        for k in [*range(8), *range(10, len(res.energy), 6)]:
            print(f"  step {k:3d}  max shear {shear[k]:.2e}  max axial {axial[k]:.2e}  "
                  f"energy {res.energy[k]:.6f}")  # fmt: skip


def tendon(duration: float) -> None:
    for name in ("tdcr3", "ftdcr_v4"):
        robot = load_robot(find_robot(name))
        model = build_lgvi_model(robot, elements=ELEMENTS)
        T = _tensions(robot)
        held = solve_static(robot, tensions=T)
        for case, tens, init in (("pull", T, None), ("release", 0 * T, held)):
            res = simulate_dynamic(model, duration, tensions=tens, initial=init,
                                   integrator="implicit")  # fmt: skip
            E = res.energy
            print(f"{name:9s} {case:8s} ok={res.success} dt {res.dt:.3g} s  energy excursion "
                  f"{np.max(np.abs(E - E[0])) / abs(E[0]):.2e} of E0 = {E[0]:.4g} J  Newton "
                  f"{res.extra['newton_iterations'] / max(res.n_steps, 1):.2f}/step")  # fmt: skip


def cpu() -> None:
    for rod, force, name in ((STEEL_ROD, 0.01, "steel_seed002"), (TPU_ROD, 0.05, "tpu_rod")):
        E, _, rho, r, L = _section(rod)
        f_eb = euler_bernoulli_f1(E * math.pi * r**4 / 4, rho * math.pi * r**2, L)
        st = solve_static(load_robot(rod), tip_force=[force, 0.0, 0.0])
        for integrator in ("auto", "implicit"):
            simulate_dynamic(rod, 0.01, initial=st, elements=20, integrator=integrator)
            c0, w0 = time.process_time(), time.perf_counter()
            res = simulate_dynamic(rod, 2.0, initial=st, elements=20, integrator=integrator)
            cpu_s, wall = time.process_time() - c0, time.perf_counter() - w0
            f, _ = oscillation(res.t, res.tip_position[:, 0], center=0.0)
            e = res.energy
            print(f"{name:14s} {integrator:8s} ran {res.extra['integrator']:8s} dt {res.dt:.3g} s  "
                  f"{2 / wall:.2f}x real time wall, {2 / cpu_s:.2f}x CPU  f1 {f / f_eb - 1:+.3%}  "
                  f"energy {np.max(np.abs(e - e[0])) / abs(e[0]):.2g}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("parts", nargs="?", default="strains,tendon,cpu")
    ap.add_argument("--duration", type=float, default=2.0)
    args = ap.parse_args()
    for part in args.parts.split(","):
        if part == "tendon":
            tendon(args.duration)
        else:
            {"strains": strains, "cpu": cpu}[part]()


if __name__ == "__main__":
    main()
