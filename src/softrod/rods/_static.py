"""`solve_static`: equilibrium of a described robot under tendon and external loads."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from softrod.description import RobotSpec, load_robot
from softrod.rods._model import RodModel, compile_model
from softrod.rods._multishoot import multiple_shooting
from softrod.rods._static_kernels import (
    _distal_loads,
    _distal_moments_on_shape,
    _evaluate,
    _newton,
    _section_loads,
)

__all__ = [
    "METHODS",
    "ShootingEval",
    "StaticInputs",
    "StaticResult",
    "as_model",
    "shooting_eval",
    "solve_static",
    "tip_jacobian",
]

#: Default tolerance on the boundary residual, scaled by the moment that bends the softest
#: segment 1 rad over the robot's length: 1e-10 keeps tip errors at ~1e-10 of the length,
#: well above the round-off floor (~1e-13) of the residual for the shipped robots.
DEFAULT_RTOL = 1e-10
#: Newton iterations per (sub)problem before load continuation takes over.
DEFAULT_MAX_ITER = 30
#: Continuation gives up when its load increment falls below this fraction of the full load.
_MIN_LOAD_STEP = 1e-4
_MAX_CONTINUATION_SOLVES = 400
#: Largest external-load bending angle [rad] (base moment of the loads on the straight robot
#: over the moment scale, ~ F L^2 / EI) for which a cold start uses Newton directly; above it
#: the load is ramped. 3 rad keeps the Bisshopp-Drucker case P L^2 / EI = 2 direct and sends
#: the looped-branch cases found in review (P L^2 / EI >= 10) through continuation.
_DIRECT_LOAD_ANGLE = 3.0
#: Scaled residual below which a Newton stall is round-off, not divergence (the shipped
#: robots converge to ~1e-13-1e-15; 1e-10 is the default rtol).
_ROUND_OFF_RESIDUAL = 1e-11
#: Above this external-load bending angle [rad] the solver switches to multiple shooting:
#: single shooting's conditioning grows like exp(sqrt(angle)) and, measured, lets Newton land
#: on looped equilibria from about P L^2 / EI = 25-50 on a cantilever.
_MULTI_SHOOT_ANGLE = 10.0
#: sqrt(load angle) per multiple-shooting interval: each interval is then conditioned like
#: a single-shooting problem at load angle 2.25 (~exp(1.5)).
_ROOT_ANGLE_PER_INTERVAL = 1.5
_MAX_INTERVALS = 32


@dataclass(frozen=True)
class StaticInputs:
    """Validated inputs of one static solve (SI, world frame).

    tensions : (n_t,) [N] or None; lengths : (n_t,) commanded tendon rest lengths [m] or None.
    tip_force, tip_moment : (3,) [N], [N m] at the distal end.
    distributed_force : (3,) uniform load per unit (reference) length [N/m].
    gravity : (3,) [m/s^2]; loads the backbone's and disks' mass.
    point_loads : ((s [m], force (3,) [N], moment (3,) [N m]), ...) world-frame loads on the
        backbone at arc length s.
    """

    tensions: np.ndarray | None
    lengths: np.ndarray | None
    tip_force: np.ndarray
    tip_moment: np.ndarray
    distributed_force: np.ndarray
    gravity: np.ndarray
    point_loads: tuple[tuple[float, np.ndarray, np.ndarray], ...] = ()

    @property
    def has_external_load(self) -> bool:
        return bool(
            np.any(self.tip_force)
            or np.any(self.tip_moment)
            or np.any(self.distributed_force)
            or np.any(self.gravity)
            or bool(self.point_loads)
        )


@dataclass(frozen=True, eq=False)
class StaticResult:
    """Equilibrium shape and loads. Arrays are sampled at the integration nodes `s`.

    s : (n,) arc length [m]. positions : (n, 3) [m]. rotations : (n, 3, 3) section frames
    (columns = body axes in world). curvature : (n, 3) body-frame u [1/m]. strain : (n, 3)
    body-frame v (e3 for Kirchhoff). internal_force, internal_moment : (n, 3) world-frame force
    [N] and moment [N m] carried by the backbone material alone. tendon_tension : (n_t,) [N].
    tendon_length : (n_t,) path length from base to anchor [m]. base_moment : (3,) total moment
    at the base [N m] (the shooting unknown; reused by `guess=`). load_scale : fraction of the
    load reached (1 on success). residual : final scaled boundary residual (dimensionless).
    """

    method: str
    success: bool
    status: int
    message: str
    residual: float
    nit: int
    nfev: int
    s: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray
    curvature: np.ndarray
    strain: np.ndarray
    internal_force: np.ndarray
    internal_moment: np.ndarray
    tendon_tension: np.ndarray
    tendon_length: np.ndarray
    base_moment: np.ndarray
    load_scale: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tip_position(self) -> np.ndarray:
        """(3,) [m]"""
        return self.positions[-1]

    @property
    def tip_rotation(self) -> np.ndarray:
        """(3, 3)"""
        return self.rotations[-1]

    def to_dict(self, shape: bool = False) -> dict[str, Any]:
        """JSON-ready summary; `shape=True` adds the sampled backbone."""
        out: dict[str, Any] = {
            "method": self.method,
            "success": self.success,
            "status": self.status,
            "message": self.message,
            "residual": self.residual,
            "nit": self.nit,
            "nfev": self.nfev,
            "load_scale": self.load_scale,
            "tip_position": self.tip_position.tolist(),
            "tip_rotation": self.tip_rotation.tolist(),
            "tendon_tension": self.tendon_tension.tolist(),
            "tendon_length": self.tendon_length.tolist(),
        }
        if shape:
            out["s"] = self.s.tolist()
            out["positions"] = self.positions.tolist()
        return out

    def to_json(self, shape: bool = False) -> str:
        return json.dumps(self.to_dict(shape=shape))

    def asdict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# Input handling


def _vec3(name: str, value: Sequence[float] | np.ndarray | None) -> np.ndarray:
    if value is None:
        return np.zeros(3)
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (3,):
        raise ValueError(f"{name} must have 3 components [x, y, z], got {arr.tolist()}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}")
    return arr


def _tendon_vector(name: str, value: Any, n_t: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (n_t,):
        raise ValueError(
            f"{name} must have {n_t} values (one per tendon, segment by segment), "
            f"got {arr.shape[0]}"
        )
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] must be finite, got {arr[bad[0]]}")
    return arr


def _point_loads(
    value: Any, total_length: float
) -> tuple[tuple[float, np.ndarray, np.ndarray], ...]:
    if value is None:
        return ()
    out = []
    for i, item in enumerate(value):
        try:
            s_val, force, *rest = item
        except (TypeError, ValueError):
            raise ValueError(
                f"point_loads[{i}] must be (s, force[3]) or (s, force[3], moment[3]), got {item!r}"
            ) from None
        s_f = float(s_val)
        if not (0.0 < s_f <= total_length * (1 + 1e-12)):
            raise ValueError(f"point_loads[{i}].s must be in (0, {total_length:g}] m, got {s_f!r}")
        moment = rest[0] if rest else None
        out.append(
            (
                min(s_f, total_length),
                _vec3(f"point_loads[{i}].force", force),
                _vec3(f"point_loads[{i}].moment", moment),
            )
        )
    return tuple(out)


def check_inputs(
    model: RodModel,
    tensions: Any = None,
    lengths: Any = None,
    tip_force: Any = None,
    tip_moment: Any = None,
    distributed_force: Any = None,
    gravity: Any = None,
    point_loads: Any = None,
) -> StaticInputs:
    """Validate solver inputs against a model; raises ValueError naming the bad field."""
    n_t = model.n_tendons
    if tensions is not None and lengths is not None:
        raise ValueError("give tensions or lengths, not both")
    tau = None
    L_cmd = None
    if tensions is not None:
        tau = _tendon_vector("tensions", tensions, n_t)
        neg = np.flatnonzero(tau < 0)
        if neg.size:
            raise ValueError(
                f"tensions[{neg[0]}] must be >= 0 (tendons only pull), got {tau[neg[0]]}"
            )
    elif lengths is not None:
        L_cmd = _tendon_vector("lengths", lengths, n_t)
        nonpos = np.flatnonzero(L_cmd <= 0)
        if nonpos.size:
            raise ValueError(f"lengths[{nonpos[0]}] must be > 0 [m], got {L_cmd[nonpos[0]]}")
        missing = np.flatnonzero(np.isnan(model.tendon_stiffness))
        if missing.size:
            seg, k = _tendon_name(model, int(missing[0]))
            raise ValueError(
                f"length control needs segments[{seg}].tendons[{k}].stiffness [N/m]; it is not set"
            )
    return StaticInputs(
        tensions=tau if tau is not None else (None if L_cmd is not None else np.zeros(n_t)),
        lengths=L_cmd,
        tip_force=_vec3("tip_force", tip_force),
        tip_moment=_vec3("tip_moment", tip_moment),
        distributed_force=_vec3("distributed_force", distributed_force),
        gravity=_vec3("gravity", gravity),
        point_loads=_point_loads(point_loads, model.total_length),
    )


def _tendon_name(model: RodModel, i: int) -> tuple[int, int]:
    seg = int(model.tendon_seg[i])
    k = int(np.sum(model.tendon_seg[:i] == seg))
    return seg, k


_MODEL_CACHE: OrderedDict[tuple[str, int | None, tuple[float, ...]], RodModel] = OrderedDict()


def as_model(
    robot: RodModel | RobotSpec | dict | str,
    steps: int | None = None,
    extra_nodes: tuple[float, ...] = (),
) -> RodModel:
    """A compiled model for `robot` (compiled specs are cached by content)."""
    if isinstance(robot, RodModel):
        missing = [s for s in extra_nodes if not np.any(np.abs(robot.node_s - s) < 1e-12)]
        if steps is None and not missing:
            return robot
        spec = robot.spec
    else:
        spec = load_robot(robot)
    key = (spec.model_dump_json(), steps, tuple(sorted(extra_nodes)))
    hit = _MODEL_CACHE.get(key)
    if hit is not None:
        _MODEL_CACHE.move_to_end(key)
        return hit
    model = compile_model(spec, steps=steps, extra_nodes=tuple(extra_nodes))
    _MODEL_CACHE[key] = model
    if len(_MODEL_CACHE) > 32:
        _MODEL_CACHE.popitem(last=False)
    return model


# ---------------------------------------------------------------------------------------------
# Result assembly


def _assemble(
    model: RodModel,
    method: str,
    Y: np.ndarray,
    X: np.ndarray,
    tau: np.ndarray,
    loads: _Loads,
    status: int,
    message: str,
    residual: float,
    nit: int,
    nfev: int,
    load_scale: float,
) -> StaticResult:
    n_t = model.n_tendons
    n_nodes = model.n_nodes
    positions = Y[:, 0:3].copy()
    rotations = Y[:, 3:12].reshape(n_nodes, 3, 3).copy()
    strain = X[:, 0:3].copy()
    curvature = X[:, 3:6].copy()
    node_seg = np.append(model.step_seg, model.step_seg[-1])
    # Total distal force at each node (distal side of point loads); the kernel removes the
    # tendons' share to leave what the backbone material carries.
    h = np.diff(model.node_s)
    N_node = np.empty((n_nodes, 3))
    N_node[:-1] = loads.N_end + loads.q_step * h[:, None]
    N_node[-1] = loads.N_end[-1]
    force = np.empty((n_nodes, 3))
    moment = np.empty((n_nodes, 3))
    _section_loads(
        Y,
        X,
        N_node,
        node_seg,
        model.seg_par,
        model.tendon_pack,
        np.ascontiguousarray(tau, dtype=float),
        force,
        moment,
    )
    lengths = Y[-1, 15 : 15 + n_t].copy()
    return StaticResult(
        method=method,
        success=status == 0,
        status=status,
        message=message,
        residual=float(residual),
        nit=int(nit),
        nfev=int(nfev),
        s=model.node_s.copy(),
        positions=positions,
        rotations=rotations,
        curvature=curvature,
        strain=strain,
        internal_force=force,
        internal_moment=moment,
        tendon_tension=np.asarray(tau, dtype=float).copy(),
        tendon_length=lengths,
        base_moment=Y[0, 12:15].copy(),
        load_scale=float(load_scale),
        extra={
            "load_moments": _distal_moments(model, loads, positions),
            "total_moment": Y[:, 12:15].copy(),
        },
    )


# ---------------------------------------------------------------------------------------------
# Shooting


_STATUS_MESSAGES = {
    0: "converged",
    1: "maximum number of Newton iterations reached",
    4: "observer update left a boundary residual above rtol",
    2: "Newton line search stalled (at round-off if the residual is tiny: rtol too small?)",
    3: "integration produced non-finite values (load beyond what the model can carry?)",
}


@dataclass(frozen=True)
class _Loads:
    """Kernel load arrays at one load level: N_end (n_steps, 3), q_step (n_steps, 3),
    node_moment (n_nodes, 3), and the tip wrench M_tip (3,) (point loads at s = L folded in)."""

    N_end: np.ndarray
    q_step: np.ndarray
    node_moment: np.ndarray
    tip_moment: np.ndarray


def _loads_at(model: RodModel, inp: StaticInputs, lam: float) -> _Loads:
    n_steps = model.step_seg.shape[0]
    node_force = lam * model.node_point_mass[:, None] * inp.gravity[None, :]
    node_moment = np.zeros((model.n_nodes, 3))
    F_tip = lam * inp.tip_force
    M_tip = lam * inp.tip_moment
    for s_p, f_p, m_p in inp.point_loads:
        k = int(np.argmin(np.abs(model.node_s - s_p)))
        if k == model.n_nodes - 1:
            F_tip = F_tip + lam * f_p
            M_tip = M_tip + lam * m_p
        else:
            node_force[k] += lam * f_p
            node_moment[k] += lam * m_p
    N_end = np.empty((n_steps, 3))
    q_step = np.empty((n_steps, 3))
    _distal_loads(
        model.node_s,
        model.step_seg,
        node_force,
        model.seg_par,
        F_tip,
        lam * inp.distributed_force,
        lam * inp.gravity,
        N_end,
        q_step,
    )
    return _Loads(N_end, q_step, node_moment, M_tip)


@dataclass(frozen=True)
class _Problem:
    """The kernels' arguments for one static problem at one load level (see
    `_static_kernels._residual`): unknowns are (M0, [tensions under length control])."""

    length_mode: bool
    tau_fixed: np.ndarray
    base: tuple[np.ndarray, np.ndarray]
    geo: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]
    ld: tuple[np.ndarray, np.ndarray, np.ndarray]
    bc: tuple[np.ndarray, np.ndarray, np.ndarray, float, float]
    loads: _Loads

    @property
    def n_unknowns(self) -> int:
        return 3 + (self.tau_fixed.shape[0] if self.length_mode else 0)


def _problem(model: RodModel, inp: StaticInputs, lam: float = 1.0) -> _Problem:
    """Kernel arguments at load level lam (every load, tension and tendon shortening scaled)."""
    n_t = model.n_tendons
    loads = _loads_at(model, inp, lam)
    tau = inp.tensions if inp.tensions is not None else np.zeros(n_t)
    if inp.lengths is not None:
        L_cmd = model.tendon_rest_length + lam * (inp.lengths - model.tendon_rest_length)
    else:
        L_cmd = np.zeros(n_t)
    return _Problem(
        length_mode=inp.lengths is not None,
        tau_fixed=np.ascontiguousarray(lam * tau, dtype=float),
        base=model.kernel_base,
        geo=model.kernel_geometry,
        ld=(loads.N_end, loads.q_step, loads.node_moment),
        bc=(loads.tip_moment, L_cmd, model.tendon_k, model.moment_scale, model.tension_scale),
        loads=loads,
    )


def _distal_moments(model: RodModel, loads: _Loads, positions: np.ndarray | None) -> np.ndarray:
    """Moment of the external loads distal to each node about it, on a given shape
    (n_nodes, 3) [N m]; the straight robot when positions is None. At equilibrium this is the
    total section moment M; on a previous equilibrium (warm start) or the straight robot (cold
    start) it is the rigid-body predictor of M. Tendons are internal and do not enter."""
    if positions is None:
        axis = model.base_rotation[:, 2]
        positions = model.base_position + model.node_s[:, None] * axis
    out = np.empty((model.n_nodes, 3))
    _distal_moments_on_shape(
        np.ascontiguousarray(positions),
        model.node_s,
        loads.N_end,
        loads.q_step,
        loads.node_moment,
        loads.tip_moment,
        out,
    )
    return out


def _base_moment_on_shape(
    model: RodModel, loads: _Loads, positions: np.ndarray | None
) -> np.ndarray:
    """Total base moment of the loads acting on a given shape (3,) [N m]."""
    return _distal_moments(model, loads, positions)[0]


def _zero_inputs(model: RodModel, inp: StaticInputs) -> StaticInputs:
    """The unloaded robot in the same input mode: no loads, tendons unloaded (tensions 0) or
    at their straight path length (length control)."""
    z3 = np.zeros(3)
    return StaticInputs(
        tensions=None if inp.lengths is not None else np.zeros(model.n_tendons),
        lengths=model.tendon_rest_length.copy() if inp.lengths is not None else None,
        tip_force=z3,
        tip_moment=z3,
        distributed_force=z3,
        gravity=z3,
        point_loads=tuple((s_p, z3, z3) for s_p, _, _ in inp.point_loads),
    )


def _blend(a: StaticInputs, b: StaticInputs, mu: float) -> StaticInputs | None:
    """(1 - mu) a + mu b, or None when the two are not comparable (modes, point loads)."""
    if (a.lengths is None) != (b.lengths is None):
        return None
    if [p[0] for p in a.point_loads] != [p[0] for p in b.point_loads]:
        return None

    def mix(x: np.ndarray | None, y: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or y is None else (1.0 - mu) * x + mu * y

    return StaticInputs(
        tensions=mix(a.tensions, b.tensions),
        lengths=mix(a.lengths, b.lengths),
        tip_force=(1.0 - mu) * a.tip_force + mu * b.tip_force,
        tip_moment=(1.0 - mu) * a.tip_moment + mu * b.tip_moment,
        distributed_force=(1.0 - mu) * a.distributed_force + mu * b.distributed_force,
        gravity=(1.0 - mu) * a.gravity + mu * b.gravity,
        point_loads=tuple(
            (pa[0], (1.0 - mu) * pa[1] + mu * pb[1], (1.0 - mu) * pa[2] + mu * pb[2])
            for pa, pb in zip(a.point_loads, b.point_loads, strict=True)
        ),
    )


def _load_number(model: RodModel, inp: StaticInputs) -> float:
    """~ P L^2 / EI of the external loads: the larger of their base moment on the straight
    robot and their largest distal force times L, over the moment scale (tendons are internal).
    It sets both the nonlinearity and the conditioning of shooting (~ exp(sqrt(.)))."""
    loads = _loads_at(model, inp, 1.0)
    straight = float(np.linalg.norm(_base_moment_on_shape(model, loads, None)))
    force = float(np.abs(loads.N_end).max(initial=0.0)) * model.total_length
    return max(straight, force) / model.moment_scale


@dataclass
class _March:
    """State of a multiple-shooting march: the last equilibrium's inputs and node arrays."""

    inputs: StaticInputs
    positions: np.ndarray
    rotations: np.ndarray
    moments: np.ndarray
    tau: np.ndarray
    residual: float
    nit: int = 0
    nfev: int = 0


def _march(
    model: RodModel,
    start: _March,
    target: StaticInputs,
    K: int,
    rtol: float,
    max_iter: int,
    Y: np.ndarray,
    X: np.ndarray,
) -> tuple[_March, float, int]:
    """Multiple shooting along the straight input path from `start` (an equilibrium) to
    `target`, in steps of at most `_DIRECT_LOAD_ANGLE` of load number. Each step starts every
    interval from the last equilibrium (frames, and moments plus the load change on its
    shape). Returns (last equilibrium, fraction of the path reached, status)."""
    gap = _blend(target, start.inputs, 1.0)
    assert gap is not None
    delta = StaticInputs(
        tensions=None
        if target.tensions is None or start.inputs.tensions is None
        else target.tensions - start.inputs.tensions,
        lengths=None,
        tip_force=target.tip_force - start.inputs.tip_force,
        tip_moment=target.tip_moment - start.inputs.tip_moment,
        distributed_force=target.distributed_force - start.inputs.distributed_force,
        gravity=target.gravity - start.inputs.gravity,
        point_loads=tuple(
            (a[0], a[1] - b[1], a[2] - b[2])
            for a, b in zip(target.point_loads, start.inputs.point_loads, strict=True)
        ),
    )
    dmu_max = min(1.0, _DIRECT_LOAD_ANGLE / max(_load_number(model, delta), 1e-12))
    dmu = dmu_max
    mu, cur, status, solves = 0.0, start, 0, 0
    loads_cur = _loads_at(model, cur.inputs, 1.0)
    while mu < 1.0 and solves < _MAX_CONTINUATION_SOLVES:
        trial = min(1.0, mu + dmu)
        inp_t = _blend(start.inputs, target, trial)
        assert inp_t is not None
        pb = _problem(model, inp_t, 1.0)
        mom = cur.moments + (
            _distal_moments(model, pb.loads, cur.positions)
            - _distal_moments(model, loads_cur, cur.positions)
        )
        st, _, tau, res, it, fe = multiple_shooting(
            model,
            pb,
            K,
            mom[0],
            cur.tau,
            cur.rotations,
            mom,
            rtol,
            max_iter if trial == 1.0 and mu == 0.0 else 12,
            Y,
            X,
        )
        solves += 1
        cur.nit += it
        cur.nfev += fe
        if st == 0:
            cur = _March(
                inp_t,
                Y[:, 0:3].copy(),
                Y[:, 3:12].reshape(-1, 3, 3).copy(),
                Y[:, 12:15].copy(),
                tau,
                res,
                cur.nit,
                cur.nfev,
            )
            loads_cur, mu = pb.loads, trial
            dmu = min(2.0 * dmu, dmu_max)
        else:
            status = st
            dmu *= 0.5
            if dmu < _MIN_LOAD_STEP:
                break
    if mu >= 1.0:
        status = 0
    elif status == 0:
        status = 1
    return cur, mu, status


def _solve_multiple(
    model: RodModel,
    inp: StaticInputs,
    guess: StaticResult | None,
    K: int,
    rtol: float,
    max_iter: int,
) -> StaticResult:
    """Heavy loads: multiple shooting over K intervals. From a guess (a previous result of
    this robot) the loads move from the guess's inputs to these along a straight path; else,
    or if that fails, they are ramped from the unloaded robot. Each step starts from the last
    equilibrium, so the answer is the equilibrium branch a robot follows as its loads change."""
    n_t = model.n_tendons
    Y = np.empty((model.n_nodes, 15 + n_t))
    X = np.empty((model.n_nodes, 6))
    nit = nfev = 0
    result: _March | None = None
    status, frac = 1, 0.0
    old = guess.extra.get("inputs") if guess is not None else None
    if (
        guess is not None
        and old is not None
        and guess.positions.shape == (model.n_nodes, 3)
        and _blend(old, inp, 0.0) is not None
    ):
        start = _March(
            old,
            guess.positions,
            guess.rotations,
            guess.extra["total_moment"],
            guess.tendon_tension.copy(),
            guess.residual,
        )
        result, frac, status = _march(model, start, inp, K, rtol, max_iter, Y, X)
        nit, nfev = result.nit, result.nfev
    lam = 1.0
    if status != 0:
        # Ramp from the unloaded robot (M = 0 everywhere, straight or precurved frames).
        zero = _zero_inputs(model, inp)
        pb0 = _problem(model, zero, 1.0)
        rot = np.repeat(model.base_rotation[None], model.n_nodes, axis=0)
        st, _, tau0, res0, it, fe = multiple_shooting(
            model,
            pb0,
            K,
            np.zeros(3),
            np.zeros(n_t),
            rot,
            np.zeros((model.n_nodes, 3)),
            rtol,
            max_iter,
            Y,
            X,
        )
        start = _March(
            zero,
            Y[:, 0:3].copy(),
            Y[:, 3:12].reshape(-1, 3, 3).copy(),
            Y[:, 12:15].copy(),
            tau0,
            res0,
            it,
            fe,
        )
        result, lam, status = _march(model, start, inp, K, rtol, max_iter, Y, X)
        nit, nfev = nit + result.nit, nfev + result.nfev
        if st != 0:
            status, lam = st, 0.0
    assert result is not None
    # Y holds the last multiple-shooting evaluation; re-evaluate the accepted equilibrium.
    pb = _problem(model, result.inputs, 1.0)
    multiple_shooting(
        model, pb, K, result.moments[0], result.tau, result.rotations, result.moments, rtol, 0, Y, X
    )
    tau = result.tau.copy() if inp.lengths is not None else pb.tau_fixed.copy()
    if inp.lengths is not None:
        tau[Y[-1, 15 : 15 + n_t] <= pb.bc[1]] = 0.0
    if status == 0:
        message = f"converged (multiple shooting, {K} intervals)"
    else:
        message = (
            f"did not converge (multiple shooting, {K} intervals): "
            f"{_STATUS_MESSAGES.get(status, 'failed')}; the shape returned is the equilibrium "
            f"at {100 * lam:.1f}% of the load"
        )
    out = _assemble(
        model, "shooting", Y, X, tau, pb.loads, status, message, result.residual, nit, nfev, lam
    )
    out.extra["inputs"] = result.inputs
    return out


def _solve_shooting(
    model: RodModel,
    inp: StaticInputs,
    guess: StaticResult | None,
    rtol: float,
    max_iter: int,
    intervals: int | None = None,
) -> StaticResult:
    """Newton shooting; `intervals` forces multiple shooting over that many intervals (default:
    single shooting, multiple shooting when the external load is large)."""
    if intervals is not None and (not isinstance(intervals, int) or intervals < 1):
        raise ValueError(f"intervals must be a positive integer, got {intervals!r}")
    n_t = model.n_tendons
    length_mode = inp.lengths is not None
    n_unk = 3 + (n_t if length_mode else 0)
    tau_fixed = inp.tensions if inp.tensions is not None else np.zeros(n_t)
    L_cmd = inp.lengths if inp.lengths is not None else np.zeros(n_t)
    Y = np.empty((model.n_nodes, 15 + n_t))
    X = np.empty((model.n_nodes, 6))
    counters = np.zeros(3)

    def run(x: np.ndarray, lam: float, iters: int) -> int:
        pb = _problem(model, inp, lam)
        return int(
            _newton(
                x,
                pb.length_mode,
                pb.tau_fixed,
                pb.base,
                pb.geo,
                pb.ld,
                pb.bc,
                rtol,
                iters,
                Y,
                X,
                counters,
            )
        )

    # Starting point: the guess, or the straight-robot moment (and PCC tensions).
    x0 = np.zeros(n_unk)
    if guess is not None:
        if guess.tendon_tension.shape != (n_t,) or guess.base_moment.shape != (3,):
            raise ValueError(
                f"guess must be a result for a robot with {n_t} tendons, "
                f"got one with {guess.tendon_tension.shape[0]}"
            )
        same_grid = guess.positions.shape == (model.n_nodes, 3)
        moment = _base_moment_on_shape(
            model, _loads_at(model, inp, 1.0), guess.positions if same_grid else None
        )
        old = guess.extra.get("load_moments")
        # The guess's own unknown plus the change of the loads' moment on its shape: exact
        # when the loads are unchanged, the rigid-body predictor when they move.
        x0[:3] = guess.base_moment + (moment - old[0]) if same_grid and old is not None else moment
        if length_mode:
            x0[3:] = guess.tendon_tension
    else:
        x0[:3] = _base_moment_on_shape(model, _loads_at(model, inp, 1.0), None)
        if length_mode:
            x0[3:] = _pcc_tensions(model, L_cmd)

    def continuation(dlam: float, dlam_max: float = 0.5) -> tuple[np.ndarray, float, int]:
        # Ramp every load from the unloaded robot with adaptive increments; this follows the
        # equilibrium branch a physical robot follows as the load grows.
        lam = 0.0
        x_lam = np.zeros(n_unk)
        x_prev: np.ndarray | None = None
        lam_prev = 0.0
        solves = 0
        st = 0
        while lam < 1.0 and solves < _MAX_CONTINUATION_SOLVES:
            trial = min(1.0, lam + dlam)
            x = x_lam.copy()
            if x_prev is not None and lam > lam_prev:
                # Secant predictor along the load path.
                x += (x_lam - x_prev) * (trial - lam) / (lam - lam_prev)
            st = run(x, trial, 12)
            solves += 1
            if st == 0:
                x_prev, lam_prev = x_lam, lam
                x_lam, lam = x.copy(), trial
                dlam = min(2.0 * dlam, dlam_max)
            else:
                dlam *= 0.5
                if dlam < _MIN_LOAD_STEP:
                    break
        if lam < 1.0:
            run(x_lam, lam, 0)  # leave the arrays describing the last converged load level
            return x_lam, lam, st or 1
        return x_lam, 1.0, 0

    # Load number ~ P L^2 / EI: the largest distal force (tendons are internal) or the base
    # moment of the loads on the straight robot, over the bending stiffness. It sets both the
    # nonlinearity and the conditioning of shooting (growth ~ exp(sqrt(load number))).
    load_angle = _load_number(model, inp)
    if intervals is None and load_angle > _MULTI_SHOOT_ANGLE:
        root = np.sqrt(load_angle) / _ROOT_ANGLE_PER_INTERVAL
        intervals = int(np.ceil(root)) if np.isfinite(root) else _MAX_INTERVALS
    if intervals is not None and intervals > 1:
        K = min(_MAX_INTERVALS, intervals)
        out = _solve_multiple(model, inp, guess, K, rtol, max_iter)
        return out
    # A cold start under a large external load goes straight to continuation: Newton from
    # the straight robot can land on a looped (unstable) equilibrium branch.
    if guess is None and load_angle > _DIRECT_LOAD_ANGLE:
        step = _DIRECT_LOAD_ANGLE / load_angle
        x, lam_reached, status = continuation(step, step)
    else:
        x = x0.copy()
        status = run(x, 1.0, max_iter)
        lam_reached = 1.0
        # A stall at a residual already at round-off level (rtol set below it) keeps the
        # full-load answer and reports the stall; any other failure ramps the load.
        if status != 0 and not (status == 2 and counters[2] <= _ROUND_OFF_RESIDUAL):
            x, lam_reached, status = continuation(0.25)
    loads = _loads_at(model, inp, lam_reached)
    tau = x[3:].copy() if length_mode else lam_reached * tau_fixed
    if length_mode:
        # A slack tendon carries exactly no tension (Newton leaves ~1e-27 of round-off).
        L_lam = model.tendon_rest_length + lam_reached * (L_cmd - model.tendon_rest_length)
        tau[Y[-1, 15 : 15 + n_t] <= L_lam] = 0.0
    if status == 0:
        message = "converged"
    else:
        message = (
            f"did not converge: {_STATUS_MESSAGES.get(status, 'failed')}; the shape returned is "
            f"the equilibrium at {100 * lam_reached:.1f}% of the load"
        )
    out = _assemble(
        model,
        "shooting",
        Y,
        X,
        tau,
        loads,
        status,
        message,
        counters[2],
        int(counters[0]),
        int(counters[1]),
        lam_reached,
    )
    # The inputs this shape is in equilibrium with (warm starts march from them).
    out.extra["inputs"] = _blend(_zero_inputs(model, inp), inp, lam_reached)
    return out


# ---------------------------------------------------------------------------------------------
# Constant curvature (load-free baseline)


def _pcc_curvatures(model: RodModel, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-segment curvature u (n_seg, 3) and axial stretch v_z (n_seg,) with no external load.

    Exact for both backbone models when the precurvature has no twist: every tendon stays
    parallel to the backbone (t = e3), so each segment balances sum tau e3 x r against K_bt u.
    """
    n_seg = model.seg_length.shape[0]
    u = model.u_star.copy()
    vz = np.ones(n_seg)
    for j in range(n_seg):
        act = model.tendon_seg >= j
        m = np.sum(tau[act, None] * np.cross([0.0, 0.0, 1.0], model.tendon_r[act]), axis=0)
        u[j] += m / model.K_bt[j]
        if model.cosserat:
            vz[j] = 1.0 - tau[act].sum() / model.K_se[j, 2]
    return u, vz


def _pcc_lengths_matrix(model: RodModel) -> tuple[np.ndarray, np.ndarray]:
    """Tendon path lengths l = l0 + A tau under constant curvature (linear in tau)."""
    n_t = model.n_tendons
    base = np.zeros(n_t)
    u0, vz0 = _pcc_curvatures(model, np.zeros(n_t))
    A = np.zeros((n_t, n_t))

    def lengths(u: np.ndarray, vz: np.ndarray) -> np.ndarray:
        out = np.zeros(n_t)
        for i in range(n_t):
            for j in range(int(model.tendon_seg[i]) + 1):
                w_z = vz[j] + np.cross(u[j], model.tendon_r[i])[2]
                out[i] += model.seg_length[j] * w_z
        return out

    base = lengths(u0, vz0)
    for k in range(n_t):
        e = np.zeros(n_t)
        e[k] = 1.0
        u, vz = _pcc_curvatures(model, e)
        A[:, k] = lengths(u, vz) - base
    return base, A


def _pcc_tensions(model: RodModel, L_cmd: np.ndarray) -> np.ndarray:
    """Tensions of elastic pull-only tendons under constant curvature (semismooth Newton)."""
    n_t = model.n_tendons
    if n_t == 0:
        return np.zeros(0)
    k = np.nan_to_num(model.tendon_stiffness, nan=0.0)
    l0, A = _pcc_lengths_matrix(model)
    tau = np.zeros(n_t)
    for _ in range(50):
        stretch = l0 + A @ tau - L_cmd
        active = stretch > 0
        r = tau - k * np.where(active, stretch, 0.0)
        Jm = np.eye(n_t) - (k * active)[:, None] * A
        step = np.linalg.solve(Jm, -r)
        tau = tau + step
        if np.max(np.abs(step)) <= 1e-12 * (1.0 + np.max(np.abs(tau))):
            break
    return tau


def _arc(R0: np.ndarray, p0: np.ndarray, u: np.ndarray, vz: float, s: np.ndarray):
    """Positions (n, 3) and rotations (n, 3, 3) along a constant-strain arc, s from its base."""
    th = np.linalg.norm(u)
    uh = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    uh2 = uh @ uh
    n = s.shape[0]
    Rs = np.empty((n, 3, 3))
    ps = np.empty((n, 3))
    for k, sk in enumerate(s):
        a = th * sk
        if th * sk < 1e-6:
            c1, c2 = sk * sk / 2.0, sk**3 / 6.0
            e1, e2 = sk, sk * sk / 2.0
        else:
            c1, c2 = (1.0 - math.cos(a)) / th**2, (a - math.sin(a)) / th**3
            e1, e2 = math.sin(a) / th, (1.0 - math.cos(a)) / th**2
        expm = np.eye(3) + e1 * uh + e2 * uh2
        integ = sk * np.eye(3) + c1 * uh + c2 * uh2
        Rs[k] = R0 @ expm
        ps[k] = p0 + R0 @ (integ @ np.array([0.0, 0.0, vz]))
    return ps, Rs


def _solve_pcc(
    model: RodModel, inp: StaticInputs, guess: StaticResult | None, rtol: float, max_iter: int
) -> StaticResult:
    n_t = model.n_tendons
    if inp.lengths is not None:
        tau = _pcc_tensions(model, inp.lengths)
    else:
        assert inp.tensions is not None
        tau = inp.tensions
    u, vz = _pcc_curvatures(model, tau)
    n_nodes = model.n_nodes
    node_seg = np.append(model.step_seg, model.step_seg[-1])
    positions = np.empty((n_nodes, 3))
    rotations = np.empty((n_nodes, 3, 3))
    p0, R0 = model.base_position.copy(), model.base_rotation.copy()
    for j in range(model.seg_length.shape[0]):
        steps_j = np.flatnonzero(model.step_seg == j)
        idx = np.arange(steps_j[0], steps_j[-1] + 2)  # the segment's nodes, both ends included
        s_loc = model.node_s[idx] - model.seg_start[j]
        ps, Rs = _arc(R0, p0, u[j], vz[j], s_loc)
        positions[idx] = ps
        rotations[idx] = Rs
        p0, R0 = ps[-1].copy(), Rs[-1].copy()
    curvature = u[node_seg]
    strain = np.zeros((n_nodes, 3))
    strain[:, 2] = vz[node_seg]
    # Tendon path lengths and the section loads implied by the tendons alone.
    _, A = _pcc_lengths_matrix(model) if n_t else (None, np.zeros((0, 0)))
    l0, _ = _pcc_lengths_matrix(model) if n_t else (np.zeros(0), None)
    lengths = l0 + A @ tau if n_t else np.zeros(0)
    force = np.zeros((n_nodes, 3))
    for i in range(n_t):
        act = node_seg <= model.tendon_seg[i]
        force[act] -= tau[i] * rotations[act, :, 2]
    moment = np.einsum(
        "nab,nb->na", rotations, model.K_bt[node_seg] * (curvature - model.u_star[node_seg])
    )
    ignored = inp.has_external_load
    message = "constant-curvature kinematics" + (
        "; external loads and gravity are ignored by this model" if ignored else ""
    )
    return StaticResult(
        method="pcc",
        success=True,
        status=0,
        message=message,
        residual=0.0,
        nit=0,
        nfev=0,
        s=model.node_s.copy(),
        positions=positions,
        rotations=rotations,
        curvature=curvature,
        strain=strain,
        internal_force=force,
        internal_moment=moment,
        tendon_tension=np.asarray(tau, float).copy(),
        tendon_length=lengths,
        base_moment=np.zeros(3),
        load_scale=1.0,
    )


_Solver = Callable[[RodModel, StaticInputs, "StaticResult | None", float, int], StaticResult]

#: Registry of static methods: name -> solver(model, inputs, guess, rtol, max_iter).
METHODS: dict[str, _Solver] = {"shooting": _solve_shooting, "pcc": _solve_pcc}


def solve_static(
    robot: RodModel | RobotSpec | dict | str,
    tensions: Sequence[float] | np.ndarray | None = None,
    *,
    lengths: Sequence[float] | np.ndarray | None = None,
    tip_force: Sequence[float] | np.ndarray | None = None,
    tip_moment: Sequence[float] | np.ndarray | None = None,
    distributed_force: Sequence[float] | np.ndarray | None = None,
    gravity: Sequence[float] | np.ndarray | None = None,
    point_loads: Sequence[Any] | None = None,
    method: str = "shooting",
    guess: StaticResult | None = None,
    rtol: float = DEFAULT_RTOL,
    max_iter: int = DEFAULT_MAX_ITER,
    steps: int | None = None,
    **options: Any,
) -> StaticResult:
    """Static equilibrium of a continuum robot.

    Parameters
    ----------
    robot : RobotSpec, dict, path to YAML/JSON, or a compiled `RodModel` (fastest in loops).
    tensions : (n_t,) tendon tensions [N], >= 0, ordered segment by segment.
    lengths : (n_t,) commanded tendon lengths [m] for elastic pull-only tendons (each needs
        `stiffness`); tensions are solved for. Give tensions or lengths, not both.
    tip_force, tip_moment : (3,) world-frame load at the distal end [N], [N m].
    distributed_force : (3,) uniform world-frame load per unit length [N/m].
    gravity : (3,) [m/s^2]; adds the weight of backbone and disks.
    point_loads : [(s, force (3,), moment (3,) optional), ...] world-frame point loads at arc
        length s in (0, L] [m, N, N m].
    method : "shooting" (Newton shooting, exact), "observer" (one SoftManiSim observer update
        from the state carried by `guess`; repeat with guess=previous to converge or to track
        a time-varying input) or "pcc" (constant curvature, load-free).
    guess : a previous result of the same robot to warm-start from.
    rtol : tolerance on the scaled boundary residual (see `DEFAULT_RTOL`).
    max_iter : Newton iterations before load continuation takes over.
    steps : integration steps along the backbone (default from the model).
    **options : method options. shooting: `intervals` (int) forces multiple shooting over
        that many intervals; by default single shooting is used and multiple shooting takes
        over when the external load's bending angle exceeds `_MULTI_SHOOT_ANGLE`.

    Returns
    -------
    StaticResult with `success`, `status`, `message`; a failed solve says so and returns the
    equilibrium at the largest fraction of the load it reached (`load_scale`).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    if not (isinstance(rtol, int | float) and rtol > 0 and math.isfinite(rtol)):
        raise ValueError(f"rtol must be a positive number, got {rtol!r}")
    if not (isinstance(max_iter, int) and max_iter >= 0):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    nodes = tuple(float(p[0]) for p in point_loads) if point_loads else ()
    model = as_model(robot, steps, nodes)
    inp = check_inputs(
        model, tensions, lengths, tip_force, tip_moment, distributed_force, gravity, point_loads
    )
    if options and method != "shooting":
        raise ValueError(f"method {method!r} takes no options, got {sorted(options)}")
    unknown = set(options) - {"intervals"}
    if unknown:
        raise ValueError(f"unknown option {sorted(unknown)[0]!r} for method {method!r}")
    return METHODS[method](model, inp, guess, float(rtol), max_iter, **options)


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
    robot: RodModel | RobotSpec | dict | str,
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
    robot: RodModel | RobotSpec | dict | str,
    result: StaticResult,
    tensions: Any = None,
    *,
    lengths: Any = None,
    tip_force: Any = None,
    tip_moment: Any = None,
    distributed_force: Any = None,
    gravity: Any = None,
    point_loads: Any = None,
    steps: int | None = None,
) -> np.ndarray:
    """Exact d tip_position / d inputs (3, n_t) at a converged shooting `result`.

    The inputs are the tensions [m/N] or, under length control, the commanded lengths [m/m];
    pass the same inputs that produced `result`. Uses the implicit function theorem on the
    shooting residual: dx/dinput = -J^-1 dr/dinput.
    """
    if not result.success:
        raise ValueError("tip_jacobian needs a converged result (result.success is False)")
    kw = dict(
        lengths=lengths,
        tip_force=tip_force,
        tip_moment=tip_moment,
        distributed_force=distributed_force,
        gravity=gravity,
        point_loads=point_loads,
        steps=steps,
    )
    if lengths is None:
        ev = shooting_eval(robot, result.base_moment, tensions, **kw)
        # r(M0, tau) = (M(L) - M_tip)/m: dM0/dtau = -(dM/dM0)^-1 dM/dtau
        dM0 = -np.linalg.solve(ev.d_moment_d_M0, ev.d_moment_d_tension)
        return ev.d_tip_d_M0 @ dM0 + ev.d_tip_d_tension
    x = np.concatenate([result.base_moment, result.tendon_tension])
    ev = shooting_eval(robot, x, None, **kw)
    model = as_model(robot, steps)
    n_t = model.n_tendons
    t_scale = model.tension_scale
    k_t = model.tendon_k
    L_cmd = np.asarray(lengths, dtype=float)
    active = (ev.tendon_length - L_cmd) > 0
    dr_dL = np.zeros((3 + n_t, n_t))
    dr_dL[3:, :] = np.diag(k_t * active) / t_scale
    dx = -np.linalg.solve(ev.jacobian, dr_dL)
    return ev.d_tip_d_M0 @ dx[:3] + ev.d_tip_d_tension @ dx[3:]
