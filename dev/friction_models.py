"""Tendon friction in the three models on the ftdcr_v4 pull/release cycle (issue 15, item 2).

    PYTHONPATH=src python dev/friction_models.py [MU] [N] [ROWS] [--lgvi | --mujoco]

The cycle of dev/friction_cycle.py (input 6 pulled 0 -> 3 N in ROWS/2 steps, default 25, and
released in as many; no gravity) solved by the static sequence (`solve_sequence`, exact), the
MuJoCo chain with N links (`TendonFriction(per_step=False)` + `friction_sequence`) and the
LGVI with N elements (`friction_settle_sequence`, its default method "static": each row the
discrete model's equilibrium inside the friction fixed point), each with friction MU (default
0.1) and without; `--lgvi` / `--mujoco` runs that model only. Prints
`friction_models.<model>.<metric>: value` lines [mm, s]:

* mu0_path_max: max tip distance to the static sequence without friction (discretisation);
* path_max: the same with friction;
* loop_max_static / loop_max: the widest pull/release loop (tip distance between the pull and
  the release at equal command) of the static sequence / the model;
* loop_err_max: max over the command levels of |loop width of the model - of the static|;
* friction_err_max: max |(model(MU) - model(0)) - (static(MU) - static(0))|, the friction
  effect with the discretisation error taken out;
* seconds: wall time of the model's two sequences (MU and 0), numba compilation included.
"""

from __future__ import annotations

import sys
import time

import mujoco
import numpy as np

from softrod.description import find_robot
from softrod.dynamics import build_lgvi_model, friction_settle_sequence
from softrod.mujoco import TendonFriction, build_spec, chain_info, friction_sequence
from softrod.rods import compile_model, solve_sequence

flags = {a for a in sys.argv[1:] if a.startswith("--")}
args = [a for a in sys.argv[1:] if not a.startswith("--")]
mu = float(args[0]) if len(args) > 0 else 0.1
n = int(args[1]) if len(args) > 1 else 30
half = (int(args[2]) if len(args) > 2 else 50) // 2
models = {"--lgvi": ("lgvi",), "--mujoco": ("mujoco",)}.get(
    next(iter(flags), ""), ("mujoco", "lgvi")
)
robot = find_robot("ftdcr_v4")
tensions = np.zeros((2 * half, 9))
tensions[:, 6] = np.r_[np.linspace(0.0, 3.0, half), np.linspace(3.0, 0.0, half)]


def static(value: float) -> np.ndarray:
    return solve_sequence(compile_model(robot), tensions=tensions, mu=value).tip_position


def chain(value: float) -> np.ndarray:
    info = chain_info(robot, links=n, gravity=(0.0, 0.0, 0.0))
    model = build_spec(robot, links=n, gravity=(0.0, 0.0, 0.0)).compile()
    hook = TendonFriction(model, info, mu=value, per_step=False)
    data = mujoco.MjData(model)
    return friction_sequence(model, data, info, hook, tensions, ramp_time=0.0, qvel_tol=1e-5)


def lgvi(value: float) -> np.ndarray:
    model = build_lgvi_model(robot, elements=n)
    res = friction_settle_sequence(model, tensions, mu=value)
    assert res.success.all(), f"LGVI rows {np.flatnonzero(~res.success)} did not converge"
    print(f"friction_models.lgvi_n{n}.mu{value:g}_equilibria_per_row: "
          f"{res.friction_iterations.mean():.2f}")  # fmt: skip
    return res.tip_position


def loops(tips: np.ndarray) -> np.ndarray:
    return np.linalg.norm(tips[:half] - tips[half:][::-1], axis=1)


ref = {value: static(value) for value in (0.0, mu)}
print(f"friction_models.static.loop_max: {1e3 * loops(ref[mu]).max():.3f}")
for name, solve in (("mujoco", chain), ("lgvi", lgvi)):
    if name not in models:
        continue
    t0 = time.perf_counter()
    tips = {value: solve(value) for value in (0.0, mu)}
    tag = f"friction_models.{name}_n{n}"
    print(f"{tag}.seconds: {time.perf_counter() - t0:.0f}")
    err0 = np.linalg.norm(tips[0.0] - ref[0.0], axis=1)
    err = np.linalg.norm(tips[mu] - ref[mu], axis=1)
    effect = (tips[mu] - tips[0.0]) - (ref[mu] - ref[0.0])
    print(f"{tag}.mu0_path_max: {1e3 * err0.max():.3f}")
    print(f"{tag}.path_max: {1e3 * err.max():.3f}")
    print(f"{tag}.loop_max: {1e3 * loops(tips[mu]).max():.3f}")
    print(f"{tag}.loop_err_max: {1e3 * np.abs(loops(tips[mu]) - loops(ref[mu])).max():.3f}")
    print(f"{tag}.friction_err_max: {1e3 * np.linalg.norm(effect, axis=1).max():.3f}")
    sys.stdout.flush()
