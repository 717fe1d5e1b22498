"""`simulate_dynamic`: the Lie-group variational integrator of seed 004 (ALGORITHMS.md E.2-E.4)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from softrod.description import RobotSpec
from softrod.dynamics._lgvi_kernels import (
    STATUS_NEWTON,
    STATUS_NONFINITE,
    STATUS_OK,
    _forces,
    _kinetic,
    _run,
)
from softrod.dynamics._loads import FieldLike, Magnet, MagneticField
from softrod.dynamics._model import (
    LGVIModel,
    build_lgvi_model,
    cay,
    cayinv,
)
from softrod.rods import RodModel, StaticResult, compile_model
from softrod.rods.so3 import quat_to_matrix

__all__ = [
    "DEFAULT_DT_SAFETY",
    "DEFAULT_SAMPLE_DT",
    "DynamicResult",
    "DynamicState",
    "linear_modes",
    "simulate_dynamic",
    "stable_time_step",
]

#: Automatic step = DEFAULT_DT_SAFETY * 2 / omega_max, omega_max the highest frequency of the
#: model linearised at the initial state. Explicit (Stormer-Verlet-type) updates are stable
#: for omega dt < 2; half of it leaves room for stiffening under large deflection and tendon
#: load and keeps the energy error of the fastest modes small.
DEFAULT_DT_SAFETY = 0.5
#: Explicit viscous damping (velocity of the last step) is monotone for c dt / m < 1; the
#: automatic step keeps c dt / m below this.
DAMPING_DT_LIMIT = 0.5
#: Default output sampling period [s] (rounded to a whole number of steps).
DEFAULT_SAMPLE_DT = 1e-3
#: Steps per kernel call when some input varies in time (inputs are tabulated per step).
CHUNK_STEPS = 4096
#: Finite-difference step of the linearisation, relative to the robot length (positions) and
#: in radians (rotations): central differences of forces that are smooth on this scale.
_FD_REL = 1e-7
#: The "auto" frequency correction takes its target from a model this many times finer.
FREQ_REFERENCE_FACTOR = 8
#: Steps between refactorisations of the Kelvin-Voigt damping matrix B^T W B, which follows
#: the configuration: over 16 automatic steps (0.25 ms for the TPU rod, 0.05 ms for steel) the
#: frames of the SoRoSim releases turn by ~1e-3 rad at most, while refactoring every step costs
#: a banded Cholesky (n_q bw^2 flops) per step.
KV_REFRESH_STEPS = 16

_STATUS_MESSAGES = {
    STATUS_OK: "completed",
    STATUS_NONFINITE: "diverged: non-finite positions (time step too large for the load?)",
    STATUS_NEWTON: "diverged: the rotation update (Newton on the Cayley map) did not converge",
}


@dataclass(frozen=True, eq=False)
class DynamicState:
    """Integrator state at time t (internal layout of `LGVIModel`; SI).

    positions (n, 3) at t and prev_positions (n, 3) at t - dt [m]; frames (n, 3, 3) the node
    frames of the model layout at t; cayley (n, 3) no-half Cayley parameter of the last step's
    relative rotation F = O(t - dt)^T O(t); dt [s].
    """

    t: float
    dt: float
    positions: np.ndarray
    prev_positions: np.ndarray
    frames: np.ndarray
    cayley: np.ndarray


@dataclass(frozen=True, eq=False)
class DynamicResult:
    """A simulated trajectory, sampled every `sample_dt`.

    t : (k,) [s]. positions : (k, n, 3) node positions [m]. rotations : (k, n, 3, 3) section
    frames at the nodes (body z along the backbone). frames : (k, n, 3, 3) the model's own node
    frames (link frames for shear_eval "left"). energy : (k,) total mechanical energy [J]
    (kinetic + elastic + potentials of gravity, constant tip/distributed forces, tendon tension
    times path length and -m.B); conserved when undamped with constant loads. node_s : (n,)
    [m]. dt : step [s]; n_steps : steps taken. stiffness_scale : the E.6 factor applied.
    final_state : state to continue from (`initial=result`). wall_time : [s].
    """

    success: bool
    status: int
    message: str
    t: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray
    frames: np.ndarray
    energy: np.ndarray
    node_s: np.ndarray
    dt: float
    n_steps: int
    stiffness_scale: float
    wall_time: float
    model: LGVIModel
    final_state: DynamicState
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tip_position(self) -> np.ndarray:
        """(k, 3) [m]"""
        return self.positions[:, -1]

    @property
    def tip_rotation(self) -> np.ndarray:
        """(k, 3, 3)"""
        return self.rotations[:, -1]

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall-clock second."""
        span = float(self.t[-1] - self.t[0]) if self.t.size > 1 else 0.0
        return span / self.wall_time if self.wall_time > 0 else math.inf

    def to_dict(self, trajectory: bool = False) -> dict[str, Any]:
        """JSON-ready summary; `trajectory=True` adds t and the tip trajectory."""
        out: dict[str, Any] = {
            "success": self.success,
            "status": self.status,
            "message": self.message,
            "dt": self.dt,
            "n_steps": self.n_steps,
            "elements": self.model.n_elements,
            "shear_eval": self.model.shear_eval,
            "stiffness_scale": self.stiffness_scale,
            "wall_time": self.wall_time,
            "final_tip_position": self.tip_position[-1].tolist(),
        }
        if trajectory:
            out["t"] = self.t.tolist()
            out["tip_position"] = self.tip_position.tolist()
            out["energy"] = self.energy.tolist()
        return out


# ---------------------------------------------------------------------------------------------
# Inputs


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


# ---------------------------------------------------------------------------------------------
# Linearisation and the stable step


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
    return _Loads0(z, z, z, z, np.zeros(model.n_tendons), z, np.zeros((3, 3)),
                   model.rod.base_rotation[None].copy())  # fmt: skip


def _eval_forces(
    model: LGVIModel, p: np.ndarray, O: np.ndarray, ld: _Loads0
) -> tuple[float, np.ndarray, np.ndarray]:
    f = np.empty((model.n_nodes, 3))
    tau = np.empty((model.n_nodes, 3))
    V = _forces(
        p, O, ld.base_R, model.elem_len, model.elem_C1, model.elem_g0a, model.elem_g0b,
        0 if model.shear_eval == "left" else 1, model.spr_i, model.spr_j, model.spr_K,
        model.spr_c0, model.node_mass, model.node_weight, ld.gravity, ld.dist[None],
        ld.tip_force[None], ld.tip_moment[None], model.tv_pidx, model.tv_pw, model.tv_oidx,
        model.tv_ow, model.tendon_r, model.tendon_vstart, ld.tension[None], model.mag_frame,
        model.mag_n0, model.mag_n1, model.mag_w1, model.mag_m, ld.B[None], ld.G[None],
        0, 0, 0, 0, 0, f, tau,
    )  # fmt: skip
    return float(V), f, tau


def linear_modes(
    model: LGVIModel,
    positions: np.ndarray | None = None,
    frames: np.ndarray | None = None,
    loads: _Loads0 | None = None,
) -> tuple[float, float]:
    """(omega_min, omega_max) [rad/s] of the model linearised at a configuration (default: rest,
    unloaded), from the finite-difference stiffness and the lumped masses and inertias."""
    p = model.rest_positions.copy() if positions is None else np.array(positions, dtype=float)
    O = model.rest_rotations.copy() if frames is None else np.array(frames, dtype=float)
    ld = _zero_loads(model) if loads is None else loads
    pf = np.flatnonzero(model.pos_free)
    rf = np.flatnonzero(model.rot_free)
    n_q = 3 * (pf.size + rf.size)
    eps_p = _FD_REL * model.total_length
    eps_r = _FD_REL

    def gen(pp: np.ndarray, OO: np.ndarray) -> np.ndarray:
        _, f, tau = _eval_forces(model, pp, OO, ld)
        return np.concatenate([f[pf].ravel(), tau[rf].ravel()])

    K = np.empty((n_q, n_q))
    col = 0
    for a in pf:
        for c in range(3):
            pp = p.copy()
            pp[a, c] += eps_p
            gp = gen(pp, O)
            pp[a, c] -= 2 * eps_p
            gm = gen(pp, O)
            K[:, col] = -(gp - gm) / (2 * eps_p)
            col += 1
    for a in rf:
        for c in range(3):
            e = np.zeros(3)
            e[c] = eps_r
            OO = O.copy()
            OO[a] = O[a] @ cay(e)
            gp = gen(p, OO)
            OO[a] = O[a] @ cay(-e)
            gm = gen(p, OO)
            K[:, col] = -(gp - gm) / (2 * eps_r)
            col += 1
    mass = np.concatenate([np.repeat(model.node_mass[pf], 3), model.node_J[rf].ravel()])
    w = 1.0 / np.sqrt(mass)
    A = 0.5 * (K + K.T) * w[:, None] * w[None, :]
    lam = scipy.linalg.eigvalsh(A)
    lam_pos = lam[lam > 0]
    if lam_pos.size == 0:
        return 0.0, 0.0
    return float(math.sqrt(lam_pos[0])), float(math.sqrt(lam[-1]))


def stable_time_step(
    model: LGVIModel,
    positions: np.ndarray | None = None,
    frames: np.ndarray | None = None,
    loads: _Loads0 | None = None,
    node_damping: np.ndarray | None = None,
    node_angular_damping: np.ndarray | None = None,
    safety: float = DEFAULT_DT_SAFETY,
) -> float:
    """Automatic step [s]: `safety` * 2 / omega_max, also keeping c dt / m and c_w dt / J
    below `DAMPING_DT_LIMIT` (see the constants)."""
    _, w_max = linear_modes(model, positions, frames, loads)
    dt = safety * 2.0 / w_max
    if node_damping is not None and np.any(node_damping > 0):
        ratio = float(np.max(node_damping[model.pos_free] / model.node_mass[model.pos_free, None]))
        if ratio > 0:
            dt = min(dt, DAMPING_DT_LIMIT / ratio)
    if node_angular_damping is not None and np.any(node_angular_damping > 0):
        rf = model.rot_free
        ratio = float(np.max(node_angular_damping[rf] / model.node_J[rf]))
        if ratio > 0:
            dt = min(dt, DAMPING_DT_LIMIT / ratio)
    return dt


def _frequency_scale(
    rod: RodModel, elements: Any, shear_eval: str, clamp: str, magnets: Sequence[Magnet],
    rotary_inertia_scale: float, target_hz: float | None,
) -> float:  # fmt: skip
    """The E.6 correction gamma = (omega_target / omega_sim)^2 at the model's resolution."""
    coarse = build_lgvi_model(rod, elements, shear_eval, clamp, magnets, 1.0, rotary_inertia_scale)
    w_sim, _ = linear_modes(coarse)
    if target_hz is None:
        n_fine = FREQ_REFERENCE_FACTOR * coarse.n_elements
        fine = build_lgvi_model(rod, n_fine, "left", "half", magnets, 1.0, rotary_inertia_scale)
        w_target, _ = linear_modes(fine)
    else:
        w_target = 2 * math.pi * float(target_hz)
    return (w_target / w_sim) ** 2


# ---------------------------------------------------------------------------------------------
# Section frames at the nodes (for output)


def _section_frames(model: LGVIModel, frames: np.ndarray, base_R: np.ndarray) -> np.ndarray:
    """Section frames (k, n, 3, 3) at the nodes from model frames (k, n, 3, 3).

    Link frames: node a (0 < a < N) takes the Cayley midpoint of links a - 1 and a, node 0 the
    base frame (k, 3, 3), node N the tip frame. Section layouts are returned as they are.
    """
    if not model.link_frames:
        return frames.copy()
    out = frames.copy()
    A = frames[:, :-2]
    B = frames[:, 1:-1]
    c = cayinv(np.swapaxes(A, -1, -2) @ B)
    # Half of the rotation in the Cayley parameter: tan(phi/4) from tan(phi/2).
    hc = c / (1.0 + np.sqrt(1.0 + 0.25 * np.sum(c * c, axis=-1)))[..., None]
    out[:, 1:-1] = A @ cay(hc)
    out[:, 0] = base_R
    return out


# ---------------------------------------------------------------------------------------------
# The simulation


@dataclass
class _Setup:
    """Validated inputs of one run (shared by `simulate_dynamic` and the damping filter)."""

    model: LGVIModel
    gamma: float
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


def _setup(
    robot: Any, tensions: Any, tip_force: Any, distributed_force: Any, gravity: Any,
    magnets: Any, field: Any, damping: Any, angular_damping: Any, tip_moment: Any,
    base_motion: Any, elements: Any, shear_eval: str, clamp: str, frequency_correction: Any,
    frequency_target: Any, rotary_inertia_scale: float, strain_damping: Any = None,
) -> _Setup:  # fmt: skip
    rod = robot if isinstance(robot, RodModel) else compile_model(robot)
    mags = tuple(magnets or ())
    for q, mg in enumerate(mags):
        if not isinstance(mg, Magnet):
            raise ValueError(f"magnets[{q}] must be a softrod.dynamics.Magnet, got {mg!r}")
    # Frequency correction (E.6) and the discretisation.
    if frequency_correction is None:
        gamma = 1.0
    elif isinstance(frequency_correction, str):
        if frequency_correction != "auto":
            raise ValueError(
                'frequency_correction must be None, a factor or "auto", '
                f"got {frequency_correction!r}"
            )
        gamma = _frequency_scale(rod, elements, shear_eval, clamp, mags, rotary_inertia_scale,
                                 frequency_target)  # fmt: skip
    else:
        gamma = float(frequency_correction)
    model = build_lgvi_model(rod, elements, shear_eval, clamp, mags, gamma, rotary_inertia_scale)
    beta = 0.0 if strain_damping is None else strain_damping
    if not (isinstance(beta, int | float) and math.isfinite(beta) and beta >= 0):
        raise ValueError(f"strain_damping must be a finite number >= 0 [s], got {beta!r}")
    # Angular damping per unit length uses the length each frame stands for.
    if model.link_frames:
        frame_len = np.append(model.elem_len, 0.5 * model.elem_len[-1])
    else:
        frame_len = model.node_weight
    return _Setup(
        model=model,
        gamma=gamma,
        gravity=np.zeros(3) if gravity is None else _vec("gravity", gravity, 3),
        tension=_Input("tensions", tensions, model.n_tendons, _nonneg_tension),
        tip_force=_Input("tip_force", tip_force, 3),
        tip_moment=_Input("tip_moment", tip_moment, 3),
        dist=_Input("distributed_force", distributed_force, 3),
        field=_FieldInput(field),
        base=_BaseInput(rod, base_motion),
        c_lin=_node_damping("damping", damping, model, model.node_weight),
        c_ang=_node_damping("angular_damping", angular_damping, model, frame_len),
        strain_damping=float(beta),
    )


@dataclass
class _Filter:
    """Kernel arrays of the damping filter: nodes (n_f,), meas (n_steps + 1, n_f, 3),
    R (3, 3), W (n_f, 3, 3), mass (n_f,) (the paper's l M), paper (bool)."""

    nodes: np.ndarray
    meas: np.ndarray
    R: np.ndarray
    W: np.ndarray
    mass: np.ndarray
    paper: bool


def _kv_layout(model: LGVIModel) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Generalised velocity layout of the Kelvin-Voigt solve, interleaved node by node so that
    the damping matrix is banded: dof_p, dof_r (n,) first index of each node's translation /
    rotation (-1 when prescribed), n_q, and the half bandwidth."""
    n = model.n_nodes
    dof_p = np.full(n, -1, dtype=np.int64)
    dof_r = np.full(n, -1, dtype=np.int64)
    q = 0
    for a in range(n):
        if model.pos_free[a]:
            dof_p[a] = q
            q += 3
        if model.rot_free[a]:
            dof_r[a] = q
            q += 3
    groups = []
    for i in range(model.n_elements):
        frames = (i,) if model.shear_eval == "left" else (i, i + 1)
        groups.append([dof_p[i], dof_p[i + 1], *(dof_r[c] for c in frames)])
    for i, j in zip(model.spr_i, model.spr_j, strict=True):
        groups.append([dof_r[j], dof_r[i] if i >= 0 else -1])
    bw = 0
    for g in groups:
        d = [x for x in g if x >= 0]
        if d:
            bw = max(bw, max(d) + 2 - min(d))
    return dof_p, dof_r, q, bw


def _integrate(
    su: _Setup,
    state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float],
    dt: float,
    n_steps: int,
    every: int,
    filt: _Filter | None = None,
) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Run n_steps + 1 steps (the extra one completes the last sample's energy).

    state (p, p_prev, O, fr, t0) is advanced in place to step n_steps (on success). Returns
    (status, steps done, rec_p, rec_O, rec_E, rec_K) with rows every `every` steps (rec_K:
    per step, filter only).
    """
    model = su.model
    n = model.n_nodes
    p, p_prev, O, fr, t0 = state
    n_rec = n_steps // every + 1
    rec_p = np.full((n_rec, n, 3), np.nan)
    rec_O = np.full((n_rec, n, 3, 3), np.nan)
    rec_E = np.full(n_rec, np.nan)
    ke_prev = np.array(
        [_kinetic(p, p_prev, fr, model.node_mass, model.node_J, model.pos_free, model.rot_free, dt)]
    )
    work_f = np.zeros((n, 3))
    work_tau = np.zeros((n, 3))
    work_p = np.zeros((n, 3))
    shear_mode = 0 if model.shear_eval == "left" else 1
    # Kelvin-Voigt damping: layout, banded factor and work arrays (unused when beta = 0).
    kv_dof_p, kv_dof_r, n_q, kv_bw = _kv_layout(model)
    kv_L = np.zeros((n_q, n_q)) if su.strain_damping > 0 else np.zeros((1, 1))
    kv_u = np.zeros(n_q)
    kv_J = np.zeros((2, 3, 3))
    total = n_steps + 1
    chunk = CHUNK_STEPS if (su.varies or filt is not None) else total
    rec_K_parts = []
    status = STATUS_OK
    done = 0
    snapshot = None
    while done < total:
        # The last step runs alone so that the state at n_steps can be kept for continuation.
        if done == n_steps:
            snapshot = (p.copy(), p_prev.copy(), O.copy(), fr.copy())
        k = min(chunk, total - done, n_steps - done if done < n_steps else 1)
        tk = t0 + (done + np.arange(k + 1)) * dt
        tension = su.tension.series(tk[:-1]) if model.n_tendons else np.zeros((1, 0))
        B, G = su.field.series(tk[:-1])
        bp, bR = su.base.series(tk)
        if filt is None:
            f_args = (np.zeros(0, dtype=np.int64), np.zeros((1, 0, 3)), np.eye(3),
                      np.zeros((0, 3, 3)), np.zeros(0), False)  # fmt: skip
            rec_K = np.zeros((0, 0, 3))
        else:
            meas = np.ascontiguousarray(filt.meas[done : done + k + 1])
            if meas.shape[0] < k + 1:
                # The last (extra) step has no measurement ahead: hold the last one.
                pad = np.repeat(filt.meas[-1:], k + 1 - meas.shape[0], axis=0)
                meas = np.concatenate([meas, pad])
            f_args = (filt.nodes, meas, filt.R, filt.W, filt.mass, filt.paper)
            rec_K = np.zeros((k, filt.nodes.shape[0], 3))
        status, m = _run(
            p, p_prev, O, fr,
            model.elem_len, model.elem_C1, model.elem_g0a, model.elem_g0b, shear_mode,
            model.spr_i, model.spr_j, model.spr_K, model.spr_c0,
            model.node_mass, model.node_weight, model.node_Jd, model.node_J,
            model.pos_free, model.rot_free,
            model.tv_pidx, model.tv_pw, model.tv_oidx, model.tv_ow, model.tendon_r,
            model.tendon_vstart, model.mag_frame, model.mag_n0, model.mag_n1, model.mag_w1,
            model.mag_m, su.c_lin, su.c_ang,
            su.gravity, su.dist.series(tk[:-1]), su.tip_force.series(tk[:-1]),
            su.tip_moment.series(tk[:-1]), np.ascontiguousarray(tension),
            np.ascontiguousarray(B), np.ascontiguousarray(G), np.ascontiguousarray(bp),
            np.ascontiguousarray(bR), *f_args,
            su.strain_damping, kv_dof_p, kv_dof_r, kv_bw, KV_REFRESH_STEPS, kv_L, kv_u, kv_J,
            dt, done, k, every, rec_p, rec_O, rec_E, rec_K, ke_prev, work_f, work_tau, work_p,
        )  # fmt: skip
        rec_K_parts.append(rec_K[:m])
        done += m
        if status != STATUS_OK:
            break
    rec_K_all = np.concatenate(rec_K_parts) if rec_K_parts else np.zeros((0, 0, 3))
    if snapshot is not None:
        for dst, src in zip((p, p_prev, O, fr), snapshot, strict=True):
            dst[...] = src
        done = n_steps
    return int(status), done, rec_p, rec_O, rec_E, rec_K_all


def _choose_dt(su: _Setup, dt: float | None, state: tuple, dt_safety: float) -> tuple[float, bool]:
    if dt is None:
        p, _, O, _, t0 = state
        ld = su.loads_at(t0)
        return stable_time_step(su.model, p, O, ld, su.c_lin, su.c_ang, dt_safety), True
    if not (isinstance(dt, int | float) and dt > 0 and math.isfinite(dt)):
        raise ValueError(f"dt must be > 0 [s], got {dt!r}")
    return float(dt), False


def _start_state(su: _Setup, initial: Any, dt: float) -> tuple:
    p, p_prev, O, fr, t0 = _initial_state(su.model, initial, su.base.at(0.0), dt)
    if su.base.varies and not isinstance(initial, DynamicResult | DynamicState):
        # The base starts with its own velocity: node 0 one step back.
        p_prev[0] = su.base.at(t0 - dt)[0]
    return p, p_prev, O, fr, t0


def simulate_dynamic(
    robot: RodModel | RobotSpec | dict | str,
    duration: float,
    dt: float | None = None,
    initial: StaticResult | DynamicResult | DynamicState | None = None,
    tensions: Sequence[float] | np.ndarray | Callable[[float], Any] | None = None,
    tip_force: Sequence[float] | np.ndarray | Callable[[float], Any] | None = None,
    distributed_force: Sequence[float] | np.ndarray | Callable[[float], Any] | None = None,
    gravity: Sequence[float] | np.ndarray | None = None,
    magnets: Sequence[Magnet] | None = None,
    field: FieldLike | None = None,
    damping: float | np.ndarray | None = None,
    *,
    angular_damping: float | np.ndarray | None = None,
    tip_moment: Sequence[float] | np.ndarray | Callable[[float], Any] | None = None,
    base_motion: Callable[[float], Any] | None = None,
    elements: int | Sequence[int] | None = None,
    shear_eval: str = "left",
    clamp: str = "auto",
    frequency_correction: float | str | None = None,
    frequency_target: float | None = None,
    rotary_inertia_scale: float = 1.0,
    strain_damping: float | None = None,
    sample_dt: float | None = None,
    dt_safety: float = DEFAULT_DT_SAFETY,
    max_steps: int = 200_000_000,
) -> DynamicResult:
    """Simulate a rod robot with the discrete variational Lie-group integrator (seed 004).

    Parameters
    ----------
    robot : RobotSpec, dict, path or compiled RodModel (the static solver's description).
    duration : simulated time [s].
    dt : time step [s]; default: automatic, `dt_safety` * 2 / omega_max of the linearised model
        at the initial state (`stable_time_step`).
    initial : None (rest shape, at rest), a StaticResult (released at rest from that shape), a
        DynamicResult / DynamicState (continue from its final state).
    tensions : (n_t,) tendon tensions [N] >= 0 (same tendon model as `solve_static`: straight,
        frictionless, anchored at its segment's end), or a callable t -> (n_t,).
    tip_force, tip_moment : (3,) world-frame load at the tip [N], [N m], or callables of t.
    distributed_force : (3,) uniform world-frame load per unit length [N/m] or a callable.
    gravity : (3,) [m/s^2]; weighs backbone, disks and magnets.
    magnets : `Magnet` dipoles on the rod; field : `MagneticField` (uniform, rotating, constant
        gradient) or a callable t -> B (3,) [T] or (B, G (3, 3) [T/m]).
    damping : viscous translational damping: a scalar per unit length [N s/m^2] or per node
        (n,) / (n, 3) [N s/m]; force -c o v with the last step's velocity (E.5's model).
    angular_damping : body-frame rotational damping, scalar per unit length [N m s/m] or per
        node (n,) / (n, 3) [N m s].
    base_motion : callable t -> (position (3,), rotation (3, 3) or quaternion wxyz) of the
        clamped base; default the robot's fixed base pose.
    elements : total elements (default `DEFAULT_ELEMENTS`) or one count per segment.
    shear_eval : "left" (default, locking-free) or "symmetric" (the paper's eq. 6; locks).
    clamp : "auto" ("half" for left, "node" for symmetric), "half" (staggered closure,
        second order) or "node" (the paper's; first order with the left strain).
    frequency_correction : None, a factor gamma on every stiffness, or "auto":
        gamma = (omega_target / omega_sim)^2 (E.6); omega_target from `frequency_target` [Hz]
        or an 8x finer model. It rescales the stiffness (static deflections scale by 1/gamma):
        a patch for coarse or locking meshes, not a discretisation fix.
    rotary_inertia_scale : factor on the sections' rotary inertia (1 physical; larger values
        lengthen the automatic step of thin rods at an O(scale (r/L)^2) frequency error).
    strain_damping : Kelvin-Voigt (strain-rate) damping time beta [s]: every discrete strain
        (shear-stretch, bending-torsion) carries a viscous stress beta x its elastic stiffness x
        its rate, i.e. the stiffness-proportional damping matrix beta B^T W B (zero on rigid
        motions; modal ratio zeta_n = beta omega_n / 2, so higher modes are damped more).
        Integrated implicitly (backward Euler on the dissipation), so it does not shorten the
        step. Adds to `damping` / `angular_damping`.
    sample_dt : output period [s] (default 1 ms, at least one step).
    dt_safety : fraction of the linear stability limit used by the automatic step.
    max_steps : refuse runs longer than this many steps.

    Returns
    -------
    DynamicResult; a diverging run returns success=False with the samples up to the failure.
    """

    t_wall = time.perf_counter()
    if not (isinstance(duration, int | float) and duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be > 0 [s], got {duration!r}")
    su = _setup(robot, tensions, tip_force, distributed_force, gravity, magnets, field, damping,
                angular_damping, tip_moment, base_motion, elements, shear_eval, clamp,
                frequency_correction, frequency_target, rotary_inertia_scale,
                strain_damping)  # fmt: skip
    model = su.model
    # The step (automatic: linearised at the initial shape, loads at the start).
    dt, auto_dt = _choose_dt(su, dt, _start_state(su, initial, 1.0), dt_safety)
    n_steps = int(math.ceil(duration / dt - 1e-9))
    if n_steps > max_steps:
        raise ValueError(
            f"{n_steps} steps of {dt:.3g} s exceed max_steps={max_steps}; raise it or pass dt"
        )
    if sample_dt is None:
        sample_dt = DEFAULT_SAMPLE_DT
    if not (sample_dt > 0 and math.isfinite(sample_dt)):
        raise ValueError(f"sample_dt must be > 0 [s], got {sample_dt!r}")
    every = max(1, int(round(sample_dt / dt)))
    state = _start_state(su, initial, dt)
    t0 = state[4]
    status, done, rec_p, rec_O, rec_E, _ = _integrate(su, state, dt, n_steps, every)
    p, p_prev, O, fr, _ = state

    # Trim to the samples taken.
    n_rec = rec_E.shape[0]
    t_all = t0 + np.arange(n_rec) * every * dt
    ok_rows = np.flatnonzero(np.isfinite(rec_E))
    n_ok = int(ok_rows[-1] + 1) if ok_rows.size else 0
    if status == STATUS_OK:
        message = _STATUS_MESSAGES[status]
    else:
        message = f"{_STATUS_MESSAGES[status]} at t = {t0 + done * dt:.6g} s (dt = {dt:.3g} s)"
    t_out = t_all[:n_ok]
    frames = rec_O[:n_ok]
    if su.base.varies:
        base_R = np.array([su.base.at(float(tq))[1] for tq in t_out]).reshape(-1, 3, 3)
    else:
        base_R = np.broadcast_to(model.rod.base_rotation, (n_ok, 3, 3))
    rotations = _section_frames(model, frames, base_R)
    final = DynamicState(
        t=t0 + done * dt, dt=dt, positions=p.copy(), prev_positions=p_prev.copy(),
        frames=O.copy(), cayley=fr.copy(),
    )  # fmt: skip
    return DynamicResult(
        success=status == STATUS_OK,
        status=int(status),
        message=message,
        t=t_out,
        positions=rec_p[:n_ok],
        rotations=rotations,
        frames=frames,
        energy=rec_E[:n_ok],
        node_s=model.node_s.copy(),
        dt=dt,
        n_steps=int(min(done, n_steps)),
        stiffness_scale=su.gamma,
        wall_time=time.perf_counter() - t_wall,
        model=model,
        final_state=final,
        extra={"auto_dt": auto_dt, "sample_every": every},
    )
