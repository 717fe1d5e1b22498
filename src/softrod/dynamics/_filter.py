"""Distributed predictive filters that estimate per-node damping (ALGORITHMS.md E.5)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from softrod.dynamics._inputs import _start_state
from softrod.dynamics._integrate import _STATUS_MESSAGES, STATUS_OK, _Filter, _integrate
from softrod.dynamics._simulate import _setup

__all__ = ["DEFAULT_VELOCITY_FLOOR", "DampingEstimate", "estimate_damping"]

#: Default W regularises each node's estimate as if its velocity were never below this [m/s]:
#: W = R (dt^2 v_floor / m)^2, so K is shrunk only where |v| is comparable to v_floor (E.5
#: "Degeneracy"). 1e-4 m/s is far below the velocities of the release tests (cm/s and more).
DEFAULT_VELOCITY_FLOOR = 1e-4


@dataclass(frozen=True, eq=False)
class DampingEstimate:
    """Output of `estimate_damping`.

    t : (k,) [s]; nodes : (n_f,) filtered node indices; positions : (k, n, 3) the filter's model
    positions [m]; damping : (k, n_f, 3) per-step estimates K (N s/m, world axes; the paper's
    scaling gives its own units and frame); estimate : (n_f, 3) the velocity-weighted mean of the
    per-step estimates over the last `window` fraction (sum v^2 K / sum v^2 per component);
    tracking_error : (k,) max over filtered nodes of |p_model - p_measured| [m].
    """

    success: bool
    status: int
    message: str
    t: np.ndarray
    nodes: np.ndarray
    positions: np.ndarray
    damping: np.ndarray
    estimate: np.ndarray
    tracking_error: np.ndarray
    dt: float
    wall_time: float


def estimate_damping(
    robot: Any,
    measurements: np.ndarray,
    dt: float,
    *,
    nodes: Sequence[int] | None = None,
    initial: Any = None,
    R: float | np.ndarray = 1.0,
    W: float | np.ndarray | None = None,
    velocity_floor: float = DEFAULT_VELOCITY_FLOOR,
    paper_scaling: bool = False,
    window: float = 0.5,
    tensions: Any = None,
    tip_force: Any = None,
    distributed_force: Any = None,
    gravity: Any = None,
    magnets: Any = None,
    field: Any = None,
    damping: Any = None,
    base_motion: Any = None,
    elements: int | Sequence[int] | None = None,
    shear_eval: str = "left",
    clamp: str = "auto",
    rotary_inertia_scale: float = 1.0,
    sample_every: int = 1,
) -> DampingEstimate:
    """Run the integrator with a distributed predictive filter at the measured nodes (E.5).

    Each measured node estimates its own damping capacity K (3,) every step from the output
    error, its undamped one-step model drift and the measurement trend:
    K = -(M^T R M + W)^-1 M^T R (Z + e - d), M = dp^{j+1}/dK = -(dt^2/m) diag(v) (consistent,
    default) or the paper's -(2 dt^2/(l M)) O^T diag(p^j - p^{j-1}) dt (`paper_scaling=True`),
    then propagates with it. Other nodes use `damping` (default none).

    measurements : (k, n_f, 3) measured positions [m] of `nodes` at t = j dt, j = 0..k-1 (the
        integrator's step); (k, n, 3) with all nodes is accepted and node 0 dropped.
    nodes : model node indices measured (default all but the base node 0).
    initial : as in `simulate_dynamic` (the state the measured motion starts from).
    R : scalar or (3, 3) output weight [1/m^2]; W : scalar or (3, 3) estimate weight (default
        from `velocity_floor` [m/s], see `DEFAULT_VELOCITY_FLOOR`).
    window : fraction of the run (from the end) averaged into `estimate`.
    Loads and discretisation options as in `simulate_dynamic`.
    """
    t_wall = time.perf_counter()
    su = _setup(robot, tensions, tip_force, distributed_force, gravity, magnets, field, damping,
                None, None, base_motion, elements, shear_eval, clamp, None, None,
                rotary_inertia_scale)  # fmt: skip
    model = su.model
    n = model.n_nodes
    if not (isinstance(dt, int | float) and dt > 0 and math.isfinite(dt)):
        raise ValueError(f"dt must be > 0 [s] (the measurement period), got {dt!r}")
    meas = np.asarray(measurements, dtype=float)
    if meas.ndim != 3 or meas.shape[2] != 3 or meas.shape[0] < 3:
        raise ValueError(f"measurements must be (k >= 3, n_f, 3) [m], got shape {meas.shape}")
    if nodes is None:
        if meas.shape[1] == n:
            meas = meas[:, 1:]
        nodes_arr = np.arange(1, n, dtype=np.int64)
    else:
        nodes_arr = np.asarray(nodes, dtype=np.int64).reshape(-1)
    if meas.shape[1] != nodes_arr.shape[0]:
        raise ValueError(
            f"measurements have {meas.shape[1]} nodes, expected {nodes_arr.shape[0]} (nodes)"
        )
    if np.any(nodes_arr < 1) or np.any(nodes_arr >= n):
        raise ValueError(f"nodes must be in 1..{n - 1} (node 0 is the clamped base)")
    if not np.all(np.isfinite(meas)):
        raise ValueError("measurements must be finite")
    Rm = np.asarray(R, dtype=float) * (np.eye(3) if np.ndim(R) == 0 else 1.0)
    if Rm.shape != (3, 3):
        raise ValueError(f"R must be a scalar or (3, 3), got shape {Rm.shape}")
    n_f = nodes_arr.shape[0]
    # The paper's l M per node: the line mass times the element length there.
    l_node = np.append(model.elem_len, model.elem_len[-1])[nodes_arr]
    rho_A = model.rod.rho_A[model.elem_seg[np.minimum(nodes_arr, model.n_elements - 1)]]
    paper_mass = rho_A * l_node
    if W is None:
        if paper_scaling:
            scale = 2 * dt**4 * velocity_floor / paper_mass
        else:
            scale = dt**2 * velocity_floor / model.node_mass[nodes_arr]
        Wm = (scale**2)[:, None, None] * Rm[None]
    else:
        W0 = np.asarray(W, dtype=float) * (np.eye(3) if np.ndim(W) == 0 else 1.0)
        if W0.shape != (3, 3):
            raise ValueError(f"W must be a scalar or (3, 3), got shape {W0.shape}")
        Wm = np.repeat(W0[None], n_f, axis=0)
    n_steps = meas.shape[0] - 1
    filt = _Filter(nodes_arr, np.ascontiguousarray(meas), Rm, np.ascontiguousarray(Wm),
                   paper_mass, bool(paper_scaling))  # fmt: skip
    state = _start_state(su, initial, float(dt))
    status, done, rec_p, _, _, rec_K = _integrate(su, state, float(dt), n_steps, sample_every, filt)
    rec_K = rec_K[:n_steps]
    n_ok = min(done, n_steps) // sample_every + 1
    t = state[4] * 0 + np.arange(n_ok) * sample_every * dt
    pos = rec_p[:n_ok]
    err = np.max(np.linalg.norm(pos[:, nodes_arr] - meas[: n_ok * sample_every : sample_every],
                                axis=2), axis=1)  # fmt: skip
    # Velocity-weighted mean over the window.
    k0 = int(rec_K.shape[0] * (1 - window))
    v = np.diff(meas, axis=0)[k0 : rec_K.shape[0]] / dt
    w = v**2
    est = np.sum(w * rec_K[k0:], axis=0) / np.maximum(np.sum(w, axis=0), 1e-300)
    msg = _STATUS_MESSAGES[status]
    if status != STATUS_OK:
        msg = f"{msg} at t = {done * dt:.6g} s"
    return DampingEstimate(
        success=status == STATUS_OK,
        status=status,
        message=msg,
        t=t,
        nodes=nodes_arr,
        positions=pos,
        damping=rec_K,
        estimate=est,
        tracking_error=err,
        dt=float(dt),
        wall_time=time.perf_counter() - t_wall,
    )
