"""MuJoCo forward models for calibration (imported only when a MuJoCo fit runs).

Uses `softrod.mujoco.build_spec` (site `tip`, actuators `tension_<k>` / `length_<k>`) and the
MuJoCo layer's static equilibrium when it has one; otherwise a heavily damped settle.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from softrod.description import RobotSpec
from softrod.sysid._data import Measurements

__all__ = ["compile_chain", "equilibrium_tips", "rollout_tips", "settle_equilibrium"]

#: Damped settle (fallback equilibrium): joint damping multiplier, velocity tolerance [rad/s]
#: and time limit [s]. 1e3 x the model damping makes the chain overdamped; 1e-7 rad/s leaves
#: tip drift far below the 0.1 mm scale of tip measurements.
SETTLE_DAMPING = 1e3
SETTLE_QVEL_TOL = 1e-7
SETTLE_MAX_TIME = 10.0


def compile_chain(robot: RobotSpec, options: dict[str, Any]) -> tuple[mujoco.MjModel, int, int]:
    """(MjModel, tip site id, tip body id) of the robot's rigid-link chain."""
    from softrod.mujoco import build_spec

    spec = build_spec(robot, options=options)
    model = spec.compile()
    site = model.site("tip").id
    return model, site, int(model.site_bodyid[site])


def _point_load(model: mujoco.MjModel, site: int, body: int, force: np.ndarray) -> Any:
    from softrod.mujoco import PointLoad

    return PointLoad(body, model.site_pos[site].copy(), np.asarray(force, float), np.zeros(3))


def _apply_tip_force(model, data, site: int, body: int, force: np.ndarray) -> None:
    """World-frame force at the tip site, as a COM force and moment in xfrc_applied."""
    data.xfrc_applied[body, :3] = force
    data.xfrc_applied[body, 3:] = np.cross(data.site_xpos[site] - data.xipos[body], force)


def settle_equilibrium(model, data, site: int, body: int, force: np.ndarray) -> bool:
    """Equilibrium at data.ctrl (and a tip force) from data.qpos; True when converged.

    The MuJoCo layer's Newton solver when present; a heavily damped settle otherwise.
    """
    newton: Any = None
    try:
        from softrod.mujoco import static_equilibrium as newton
    except ImportError:  # pragma: no cover - depends on the MuJoCo layer's version
        pass
    if newton is not None:
        loads = [_point_load(model, site, body, force)] if np.any(force) else []
        res = newton(model, data, loads, qpos0=data.qpos.copy())
        data.qvel[:] = 0.0
        mujoco.mj_forward(model, data)
        if res.success:
            return True
    # Fallback: integrate with heavy damping until the chain is at rest.
    saved = model.dof_damping.copy()
    model.dof_damping[:] = saved * SETTLE_DAMPING
    t0 = data.time
    at_rest = False
    try:
        while data.time - t0 < SETTLE_MAX_TIME:
            if np.any(force):
                mujoco.mj_kinematics(model, data)
                _apply_tip_force(model, data, site, body, force)
            mujoco.mj_step(model, data)
            if not np.all(np.isfinite(data.qpos)):
                return False
            if np.max(np.abs(data.qvel)) < SETTLE_QVEL_TOL:
                at_rest = True
                break
    finally:
        model.dof_damping[:] = saved
    data.time = t0
    data.qvel[:] = 0.0
    mujoco.mj_forward(model, data)
    return at_rest


def equilibrium_tips(
    robot: RobotSpec, options: dict[str, Any], inputs: np.ndarray, data: Measurements
) -> tuple[np.ndarray, int]:
    """Tip (m, 3) [m] of the chain's static equilibrium for each row, warm-started in order."""
    model, site, body = compile_chain(robot, options)
    d = mujoco.MjData(model)
    tips = np.empty((data.n_samples, 3))
    failed = 0
    for i in range(data.n_samples):
        d.ctrl[:] = inputs[i]
        ok = settle_equilibrium(model, d, site, body, data.tip_force[i])
        tips[i] = d.site_xpos[site]
        if not ok or not np.all(np.isfinite(tips[i])):
            failed += 1
            mujoco.mj_resetData(model, d)
    return tips, failed


def rollout_tips(
    robot: RobotSpec, options: dict[str, Any], inputs: np.ndarray, data: Measurements
) -> tuple[np.ndarray, int]:
    """Tip (m, 3) [m] along rollouts: each trajectory starts at the equilibrium of its first
    row's inputs; row k's inputs are held from the previous row's time to t_k, when the tip is
    sampled. Rows after a divergence are failed (NaN)."""
    assert data.time is not None and data.trajectory is not None
    model, site, body = compile_chain(robot, options)
    d = mujoco.MjData(model)
    dt = model.opt.timestep
    tips = np.full((data.n_samples, 3), np.nan)
    failed = 0
    for traj in dict.fromkeys(data.trajectory.tolist()):
        rows = np.flatnonzero(data.trajectory == traj)
        mujoco.mj_resetData(model, d)
        d.ctrl[:] = inputs[rows[0]]
        if not settle_equilibrium(model, d, site, body, data.tip_force[rows[0]]):
            failed += rows.size
            continue
        tips[rows[0]] = d.site_xpos[site]
        t_prev = data.time[rows[0]]
        for n_done, k in enumerate(rows[1:], start=1):
            n_steps = int(round((data.time[k] - t_prev) / dt))
            if n_steps < 0:
                raise ValueError(
                    f"measurements: time must increase within trajectory {traj} (row {k})"
                )
            t_prev = data.time[k]
            d.ctrl[:] = inputs[k]
            force = data.tip_force[k]
            for _ in range(n_steps):
                if np.any(force):
                    _apply_tip_force(model, d, site, body, force)
                mujoco.mj_step(model, d)
            mujoco.mj_kinematics(model, d)
            tips[k] = d.site_xpos[site]
            if not np.all(np.isfinite(d.qpos)):
                tips[rows[n_done:]] = np.nan
                failed += rows.size - n_done
                break
    return tips, failed
