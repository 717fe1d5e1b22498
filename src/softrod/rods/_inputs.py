"""Inputs of a static solve: the checked `StaticLoads` and the kernel load arrays they give.

`check_inputs` is the one place loads are validated; everything downstream (shooting, pcc,
observer, sensitivities, warm starts) takes a `StaticLoads`.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from softrod.description import check_actuation
from softrod.rods._model import RodModel
from softrod.rods._static_kernels import _distal_loads, _distal_moments_on_shape

__all__ = ["StaticLoads", "check_inputs"]


@dataclass(frozen=True)
class StaticLoads:
    """Validated inputs of one static solve (SI, world frame); build it with `check_inputs`.

    tensions : (n_t,) [N] or None; lengths : (n_t,) commanded tendon rest lengths [m] or None
        (exactly one of the two is set: tension or length control).
    tip_force, tip_moment : (3,) [N], [N m] at the distal end.
    distributed_force : (3,) uniform load per unit (reference) length [N/m].
    gravity : (3,) [m/s^2]; loads the backbone's and disks' mass.
    point_loads : ((s [m], force (3,) [N], moment (3,) [N m]), ...) world-frame loads on the
        backbone at arc length s.
    pressures : (n_c,) chamber gauge pressures [Pa] (None for a robot without chambers). The
        kernels see them as the tensions of the internal chamber tendons of
        `RodModel.with_chambers` (`_with_chambers` folds them in).
    tension_profile : (n_steps, n_t) tension in each integration step over the tendon's base
        tension [-] on the model's grid (tendon friction, `softrod.rods.solve_sequence`);
        None is 1 everywhere (tension constant along every tendon, no friction).
    field : (3,) uniform field B [T]; field_gradient : (3, 3) dB_i/dx_j [T/m] (issue 20). The
        torques (R m) x B of the robot's dipoles follow the shape inside the kernels; the
        gradient forces (grad B)^T R m are held at a shape (`magnet_forces`).
    magnet_forces : the gradient forces held fixed during one solve (`_static`'s fixed point):
        (point-dipole forces (n_m, 3) [N], (s samples (n,) [m], (grad B)^T R (n, 3, 3) [T/m]
        on which the backbone's force density (grad B)^T R M A is held)), or None.
    moments : (n_moments,) moment-actuator inputs [-] (None for a robot without them). The
        kernels see them as the model's rest curvature (`RodModel.with_moments`, folded in by
        `solve_static` and `tip_jacobian`).
    """

    tensions: np.ndarray | None
    lengths: np.ndarray | None
    tip_force: np.ndarray
    tip_moment: np.ndarray
    distributed_force: np.ndarray
    gravity: np.ndarray
    point_loads: tuple[tuple[float, np.ndarray, np.ndarray], ...] = ()
    pressures: np.ndarray | None = None
    tension_profile: np.ndarray | None = None
    field: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    field_gradient: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((3, 3)))
    magnet_forces: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None = None
    moments: np.ndarray | None = None

    @property
    def has_external_load(self) -> bool:
        """True when any load besides the tendons acts (tip, distributed, gravity, point,
        a magnetic field)."""
        return bool(
            np.any(self.tip_force)
            or np.any(self.tip_moment)
            or np.any(self.distributed_force)
            or np.any(self.gravity)
            or bool(self.point_loads)
            or np.any(self.field)
            or np.any(self.field_gradient)
        )


def _frozen(cls: type[Any], fields: dict[str, Any]) -> Any:
    """`cls(**fields)` for a frozen dataclass without defaults' or `__post_init__`'s work,
    given every field: the generated `__init__` sets each field by `object.__setattr__`
    (~1-2 us for these small classes, several times a solve). An unknown or missing name is a
    TypeError, as with `cls(**fields)`."""
    if fields.keys() != cls.__dataclass_fields__.keys():
        names = fields.keys() ^ cls.__dataclass_fields__.keys()
        raise TypeError(f"{cls.__name__} fields {sorted(names)} missing or unknown")
    new = object.__new__(cls)
    new.__dict__.update(fields)
    return new


# ---------------------------------------------------------------------------------------------
# Input handling


def _vec3(name: str, value: Sequence[float] | np.ndarray | None) -> np.ndarray:
    if value is None:
        return np.zeros(3)
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (3,):
        raise ValueError(f"{name} must have 3 components [x, y, z], got {arr.tolist()}")
    # A sum is finite exactly when every term is (one reduction, no temporary mask).
    if not math.isfinite(arr[0] + arr[1] + arr[2]) and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}")
    return arr


def _tendon_vector(name: str, value: Any, n_t: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (n_t,):
        raise ValueError(
            f"{name} must have {n_t} values (one per tendon, segment by segment), "
            f"got {arr.shape[0]}"
        )
    # The index of a bad value only when there is one (the sum test is one reduction).
    if not math.isfinite(float(arr.sum())):
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
    pressures: Any = None,
    field: Any = None,
    field_gradient: Any = None,
    moments: Any = None,
) -> StaticLoads:
    """Validate solver inputs against a model; raises ValueError naming the bad field.

    pressures : (n_c,) chamber gauge pressures [Pa] in `RobotSpec.chamber_list()` order (None
    is zero); checked by `softrod.description.check_actuation` (count, finite, range).
    field : (3,) [T], field_gradient : (3, 3) [T/m] (None is zero); checked the same way.
    moments : (n_moments,) [-] moment-actuator inputs in `moment_actuator_list()` order (None
    is zero); checked the same way (count, finite)."""
    n_t = model.n_tendons
    if tensions is not None and lengths is not None:
        raise ValueError("give tensions or lengths, not both")
    tau = None
    L_cmd = None
    if tensions is not None:
        tau = _tendon_vector("tensions", tensions, n_t)
        if n_t and tau.min() < 0:
            neg = np.flatnonzero(tau < 0)
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
    if field is None and field_gradient is None and moments is None and pressures is None:
        # Nothing to check (a robot without chambers): check_actuation's zeros, without it.
        plain, n_moments = _actuation_counts(model)
    else:
        plain, n_moments = False, 0
    if plain:
        field_arr, gradient = np.zeros(3), np.zeros((3, 3))
        moment_arr = np.zeros(n_moments) if n_moments else None
    else:
        field_arr, gradient = _field(model, field, field_gradient)
        moment_arr = None
    return _frozen(
        StaticLoads,
        dict(
            tensions=tau if tau is not None else (None if L_cmd is not None else np.zeros(n_t)),
            lengths=L_cmd,
            tip_force=_vec3("tip_force", tip_force),
            tip_moment=_vec3("tip_moment", tip_moment),
            distributed_force=_vec3("distributed_force", distributed_force),
            gravity=_vec3("gravity", gravity),
            point_loads=_point_loads(point_loads, model.total_length),
            pressures=None if plain else _pressures(model, pressures),
            tension_profile=None,
            field=field_arr,
            field_gradient=gradient,
            magnet_forces=None,
            moments=moment_arr if plain else _moment_inputs(model, moments),
        ),
    )


#: Per model: (no chambers and no pressure inputs, number of moment inputs), what
#: `check_inputs` asks of the spec on every solve (counted once per model; dropped with it).
_ACTUATION_COUNTS: weakref.WeakKeyDictionary[RodModel, tuple[bool, int]] = (
    weakref.WeakKeyDictionary()
)


def _actuation_counts(model: RodModel) -> tuple[bool, int]:
    found = _ACTUATION_COUNTS.get(model)
    if found is None:
        found = (model.n_chambers == 0 and model.spec.n_pressures == 0, model.spec.n_moments)
        _ACTUATION_COUNTS[model] = found
    return found


def _moment_inputs(model: RodModel, moments: Any) -> np.ndarray | None:
    """Checked moment-actuator inputs (n_moments,), or None for a robot without them."""
    act = check_actuation(model.spec, moments=moments)
    return act.moments if model.spec.n_moments else None


#: Models with moment inputs folded in, per model and inputs (the last few): `solve_static` and
#: `tip_jacobian` get the same object, so the grids the error estimate refined it to are found.
_MOMENT_MODELS: weakref.WeakKeyDictionary[RodModel, dict[tuple[float, ...], RodModel]] = (
    weakref.WeakKeyDictionary()
)
_MOMENT_MODELS_KEPT = 8


def with_moment_inputs(model: RodModel, inp: StaticLoads) -> RodModel:
    """The model the kernels run on for `inp`'s moment-actuator inputs (`with_moments`)."""
    if inp.moments is None:
        # A model without folded-in inputs is its own (the common case: no moment actuators).
        return model if model.applied_moments.size == 0 else model.with_moments(None)
    key = tuple(float(x) for x in inp.moments)
    known = _MOMENT_MODELS.setdefault(model, {})
    if key not in known:
        shifted = model.with_moments(inp.moments)
        if shifted is model:  # nothing to fold in (a value holding its key would never go)
            return model
        if len(known) >= _MOMENT_MODELS_KEPT:
            known.pop(next(iter(known)))
        known[key] = shifted
    return known[key]


def add_actuator_moments(model: RodModel, result: Any) -> Any:
    """`result` with `internal_moment` (n, 3) [N m] the backbone material's share again: the
    kernels' rest curvature carries the actuators' internal moment tau m, so the section
    balance gives the material's moment less it; add R tau m back on the actuated nodes."""
    inp = result.inputs
    if inp.moments is None or not np.any(inp.moments) or result.internal_moment.size == 0:
        return result
    node_seg = np.append(model.step_seg, model.step_seg[-1])
    body = np.zeros((model.seg_par.shape[0], 3))
    for (j, act), tau in zip(model.spec.moment_actuator_list(), inp.moments, strict=True):
        body[j] += tau * np.asarray(act.moment)
    if result.s.shape[0] != node_seg.shape[0]:
        return result
    extra = np.einsum("nab,nb->na", result.rotations, body[node_seg])
    return dataclasses.replace(result, internal_moment=result.internal_moment + extra)


def _field(model: RodModel, field: Any, field_gradient: Any) -> tuple[np.ndarray, np.ndarray]:
    act = check_actuation(model.spec, field=field, field_gradient=field_gradient)
    return act.field, act.field_gradient


def _pressures(model: RodModel, pressures: Any) -> np.ndarray | None:
    if pressures is None and model.n_chambers == 0:
        return None
    return check_actuation(model.spec, pressures=pressures).pressures


def _with_chambers(model: RodModel, inp: StaticLoads) -> tuple[RodModel, StaticLoads]:
    """The model and loads the kernels run on: with chambers, `model.with_chambers` and the
    tensions extended by the internal chamber tendons' -p A_eff(p) (+p A_eff on the cancelling
    ones); unchanged without chambers, or under length control at zero pressure (the internal
    tendons would become unknowns of the length law). Pressures with length control: ValueError.
    """
    if inp.pressures is None or model.n_chambers == 0 or model.n_internal_tendons:
        return model, inp
    if inp.lengths is not None:
        if np.any(inp.pressures != 0.0):
            raise ValueError(
                "pressures cannot be combined with length control (lengths) yet; give tensions"
            )
        return model, inp
    assert inp.tensions is not None
    internal = model.chamber_map @ model.chamber_forces(inp.pressures)
    return model.with_chambers, dataclasses.replace(
        inp, tensions=np.concatenate([inp.tensions, internal]), pressures=None
    )


def _tendon_name(model: RodModel, i: int) -> tuple[int, int]:
    seg = int(model.tendon_seg[i])
    k = int(np.sum(model.tendon_seg[:i] == seg))
    return seg, k


@dataclass(frozen=True)
class _Loads:
    """Kernel load arrays at one load level: N_end (n_steps, 3), q_step (n_steps, 3),
    node_moment (n_nodes, 3), the tip wrench M_tip (3,) (point loads at s = L folded in), and
    the magnetic tuple of the kernels, (field B (3,) [T], node_dipole (n_nodes, 3) [A m^2],
    seg_dipole (n_seg, 3) [A m], first field sensitivity direction or -1)."""

    N_end: np.ndarray
    q_step: np.ndarray
    node_moment: np.ndarray
    tip_moment: np.ndarray
    magnetic: tuple[np.ndarray, np.ndarray, np.ndarray, int]


def _magnetic(
    model: RodModel, inp: StaticLoads, lam: float, field_dirs: int = -1
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The kernels' magnetic tuple at load level lam (field_dirs: see `_Loads`)."""
    if not model.is_magnetic:
        # The model's own (shared, read-only by the kernels): no arrays built per solve.
        return model.kernel_constants.no_field
    return (lam * inp.field, model.node_dipole, model.seg_dipole, field_dirs)


def _loads_at(model: RodModel, inp: StaticLoads, lam: float) -> _Loads:
    n_steps = model.step_seg.shape[0]
    consts = model.kernel_constants
    # Products even at lam = 1: fresh, contiguous, writable arrays, whatever the caller's
    # arrays are (a read-only or strided input array would be a new kernel signature).
    gravity, f_dist = lam * inp.gravity, lam * inp.distributed_force
    F_tip, M_tip = lam * inp.tip_force, lam * inp.tip_moment
    node_force = np.multiply.outer(model.node_point_mass, gravity)
    # Without point loads the node moments are the model's shared zeros (kernels only read).
    node_moment = np.zeros((model.n_nodes, 3)) if inp.point_loads else consts.zero_nodes
    for s_p, f_p, m_p in inp.point_loads:
        k = int(np.argmin(np.abs(model.node_s - s_p)))
        if k == model.n_nodes - 1:
            F_tip = F_tip + lam * f_p
            M_tip = M_tip + lam * m_p
        else:
            node_force[k] += lam * f_p
            node_moment[k] += lam * m_p
    if inp.magnet_forces is not None and model.is_magnetic:
        # Gradient forces held at a shape: point dipoles at their nodes (the last node's
        # force is the tip's, see `_distal_loads`), the backbone's density by the trapezoid rule.
        point, (s_d, GR) = inp.magnet_forces
        for s_m, f_m in zip(model.magnet_s, point, strict=True):
            node_force[int(np.argmin(np.abs(model.node_s - s_m)))] += lam * f_m
        if s_d.size and np.any(model.seg_dipole):
            GR_n = np.stack(
                [np.interp(model.node_s, s_d, GR[:, a // 3, a % 3]) for a in range(9)], 1
            ).reshape(-1, 3, 3)
            mu = model.seg_dipole[model.step_seg]  # (n_steps, 3)
            half = 0.5 * lam * np.diff(model.node_s)[:, None]
            node_force[:-1] += half * np.einsum("kij,kj->ki", GR_n[:-1], mu)
            node_force[1:] += half * np.einsum("kij,kj->ki", GR_n[1:], mu)
    N_end = np.empty((n_steps, 3))
    q_step = np.empty((n_steps, 3))
    _distal_loads(
        model.node_s,
        model.step_seg,
        node_force,
        model.seg_par,
        F_tip,
        f_dist,
        gravity,
        N_end,
        q_step,
    )
    return _frozen(
        _Loads,
        dict(
            N_end=N_end,
            q_step=q_step,
            node_moment=node_moment,
            tip_moment=M_tip,
            magnetic=_magnetic(model, inp, lam),
        ),
    )


@dataclass(frozen=True)
class _Problem:
    """The kernels' arguments for one static problem at one load level (see
    `_static_kernels._residual`): unknowns are (M0, [tensions under length control])."""

    length_mode: bool
    tau_fixed: np.ndarray
    base: tuple[np.ndarray, np.ndarray]
    geo: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]
    ld: tuple[
        np.ndarray,
        np.ndarray,
        np.ndarray,
        np.ndarray,
        tuple[np.ndarray, np.ndarray, np.ndarray, int],
    ]
    bc: tuple[np.ndarray, np.ndarray, np.ndarray, float, float]
    loads: _Loads

    @property
    def n_unknowns(self) -> int:
        return 3 + (self.tau_fixed.shape[0] if self.length_mode else 0)


def _problem(model: RodModel, inp: StaticLoads, lam: float = 1.0) -> _Problem:
    """Kernel arguments at load level lam (every load, tension and tendon shortening scaled)."""
    if inp.pressures is not None and np.any(inp.pressures != 0.0):
        # Pressures reach the kernels only as internal tendon tensions (`_with_chambers`).
        raise ValueError(
            "this operation does not take chamber pressures yet (solve_static does); "
            "got pressures != 0"
        )
    loads = _loads_at(model, inp, lam)
    consts = model.kernel_constants
    tau = inp.tensions if inp.tensions is not None else consts.zero_tendons
    if inp.lengths is not None:
        L_cmd = model.tendon_rest_length + lam * (inp.lengths - model.tendon_rest_length)
    else:
        L_cmd = consts.zero_tendons
    return _frozen(
        _Problem,
        dict(
            length_mode=inp.lengths is not None,
            tau_fixed=np.ascontiguousarray(lam * tau, dtype=float),
            base=model.kernel_base,
            geo=model.kernel_geometry,
            ld=(
                loads.N_end,
                loads.q_step,
                loads.node_moment,
                _tension_scale(model, inp),
                loads.magnetic,
            ),
            bc=(loads.tip_moment, L_cmd, model.tendon_k, model.moment_scale, model.tension_scale),
            loads=loads,
        ),
    )


def _tension_scale(model: RodModel, inp: StaticLoads) -> np.ndarray:
    """The kernels' tension scale (n_steps, n_t) [-]: `inp.tension_profile` on the robot's
    tendons, 1 on internal (chamber) tendons and everywhere without a profile (then the
    model's shared array: the kernels only read it)."""
    prof = inp.tension_profile
    if prof is None:
        return model.kernel_constants.ones
    out = np.ones((model.step_seg.shape[0], model.n_tendons))
    n_real = model.n_tendons - model.n_internal_tendons
    if prof.shape != (out.shape[0], n_real):
        raise ValueError(
            f"tension_profile must have shape {(out.shape[0], n_real)} (steps, tendons) "
            f"on this model's grid, got {prof.shape}"
        )
    out[:, :n_real] = prof
    return out


def _straight_magnetic_moment(model: RodModel, inp: StaticLoads) -> np.ndarray:
    """Base moment (3,) [N m] of the dipole torques on the straight robot in its base frame:
    the cold start's predictor, as `_base_moment_on_shape` is for the other loads."""
    if not model.is_magnetic:
        return np.zeros(3)
    total = model.magnet_moment.sum(axis=0) + model.seg_length @ model.seg_dipole
    return np.cross(model.base_rotation @ total, inp.field)


def _distal_moments(model: RodModel, loads: _Loads, positions: np.ndarray | None) -> np.ndarray:
    """Moment of the external loads distal to each node about it, on a given shape
    (n_nodes, 3) [N m]; the straight robot when positions is None. At equilibrium this is the
    total section moment M; on a previous equilibrium (warm start) or the straight robot (cold
    start) it is the rigid-body predictor of M. Tendons are internal and do not enter."""
    if positions is None:
        positions = model.kernel_constants.straight
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


# ---------------------------------------------------------------------------------------------
# Load paths (continuation and warm-start marches)


def _zero_inputs(model: RodModel, inp: StaticLoads) -> StaticLoads:
    """The unloaded robot in the same input mode: no loads, tendons unloaded (tensions 0) or
    at their straight path length (length control)."""
    z3 = np.zeros(3)
    return StaticLoads(
        tensions=None if inp.lengths is not None else np.zeros(model.n_tendons),
        lengths=model.tendon_rest_length.copy() if inp.lengths is not None else None,
        tip_force=z3,
        tip_moment=z3,
        distributed_force=z3,
        gravity=z3,
        point_loads=tuple((s_p, z3, z3) for s_p, _, _ in inp.point_loads),
        pressures=None if inp.pressures is None else np.zeros_like(inp.pressures),
        tension_profile=inp.tension_profile,
    )


def _blend_forces(
    a: StaticLoads, b: StaticLoads, mu: float
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None:
    """(1 - mu) a + mu b of the held gradient forces (None is zero); samples from b (or a)."""
    fa, fb = a.magnet_forces, b.magnet_forces
    if fa is None and fb is None:
        return None
    if fa is None or fb is None:
        scale, held = (mu, fb) if fa is None else (1.0 - mu, fa)
        assert held is not None
        return scale * held[0], (held[1][0], scale * held[1][1])
    if fa[1][0].shape != fb[1][0].shape or np.any(fa[1][0] != fb[1][0]):
        # Different samples: b's, with a's density resampled onto them.
        s_b = fb[1][0]
        ga = np.stack(
            [np.interp(s_b, fa[1][0], fa[1][1][:, i // 3, i % 3]) for i in range(9)], 1
        ).reshape(-1, 3, 3)
    else:
        ga = fa[1][1]
    return (1.0 - mu) * fa[0] + mu * fb[0], (fb[1][0], (1.0 - mu) * ga + mu * fb[1][1])


def _blend(a: StaticLoads, b: StaticLoads, mu: float) -> StaticLoads | None:
    """(1 - mu) a + mu b, or None when the two are not comparable (modes, point loads)."""
    if (a.lengths is None) != (b.lengths is None):
        return None
    if [p[0] for p in a.point_loads] != [p[0] for p in b.point_loads]:
        return None

    def mix(x: np.ndarray | None, y: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or y is None else (1.0 - mu) * x + mu * y

    return StaticLoads(
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
        pressures=mix(a.pressures, b.pressures),
        tension_profile=b.tension_profile if mu > 0.0 else a.tension_profile,
        field=(1.0 - mu) * a.field + mu * b.field,
        field_gradient=(1.0 - mu) * a.field_gradient + mu * b.field_gradient,
        magnet_forces=_blend_forces(a, b, mu),
    )


def _load_number(model: RodModel, inp: StaticLoads, loads: _Loads | None = None) -> float:
    """~ P L^2 / EI of the external loads: the larger of their base moment on the straight
    robot and their largest distal force times L, over the moment scale (tendons are internal).
    It sets both the nonlinearity and the conditioning of shooting (~ exp(sqrt(.))).
    `loads`: `_loads_at(model, inp, 1.0)` when the caller has it already."""
    if loads is None:
        loads = _loads_at(model, inp, 1.0)
    # |v| as np.linalg.norm computes it for a vector (sqrt of v.v), without its dispatch.
    base = _base_moment_on_shape(model, loads, None)
    straight = math.sqrt(base.dot(base))
    # The ufunc's own reduction: `ndarray.max`'s Python wrapper was a fifth of this function.
    force = float(np.maximum.reduce(np.abs(loads.N_end), axis=None, initial=0.0))
    force *= model.total_length
    return max(straight, force) / model.moment_scale


def _magnetic_number(model: RodModel, inp: StaticLoads) -> float:
    """Bending angle [rad] of the dipole torques, atan(b) with b = (sum of |m| over the
    dipoles plus the backbone's |M A| L) |B| over the moment scale: a uniform field turns a
    dipole toward it and no further (a tangent tip dipole: theta = b cos theta, ~atan b).
    Like tendons, the torques follow the section (the gradient forces, held at a shape,
    are in `_load_number`)."""
    if not model.is_magnetic:
        return 0.0
    dipoles = float(np.linalg.norm(model.magnet_moment, axis=1).sum())
    dipoles += float(np.linalg.norm(model.seg_dipole, axis=1) @ model.seg_length)
    return math.atan(dipoles * float(np.linalg.norm(inp.field)) / model.moment_scale)
