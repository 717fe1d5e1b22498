"""Tendon friction with memory in the LGVI dynamics: tendon-path forces per straight piece.

The LGVI routes every tendon through vertices (one per node up to its anchor, `LGVIModel`)
and pulls each straight piece between two vertices with the tendon's tension. With friction
(docs/friction.md) the tension is no longer one number per tendon but one per piece: the
vertices are the holes (all but the last, the anchor), the wrap at a hole is the angle between
the pieces on either side (the first piece against the base's z axis), and the capstan clamp
of `softrod.rods.capstan_update` sets the piece tensions from the base tension, the wrap and
the memory.

`piecewise_tendon_model` turns a model into one whose kernel tendons are these pieces (two
vertices each), so the kernels apply per-piece tensions unchanged: piece p of tendon t pulls
its two vertices together with t_p, which is exactly the force of a cable whose tension is t_p
on that piece. Equal piece tensions give the forces of the original model (to round-off,
tested); the potential the kernels report for the tendons is then sum t_p |piece p|, which is
not an energy once friction makes the tensions differ.

`friction_settle_sequence` is the quasi-static driver. With `method="static"` each row is the
equilibrium the damped dynamics settle to, found directly (`_equilibrium`: Newton on the
model's generalised forces, the fixed points of both LGVI steps) inside the friction fixed
point of the static solver: wrap from the shape, piece tensions clamped against the memory of
the last settled row, equilibrium, until the piece tensions stop changing. With
`method="dynamic"` each row is held while the damped dynamics settle, the piece tensions
re-clamped every `chunk` seconds; the memory is committed once the row has settled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from softrod.dynamics._equilibrium import EQUILIBRIUM_TOL, _equilibrium, equilibrium_loads
from softrod.dynamics._inputs import DynamicLoads
from softrod.dynamics._model import LGVIModel, build_lgvi_model
from softrod.dynamics._result import DynamicResult, DynamicState
from softrod.dynamics._simulate import simulate_dynamic
from softrod.rods import capstan_update

__all__ = [
    "FRICTION_METHODS",
    "FrictionSettleResult",
    "friction_settle_sequence",
    "piece_wrap",
    "piecewise_tendon_model",
]

#: `friction_settle_sequence` methods: the equilibrium found directly, or by damped dynamics.
FRICTION_METHODS = ("static", "dynamic")


def _pieces(model: LGVIModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(proximal vertex (n_p,), distal vertex (n_p,), tendon (n_p,)) of every straight piece
    of the robot's tendon paths, base to anchor."""
    if model.n_chamber_tendons:
        raise ValueError("tendon friction does not take robots with chambers yet")
    vstart = model.tendon_vstart
    prox, dist, tendon = [], [], []
    for t in range(model.n_tendons):
        for v in range(int(vstart[t]) + 1, int(vstart[t + 1])):
            prox.append(v - 1)
            dist.append(v)
            tendon.append(t)
    return np.array(prox, np.int64), np.array(dist, np.int64), np.array(tendon, np.int64)


def piecewise_tendon_model(model: LGVIModel) -> LGVIModel:
    """The model with one kernel tendon per straight piece of each tendon path (two vertices
    each, piece order of `piece_wrap`): its `tensions` input is (n_pieces,) [N]."""
    prox, dist, tendon = _pieces(model)
    rows = np.column_stack([prox, dist]).reshape(-1)

    def take(arr: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(arr[rows])

    return dataclasses.replace(
        model,
        tv_pidx=take(model.tv_pidx),
        tv_pw=take(model.tv_pw),
        tv_oidx=take(model.tv_oidx),
        tv_ow=take(model.tv_ow),
        tv_r=take(model.tv_r),
        tendon_r=np.ascontiguousarray(model.tendon_r[tendon]),
        tendon_vstart=np.arange(0, 2 * prox.size + 1, 2, dtype=np.int64),
    )


def piece_wrap(
    model: LGVIModel, positions: np.ndarray, frames: np.ndarray, base_rotation: np.ndarray
) -> np.ndarray:
    """Wrap theta (n_pieces,) [rad] over the holes proximal to every piece of the tendon paths
    of `model` (not piecewise) at a state: positions (n, 3) [m], frames (the kernel frames O,
    (n_frames, 3, 3)), base_rotation (3, 3)."""
    prox, dist, tendon = _pieces(model)
    # Vertex v at sum_k pw p[pidx] + sum_k ow O[oidx] r (oidx -1: the base frame, appended).
    frames_b = np.concatenate([frames, base_rotation[None]], axis=0)
    r = model.tv_r
    x = np.zeros((model.tv_pidx.shape[0], 3))
    for k in range(2):
        x += model.tv_pw[:, k, None] * positions[model.tv_pidx[:, k]]
        x += model.tv_ow[:, k, None] * np.einsum("vij,vj->vi", frames_b[model.tv_oidx[:, k]], r)
    d = x[dist] - x[prox]
    unit = d / np.linalg.norm(d, axis=1)[:, None]
    # Each piece turns from the one before it; a tendon arrives along the base's z axis.
    first = np.flatnonzero(np.r_[True, tendon[1:] != tendon[:-1]])
    before = np.empty_like(unit)
    before[1:] = unit[:-1]
    before[first] = base_rotation[:, 2]
    cross = np.cross(before, unit)
    alpha = np.arctan2(np.linalg.norm(cross, axis=1), np.einsum("ij,ij->i", before, unit))
    total = np.cumsum(alpha)
    offset = np.r_[0.0, total[first[1:] - 1]]
    return total - offset[tendon]


@dataclass(frozen=True, eq=False)
class FrictionSettleResult:
    """`friction_settle_sequence`'s outcome.

    tip_position : (T, 3) [m] settled tip per row; success : (T,) bool; piece_tension : (T,
    n_p) [N] the committed piece tensions; tip_speed : (T,) [m/s] the tip speed left at the end
    of each row (how settled it is; 0 for method "static"); final : the last `DynamicResult`
    (its final state continues the sequence; None for method "static"); memory : (tension
    (n_p,), effective (n_t,), direction (n_t,)). state : the last row's `DynamicState` (at rest
    for "static": `simulate_dynamic(..., initial=state)` continues from it).
    friction_iterations : (T,) equilibria solved per row ("static"; chunks for "dynamic").
    """

    tip_position: np.ndarray
    success: np.ndarray
    piece_tension: np.ndarray
    tip_speed: np.ndarray
    final: DynamicResult | None
    memory: tuple[np.ndarray, np.ndarray, np.ndarray]
    state: DynamicState | None = None
    friction_iterations: np.ndarray | None = None


def friction_settle_sequence(
    robot: LGVIModel | Any,
    tensions: Sequence[Sequence[float]] | np.ndarray,
    *,
    mu: float | Sequence[float] | np.ndarray = 0.0,
    stick_band: float | Sequence[float] | np.ndarray = 0.0,
    elements: int | None = None,
    method: str = "static",
    settle_time: float = 0.6,
    chunk: float = 0.05,
    strain_damping: float = 0.1,
    integrator: str = "implicit",
    tol: float = EQUILIBRIUM_TOL,
    friction_tol: float = 1e-10,
    friction_max_iter: int = 100,
) -> FrictionSettleResult:
    """Quasi-static LGVI equilibria along tension commands with tendon friction and memory.

    robot : an `LGVIModel` (tendon paths as built) or what `build_lgvi_model` takes (with
    `elements`). tensions : (T, n_t) base tensions [N]. mu, stick_band : scalar or (n_t,).
    method "static" (default): each row's equilibrium of the discrete model is solved directly
    (Newton on its generalised forces to `tol` [fraction of L, rad], the state both LGVI steps
    keep at rest), inside the friction fixed point: wrap from the shape, piece tensions
    clamped against the memory of the last settled row, equilibrium, until no piece tension
    changes by more than `friction_tol` [N] (at most `friction_max_iter` equilibria; success
    False otherwise). Method "dynamic": each row is held for `settle_time` [s] of damped
    dynamics (Kelvin-Voigt `strain_damping` [s], `integrator`), starting from the previous
    row's final state, with the piece tensions re-clamped from the current shape every `chunk`
    [s]. Either way the memory is committed at the end of the row. With mu = 0 every piece
    carries its tendon's tension (the frictionless model's forces).
    """
    if method not in FRICTION_METHODS:
        raise ValueError(f"method must be one of {FRICTION_METHODS}, got {method!r}")
    model = robot if isinstance(robot, LGVIModel) else build_lgvi_model(robot, elements)
    pieces = piecewise_tendon_model(model)
    _, _, piece_tendon = _pieces(model)
    n_t = model.n_tendons
    cmd = np.asarray(tensions, dtype=float)
    if cmd.ndim != 2 or cmd.shape[1] != n_t:
        raise ValueError(f"tensions must have shape (T, {n_t}), got {cmd.shape}")
    mu_v = np.broadcast_to(np.asarray(mu, dtype=float), (n_t,)).copy()
    band = np.broadcast_to(np.asarray(stick_band, dtype=float), (n_t,)).copy()
    if np.any(~np.isfinite(mu_v) | (mu_v < 0)) or np.any(~np.isfinite(band) | (band < 0)):
        raise ValueError("mu and stick_band must be finite numbers >= 0")
    if method == "static":
        return _static_sequence(model, pieces, piece_tendon, cmd, mu_v, band, tol,
                                friction_tol, friction_max_iter)  # fmt: skip
    n_chunks = max(1, int(round(settle_time / chunk)))
    base_R = model.rod.base_rotation
    memory = (np.zeros(piece_tendon.size), np.full(n_t, np.nan), np.zeros(n_t))
    tips = np.empty((cmd.shape[0], 3))
    success = np.ones(cmd.shape[0], dtype=bool)
    committed = np.empty((cmd.shape[0], piece_tendon.size))
    speed = np.empty(cmd.shape[0])
    result: DynamicResult | None = None
    for row, command in enumerate(cmd):
        update = memory
        for _ in range(n_chunks):
            if result is None:
                theta = np.zeros(piece_tendon.size)
            else:
                state = result.final_state
                theta = piece_wrap(model, state.positions, state.frames, base_R)
            # Re-clamp against the last settled row's memory at the shape reached so far.
            update = capstan_update(
                memory[0], command, memory[1], memory[2], theta, piece_tendon, mu_v, band
            )
            loads = DynamicLoads(tensions=update[0], strain_damping=strain_damping)
            result = simulate_dynamic(
                pieces, chunk, loads=loads, initial=result, integrator=integrator,
                sample_dt=chunk,
            )  # fmt: skip
            if not result.success:
                success[row] = False
                break
        memory = update
        assert result is not None
        tips[row] = result.tip_position[-1]
        committed[row] = memory[0]
        state = result.final_state
        speed[row] = float(
            np.linalg.norm(state.positions[-1] - state.prev_positions[-1]) / state.dt
        )
    final_state = None if result is None else result.final_state
    return FrictionSettleResult(tips, success, committed, speed, result, memory, final_state,
                                np.full(cmd.shape[0], n_chunks))  # fmt: skip


def _static_sequence(
    model: LGVIModel,
    pieces: LGVIModel,
    piece_tendon: np.ndarray,
    cmd: np.ndarray,
    mu: np.ndarray,
    band: np.ndarray,
    tol: float,
    friction_tol: float,
    friction_max_iter: int,
) -> FrictionSettleResult:
    """`friction_settle_sequence(method="static")`: per row, the friction fixed point around
    `_equilibrium` (warm-started from the previous row's equilibrium)."""
    n_rows = cmd.shape[0]
    base_R = model.rod.base_rotation
    p = model.rest_positions.copy()
    O = model.rest_rotations.copy()
    memory = (np.zeros(piece_tendon.size), np.full(model.n_tendons, np.nan),
              np.zeros(model.n_tendons))  # fmt: skip
    tips = np.empty((n_rows, 3))
    success = np.ones(n_rows, dtype=bool)
    committed = np.empty((n_rows, piece_tendon.size))
    iterations = np.zeros(n_rows, dtype=np.int64)
    for row, command in enumerate(cmd):
        update = memory
        current: np.ndarray | None = None
        for it in range(1, friction_max_iter + 1):
            # Clamp against the last settled row's memory at the wrap of the shape so far.
            theta = piece_wrap(model, p, O, base_R)
            update = capstan_update(
                memory[0], command, memory[1], memory[2], theta, piece_tendon, mu, band
            )
            if current is not None and np.max(np.abs(update[0] - current), initial=0.0) <= (
                friction_tol
            ):
                break
            current = update[0]
            p, O, _, ok = _equilibrium(pieces, equilibrium_loads(pieces, current), p, O, tol)
            iterations[row] = it
            if not ok:
                success[row] = False
                break
        else:
            success[row] = False
        memory = update
        tips[row] = p[-1]
        committed[row] = memory[0]
    state = DynamicState(t=0.0, dt=1.0, positions=p.copy(), prev_positions=p.copy(), frames=O,
                         cayley=np.zeros((model.n_nodes, 3)))  # fmt: skip
    return FrictionSettleResult(tips, success, committed, np.zeros(n_rows), None, memory, state,
                                iterations)  # fmt: skip
