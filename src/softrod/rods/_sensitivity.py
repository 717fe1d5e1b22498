"""Exact sensitivities of the shooting map (`shooting_eval`) and the tip Jacobian of a
converged result with respect to its tendon inputs (`tip_jacobian`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from softrod.description import RobotSpec
from softrod.rods._inputs import StaticLoads, _magnetic, _problem, check_inputs
from softrod.rods._model import RodModel, as_model
from softrod.rods._result import StaticResult
from softrod.rods._shooting import grid_model
from softrod.rods._static_kernels import _evaluate

__all__ = ["ShootingEval", "shooting_eval", "tip_jacobian"]


@dataclass(frozen=True)
class ShootingEval:
    """One integration from given shooting unknowns, with exact sensitivities.

    x : (n,) unknowns (M0 (3) [N m], then tensions under length control [N]).
    residual : (n,) scaled boundary residual; jacobian : (n, n) d residual / d x.
    tip_position : (3,) [m]; tip_rotation : (3, 3); tendon_length : (n_t,) [m].
    d_tip_d_M0 : (3, 3); d_tip_d_tension : (3, n_t); d_tip_rot_d_M0 : (3, 3, 3) last axis
    the direction; d_residual_d_tension : (n, n_t) (tension rows excluded under length control
    where tensions are unknowns); d_length_d_M0 : (n_t, 3); d_length_d_tension : (n_t, n_t).
    """

    x: np.ndarray
    residual: np.ndarray
    jacobian: np.ndarray
    tip_position: np.ndarray
    tip_rotation: np.ndarray
    tendon_length: np.ndarray
    d_tip_d_M0: np.ndarray
    d_tip_d_tension: np.ndarray
    d_moment_d_M0: np.ndarray
    d_moment_d_tension: np.ndarray
    d_length_d_M0: np.ndarray
    d_length_d_tension: np.ndarray


def shooting_eval(
    robot: RodModel | RobotSpec,
    x: Sequence[float] | np.ndarray,
    tensions: Any = None,
    *,
    lengths: Any = None,
    tip_force: Any = None,
    tip_moment: Any = None,
    distributed_force: Any = None,
    gravity: Any = None,
    point_loads: Any = None,
    steps: int | None = None,
) -> ShootingEval:
    """Integrate once from shooting unknowns x and return the residual with exact derivatives.

    x = (M0 (3) [N m], then tensions (n_t) [N] under length control). The residual rows are
    (M(L) - M_tip) / moment_scale and, under length control,
    (tau_j - k_j max(0, l_j - L_cmd_j)) / tension_scale. This is the building block of the
    shooting and observer methods and of analytic input Jacobians.
    """
    inp_nodes = tuple(float(p[0]) for p in point_loads) if point_loads else ()
    model = as_model(robot, steps, inp_nodes)
    inp = check_inputs(
        model, tensions, lengths, tip_force, tip_moment, distributed_force, gravity, point_loads
    )
    return _shooting_eval(model, inp, x)


def _shooting_eval(
    model: RodModel, inp: StaticLoads, x: Sequence[float] | np.ndarray
) -> ShootingEval:
    """`shooting_eval` on a model and checked loads (point-load nodes already on its grid)."""
    n_t = model.n_tendons
    length_mode = inp.lengths is not None
    x = np.asarray(x, dtype=float).copy()
    n_unk = 3 + (n_t if length_mode else 0)
    if x.shape != (n_unk,):
        raise ValueError(f"x must have {n_unk} values, got {x.shape[0]}")
    pb = _problem(model, inp)
    loads = pb.loads
    tau = x[3:] if length_mode else pb.tau_fixed
    L_cmd, k_t, m_scale, t_scale = pb.bc[1], pb.bc[2], pb.bc[3], pb.bc[4]
    ny = 15 + n_t
    n_dir = 3 + n_t
    Y = np.empty((model.n_nodes, ny))
    X = np.empty((model.n_nodes, 6))
    z = np.empty(ny * (1 + n_dir))
    if not _evaluate(
        x[:3], np.ascontiguousarray(tau), n_dir, pb.base, pb.geo, pb.ld, False, Y, X, z
    ):
        raise ValueError("integration failed at the given x (non-finite state)")
    S = z[ny:].reshape(n_dir, ny)  # S[d] = d y(L) / d direction d
    r = np.empty(n_unk)
    J = np.empty((n_unk, n_unk))
    r[:3] = (z[12:15] - loads.tip_moment) / m_scale
    J[:3, :] = S[:n_unk, 12:15].T / m_scale
    if length_mode:
        stretch = z[15 : 15 + n_t] - L_cmd
        active = stretch > 0
        r[3:] = (tau - k_t * np.where(active, stretch, 0.0)) / t_scale
        J[3:, :] = -(k_t * active)[:, None] * S[:n_unk, 15 : 15 + n_t].T / t_scale
        J[3:, 3:] += np.eye(n_t) / t_scale
    return ShootingEval(
        x=x,
        residual=r,
        jacobian=J,
        tip_position=z[0:3].copy(),
        tip_rotation=z[3:12].reshape(3, 3).copy(),
        tendon_length=z[15 : 15 + n_t].copy(),
        d_tip_d_M0=S[:3, 0:3].T.copy(),
        d_tip_d_tension=S[3:, 0:3].T.copy(),
        d_moment_d_M0=S[:3, 12:15].T.copy(),
        d_moment_d_tension=S[3:, 12:15].T.copy(),
        d_length_d_M0=S[:3, 15 : 15 + n_t].T.copy(),
        d_length_d_tension=S[3:, 15 : 15 + n_t].T.copy(),
    )


def tip_jacobian(
    model: RodModel | RobotSpec,
    result: StaticResult,
    *,
    pressures: bool = False,
    field: bool = False,
) -> np.ndarray:
    """Exact d tip_position / d inputs (3, n_t) at a converged shooting `result`.

    model : the model (or description) `result` was solved on; the loads come from
    `result.inputs`. The inputs differentiated are the tensions [m/N] or, under length control,
    the commanded lengths [m/m]. Uses the implicit function theorem on the shooting residual:
    dx/dinput = -J^-1 dr/dinput.
    pressures : also return the chamber columns d tip / d p (3, n_c) [m/Pa] after those of the
        tendons, (3, n_t + n_c) in all (`chamber_list()` order; docs/actuators.md).
    field : also differentiate with respect to the uniform field B: three more columns
        d tip / d B_j [m/T] after the tendons' (3, n_t + 3). Exact (the torques' field
        directions are integrated with the sensitivities; tension or length control); not with
        a field gradient, whose forces are held at the shape (ValueError).
    """
    if not result.success:
        raise ValueError("tip_jacobian needs a converged result (result.success is False)")
    inp = result.inputs
    model = as_model(model, None, tuple(p[0] for p in inp.point_loads))
    if model.n_nodes != result.s.shape[0]:
        # A result the tip error estimate refined lives on a finer grid of this model.
        model = grid_model(model, result) or model
    if model.n_nodes != result.s.shape[0]:
        raise ValueError(
            f"result has {result.s.shape[0]} nodes but the model has {model.n_nodes}: pass the "
            "model the result was solved on"
        )
    if model.n_chambers:
        if field:
            raise ValueError(
                "tip_jacobian field columns of a robot with chambers are not available yet"
            )
        # Chambers are internal tendons: differentiate on the kernel model (`_chamber_columns`).
        tendon_cols, chamber_cols = _chamber_columns(model, result)
        return np.hstack([tendon_cols, chamber_cols]) if pressures else tendon_cols
    if field:
        return np.concatenate([_tendon_columns(model, result), _field_columns(model, result)], 1)
    return _tendon_columns(model, result)


def _tendon_columns(model: RodModel, result: StaticResult) -> np.ndarray:
    """d tip / d tensions or commanded lengths (3, n_t) (`tip_jacobian`)."""
    inp = result.inputs
    if inp.lengths is None:
        ev = _shooting_eval(model, inp, result.base_moment)
        # r(M0, tau) = (M(L) - M_tip)/m: dM0/dtau = -(dM/dM0)^-1 dM/dtau
        dM0 = -np.linalg.solve(ev.d_moment_d_M0, ev.d_moment_d_tension)
        return ev.d_tip_d_M0 @ dM0 + ev.d_tip_d_tension
    x = np.concatenate([result.base_moment, result.tendon_tension])
    ev = _shooting_eval(model, inp, x)
    n_t = model.n_tendons
    t_scale = model.tension_scale
    k_t = model.tendon_k
    L_cmd = inp.lengths
    active = (ev.tendon_length - L_cmd) > 0
    dr_dL = np.zeros((3 + n_t, n_t))
    dr_dL[3:, :] = np.diag(k_t * active) / t_scale
    dx = -np.linalg.solve(ev.jacobian, dr_dL)
    return ev.d_tip_d_M0 @ dx[:3] + ev.d_tip_d_tension @ dx[3:]


def chamber_force_slopes(model: RodModel, pressures: np.ndarray) -> np.ndarray:
    """d (p A_eff(p)) / dp (n_c,) [m^2] of each chamber at gauge pressures (n_c,) [Pa]."""
    out = np.empty(model.n_chambers)
    for k, ((_, c), p) in enumerate(zip(model.spec.chamber_list(), pressures, strict=True)):
        # p A (1 + sum c_i p^i) differentiated term by term.
        out[k] = c.area * (
            1.0 + sum((i + 2) * ci * p ** (i + 1) for i, ci in enumerate(c.area_polynomial))
        )
    return out


def chamber_kernel_loads(model: RodModel, inp: StaticLoads, tensions: np.ndarray) -> StaticLoads:
    """The tension-control loads of `model.with_chambers` at the robot's tendon tensions
    (n_t,) [N] and `inp.pressures`: the real tensions, then the internal chamber tensions."""
    p = np.zeros(model.n_chambers) if inp.pressures is None else inp.pressures
    internal = model.chamber_map @ model.chamber_forces(p)
    return dataclasses.replace(
        inp, tensions=np.concatenate([tensions, internal]), lengths=None, pressures=None
    )


def _chamber_columns(model: RodModel, result: StaticResult) -> tuple[np.ndarray, np.ndarray]:
    """(d tip / d tendon inputs (3, n_t), d tip / d pressures (3, n_c)) of a robot with chambers.

    One integration of `model.with_chambers` in tension control at the result's tensions gives
    d(M(L), tip, l)/d(M0, every kernel tension). Unknowns x = M0 (and the robot's tensions under
    length control, rows tau - k max(0, l - L_cmd)); the pressures enter through the internal
    tensions chamber_map @ p A_eff(p), so their columns chain d/d tau_internal with
    chamber_map diag(d (p A_eff) / dp). Implicit function theorem: dx = -A^-1 B."""
    inp = result.inputs
    n_t, m_scale, t_scale = model.n_tendons, model.moment_scale, model.tension_scale
    p = np.zeros(model.n_chambers) if inp.pressures is None else inp.pressures
    ev = _shooting_eval(
        model.with_chambers,
        chamber_kernel_loads(model, inp, result.tendon_tension),
        result.base_moment,
    )
    dp = model.chamber_map * chamber_force_slopes(model, p)[None, :]  # d tau_internal / dp
    dM_dt, dl_dt, dtip_dt = ev.d_moment_d_tension, ev.d_length_d_tension, ev.d_tip_d_tension
    # Moment rows, scaled like the shooting residual.
    A_M = [ev.d_moment_d_M0 / m_scale]
    B_p = [dM_dt[:, n_t:] @ dp / m_scale]
    tip_x = [ev.d_tip_d_M0]
    if inp.lengths is None:
        B_in = dM_dt[:, :n_t] / m_scale
        A = A_M[0]
        direct_in = dtip_dt[:, :n_t]
    else:
        # Length-law rows: tau - k max(0, l - L_cmd), differentiated on the active tendons.
        D = model.tendon_k * ((ev.tendon_length[:n_t] - inp.lengths) > 0)
        A = np.block(
            [
                [A_M[0], dM_dt[:, :n_t] / m_scale],
                [
                    -D[:, None] * ev.d_length_d_M0[:n_t] / t_scale,
                    (np.eye(n_t) - D[:, None] * dl_dt[:n_t, :n_t]) / t_scale,
                ],
            ]
        )
        B_in = np.vstack([np.zeros((3, n_t)), np.diag(D) / t_scale])
        B_p.append(-D[:, None] * dl_dt[:n_t, n_t:] @ dp / t_scale)
        tip_x.append(dtip_dt[:, :n_t])
        direct_in = np.zeros((3, n_t))
    dx = -np.linalg.solve(A, np.hstack([B_in, np.vstack(B_p)]))
    cols = np.hstack(tip_x) @ dx
    return cols[:, :n_t] + direct_in, cols[:, n_t:] + dtip_dt[:, n_t:] @ dp


def _field_columns(model: RodModel, result: StaticResult) -> np.ndarray:
    """d tip / d B (3, 3) [m/T] at a converged result: three field sensitivity directions
    after M0 and the tensions (`_static_kernels._integrate`), through the implicit function
    theorem on the shooting residual (tension rows too under length control)."""
    inp = result.inputs
    if model.is_magnetic and np.any(inp.field_gradient):
        raise ValueError(
            "tip_jacobian field columns are not exact with a field_gradient (its forces are "
            "held at the shape); solve without field_gradient"
        )
    n_t = model.n_tendons
    length_mode = inp.lengths is not None
    pb = _problem(model, inp, result.load_scale)
    ld = pb.ld[:4] + (_magnetic(model, inp, result.load_scale, 3 + n_t),)
    ny = 15 + n_t
    n_dir = 3 + n_t + 3
    Y = np.empty((model.n_nodes, ny))
    X = np.empty((model.n_nodes, 6))
    z = np.empty(ny * (1 + n_dir))
    tau = np.ascontiguousarray(result.tendon_tension if length_mode else pb.tau_fixed)
    if not _evaluate(result.base_moment, tau, n_dir, pb.base, pb.geo, ld, False, Y, X, z):
        raise ValueError("integration failed at the result's base moment (non-finite state)")
    S = z[ny:].reshape(n_dir, ny)  # S[d] = d y(L) / d direction d
    n = 3 + (n_t if length_mode else 0)
    field_dirs = slice(3 + n_t, n_dir)
    # Residual rows r = (M(L) - M_tip, [tau - k max(0, l - L_cmd)]): J dx/dB = -dr/dB.
    J = np.zeros((n, n))
    dr = np.zeros((n, 3))
    J[:3] = S[:n, 12:15].T
    dr[:3] = S[field_dirs, 12:15].T
    if length_mode:
        active = (z[15 : 15 + n_t] - pb.bc[1]) > 0
        k_act = (model.tendon_k * active)[:, None]
        J[3:] = -k_act * S[:n, 15 : 15 + n_t].T
        J[3:, 3:] += np.eye(n_t)
        dr[3:] = -k_act * S[field_dirs, 15 : 15 + n_t].T
    dx = -np.linalg.solve(J, dr)
    return S[:n, 0:3].T @ dx + S[field_dirs, 0:3].T
