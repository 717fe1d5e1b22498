"""`solve_static_batch`: B static equilibria of one robot in one call.

The front end checks the inputs and broadcasts them into a `BatchLoads` (`_batch_types`),
hands it to a back end (numba threads here, `_batch_kernels`; NVIDIA Warp for other devices,
`_batch_warp`, imported on first use) and wraps the `BatchArrays` it returns into the public
`StaticBatchResult`.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from softrod.description import RobotSpec
from softrod.rods._batch_kernels import (
    STATUS_NEEDS_MULTIPLE_SHOOTING,
    _solve_batch,
    _solve_batch_serial,
)
from softrod.rods._batch_types import BatchArrays, BatchLoads
from softrod.rods._inputs import StaticLoads, check_inputs
from softrod.rods._model import RodModel, as_model
from softrod.rods._pcc import _pcc_lengths_matrix
from softrod.rods._result import StaticResult
from softrod.rods._sensitivity import tip_jacobian
from softrod.rods._shooting import (
    _DEFAULT_TIP_TOL,
    _MULTI_SHOOT_ANGLE,
    _STATUS_MESSAGES,
    _coarse_model,
    _refine,
    grid_model,
    result_at,
)
from softrod.rods._stability import STATUS_UNSTABLE, is_stable
from softrod.rods._static import DEFAULT_MAX_ITER, DEFAULT_RTOL

__all__ = ["StaticBatchItem", "StaticBatchResult", "solve_static_batch"]

#: What each item status means (`_shooting`'s Newton statuses plus the batch's own).
BATCH_STATUS_MESSAGES = {
    **_STATUS_MESSAGES,
    STATUS_UNSTABLE: (
        "the equilibrium is unstable (a negative direction of the energy's second variation); "
        "the batch does not continue onto a stable branch: solve this item with solve_static, "
        "which does"
    ),
    STATUS_NEEDS_MULTIPLE_SHOOTING: (
        f"load bending angle above {_MULTI_SHOOT_ANGLE:g} rad needs multiple shooting, which "
        "the batched solver does not run: solve this item with solve_static"
    ),
}


@dataclass(frozen=True, eq=False)
class StaticBatchItem:
    """One item of a `StaticBatchResult` (views into its arrays; SI, world frame).

    tip_position : (3,) [m]; tip_rotation : (3, 3); tensions : (n_t,) [N];
    jacobian : (3, n_t) or None; positions : (n_nodes, 3) [m] or None; tip_error : estimated
    discretisation error of tip_position [m] (`StaticResult.tip_error`), NaN where there is none
    (`StaticBatchResult.tip_error`).
    """

    success: bool
    status: int
    message: str
    residual: float
    iterations: int
    tip_position: np.ndarray
    tip_rotation: np.ndarray
    tensions: np.ndarray
    jacobian: np.ndarray | None
    positions: np.ndarray | None
    stable: bool | None = None
    tip_error: float = math.nan


@dataclass(frozen=True, eq=False)
class StaticBatchResult:
    """Equilibria of B static problems of one robot (SI, world frame).

    tip_position : (B, 3) [m]. tip_rotation : (B, 3, 3) tip frames (columns = body axes).
    success : (B,) bool, True where the item converged to rtol on its full load (the same
    equilibrium `solve_static` finds). status : (B,) 0 converged, else a code of
    `BATCH_STATUS_MESSAGES` (`result[i].message` says it in words). residual : (B,) final scaled
    boundary residual. iterations : (B,) Newton iterations. load_scale : (B,) fraction of the
    load reached (1 on success). tensions : (B, n_t) tendon tensions [N] (solved for under length
    control). jacobian : (B, 3, n_t) d tip / d actuation [m/N, or m/m under length control], NaN
    for failed items, or None when not asked for. positions : (B, n_nodes, 3) backbone shapes
    [m] at arc lengths `s` (n_nodes,), or None when not asked for. control : "tension" or
    "length". warm : (B, k) shooting unknowns that `guess=` reuses. message : a summary line.
    stable : (B,) bool, True where the equilibrium was checked and is a strict minimum of the
    energy (`StaticResult.stable`; unstable items have success False, status 7), or None when
    not checked (check_stability=False, length control, the Warp back end).
    balanced_actuation (B, n_t), balanced_forces (B, 4, 3) (tip force, tip moment, distributed
    force, gravity): the inputs each returned equilibrium balances (a warm start from this
    batch moves each item's inputs from them); from_guess (B,) bool: load_scale is the
    fraction of the way from the guess's inputs rather than from rest.
    tip_error : (B,) estimated discretisation error of each item's tip_position [m], as
    `StaticResult.tip_error` of `solve_static`'s answer (Richardson against the grid of twice
    the step; step doubling for an item refined onto finer grids, as every item whose
    estimate exceeds 1e-6 of the length is, on either back end: the Warp back end estimates on
    the device and its items above the bound are refined on the CPU; where the finer solve
    fails the item keeps its answer and its estimate, as `solve_static`'s answer does). NaN
    where there is no estimate (`StaticResult.tip_error` None): items without a converged
    equilibrium (status other than 0 and 7), and an estimate that failed and a refinement that
    failed too.
    """

    tip_position: np.ndarray
    tip_rotation: np.ndarray
    success: np.ndarray
    status: np.ndarray
    residual: np.ndarray
    iterations: np.ndarray
    load_scale: np.ndarray
    tensions: np.ndarray
    jacobian: np.ndarray | None
    positions: np.ndarray | None
    s: np.ndarray | None
    control: str
    warm: np.ndarray
    message: str
    stable: np.ndarray | None = None
    balanced_actuation: np.ndarray | None = None
    balanced_forces: np.ndarray | None = None
    from_guess: np.ndarray | None = None
    tip_error: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.success.shape[0])

    @property
    def n_failed(self) -> int:
        """Number of items that did not converge."""
        return int(np.count_nonzero(~self.success))

    def __getitem__(self, i: int) -> StaticBatchItem:
        """A small per-item view (i may be negative)."""
        status = int(self.status[i])
        return StaticBatchItem(
            success=bool(self.success[i]),
            status=status,
            message=_item_message(
                status,
                float(self.load_scale[i]),
                self.from_guess is not None and bool(self.from_guess[i]),
            ),
            residual=float(self.residual[i]),
            iterations=int(self.iterations[i]),
            tip_position=self.tip_position[i],
            tip_rotation=self.tip_rotation[i],
            tensions=self.tensions[i],
            jacobian=None if self.jacobian is None else self.jacobian[i],
            positions=None if self.positions is None else self.positions[i],
            stable=None if self.stable is None else bool(self.stable[i]),
            tip_error=math.nan if self.tip_error is None else float(self.tip_error[i]),
        )


def _item_message(status: int, load_scale: float, from_guess: bool = False) -> str:
    if status == 0:
        return "converged"
    text = BATCH_STATUS_MESSAGES.get(status, "failed")
    if status == STATUS_NEEDS_MULTIPLE_SHOOTING:
        return f"not solved: {text}"
    if status == STATUS_UNSTABLE:
        return f"not a stable answer: {text}"
    where = "of the way from the guess's loads" if from_guess else "of the load"
    return (
        f"did not converge: {text}; the outputs are the equilibrium at "
        f"{100 * load_scale:.1f}% {where}"
    )


# ---------------------------------------------------------------------------------------------
# Input checks and broadcasting


def _batch_array(name: str, value: Any, width: int, what: str) -> np.ndarray:
    """`value` as (B, width) float64 (B = 1 when unbatched: (width,)); ValueError naming it."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 1 and arr.shape[0] == width:
        arr = arr[None, :]
    elif not (arr.ndim == 2 and arr.shape[1] == width):
        raise ValueError(
            f"{name} must have shape ({width},) or (B, {width}) ({what}), got {arr.shape}"
        )
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        i, j = bad[0]
        raise ValueError(f"{name}[{i}, {j}] must be finite, got {arr[i, j]}")
    return arr


def _check_loads(
    model: RodModel,
    tensions: Any,
    lengths: Any,
    vectors: dict[str, Any],
) -> BatchLoads:
    """Check every input and broadcast them to one batch size B (`BatchLoads`)."""
    n_t = model.n_tendons
    if tensions is not None and lengths is not None:
        raise ValueError("give tensions or lengths, not both")
    per_tendon = f"one value per tendon, n_t = {n_t}"
    arrays: dict[str, np.ndarray] = {}
    if lengths is not None:
        act = _batch_array("lengths", lengths, n_t, per_tendon)
        bad = np.argwhere(act <= 0)
        if bad.size:
            i, j = bad[0]
            raise ValueError(f"lengths[{i}, {j}] must be > 0 [m], got {act[i, j]}")
        missing = np.flatnonzero(np.isnan(model.tendon_stiffness))
        if missing.size:
            raise ValueError(
                f"length control needs every tendon's stiffness [N/m]; tendon {missing[0]} has none"
            )
        arrays["lengths"] = act
    else:
        act = _batch_array("tensions", np.zeros(n_t) if tensions is None else tensions, n_t,
                           per_tendon)  # fmt: skip
        bad = np.argwhere(act < 0)
        if bad.size:
            i, j = bad[0]
            raise ValueError(
                f"tensions[{i}, {j}] must be >= 0 (tendons only pull), got {act[i, j]}"
            )
        arrays["tensions"] = act
    for name, value in vectors.items():
        arrays[name] = _batch_array(name, np.zeros(3) if value is None else value, 3, "x, y, z")
    # One batch size: every batched input agrees, unbatched ones broadcast.
    sizes = {name: a.shape[0] for name, a in arrays.items() if a.shape[0] != 1}
    size = max(sizes.values(), default=1)
    for name, b in sizes.items():
        if b != size:
            first = next(n for n, s in sizes.items() if s == size)
            raise ValueError(
                f"{name} has batch size {b} but {first} has {size}: batched inputs must share B"
            )
    full = {n: np.ascontiguousarray(np.broadcast_to(a, (size, a.shape[1]))) for n, a in
            arrays.items()}  # fmt: skip
    control = "length" if lengths is not None else "tension"
    return BatchLoads(
        control=control,
        actuation=full["lengths" if lengths is not None else "tensions"],
        tip_force=full["tip_force"],
        tip_moment=full["tip_moment"],
        distributed_force=full["distributed_force"],
        gravity=full["gravity"],
    )


# ---------------------------------------------------------------------------------------------
# CPU back end

#: Smallest batch that `threads=None` runs on numba's threads (below it, one thread): a small
#: batch takes milliseconds, while the parallel kernel's first compile takes about a minute on
#: a fresh cache (237 s on the loaded 2-core machine with the one-thread kernel and every
#: kernel it calls already compiled). `threads=N` always uses N.
PARALLEL_MIN_ITEMS = 64


#: The kernels' robot arrays of each compiled model and control mode (constant per model):
#: repeated batches of one robot (a controller's finite differences, a sweep's chunks) build
#: them once; the constant-curvature length matrix alone costs more than a small batch.
_MODEL_ARRAYS: weakref.WeakKeyDictionary[RodModel, dict[bool, tuple[Any, ...]]] = (
    weakref.WeakKeyDictionary()
)


def _model_arrays(model: RodModel, length_mode: bool) -> tuple[Any, ...]:
    """The kernels' robot arrays, a flat tuple in `_batch_kernels._solve_batch`'s order
    (cached per model and control mode)."""
    per_model = _MODEL_ARRAYS.setdefault(model, {})
    if length_mode not in per_model:
        per_model[length_mode] = _build_model_arrays(model, length_mode)
    return per_model[length_mode]


def _build_model_arrays(model: RodModel, length_mode: bool) -> tuple[Any, ...]:
    axis = model.base_rotation[:, 2]
    straight = np.ascontiguousarray(model.base_position + model.node_s[:, None] * axis)
    n_t = model.n_tendons
    if n_t and length_mode:
        pcc_l0, pcc_A = _pcc_lengths_matrix(model)
    else:
        # Only length control reads them (its cold start and tendon bending): same shapes.
        pcc_l0, pcc_A = np.zeros(n_t), np.zeros((n_t, n_t))
    scales = np.array([model.moment_scale, model.tension_scale, model.total_length])
    # The tip error estimate's grid of twice the step (no point loads or dipoles in a batch).
    coarse, idx, ratio = _coarse_model(model, ())
    return (
        *model.kernel_geometry,
        *model.kernel_base,
        np.ascontiguousarray(model.node_point_mass, dtype=float),
        straight,
        np.ascontiguousarray(model.tendon_k),
        np.ascontiguousarray(model.tendon_rest_length, dtype=float),
        np.ascontiguousarray(pcc_l0),
        np.ascontiguousarray(pcc_A),
        scales,
        np.ascontiguousarray(model.tendon_r, dtype=float),
        np.ascontiguousarray(model.tendon_seg),
        np.ascontiguousarray(model.seg_length, dtype=float),
        np.ascontiguousarray(model.K_bt, dtype=float),
        np.ascontiguousarray(coarse.node_s, dtype=float),
        np.ascontiguousarray(coarse.step_seg),
        np.ascontiguousarray(idx, dtype=np.int64),
        np.array([ratio]),
    )


def _solve_batch_cpu(
    model: RodModel,
    loads: BatchLoads,
    *,
    guess: _Warm | None,
    jacobian: bool,
    shapes: bool,
    rtol: float,
    max_iter: int,
    threads: int | None,
    check_stability: bool,
) -> BatchArrays:
    """The numba back end: one `prange` over the items (`_batch_kernels._solve_batch`), or
    a plain loop on one thread (`_solve_batch_serial`)."""
    import numba

    B = loads.size
    n_t = model.n_tendons
    length_mode = loads.control == "length"
    n_unk = 3 + (n_t if length_mode else 0)
    forces = _forces(loads)
    flags = np.zeros((B, 3), dtype=np.int64)
    flags[:, 2] = int(check_stability)
    start_act = np.zeros((B, n_t))
    start_forces = np.zeros((B, 4, 3))
    if guess is not None:
        warm = np.ascontiguousarray(guess.unknowns, dtype=float)
        has_warm = np.all(np.isfinite(warm), axis=1)
        warm = np.where(has_warm[:, None], warm, 0.0)
        flags[:, 0] = has_warm
        if guess.actuation is not None and guess.forces is not None:
            has_start = has_warm & np.all(np.isfinite(guess.actuation), axis=1)
            has_start &= np.all(np.isfinite(guess.forces), axis=(1, 2))
            flags[:, 1] = has_start
            start_act = np.where(has_start[:, None], guess.actuation, 0.0)
            start_forces = np.where(has_start[:, None, None], guess.forces, 0.0)
    else:
        warm = np.zeros((B, n_unk))
    unknowns = np.empty((B, n_unk))
    tensions = np.empty((B, n_t))
    tip = np.empty((B, 3))
    rotation = np.empty((B, 3, 3))
    stats = np.empty((B, 7))
    jac = np.empty((B, 3, n_t)) if jacobian else np.empty((B, 0, 0))
    positions = np.empty((B, model.n_nodes, 3)) if shapes else np.empty((0, 0, 3))
    balanced_act = np.empty((B, n_t))
    balanced_forces = np.empty((B, 4, 3))
    previous = numba.get_num_threads()
    # One thread, or a small batch by default: the kernel compiled without numba's parallel
    # pass, the same items in the same order (its first compile costs ~1 min less).
    if threads is None:
        parallel = previous > 1 and B >= PARALLEL_MIN_ITEMS
    else:
        parallel = threads > 1 and B > 1
    kernel = _solve_batch if parallel else _solve_batch_serial
    if threads is not None:
        numba.set_num_threads(threads)
    try:
        kernel(
            length_mode,
            (
                loads.actuation,
                forces,
                warm,
                np.ascontiguousarray(start_act),
                np.ascontiguousarray(start_forces),
                flags,
            ),
            _model_arrays(model, length_mode),
            rtol,
            max_iter,
            jacobian,
            shapes,
            (
                unknowns, tensions, tip, rotation, stats, jac, positions, balanced_act,
                balanced_forces,
            ),
        )  # fmt: skip
    finally:
        numba.set_num_threads(previous)
    status = stats[:, 0].astype(np.int64)
    checked = check_stability and not length_mode
    # Items whose tip error estimate misses the default bound (or has none) are refined as
    # `solve_static` refines them: doubled grids from the converged state (`_refine`).
    for i in _to_refine(model, status, stats[:, 6]).tolist():
        _refine_item(
            model,
            loads,
            i,
            rtol,
            max_iter,
            checked,
            (unknowns, tensions, tip, rotation, stats, jac, positions),
            jacobian,
            shapes,
        )
        status[i] = int(stats[i, 0])
    return BatchArrays(
        tip_position=tip,
        tip_rotation=rotation,
        success=status == 0,
        residual=stats[:, 1].copy(),
        iterations=stats[:, 2].astype(np.int64),
        unknowns=unknowns,
        tensions=tensions,
        jacobian=jac if jacobian else None,
        positions=positions if shapes else None,
        status=status,
        load_scale=stats[:, 3].copy(),
        from_guess=stats[:, 4] == 1.0,
        stable=(stats[:, 5] == 1.0) if checked else None,
        balanced_actuation=balanced_act,
        balanced_forces=balanced_forces,
        tip_error=np.where((status == 0) | (status == STATUS_UNSTABLE), stats[:, 6], np.nan),
    )


def _item_inputs(model: RodModel, loads: BatchLoads, i: int) -> StaticLoads:
    """Item i's inputs as `solve_static` takes them (checked `StaticLoads`)."""
    act = loads.actuation[i]
    return check_inputs(
        model,
        None if loads.control == "length" else act,
        act if loads.control == "length" else None,
        loads.tip_force[i],
        loads.tip_moment[i],
        loads.distributed_force[i],
        loads.gravity[i],
        None,
        None,
        None,
        None,
    )


def _refine_item(
    model: RodModel,
    loads: BatchLoads,
    i: int,
    rtol: float,
    max_iter: int,
    checked: bool,
    outs: tuple[np.ndarray, ...],
    jacobian: bool,
    shapes: bool,
) -> None:
    """Replace item i's outputs by `solve_static`'s refined answer: its converged state on the
    batch's grid (`result_at`) refined by grid doubling (`_refine`), the stability test on the
    finer grid; its shape is returned at the batch's nodes (interpolated: the finer grid holds
    them). A refinement that fails keeps the item's answer (as `_refine` does)."""
    unknowns, tensions, tip, rotation, stats, jac, positions = outs
    inp = _item_inputs(model, loads, i)
    # The item's own estimate goes with it: a refinement whose finer solve fails keeps it (as
    # solve_static's answer keeps its estimate there).
    estimate = float(stats[i, 6])
    coarse = dataclasses.replace(
        result_at(model, inp, unknowns[i], rtol),
        tip_error=estimate if math.isfinite(estimate) else None,
    )
    bound = _DEFAULT_TIP_TOL * model.total_length
    fine = _refine(model, inp, coarse, rtol, max_iter, None, bound)
    if fine.s.shape[0] == model.n_nodes:
        # The item's answer stands; its estimate is the step doubling's (as solve_static's).
        stats[i, 6] = np.nan if fine.tip_error is None else fine.tip_error
        return
    grid = grid_model(model, fine)
    tip[i] = fine.tip_position
    rotation[i] = fine.tip_rotation
    tensions[i] = fine.tendon_tension
    unknowns[i, :3] = fine.base_moment
    if unknowns.shape[1] > 3:
        unknowns[i, 3:] = fine.tendon_tension
    stats[i, 1] = fine.residual
    stats[i, 2] += fine.nit
    stats[i, 6] = np.nan if fine.tip_error is None else fine.tip_error
    stats[i, 0] = 0
    if checked and grid is not None:
        stable = is_stable(grid, fine)
        stats[i, 5] = 1.0 if stable else 0.0
        stats[i, 0] = 0 if stable else STATUS_UNSTABLE
    if shapes:
        for c in range(3):
            positions[i, :, c] = np.interp(model.node_s, fine.s, fine.positions[:, c])
    if jacobian and grid is not None:
        jac[i] = tip_jacobian(grid, fine) if stats[i, 0] == 0 else np.nan


def _forces(loads: BatchLoads) -> np.ndarray:
    """(B, 4, 3): tip force, tip moment, distributed force, gravity (the kernels' layout)."""
    return np.ascontiguousarray(
        np.stack([loads.tip_force, loads.tip_moment, loads.distributed_force, loads.gravity], 1)
    )


@dataclass(frozen=True)
class _Warm:
    """A checked `guess=`: unknowns (B, k) (NaN rows for failed items) and the inputs they
    balance, actuation (B, n_t) and forces (B, 4, 3), or None when the guess lacks them."""

    unknowns: np.ndarray
    actuation: np.ndarray | None
    forces: np.ndarray | None


# ---------------------------------------------------------------------------------------------
# The public function


def solve_static_batch(
    robot: RodModel | RobotSpec,
    *,
    tensions: Any = None,
    lengths: Any = None,
    tip_force: Any = None,
    tip_moment: Any = None,
    distributed_force: Any = None,
    gravity: Any = None,
    device: str = "cpu",
    guess: StaticBatchResult | StaticResult | None = None,
    jacobian: bool = False,
    shapes: bool = False,
    threads: int | None = None,
    rtol: float = DEFAULT_RTOL,
    max_iter: int = DEFAULT_MAX_ITER,
    check_stability: bool = True,
) -> StaticBatchResult:
    """Static equilibria of B load cases of one robot, solved in parallel.

    Each item is what `solve_static(robot, ..., method="shooting")` returns for its inputs
    (same strategy: direct Newton, load continuation from rest for large loads), float64.
    Items whose load needs multiple shooting (bending angle above `_MULTI_SHOOT_ANGLE`, e.g. a
    soft robot held horizontally under heavy weight) are not solved: success False, NaN outputs
    and a message saying so.

    Parameters
    ----------
    robot : a compiled `RodModel` or a RobotSpec.
    tensions : (B, n_t) or (n_t,) tendon tensions [N], >= 0 (default 0).
    lengths : (B, n_t) or (n_t,) commanded tendon lengths [m] (elastic tendons; tensions are
        solved for). Give tensions or lengths, not both.
    tip_force, tip_moment : (B, 3) or (3,) world-frame distal load [N], [N m].
    distributed_force : (B, 3) or (3,) uniform load per unit length [N/m].
    gravity : (B, 3) or (3,) [m/s^2].
    device : "cpu" (numba threads) or a Warp device such as "cuda:0" (needs softrod[warp]).
    guess : a previous `StaticBatchResult` of the same robot, control mode and B: each item
        starts from that item's converged unknowns (failed items start cold); or one
        `solve_static` result of this robot and control mode: every item starts from it (as
        `solve_static(guess=result)`, without the rigid-body predictor of a load change).
    jacobian : also return d tip_position / d actuation (B, 3, n_t) (as `tip_jacobian`).
    shapes : also return the backbone positions (B, n_nodes, 3).
    threads : CPU threads for this call (default: numba's, the number of cores, for batches
        of at least `PARALLEL_MIN_ITEMS` = 64 items, one thread for smaller ones).
    rtol, max_iter : as in `solve_static`.
    check_stability : test each converged item's stability (as `solve_static`; tension
        control on the CPU) and fill `stable`; an unstable item comes back with success False
        and status 7 (the batch does not continue onto the buckled branch: solve_static does).

    Inputs with a leading batch axis must share B; unbatched ones are broadcast (B = 1 when none
    is batched). Raises ValueError naming the argument and its shape for bad input.
    """
    if not (isinstance(rtol, int | float) and rtol > 0 and math.isfinite(rtol)):
        raise ValueError(f"rtol must be a positive number, got {rtol!r}")
    if not (isinstance(max_iter, int) and max_iter >= 0):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    if not isinstance(device, str) or not device:
        raise ValueError(f"device must be 'cpu' or a Warp device such as 'cuda:0', got {device!r}")
    if not isinstance(check_stability, bool):
        raise ValueError(f"check_stability must be True or False, got {check_stability!r}")
    if threads is not None:
        import numba

        limit = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
        if not (isinstance(threads, int) and 1 <= threads <= limit):
            raise ValueError(f"threads must be an integer in [1, {limit}], got {threads!r}")
    model = as_model(robot)
    model.require_straight_routing("softrod.rods.solve_static_batch (CPU and Warp)")
    loads = _check_loads(
        model,
        tensions,
        lengths,
        {
            "tip_force": tip_force,
            "tip_moment": tip_moment,
            "distributed_force": distributed_force,
            "gravity": gravity,
        },
    )
    warm = _check_guess(guess, loads, model.n_tendons)
    if device == "cpu":
        out = _solve_batch_cpu(
            model,
            loads,
            guess=warm,
            jacobian=jacobian,
            shapes=shapes,
            rtol=float(rtol),
            max_iter=max_iter,
            threads=threads,
            check_stability=check_stability,
        )
    else:
        try:
            from softrod.rods._batch_warp import solve_batch_warp
        except ImportError as exc:
            raise ImportError(
                f"solve_static_batch(device={device!r}) needs the warp extra "
                f"(pip install 'softrod[warp]'): {exc}"
            ) from exc
        out = solve_batch_warp(
            model,
            loads,
            device=device,
            guess=None if warm is None else warm.unknowns,
            jacobian=jacobian,
            shapes=shapes,
            rtol=float(rtol),
            max_iter=max_iter,
            check_stability=check_stability,
        )
        out = _refine_warp(model, loads, out, float(rtol), max_iter, jacobian, shapes)
    return _wrap(out, loads, model, shapes)


def _to_refine(model: RodModel, status: np.ndarray, tip_error: np.ndarray) -> np.ndarray:
    """Indices of the converged items (status 0 or unstable) whose tip error estimate [m]
    misses the default bound (`_DEFAULT_TIP_TOL` of the length) or is NaN: the items both back
    ends refine as `solve_static` does."""
    converged = (status == 0) | (status == STATUS_UNSTABLE)
    return np.flatnonzero(converged & ~(tip_error <= _DEFAULT_TIP_TOL * model.total_length))


def _refine_warp(
    model: RodModel,
    loads: BatchLoads,
    out: BatchArrays,
    rtol: float,
    max_iter: int,
    jacobian: bool,
    shapes: bool,
) -> BatchArrays:
    """The Warp back end's items whose tip error estimate misses the default bound
    (`_DEFAULT_TIP_TOL` of the length) or has none, refined on the CPU as the CPU batch refines
    its own (`_refine_item`: doubled grids from the converged state, one item after another);
    `out` itself where none needs it (its arrays untouched)."""
    B = loads.size
    status = np.asarray(out.status, dtype=np.int64)
    err = np.full(B, np.nan) if out.tip_error is None else np.asarray(out.tip_error, dtype=float)
    items = _to_refine(model, status, err)
    if items.size == 0:
        return out
    # The CPU batch's layout (`_batch_kernels._solve_one`'s stats) for `_refine_item`.
    stats = np.zeros((B, 7))
    stats[:, 0] = status
    stats[:, 1] = out.residual
    stats[:, 2] = out.iterations
    stats[:, 5] = np.nan if out.stable is None else out.stable
    stats[:, 6] = err
    unknowns = np.array(out.unknowns, dtype=float)
    tensions = np.array(out.tensions, dtype=float)
    tip = np.array(out.tip_position, dtype=float)
    rotation = np.array(out.tip_rotation, dtype=float)
    jac = np.array(out.jacobian, dtype=float) if out.jacobian is not None else np.empty((B, 0, 0))
    positions = (
        np.array(out.positions, dtype=float) if out.positions is not None else np.empty((0, 0, 3))
    )
    checked = out.stable is not None
    for i in items.tolist():
        _refine_item(
            model,
            loads,
            i,
            rtol,
            max_iter,
            checked,
            (unknowns, tensions, tip, rotation, stats, jac, positions),
            jacobian and out.jacobian is not None,
            shapes and out.positions is not None,
        )
    status = stats[:, 0].astype(np.int64)
    return dataclasses.replace(
        out,
        tip_position=tip,
        tip_rotation=rotation,
        success=status == 0,
        residual=stats[:, 1].copy(),
        iterations=stats[:, 2].astype(np.int64),
        unknowns=unknowns,
        tensions=tensions,
        jacobian=jac if out.jacobian is not None else None,
        positions=positions if out.positions is not None else None,
        status=status,
        stable=(stats[:, 5] == 1.0) if checked else None,
        tip_error=np.where((status == 0) | (status == STATUS_UNSTABLE), stats[:, 6], np.nan),
    )


def _check_guess(guess: Any, loads: BatchLoads, n_t: int) -> _Warm | None:
    """The warm unknowns (B, k) of `guess` (NaN rows for its failed items) and the inputs
    they balance, checked."""
    if guess is None:
        return None
    if isinstance(guess, StaticResult):
        return _warm_from_result(guess, loads, n_t)
    if not isinstance(guess, StaticBatchResult):
        raise ValueError(
            "guess must be a StaticBatchResult or a StaticResult of this robot, got "
            f"{type(guess).__name__}"
        )
    if len(guess) != loads.size:
        raise ValueError(f"guess has batch size {len(guess)} but the inputs have {loads.size}")
    n_unk = 3 + (n_t if loads.control == "length" else 0)
    if guess.control != loads.control or guess.warm.shape != (loads.size, n_unk):
        raise ValueError(
            f"guess must come from a {loads.control}-controlled batch of this robot "
            f"(unknowns (B, {n_unk})), got a {guess.control}-controlled one with "
            f"{guess.warm.shape}"
        )
    unknowns = np.where(guess.success[:, None], guess.warm, np.nan)
    if guess.balanced_actuation is None or guess.balanced_forces is None:
        return _Warm(unknowns, None, None)
    if guess.balanced_actuation.shape != (loads.size, n_t):
        raise ValueError(
            f"guess has {guess.balanced_actuation.shape[1]} tendons, this robot has {n_t}"
        )
    return _Warm(unknowns, guess.balanced_actuation, guess.balanced_forces)


def _warm_from_result(guess: StaticResult, loads: BatchLoads, n_t: int) -> _Warm | None:
    """Every item starts from one `solve_static` result (as `solve_static(guess=result)`): its
    base moment (and tensions under length control) and, when it balances inputs the batch
    takes (no point loads, chambers, field, moment actuators or friction profile), those
    inputs, from which a large change is followed by continuation. A failed result: cold."""
    if guess.tendon_tension.shape != (n_t,) or guess.base_moment.shape != (3,):
        raise ValueError(
            f"guess must be a result for a robot with {n_t} tendons, "
            f"got one with {guess.tendon_tension.shape[0]}"
        )
    if not guess.success:
        return None
    B = loads.size
    length_mode = loads.control == "length"
    x = np.concatenate([guess.base_moment, guess.tendon_tension if length_mode else []])
    unknowns = np.ascontiguousarray(np.broadcast_to(x, (B, x.shape[0])), dtype=float)
    old = guess.warm.balanced_loads if guess.warm is not None else None
    act = None
    if old is not None and _batch_takes(old):
        act = old.lengths if length_mode else old.tensions
    if old is None or act is None:
        return _Warm(unknowns, None, None)
    forces = np.stack([old.tip_force, old.tip_moment, old.distributed_force, old.gravity])
    return _Warm(
        unknowns,
        np.ascontiguousarray(np.broadcast_to(act, (B, n_t)), dtype=float),
        np.ascontiguousarray(np.broadcast_to(forces, (B, 4, 3)), dtype=float),
    )


def _batch_takes(inputs: StaticLoads) -> bool:
    """Whether a batch item can have these inputs (actuation and the four load vectors only)."""
    return (
        not inputs.point_loads
        and inputs.pressures is None
        and inputs.moments is None
        and inputs.tension_profile is None
        and inputs.magnet_forces is None
        and not np.any(inputs.field)
        and not np.any(inputs.field_gradient)
    )


def _wrap(out: BatchArrays, loads: BatchLoads, model: RodModel, shapes: bool) -> StaticBatchResult:
    """The public result from a back end's arrays."""
    B = loads.size
    success = np.asarray(out.success, dtype=bool)
    status = (
        np.asarray(out.status, dtype=np.int64)
        if out.status is not None
        else np.where(success, 0, 1).astype(np.int64)
    )
    load_scale = (
        np.asarray(out.load_scale, dtype=float)
        if out.load_scale is not None
        else np.where(success, 1.0, np.nan)
    )
    jacobian = out.jacobian
    if jacobian is not None and not success.all():
        # A Jacobian exists only at a converged equilibrium (as `tip_jacobian`).
        jacobian = np.array(jacobian, dtype=float)
        jacobian[~success] = np.nan
    from_guess = (
        np.asarray(out.from_guess, dtype=bool)
        if out.from_guess is not None
        else np.zeros(B, dtype=bool)
    )
    balanced_act, balanced_forces = out.balanced_actuation, out.balanced_forces
    if balanced_act is None or balanced_forces is None:
        # A back end that reaches the full inputs or fails: successes balance the inputs.
        balanced_act = np.where(success[:, None], loads.actuation, np.nan)
        balanced_forces = np.where(success[:, None, None], _forces(loads), np.nan)
    n_failed = int(np.count_nonzero(~success))
    if n_failed == 0:
        message = f"all {B} converged"
    else:
        first = int(np.flatnonzero(~success)[0])
        text = _item_message(int(status[first]), float(load_scale[first]), bool(from_guess[first]))
        message = f"{n_failed} of {B} did not converge (first: item {first}, {text})"
    return StaticBatchResult(
        tip_position=out.tip_position,
        tip_rotation=out.tip_rotation,
        success=success,
        status=status,
        residual=out.residual,
        iterations=out.iterations,
        load_scale=load_scale,
        tensions=out.tensions,
        jacobian=jacobian,
        positions=out.positions,
        s=model.node_s.copy() if shapes else None,
        control=loads.control,
        warm=out.unknowns,
        message=message,
        stable=None if out.stable is None else np.asarray(out.stable, dtype=bool),
        balanced_actuation=balanced_act,
        balanced_forces=balanced_forces,
        from_guess=from_guess,
        # A back end without an estimate: NaN, "not estimated".
        tip_error=np.full(B, np.nan) if out.tip_error is None else out.tip_error,
    )
