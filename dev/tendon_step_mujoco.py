"""Tendon robots in dynamics (issue 21): the implicit variational step vs the MuJoCo chain.

tdcr3 and ftdcr_v4 under a tendon step, "pull" (straight at rest, tension T from t = 0) and
"release" (held bent by T, tension 0 from t = 0); tip trajectories over `--duration` s, error in
% of L (mean and max over time). Damping is matched as stiffness-proportional (Kelvin-Voigt)
damping with the same time beta in both: `strain_damping=beta` on the rod (every strain's
viscous stress is beta x its stiffness x its rate) and `damping_time=beta` on the chain (joint
damping beta x joint stiffness; MuJoCo's `discrete` integrator adds its own timestep to it, the
builder takes that off). Gravity off (the seed-002 hardware model's setting).

    PYTHONPATH=src NUMBA_NUM_THREADS=1 python dev/tendon_step_mujoco.py [--duration 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import mujoco
import numpy as np

from softrod.description import find_robot, load_robot
from softrod.dynamics import simulate_dynamic
from softrod.mujoco import build_spec, chain_info, static_equilibrium
from softrod.rods import solve_static

#: The robots and the tendon pulled (input order): tendon 6 anchors at the tip (segment 3).
ROBOTS = ("tdcr3", "ftdcr_v4")
TENDON = 6
#: Step tension [N]: bends the NiTi robots by about 60-90 deg at the tip.
TENSION = 2.0
#: Kelvin-Voigt time beta [s] of both models (first-mode ratio beta omega_1 / 2 ~ 1-2 %).
BETA = 2e-3
LINKS = 30
ELEMENTS = 30
#: MuJoCo step: 0.25 ms (the `discrete` integrator's own damping, its timestep, stays < beta).
MJ_TIMESTEP = 2.5e-4
SAMPLE_DT = 1e-3


def _tensions(n: int, on: bool) -> np.ndarray:
    t = np.zeros(n)
    if on:
        t[TENDON] = TENSION
    return t


def run_softrod(
    name: str, case: str, duration: float, integrator: str = "implicit", dt: float | None = None
) -> dict:
    robot = load_robot(find_robot(name))
    n_t = sum(len(s.tendons) for s in robot.segments)
    initial = None
    if case == "release":
        held = solve_static(robot, tensions=_tensions(n_t, True))
        assert held.success, held.message
        initial = held
    # Timed warm: the first call loads numba's cache (seconds).
    simulate_dynamic(robot, 0.01, initial=initial, tensions=_tensions(n_t, case == "pull"),
                     elements=ELEMENTS, integrator=integrator, dt=dt)  # fmt: skip
    t0 = time.perf_counter()
    c0 = time.process_time()
    res = simulate_dynamic(
        robot, duration, initial=initial, tensions=_tensions(n_t, case == "pull"),
        strain_damping=BETA, elements=ELEMENTS, integrator=integrator, sample_dt=SAMPLE_DT,
        dt=dt,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {"t": res.t, "tip": res.positions[:, -1], "wall": wall, "cpu": cpu, "dt": res.dt,
            "success": res.success, "message": res.message, "L": robot.total_length}  # fmt: skip


def run_mujoco(name: str, case: str, duration: float) -> dict:
    robot = load_robot(find_robot(name))
    n_t = sum(len(s.tendons) for s in robot.segments)
    opts = dict(links=LINKS, damping_time=BETA, timestep=MJ_TIMESTEP, gravity=(0.0, 0.0, 0.0),
                contact=False)  # fmt: skip
    model = build_spec(robot, **opts).compile()
    data = mujoco.MjData(model)
    info = chain_info(robot, **opts)
    acts = [model.actuator(a).id for a in info.actuators]
    if case == "release":
        data.ctrl[acts] = _tensions(n_t, True)
        res = static_equilibrium(model, data, [])
        assert res.success, res.message
    data.qvel[:] = 0.0
    data.time = 0.0
    data.ctrl[acts] = _tensions(n_t, case == "pull")
    mujoco.mj_forward(model, data)
    site = model.site(info.tip_site).id
    n_s = int(round(duration / SAMPLE_DT)) + 1
    tip = np.empty((n_s, 3))
    t0 = time.perf_counter()
    for k in range(n_s):
        while data.time < k * SAMPLE_DT - 0.5 * MJ_TIMESTEP:
            mujoco.mj_step(model, data)
        tip[k] = data.site_xpos[site]
    return {"t": np.arange(n_s) * SAMPLE_DT, "tip": tip, "wall": time.perf_counter() - t0}


def compare(name: str, case: str, duration: float, dt: float | None = None) -> dict:
    rod = run_softrod(name, case, duration, dt=dt)
    mj = run_mujoco(name, case, duration)
    # The rod's samples are every round(SAMPLE_DT / dt) steps: compare at the chain's times.
    k = int(np.searchsorted(mj["t"], rod["t"][-1] + 1e-12))
    tip = np.column_stack([np.interp(mj["t"][:k], rod["t"], rod["tip"][:, a]) for a in range(3)])
    err = np.linalg.norm(tip - mj["tip"][:k], axis=1) / rod["L"] * 100
    swing = np.max(np.linalg.norm(mj["tip"][:k] - mj["tip"][0], axis=1)) / rod["L"] * 100
    return {
        "robot": name, "case": case, "success": rod["success"],
        "mean_error_pct": float(err.mean()), "max_error_pct": float(err.max()),
        "final_error_pct": float(err[-1]), "swing_pct": float(swing),
        "dt": rod["dt"], "rt_factor": duration / rod["wall"], "wall": rod["wall"],
        "cpu_rt_factor": duration / rod["cpu"],
        "mujoco_rt_factor": duration / mj["wall"],
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--dt", type=float, default=None, help="softrod's step [s] (default: auto)")
    ap.add_argument("--cases", default="pull,release")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [compare(r, c, args.duration, args.dt) for r in args.robots.split(",")
            for c in args.cases.split(",")]  # fmt: skip
    if args.json:
        print(json.dumps(rows))
        return
    for r in rows:
        print(f"{r['robot']:9s} {r['case']:8s} mean {r['mean_error_pct']:.3f} % max "
              f"{r['max_error_pct']:.3f} % final {r['final_error_pct']:.3f} % (swing "
              f"{r['swing_pct']:.1f} % of L) dt {r['dt']:.3g} s {r['rt_factor']:.2f}x RT "
              f"(CPU time {r['cpu_rt_factor']:.2f}x) "
              f"(MuJoCo {r['mujoco_rt_factor']:.2f}x) ok={r['success']}")  # fmt: skip


if __name__ == "__main__":
    main()
