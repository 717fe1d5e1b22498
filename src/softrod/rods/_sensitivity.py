"""Exact sensitivities of the shooting map (`shooting_eval`) and the tip Jacobian of a
converged result with respect to its tendon inputs (`tip_jacobian`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from softrod.description import RobotSpec
from softrod.rods._inputs import (
    StaticLoads,
    _magnetic,
    _problem,
    check_inputs,
    with_moment_inputs,
)
from softrod.rods._model import RodModel, as_model
from softrod.rods._result import StaticResult
from softrod.rods._shooting import _FINE_MODELS, grid_model
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
    moments: bool = False,
) -> np.ndarray:
    """Exact d tip_position / d inputs (3, n_t) at a converged shooting `result`.

    model : the model (or description) `result` was solved on; the loads come from
    `result.inputs`. The inputs differentiated are the tensions [m/N] or, under length control,
    the commanded lengths [m/m]. Uses the implicit function theorem on the shooting residual:
    dx/dinput = -J^-1 dr/dinput.
    pressures : also return the chamber columns d tip / d p (3, n_c) [m/Pa] after those of the
        tendons, (3, n_t + n_c) in all (`chamber_list()` order; docs/actuators.md).
    field : also differentiate with respect to the uniform field B: three more columns
        d tip / d B_j [m/T] after the tendons' (3, n_t + 3) (after the pressure columns when
        both are asked for). Exact (the torques' field directions are integrated with the
        sensitivities; tension or length control). With chambers on the robot or a field
        gradient (whose forces are held at the shape by a fixed point) they are
        Richardson-extrapolated central differences of warm-started `solve_static` solves
        (`_field_columns_by_differences`, ~1e-7 relative).
    moments : also return d tip / d moment-actuator inputs (3, n_moments) [m] last (after the
        pressure and field columns asked for; `moment_actuator_list()` order). The implicit
        function theorem is exact; the residual's and tip's partial derivatives in the inputs
        (a shift of the rest curvature) are Richardson-extrapolated central differences of one
        shot each (`_moment_columns`, ~1e-9 relative).
    """
    if not result.success:
        raise ValueError("tip_jacobian needs a converged result (result.success is False)")
    inp = result.inputs
    model = as_model(model, None, tuple(p[0] for p in inp.point_loads))
    # Moment actuators are the rest curvature of the model the result was solved on (the same
    # object solve_static used, so its refined grids are found below).
    model = with_moment_inputs(model, inp)
    if model.n_nodes != result.s.shape[0]:
        # A result the tip error estimate refined lives on a finer grid of this model.
        model = grid_model(model, result) or _chamber_grid_model(model, result) or model
    if model.n_nodes != result.s.shape[0]:
        raise ValueError(
            f"result has {result.s.shape[0]} nodes but the model has {model.n_nodes}: pass the "
            "model the result was solved on"
        )
    model = with_moment_inputs(model, inp)
    if moments:
        other = tip_jacobian(model, result, pressures=pressures, field=field)
        return np.hstack([other, _moment_columns(model, result)])
    if model.n_chambers:
        # Chambers are internal tendons: differentiate on the kernel model (`_chamber_columns`).
        tendon_cols, chamber_cols = _chamber_columns(model, result)
        cols = [tendon_cols, chamber_cols] if pressures else [tendon_cols]
        if field:
            cols.append(_field_columns_by_differences(model, result))
        return np.hstack(cols)
    if field:
        if model.is_magnetic and np.any(inp.field_gradient):
            field_cols = _field_columns_by_differences(model, result)
        else:
            field_cols = _field_columns(model, result)
        return np.concatenate([_tendon_columns(model, result), field_cols], 1)
    return _tendon_columns(model, result)


def _chamber_grid_model(model: RodModel, result: StaticResult) -> RodModel | None:
    """The robot model on the finer grid a chamber robot's solve refined to: solve_static
    refines the kernel model (`with_chambers`), so the finer grid is kept under that one."""
    if not model.n_chambers or model.n_internal_tendons:
        return None
    for (steps, extra), fine in _FINE_MODELS.get(model.with_chambers, {}).items():
        if fine.n_nodes == result.s.shape[0] and np.allclose(fine.node_s, result.s):
            return as_model(model, steps, extra)
    return None


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


#: Central-difference step of the moment columns, relative to the input that bends the segment
#: by `moment_scale`'s 1 rad over the robot: Richardson over h and 2h leaves O(h^4) ~ 1e-12 and
#: round-off ~1e-16 / h ~ 1e-12 (the shots' section Newton converges to ~1e-16).
_MOMENT_FD_STEP = 1e-4


def _moment_columns(model: RodModel, result: StaticResult) -> np.ndarray:
    """d tip / d moment-actuator inputs (3, n_moments) [m] at a converged result.

    A moment input is a shift of the segment's rest curvature (`RodModel.with_moments`). One
    shot of the kernel model (chambers as internal tendons, tension control at the result's
    tensions) gives the exact d(M(L), tip, l)/d(M0, tensions); the same shot's partials in each
    moment input (unknowns fixed) are central differences, Richardson-extrapolated. The
    implicit function theorem on the shooting residual (with the length-law rows under length
    control) then gives dx = -A^-1 B, as in `_chamber_columns`."""
    inp = result.inputs
    acts = model.spec.moment_actuator_list()
    if not acts:
        return np.zeros((3, 0))
    if model.is_magnetic and np.any(inp.field_gradient):
        raise ValueError(
            "tip_jacobian moment columns are not available with a field_gradient (its forces "
            "are held at the shape); solve without field_gradient"
        )
    n_t, m_scale, t_scale = model.n_tendons, model.moment_scale, model.tension_scale
    tau0 = inp.moments if inp.moments is not None else np.zeros(len(acts))
    kinp = chamber_kernel_loads(model, inp, result.tendon_tension)
    length_mode = inp.lengths is not None

    def shot(moments: np.ndarray) -> ShootingEval:
        return _shooting_eval(model.with_moments(moments).with_chambers, kinp, result.base_moment)

    def rows(ev: ShootingEval) -> tuple[np.ndarray, np.ndarray]:
        """(scaled residual rows (3 [+ n_t]) at the fixed unknowns, tip (3,)) of a shot; the
        length-law rows' tau part does not move with the input (active set of the result)."""
        r = ev.residual[:3]
        if length_mode:
            r = np.concatenate([r, -D * ev.tendon_length[:n_t] / t_scale])
        return r, ev.tip_position

    base = shot(tau0)
    dM_dt, dl_dt = base.d_moment_d_tension, base.d_length_d_tension
    D = np.zeros(n_t)
    if not length_mode:
        A = base.d_moment_d_M0 / m_scale
        tip_x = base.d_tip_d_M0
    else:
        D = model.tendon_k * ((base.tendon_length[:n_t] - inp.lengths) > 0)
        A = np.block(
            [
                [base.d_moment_d_M0 / m_scale, dM_dt[:, :n_t] / m_scale],
                [
                    -D[:, None] * base.d_length_d_M0[:n_t] / t_scale,
                    (np.eye(n_t) - D[:, None] * dl_dt[:n_t, :n_t]) / t_scale,
                ],
            ]
        )
        tip_x = np.hstack([base.d_tip_d_M0, base.d_tip_d_tension[:, :n_t]])
    n_a = len(acts)
    B = np.empty((A.shape[0], n_a))
    direct = np.empty((3, n_a))
    for k, (j, act) in enumerate(acts):
        # Step: a fraction of the input that turns the robot by 1 rad over its length.
        h = _MOMENT_FD_STEP / (
            model.total_length * float(np.max(np.abs(np.asarray(act.moment) / model.K_bt[j])))
        )

        def diff(step: float, k: int = k) -> tuple[np.ndarray, np.ndarray]:
            e = np.zeros(n_a)
            e[k] = step
            rp, tp = rows(shot(tau0 + e))
            rm, tm = rows(shot(tau0 - e))
            return (rp - rm) / (2 * step), (tp - tm) / (2 * step)

        r1, t1 = diff(h)
        r2, t2 = diff(2 * h)
        B[:, k] = (4 * r1 - r2) / 3
        direct[:, k] = (4 * t1 - t2) / 3
    dx = -np.linalg.solve(A, B)
    return tip_x @ dx + direct


#: Field step of `_field_columns_by_differences`, relative to |B| (or to 1 mT at B = 0).
_FIELD_FD_STEP = 1e-3


def _field_columns_by_differences(model: RodModel, result: StaticResult) -> np.ndarray:
    """d tip / d B (3, 3) [m/T] by central differences of warm-started solves at B +- h e_j
    (Richardson over h and 2h: O(h^4)), each solved to rtol 1e-12 (and, with a gradient, its
    fixed point to 1e-12 L): the error is ~1e-12 L / h, about 1e-7 relative. Used where the
    sensitivity shot cannot carry the field directions: chambers (internal tendons of another
    kernel model, possibly under length control) and a field gradient (forces held at the
    shape by `_static`'s fixed point)."""
    from softrod.rods._static import solve_static  # _static imports this module

    inp = result.inputs
    B = inp.field
    h = _FIELD_FD_STEP * (float(np.linalg.norm(B)) or 1e-3)
    kw: dict[str, Any] = {
        "tip_force": inp.tip_force, "tip_moment": inp.tip_moment,
        "distributed_force": inp.distributed_force, "gravity": inp.gravity,
        "point_loads": [(s, f, m) for s, f, m in inp.point_loads] or None,
        "pressures": inp.pressures, "field_gradient": inp.field_gradient,
        "moments": inp.moments, "guess": result, "rtol": 1e-12, "check_stability": False,
    }  # fmt: skip
    if inp.lengths is not None:
        kw["lengths"] = inp.lengths
    else:
        kw["tensions"] = inp.tensions

    def tip(field: np.ndarray) -> np.ndarray:
        sol = solve_static(model, field=field, **kw)
        if not sol.success:
            raise ValueError(f"tip_jacobian field columns: a solve near B failed: {sol.message}")
        return sol.tip_position

    out = np.empty((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        d1 = (tip(B + e) - tip(B - e)) / (2 * h)
        d2 = (tip(B + 2 * e) - tip(B - 2 * e)) / (4 * h)
        out[:, j] = (4 * d1 - d2) / 3
    return out


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
