"""`StaticResult`: the equilibrium a static method returns, with the loads it balances and
the typed state a warm start, a Jacobian or an observer update reads from it."""

from __future__ import annotations

import json
import weakref
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from softrod.rods._inputs import StaticLoads, _distal_moments, _Loads, _tension_scale
from softrod.rods._model import RodModel
from softrod.rods._static_kernels import _section_loads

if TYPE_CHECKING:
    from softrod.rods._observer import ObserverState

__all__ = ["StaticResult", "WarmStart"]


@dataclass(frozen=True, eq=False)
class WarmStart:
    """What `solve_static(..., guess=result)` reuses from a result (SI, world frame).

    total_moment : (n_nodes, 3) total section moment M(s) of rod and tendons [N m] (multiple
        shooting starts every interval from it).
    load_moments : (n_nodes, 3) moment of the external loads distal to each node about it, on
        the result's shape [N m] (the warm start adds its change to `base_moment`).
    balanced_loads : the loads this shape is an equilibrium of (the requested loads scaled to
        `load_scale`), from which multiple shooting marches to new loads; None when the shape
        is not an equilibrium (an observer update).
    observer : the observer's state after this update (method "observer" only).
    """

    total_moment: np.ndarray
    load_moments: np.ndarray
    balanced_loads: StaticLoads | None = None
    observer: ObserverState | None = None


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
    inputs : the checked loads that were asked for (what `tip_jacobian` differentiates with
    respect to). warm : the state `guess=` reuses (None for "pcc", which has none).
    tip_error : estimated error of the tip position [m] in the method's own equations, on
        every result (None: a failed shooting solve, an observer update whose integration
        failed, a pcc tension solve that did not converge, `error_estimate=False`):
        "shooting", the grid's discretisation error (Richardson against a grid of twice the
        step; step doubling where that is unavailable); "observer", the update's distance
        from the grid's equilibrium (one Newton step; 0 when the residual is within rtol)
        plus the grid's discretisation error as for shooting; "pcc", 0.0: its arcs are
        closed form (exact to round-off for the constant-curvature model, whose own error
        against the rod is `model_error`).
    model_error : method "pcc" with `model_error=True`: the distance [m] of its tip from
        that of `solve_static`'s default (shooting) answer to the same inputs and loads, i.e.
        the constant-curvature model's error against the rod (to within that answer's
        `tip_error`); None otherwise.
    stable : True when the equilibrium is a strict local minimum of the potential energy,
    False when it is not, None when not checked (`check_stability=False`, length control, the
    observer and pcc methods; docs/stability.md).
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
    inputs: StaticLoads = field(kw_only=True)
    warm: WarmStart | None = field(default=None, kw_only=True)
    tip_error: float | None = field(default=None, kw_only=True)
    stable: bool | None = field(default=None, kw_only=True)
    model_error: float | None = field(default=None, kw_only=True)

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
            "tip_error": self.tip_error,
            "stable": self.stable,
            "model_error": self.model_error,
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


def _replaced(result: StaticResult, **changes: Any) -> StaticResult:
    """`dataclasses.replace(result, **changes)` for field names, without re-running the
    generated `__init__` (a shallow copy, as replace makes; ~10x faster): the stability
    verdict and notes are set on every solve."""
    new = object.__new__(type(result))
    new.__dict__.update(result.__dict__)
    for name, value in changes.items():
        if name not in _FIELDS:
            raise TypeError(f"StaticResult has no field {name!r}")
        object.__setattr__(new, name, value)
    return new


_FIELDS = frozenset(StaticResult.__dataclass_fields__)
_WARM_FIELDS = frozenset(WarmStart.__dataclass_fields__)


def _built(cls: type[Any], names: frozenset[str], fields: dict[str, Any]) -> Any:
    """`cls(**fields)` for a frozen dataclass given every one of its field `names`, without
    the generated `__init__` (one `object.__setattr__` per field: ~4 us for a result, on
    every solve). The same object; a missing or unknown name is a TypeError."""
    if fields.keys() != names:
        raise TypeError(f"{cls.__name__} fields {sorted(fields.keys() ^ names)} missing or unknown")
    new = object.__new__(cls)
    new.__dict__.update(fields)
    return new


# ---------------------------------------------------------------------------------------------
# Result assembly

#: Per model: the segment of every node (n_nodes,) and the step lengths (n_steps,) [m] that
#: `_assemble` reads (built once per model, not per solve; dropped with the model).
_NODE_ARRAYS: weakref.WeakKeyDictionary[RodModel, tuple[np.ndarray, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def _node_arrays(model: RodModel) -> tuple[np.ndarray, np.ndarray]:
    found = _NODE_ARRAYS.get(model)
    if found is None:
        found = (np.append(model.step_seg, model.step_seg[-1]), np.diff(model.node_s)[:, None])
        _NODE_ARRAYS[model] = found
    return found


def _node_tensions(model: RodModel, inputs: StaticLoads, tau: np.ndarray) -> np.ndarray:
    """Tendon tension at every node (n_nodes, n_t) [N]: tau times the tension scale of the
    step that leaves the node (the last node: of the step that ends there)."""
    tau = np.asarray(tau, dtype=float)
    if inputs.tension_profile is None:
        # No friction profile: the scale is 1 everywhere (tau * 1.0 is tau). The method, not
        # np.repeat: its dispatch was a third of this function's time.
        return tau[None, :].repeat(model.node_s.shape[0], axis=0)
    scale = _tension_scale(model, inputs)
    scale = np.concatenate([scale, scale[-1:]])
    return np.ascontiguousarray(tau[None, :] * scale)


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
    inputs: StaticLoads,
    balanced_loads: StaticLoads | None,
    observer: ObserverState | None = None,
    tip_error: float | None = None,
) -> StaticResult:
    """A result from the kernels' node arrays Y (n_nodes, 15 + n_t) and X (n_nodes, 6) at the
    tendon tensions tau (n_t,) [N] and kernel loads `loads`; `inputs` are the requested loads,
    `balanced_loads` those the shape balances (see `WarmStart`); `tip_error` [m] the estimate."""
    n_t = model.tendon_r.shape[0]  # `n_tendons`, `n_nodes` without the property calls
    n_nodes = Y.shape[0]
    positions = Y[:, 0:3].copy()
    rotations = Y[:, 3:12].reshape(n_nodes, 3, 3).copy()
    strain = X[:, 0:3].copy()
    curvature = X[:, 3:6].copy()
    node_seg, h = _node_arrays(model)
    # Total distal force at each node (distal side of point loads); the kernel removes the
    # tendons' share to leave what the backbone material carries.
    N_node = np.empty((n_nodes, 3))
    N_node[:-1] = loads.N_end + loads.q_step * h
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
        _node_tensions(model, inputs, tau),
        force,
        moment,
    )
    lengths = Y[-1, 15 : 15 + n_t].copy()
    warm = dict(
        total_moment=Y[:, 12:15].copy(),
        load_moments=_distal_moments(model, loads, positions),
        balanced_loads=balanced_loads,
        observer=observer,
    )
    fields = dict(
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
        inputs=inputs,
        warm=_built(WarmStart, _WARM_FIELDS, warm),
        tip_error=tip_error,
        stable=None,
        model_error=None,
    )
    return _built(StaticResult, _FIELDS, fields)
