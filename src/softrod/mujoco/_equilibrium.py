"""Static equilibrium of a MuJoCo model: Newton on MuJoCo's own forces, and dynamic settling.

At zero velocity the generalized force on the model is

    r(q) = qfrc_passive + qfrc_actuator - qfrc_bias + qfrc_applied + sum_loads (Jp^T F + Jr^T M)

(springs, gravity, actuators incl. tendons, plus body point loads that move with the body).
Contacts and joint limits are not part of r: use `settle` for equilibria in contact.
`static_equilibrium` drives r to zero by damped Newton with a finite-difference Jacobian of
MuJoCo's forward pass, and load continuation when a full step fails. `settle` is the
ALGORITHMS.md §C.3 procedure: integrate with heavy temporary damping until the velocity dies out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from softrod.mujoco._blas import single_thread_blas

__all__ = [
    "PointLoad",
    "EquilibriumResult",
    "apply_loads",
    "residual",
    "settle",
    "static_equilibrium",
]

#: Finite-difference step for the Jacobian [rad or m]; the Jacobian only steers Newton, the
#: converged residual is exact, so a plain forward difference is enough.
FD_STEP = 1e-7
_SPRING_JOINTS = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
#: Default convergence: largest Newton step below this [rad] (tip errors of interest are
#: 1e-4 of the length and up, so 1e-10 rad per joint is far below anything measured).
STEP_TOL = 1e-10


@dataclass(frozen=True)
class PointLoad:
    """A world-frame force [N] and moment [N m] at a point fixed on a body (body-local [m])."""

    body: int
    point: np.ndarray
    force: np.ndarray
    moment: np.ndarray


@dataclass(frozen=True)
class EquilibriumResult:
    """Outcome of `static_equilibrium`: qpos (nq,), residual norm [N m], Newton iterations;
    jacobian (nv, nv): the residual's last Jacobian (a warm start for a nearby solve's
    `jacobian0`; None when it failed)."""

    success: bool
    message: str
    qpos: np.ndarray
    residual: float
    nit: int
    load_scale: float
    jacobian: np.ndarray | None = None


def residual(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    loads: Sequence[PointLoad] = (),
    scale: float = 1.0,
) -> np.ndarray:
    """Generalized force (nv,) at data.qpos with zero velocity; loads multiplied by `scale`.

    Gravity and actuator controls enter through `scale` too only via `loads`; model gravity and
    data.ctrl are used as they are.
    """
    data.qvel[:] = 0.0
    # The force pipeline without the mass matrix (O(nv^3) for a chain) or the constraint solver.
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    mujoco.mj_tendon(model, data)
    mujoco.mj_transmission(model, data)
    mujoco.mj_fwdVelocity(model, data)
    mujoco.mj_fwdActuation(model, data)
    r = data.qfrc_passive + data.qfrc_actuator - data.qfrc_bias + data.qfrc_applied
    if loads:
        jacp = np.zeros((3, model.nv))
        jacr = np.zeros((3, model.nv))
        for ld in loads:
            point = data.xpos[ld.body] + data.xmat[ld.body].reshape(3, 3) @ ld.point
            mujoco.mj_jac(model, data, jacp, jacr, point, ld.body)
            r = r + scale * (jacp.T @ ld.force + jacr.T @ ld.moment)
    return r


def _jacobian(model, data, loads, scale, q, r0) -> np.ndarray:
    nv = model.nv
    J = np.empty((nv, nv))
    dq = np.zeros(nv)
    for j in range(nv):
        dq[j] = FD_STEP
        data.qpos[:] = q
        mujoco.mj_integratePos(model, data.qpos, dq, 1.0)
        J[:, j] = (residual(model, data, loads, scale) - r0) / FD_STEP
        dq[j] = 0.0
    return J


def _newton(model, data, loads, scale, q, max_iter, step_tol, J=None):
    """Damped Newton from q; returns (q, |r|, iterations, converged, last Jacobian).

    Without J every iteration builds the finite-difference Jacobian. A given J (a nearby
    solve's, e.g. the previous slider position's) is reused with Broyden updates, and rebuilt
    by finite differences only when a step fails to halve |r|: a dragged input then costs a few
    residuals instead of nv per iteration.
    """
    reuse = J is not None
    fresh = J is None
    data.qpos[:] = q
    r = residual(model, data, loads, scale)
    for it in range(1, max_iter + 1):
        if J is None:
            J, fresh = _jacobian(model, data, loads, scale, q, r), True
        try:
            dq = -np.linalg.solve(J, r)
        except np.linalg.LinAlgError:
            if fresh:
                return q, float(np.linalg.norm(r)), it, False, None
            J = None
            continue
        norm0 = np.linalg.norm(r)
        alpha = 1.0
        while True:
            data.qpos[:] = q
            mujoco.mj_integratePos(model, data.qpos, dq, alpha)
            r_new = residual(model, data, loads, scale)
            if np.linalg.norm(r_new) < norm0 or alpha < 1e-4:
                break
            alpha *= 0.5
        step, was_fresh = alpha * dq, fresh
        if reuse and not fresh and not np.linalg.norm(r_new) < 0.5 * norm0:
            # A reused Jacobian that no longer halves |r|: rebuild it (keep q if |r| grew).
            J = None
            if not np.linalg.norm(r_new) < norm0:
                continue
        elif reuse and np.any(step):
            # Broyden's update keeps the reused Jacobian consistent with the step just taken.
            J = J + np.outer(r_new - r - J @ step, step) / (step @ step)
            fresh = False
        q = data.qpos.copy()
        r = r_new
        # A reused Jacobian's tiny step counts only when it was a full one (a cut-back step
        # of a poor Jacobian can be tiny far from the solution).
        if np.max(np.abs(step)) < step_tol and (was_fresh or alpha == 1.0):
            return q, float(np.linalg.norm(r)), it, True, J
        if alpha < 1e-4 and was_fresh:
            return q, float(np.linalg.norm(r)), it, False, J
        if not reuse:
            J = None
    return q, float(np.linalg.norm(r)), max_iter, False, J


def static_equilibrium(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    loads: Sequence[PointLoad] = (),
    *,
    qpos0: np.ndarray | None = None,
    max_iter: int = 30,
    step_tol: float = STEP_TOL,
    max_halvings: int = 6,
    jacobian0: np.ndarray | None = None,
) -> EquilibriumResult:
    """Equilibrium configuration under model gravity, data.ctrl and point `loads`.

    Starts from `qpos0` (default model.qpos0). When Newton fails at the full load it restarts
    with load continuation: the point loads are ramped in steps, halved on failure up to
    `max_halvings` times. data.qpos holds the result on return. `jacobian0` (nv, nv): the
    residual's Jacobian of a nearby equilibrium (a previous result's `jacobian`), reused with
    Broyden updates instead of nv finite-difference residuals per iteration (interactive drags).
    """
    with single_thread_blas():
        return _static_equilibrium(
            model, data, loads, qpos0, max_iter, step_tol, max_halvings, jacobian0
        )


def _static_equilibrium(model, data, loads, qpos0, max_iter, step_tol, max_halvings, jacobian0):
    q = (model.qpos0 if qpos0 is None else np.asarray(qpos0, dtype=float)).copy()
    q_try, res, nit, ok, J = _newton(model, data, loads, 1.0, q, max_iter, step_tol, jacobian0)
    total = nit
    if ok or not loads:
        data.qpos[:] = q_try
        mujoco.mj_forward(model, data)
        msg = "converged" if ok else "Newton did not converge"
        return EquilibriumResult(ok, msg, q_try, res, total, 1.0, J if ok else None)
    # Load continuation from the unloaded equilibrium.
    q, res, nit, ok, J = _newton(model, data, loads, 0.0, q, max_iter, step_tol)
    total += nit
    scale, step, halvings = 0.0, 0.25, 0
    while ok and scale < 1.0:
        target = min(1.0, scale + step)
        q_new, res, nit, ok_step, J_new = _newton(model, data, loads, target, q, max_iter, step_tol)
        total += nit
        if ok_step:
            q, scale, J = q_new, target, J_new
        else:
            halvings += 1
            step /= 2
            if halvings > max_halvings:
                ok = False
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    msg = (
        "converged with load continuation"
        if ok
        else (f"load continuation stalled at {scale:.3g} of the load")
    )
    ok = ok and scale >= 1.0
    return EquilibriumResult(ok, msg, q, res, total, scale, J if ok else None)


def apply_loads(model: mujoco.MjModel, data: mujoco.MjData, loads: Sequence[PointLoad]) -> None:
    """Write point loads into data.xfrc_applied (force at the COM plus the transferred moment),
    using the current kinematics. Bodies without loads are left as they are."""
    for ld in loads:
        point = data.xpos[ld.body] + data.xmat[ld.body].reshape(3, 3) @ ld.point
        arm = point - data.xipos[ld.body]
        data.xfrc_applied[ld.body, :3] += ld.force
        data.xfrc_applied[ld.body, 3:] += ld.moment + np.cross(arm, ld.force)


def settle(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    loads: Sequence[PointLoad] = (),
    *,
    damping_time: float = 0.05,
    qvel_tol: float = 1e-6,
    max_time: float = 20.0,
    before_step: Callable[[mujoco.MjModel, mujoco.MjData], None] | None = None,
) -> float:
    """Integrate with heavy temporary damping until max |qvel| < qvel_tol [rad/s or m/s].

    Every spring joint gets extra damping `damping_time` [s] x its stiffness (0.05 s makes the
    first mode of the seed-002 rods about critically damped). `loads` are re-applied through
    data.xfrc_applied before every step (they follow their bodies). Restores the damping and
    clears the loaded bodies' xfrc_applied; returns the simulated time [s]. `before_step`
    (e.g. `MagneticField.apply`) is called right before every step.
    """
    saved = model.dof_damping.copy()
    stiff = np.zeros(model.nv)
    for j in range(model.njnt):
        if int(model.jnt_type[j]) in _SPRING_JOINTS:
            stiff[model.jnt_dofadr[j]] = model.jnt_stiffness[j]
    model.dof_damping[:] = saved + damping_time * stiff
    t0 = data.time
    try:
        loaded = sorted({ld.body for ld in loads})
        while data.time - t0 < max_time:
            if loads:
                # Kinematics of the current qpos (mj_step leaves those of the previous one).
                mujoco.mj_kinematics(model, data)
                data.xfrc_applied[loaded] = 0.0
                apply_loads(model, data, loads)
            if before_step is not None:
                before_step(model, data)
            mujoco.mj_step(model, data)
            if np.max(np.abs(data.qvel)) < qvel_tol and data.time - t0 > 10 * model.opt.timestep:
                break
    finally:
        model.dof_damping[:] = saved
        for ld in loads:
            data.xfrc_applied[ld.body] = 0.0
    mujoco.mj_forward(model, data)
    return float(data.time - t0)
