"""Inputs of `simulate_dynamic`: the loads (`DynamicLoads`) and the initial state.

`DynamicLoads` is what a user writes (constants or callables of time, SI); `_resolve` checks it
against an `LGVIModel` and tabulates it for the kernels (`_RunInputs`); `_start_state` turns
`initial` (rest, a static solution or an earlier run) into the integrator state.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from softrod.description import check_actuation
from softrod.dynamics._loads import FieldLike, MagneticField
from softrod.dynamics._model import LGVIModel, _rest_curve, cay, cayinv
from softrod.dynamics._result import DynamicResult, DynamicState
from softrod.rods import RodModel, StaticResult
from softrod.rods.so3 import quat_to_matrix

__all__ = ["DynamicLoads", "LoadLike"]

#: A load that is constant (array-like) or a callable of time t [s].
LoadLike = Sequence[float] | np.ndarray | Callable[[float], Any]


def _vec(name: str, value: Any, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be {n} finite numbers, got {value!r}")
    return arr


class _Input:
    """A load that is constant or a callable of time; `series` tabulates it per step."""

    def __init__(self, name: str, value: Any, n: int, check: Callable | None = None):
        self.name = name
        self.n = n
        self.check = check
        self.const: np.ndarray | None
        if value is None:
            self.func = None
            self.const = np.zeros(n)
        elif callable(value):
            self.func = value
            self.const = None
        else:
            self.func = None
            self.const = self._validate(value)

    def _validate(self, value: Any) -> np.ndarray:
        arr = _vec(self.name, value, self.n)
        if self.check is not None:
            self.check(arr)
        return arr

    @property
    def varies(self) -> bool:
        return self.func is not None

    def at(self, t: float) -> np.ndarray:
        if self.func is None:
            assert self.const is not None
            return self.const
        return self._validate(self.func(t))

    def series(self, t: np.ndarray) -> np.ndarray:
        if self.func is None:
            assert self.const is not None
            return np.ascontiguousarray(self.const[None, :])
        return np.ascontiguousarray(np.array([self.at(float(tk)) for tk in t]).reshape(-1, self.n))


class _FieldInput:
    def __init__(self, value: FieldLike | None):
        self.field = value
        if value is not None and not (isinstance(value, MagneticField) or callable(value)):
            raise ValueError(
                f"field must be a MagneticField or a callable t -> B [T], got {type(value)}"
            )

    @property
    def varies(self) -> bool:
        f = self.field
        return f is not None and (not isinstance(f, MagneticField) or f.time_varying)

    def series(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = self.field
        if f is None:
            return np.zeros((1, 3)), np.zeros((1, 3, 3))
        if isinstance(f, MagneticField):
            if not f.time_varying:
                t = t[:1]
            return f.series(t)
        B = np.zeros((t.shape[0], 3))
        G = np.zeros((t.shape[0], 3, 3))
        for k, tk in enumerate(t):
            out = f(float(tk))
            if isinstance(out, tuple):
                B[k] = _vec("field(t)[0]", out[0], 3)
                G[k] = np.asarray(out[1], dtype=float).reshape(3, 3)
            else:
                B[k] = _vec("field(t)", out, 3)
        return B, G


class _BaseInput:
    """Base pose: fixed (the robot's) or a callable t -> (position (3,), rotation (3, 3) or
    quaternion wxyz (4,))."""

    def __init__(self, rod: RodModel, motion: Callable | None):
        self.rod = rod
        self.motion = motion
        if motion is not None and not callable(motion):
            raise ValueError("base_motion must be a callable t -> (position, rotation)")

    @property
    def varies(self) -> bool:
        return self.motion is not None

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        if self.motion is None:
            return self.rod.base_position, self.rod.base_rotation
        pos, rot = self.motion(t)
        pos = _vec("base_motion(t)[0]", pos, 3)
        rot = np.asarray(rot, dtype=float)
        if rot.shape == (4,):
            rot = quat_to_matrix(rot)
        if rot.shape != (3, 3) or not np.allclose(rot.T @ rot, np.eye(3), atol=1e-6):
            raise ValueError("base_motion(t)[1] must be a rotation matrix or a quaternion wxyz")
        return pos, rot

    def series(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.motion is None:
            return (
                np.ascontiguousarray(self.rod.base_position[None]),
                np.ascontiguousarray(self.rod.base_rotation[None]),
            )
        P = np.empty((t.shape[0], 3))
        R = np.empty((t.shape[0], 3, 3))
        for k, tk in enumerate(t):
            P[k], R[k] = self.at(float(tk))
        return P, R


def _nonneg_tension(arr: np.ndarray) -> None:
    neg = np.flatnonzero(arr < 0)
    if neg.size:
        raise ValueError(f"tensions[{neg[0]}] must be >= 0 (tendons only pull), got {arr[neg[0]]}")


def _node_damping(name: str, value: Any, model: LGVIModel, weight: np.ndarray) -> np.ndarray:
    """Per-node damping (n, 3): a scalar is per unit length (times the lumped length)."""
    n = model.n_nodes
    if value is None:
        return np.zeros((n, 3))
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        out = float(arr) * np.repeat(weight[:, None], 3, axis=1)
    elif arr.shape == (n,):
        out = np.repeat(arr[:, None], 3, axis=1)
    elif arr.shape == (n, 3):
        out = arr.copy()
    else:
        raise ValueError(
            f"{name} must be a scalar (per unit length) or per node ({n},) or ({n}, 3), "
            f"got shape {arr.shape}"
        )
    if not np.all(np.isfinite(out)) or np.any(out < 0):
        raise ValueError(f"{name} must be finite and >= 0")
    return np.ascontiguousarray(out)


def _load(name: str, value: Any) -> Any:
    """A (3,) load: None, a callable of t, or checked into an array."""
    if value is None or callable(value):
        return value
    return _vec(name, value, 3)


def _damping_value(name: str, value: Any) -> Any:
    """None, or a float / array of finite coefficients >= 0 (its shape is checked per model)."""
    if value is None:
        return None
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and >= 0")
    return float(arr) if arr.ndim == 0 else arr.copy()


@dataclass(frozen=True, eq=False)
class DynamicLoads:
    """Loads and inputs of a dynamic run (SI, world frame); the model (`build_lgvi_model`)
    holds the discretisation and the magnets, `simulate_dynamic(initial=...)` the start.

    Each of tensions, tip_force, tip_moment and distributed_force is constant or a callable
    of time t [s] (tabulated per step); None is zero.

    tensions : (n_t,) tendon tensions [N] >= 0 (same tendon model as `solve_static`: straight,
        frictionless, anchored at its segment's end), or a callable t -> (n_t,).
    tip_force, tip_moment : (3,) load at the tip [N], [N m], or callables of t.
    distributed_force : (3,) uniform load per unit length [N/m] or a callable.
    gravity : (3,) [m/s^2]; weighs backbone, disks and magnets.
    field : `MagneticField` (uniform, rotating, constant gradient) or a callable t -> B (3,) [T]
        or (B, G (3, 3) [T/m]); acts on the model's magnets.
    base_motion : callable t -> (position (3,), rotation (3, 3) or quaternion wxyz) of the
        clamped base; default the robot's fixed base pose.
    damping : viscous translational damping: a scalar per unit length [N s/m^2] or per node
        (n,) / (n, 3) [N s/m]; force -c o v with the last step's velocity (E.5's model).
    angular_damping : body-frame rotational damping, scalar per unit length [N m s/m] or per
        node (n,) / (n, 3) [N m s].
    strain_damping : Kelvin-Voigt (strain-rate) damping time beta [s] (see `simulate_dynamic`);
        adds to `damping` / `angular_damping`.
    pressures : (n_c,) chamber gauge pressures [Pa] (the description's `chambers`, segment by
        segment; within `pressure_range`), or a callable t -> (n_c,). A chamber acts as in
        `solve_static`: a tendon on its line at tension -p A_eff(p) over its segment.
    moments : (n_moments,) moment-actuator inputs [-] (the description's `moment_actuators`,
        segment by segment), constant: the uniform internal moment tau m over the segment is,
        as in `solve_static`, the rest curvature u* + K_bt^-1 tau m, so the model's discrete
        rest strains (bending springs and shear chords) are those of that curve while the run
        starts from the robot's own rest shape. A schedule runs piecewise constant: one run
        per piece, each continuing the last (`initial=` the previous result).

    The model's magnets (`build_lgvi_model(magnets=...)` and the description's `magnets` and
    `magnetization`) feel `field`.
    """

    tensions: LoadLike | None = None
    tip_force: LoadLike | None = None
    tip_moment: LoadLike | None = None
    distributed_force: LoadLike | None = None
    gravity: Sequence[float] | np.ndarray | None = None
    field: FieldLike | None = None
    base_motion: Callable[[float], Any] | None = None
    damping: float | np.ndarray | None = None
    angular_damping: float | np.ndarray | None = None
    strain_damping: float | None = None
    pressures: LoadLike | None = None
    moments: Sequence[float] | np.ndarray | None = None

    def __post_init__(self) -> None:
        # Check what does not depend on the model here, with the value in the message.
        if self.tensions is not None and not callable(self.tensions):
            arr = np.array(self.tensions, dtype=float).reshape(-1)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"tensions must be finite numbers, got {self.tensions!r}")
            _nonneg_tension(arr)
            object.__setattr__(self, "tensions", arr)
        if self.pressures is not None and not callable(self.pressures):
            arr = np.array(self.pressures, dtype=float).reshape(-1)
            bad = np.flatnonzero(~np.isfinite(arr))
            if bad.size:
                raise ValueError(f"pressures[{bad[0]}] must be finite, got {arr[bad[0]]}")
            object.__setattr__(self, "pressures", arr)
        if self.moments is not None:
            if callable(self.moments):
                raise ValueError(
                    "moments must be constant (n_moments,) values in dynamics, got a callable "
                    "(the run's rest strains carry them); for a schedule run it piecewise "
                    "constant, each piece simulate_dynamic(..., moments=m_k, initial=previous)"
                )
            arr = np.array(self.moments, dtype=float).reshape(-1)
            bad = np.flatnonzero(~np.isfinite(arr))
            if bad.size:
                raise ValueError(f"moments[{bad[0]}] must be finite, got {arr[bad[0]]}")
            object.__setattr__(self, "moments", arr)
        for name in ("tip_force", "tip_moment", "distributed_force"):
            object.__setattr__(self, name, _load(name, getattr(self, name)))
        if self.gravity is not None:
            object.__setattr__(self, "gravity", _vec("gravity", self.gravity, 3))
        _FieldInput(self.field)
        if self.base_motion is not None and not callable(self.base_motion):
            raise ValueError("base_motion must be a callable t -> (position, rotation)")
        for name in ("damping", "angular_damping"):
            object.__setattr__(self, name, _damping_value(name, getattr(self, name)))
        beta = 0.0 if self.strain_damping is None else self.strain_damping
        if not (isinstance(beta, int | float) and math.isfinite(beta) and beta >= 0):
            raise ValueError(f"strain_damping must be a finite number >= 0 [s], got {beta!r}")
        object.__setattr__(self, "strain_damping", float(beta))


@dataclass(frozen=True)
class _Loads0:
    gravity: np.ndarray
    dist: np.ndarray
    tip_force: np.ndarray
    tip_moment: np.ndarray
    tension: np.ndarray
    B: np.ndarray
    G: np.ndarray
    base_R: np.ndarray


def _zero_loads(model: LGVIModel) -> _Loads0:
    z = np.zeros(3)
    return _Loads0(z, z, z, z, np.zeros(model.n_kernel_tendons), z, np.zeros((3, 3)),
                   model.rod.base_rotation[None].copy())  # fmt: skip


@dataclass
class _RunInputs:
    """`DynamicLoads` checked against a model and ready to tabulate (shared by
    `simulate_dynamic` and the damping filter)."""

    model: LGVIModel
    loads: DynamicLoads
    gravity: np.ndarray
    tension: _Input
    tip_force: _Input
    tip_moment: _Input
    dist: _Input
    field: _FieldInput
    base: _BaseInput
    c_lin: np.ndarray
    c_ang: np.ndarray
    strain_damping: float = 0.0

    @property
    def varies(self) -> bool:
        return (self.tension.varies or self.tip_force.varies or self.tip_moment.varies
                or self.dist.varies or self.field.varies or self.base.varies)  # fmt: skip

    def loads_at(self, t: float) -> _Loads0:
        B, G = self.field.series(np.array([t]))
        return _Loads0(
            self.gravity, self.dist.at(t), self.tip_force.at(t), self.tip_moment.at(t),
            self.tension.at(t), B[0], G[0], self.base.at(t)[1][None].copy(),
        )  # fmt: skip


class _TendonAndChamberInput(_Input):
    """The kernels' tension rows: the robot's tensions, then the chambers' internal tendons at
    `RodModel.chamber_map` @ p A_eff(p) (-p A_eff on a chamber's own tendon)."""

    def __init__(self, model: LGVIModel, tensions: _Input, pressures: _Input):
        super().__init__("tensions", None, model.n_kernel_tendons)
        self.func = None if not (tensions.varies or pressures.varies) else self._full
        self.rod = model.rod
        self.tensions = tensions
        self.pressures = pressures
        self.const = None if self.func is not None else self._full(0.0)

    def _full(self, t: float) -> np.ndarray:
        forces = self.rod.chamber_forces(self.pressures.at(t))
        return np.concatenate([self.tensions.at(t), self.rod.chamber_map @ forces])

    def _validate(self, value: Any) -> np.ndarray:
        return np.asarray(value, dtype=float)


def _check_pressures(rod: RodModel) -> Callable[[np.ndarray], None]:
    def check(p: np.ndarray) -> None:
        check_actuation(rod.spec, pressures=p)

    return check


def _actuator_input(model: LGVIModel, loads: DynamicLoads) -> _Input:
    """The tensions input, extended by the chambers' when the model has chambers."""
    tensions = _Input("tensions", loads.tensions, model.n_tendons, _nonneg_tension)
    rod = model.rod
    value = loads.pressures
    if value is not None and not callable(value):
        # A constant: the count (or "the robot has no chambers") first, with its message.
        check_actuation(rod.spec, pressures=np.asarray(value, dtype=float))
    if model.n_chamber_tendons == 0:
        return tensions
    pressures = _Input("pressures", loads.pressures, rod.n_chambers, _check_pressures(rod))
    return _TendonAndChamberInput(model, tensions, pressures)


def _resolve(model: LGVIModel, loads: DynamicLoads) -> _RunInputs:
    """Check `loads` against `model` (tendon count, damping shapes) for the kernels."""
    # Angular damping per unit length uses the length each frame stands for.
    if model.link_frames:
        frame_len = np.append(model.elem_len, 0.5 * model.elem_len[-1])
    else:
        frame_len = model.node_weight
    if loads.moments is not None:
        model = _with_moment_rest(model, check_actuation(model.rod.spec, moments=loads.moments))
    return _RunInputs(
        model=model,
        loads=loads,
        gravity=np.zeros(3) if loads.gravity is None else np.asarray(loads.gravity),
        tension=_actuator_input(model, loads),
        tip_force=_Input("tip_force", loads.tip_force, 3),
        tip_moment=_Input("tip_moment", loads.tip_moment, 3),
        dist=_Input("distributed_force", loads.distributed_force, 3),
        field=_FieldInput(loads.field),
        base=_BaseInput(model.rod, loads.base_motion),
        c_lin=_node_damping("damping", loads.damping, model, model.node_weight),
        c_ang=_node_damping("angular_damping", loads.angular_damping, model, frame_len),
        strain_damping=float(loads.strain_damping or 0.0),
    )


def _with_moment_rest(model: LGVIModel, act: Any) -> LGVIModel:
    """`model` with the discrete rest strains of the rest curve that the moment actuators'
    inputs give (`RodModel.with_moments`): bending springs' Cayley strains and shear chords as
    `build_lgvi_model` takes them from a precurved robot; rest_positions and rest_rotations
    stay the robot's (the run starts unactuated)."""
    if not np.any(act.moments):
        return model
    rod = model.rod.with_moments(act.moments)
    rest_p, _ = _rest_curve(rod, model.node_s)
    _, rest_R = _rest_curve(rod, model.frame_s)
    if model.clamp == "node":
        rest_R[0] = rod.base_rotation
    dp = np.diff(rest_p, axis=0)
    le = model.elem_len[:, None]
    g0a = np.einsum("kji,kj->ki", rest_R[:-1], dp) / le
    g0b = np.einsum("kji,kj->ki", rest_R[1:], dp) / le
    i, j = model.spr_i, model.spr_j
    Ri = np.where(i[:, None, None] < 0, rod.base_rotation[None], rest_R[np.maximum(i, 0)])
    c0 = cayinv(np.swapaxes(Ri, -1, -2) @ rest_R[j])
    return dataclasses.replace(
        model,
        elem_g0a=np.ascontiguousarray(g0a),
        elem_g0b=np.ascontiguousarray(g0b),
        spr_c0=np.ascontiguousarray(c0),
    )


# ---------------------------------------------------------------------------------------------
# Initial state


def _interp_static(sol: StaticResult, sq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (cubic Hermite with tangents R v) and frames (Cayley interpolation) of a
    static solution at arc lengths sq."""
    s = sol.s
    k = np.clip(np.searchsorted(s, sq, side="right") - 1, 0, s.shape[0] - 2)
    h = s[k + 1] - s[k]
    t = np.clip((sq - s[k]) / h, 0.0, 1.0)
    tang = np.einsum("kij,kj->ki", sol.rotations, sol.strain)
    h00 = 2 * t**3 - 3 * t**2 + 1
    h10 = t**3 - 2 * t**2 + t
    h01 = -2 * t**3 + 3 * t**2
    h11 = t**3 - t**2
    P = (
        h00[:, None] * sol.positions[k]
        + (h10 * h)[:, None] * tang[k]
        + h01[:, None] * sol.positions[k + 1]
        + (h11 * h)[:, None] * tang[k + 1]
    )
    Rk = sol.rotations[k]
    c = cayinv(np.swapaxes(Rk, -1, -2) @ sol.rotations[k + 1])
    R = Rk @ cay(t[:, None] * c)
    return P, R


def _initial_state(
    model: LGVIModel, initial: Any, base0: tuple[np.ndarray, np.ndarray], dt: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """(p, p_prev, O, fr, t0) for the integrator."""
    rod = model.rod
    if isinstance(initial, DynamicResult):
        initial = initial.final_state
    if isinstance(initial, DynamicState):
        if initial.positions.shape != (model.n_nodes, 3):
            raise ValueError(
                f"initial state has {initial.positions.shape[0]} nodes, the model "
                f"{model.n_nodes} (use the same elements and shear_eval)"
            )
        if abs(initial.dt - dt) > 1e-12 * dt:
            # Rescale the last step's velocity to the new step.
            r = dt / initial.dt
            p = initial.positions.copy()
            p_prev = p - r * (initial.positions - initial.prev_positions)
            fr = np.tan(r * np.arctan(np.linalg.norm(initial.cayley, axis=1)))[:, None] * (
                initial.cayley / np.maximum(np.linalg.norm(initial.cayley, axis=1), 1e-300)[:, None]
            )
            return p, p_prev, initial.frames.copy(), fr, initial.t
        return (
            initial.positions.copy(),
            initial.prev_positions.copy(),
            initial.frames.copy(),
            initial.cayley.copy(),
            initial.t,
        )
    if initial is None:
        p = model.rest_positions.copy()
        O = model.rest_rotations.copy()
    elif isinstance(initial, StaticResult):
        if abs(initial.s[-1] - model.total_length) > 1e-9 * model.total_length:
            raise ValueError(
                f"initial static result has length {initial.s[-1]:g} m, the robot "
                f"{model.total_length:g} m"
            )
        p, _ = _interp_static(initial, model.node_s)
        _, O = _interp_static(initial, model.frame_s)
        if model.clamp == "node":
            O[0] = rod.base_rotation
    else:
        raise ValueError(
            "initial must be None, a StaticResult (release from it), a DynamicResult or a "
            f"DynamicState, got {type(initial).__name__}"
        )
    # Move rigidly from the robot's base pose to the base pose at t = 0.
    pos0, R0 = base0
    A = R0 @ rod.base_rotation.T
    p = (p - rod.base_position) @ A.T + pos0
    O = np.einsum("ij,kjl->kil", A, O)
    return p, p.copy(), O, np.zeros((model.n_nodes, 3)), 0.0


def _start_state(su: _RunInputs, initial: Any, dt: float) -> tuple:
    p, p_prev, O, fr, t0 = _initial_state(su.model, initial, su.base.at(0.0), dt)
    if su.base.varies and not isinstance(initial, DynamicResult | DynamicState):
        # The base starts with its own velocity: node 0 one step back.
        p_prev[0] = su.base.at(t0 - dt)[0]
    return p, p_prev, O, fr, t0
