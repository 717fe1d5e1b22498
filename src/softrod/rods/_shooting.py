"""Method "shooting": Newton shooting on the base moment, load continuation, and multiple
shooting for heavy loads (ALGORITHMS.md; `_multishoot` holds the multiple-shooting Newton)."""

from __future__ import annotations

import dataclasses
import math
import weakref
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from softrod.rods._budget import BUDGET_MESSAGE, BUDGET_STATUS, budget_expired
from softrod.rods._inputs import (
    StaticLoads,
    _base_moment_on_shape,
    _blend,
    _distal_moments,
    _load_number,
    _loads_at,
    _magnetic_number,
    _Problem,
    _problem,
    _straight_magnetic_moment,
    _zero_inputs,
)
from softrod.rods._model import RodModel, as_model
from softrod.rods._multishoot import multiple_shooting
from softrod.rods._pcc import _pcc_tensions
from softrod.rods._result import StaticResult, _assemble
from softrod.rods._stability_kernels import _interval_maps

# Continuation's step rule and branch check, shared with the batch (`_batch_kernels._follow`).
from softrod.rods._static_kernels import (
    _BROYDEN_DEFER,
    _DEFERRED,
    _FIRST_STEP_ANGLE,
    _JACOBIAN_AT,
    _MAX_TIP_DEVIATION,
    _MAX_TIP_MOVE,
    _STEP_RTOL,
    _deferred_tip,
    _newton,
    _next_load_step,
    _residual,
    _residual_value,
    _tip_step_use,
)

__all__: list[str] = []

#: Continuation gives up when its load increment falls below this fraction of the full load.
_MIN_LOAD_STEP = 1e-4
_MAX_CONTINUATION_SOLVES = 400
#: Largest external-load bending angle [rad] (base moment of the loads on the straight robot
#: over the moment scale, ~ F L^2 / EI) for which a cold start uses Newton directly; above it
#: the load is ramped. 3 rad keeps the Bisshopp-Drucker case P L^2 / EI = 2 direct and sends
#: the looped-branch cases found in review (P L^2 / EI >= 10) through continuation.
_DIRECT_LOAD_ANGLE = 3.0
#: Largest bending angle [rad] of external loads and tendons together (`_bending_number`)
#: for which Newton goes directly from the start to the target: tendon bending turns the
#: external loads against the shape (issue 19: the load number alone ignored it).
_DIRECT_BENDING_ANGLE = 4.0
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
#: Largest Newton step in the scaled unknowns (M0 / moment scale, tensions / tension scale)
#: during continuation corrections and warm starts: a longer step leaves the neighbourhood of
#: the predictor, where a residual decrease can come from another branch.
_CONTINUATION_STEP_BOUND = 1.0
#: Same bound for a cold direct Newton solve (starts from the straight robot, further away).
_DIRECT_STEP_BOUND = 4.0
#: Default tip error bound of the error estimate, as a fraction of the length (issue 19).
_DEFAULT_TIP_TOL = 1e-6
#: Grid doublings the error estimate tries before it reports that `tol` was not met. Every
#: single- and multiple-shooting answer is refined to `tol` (default `_DEFAULT_TIP_TOL` of the
#: length), and so is every batch item (`_batch._refine_item`).
_MAX_DOUBLINGS = 6
#: Smallest ratio of the coarse grid's RK4 error to the solve grid's (sum of h^5) for which
#: the coarse grid is used; below it (every step ends at a disk) the doubled grid is.
_MIN_COARSE_RATIO = 4.0


_STATUS_MESSAGES = {
    0: "converged",
    1: "maximum number of Newton iterations reached",
    4: "observer update left a boundary residual above rtol",
    2: "Newton line search stalled (at round-off if the residual is tiny: rtol too small?)",
    3: "integration produced non-finite values or a section balance without a solution "
    "(load beyond what the model can carry?)",
    5: "the equilibrium jumps: the tip moves more than the continuation bound within the "
    "smallest load step (a snap-through or a branch change; the answer is not the "
    "equilibrium reached gradually)",
    BUDGET_STATUS: f"{BUDGET_MESSAGE} (raise it with softrod.rods.solve_time_limit)",
}


def _resampled(
    model: RodModel, guess: StaticResult
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The guess's positions (n, 3), rotations (n, 3, 3) and total moments (n, 3) on this
    model's grid (linear in s; rotations from the nearest node: a starting point only), or
    None when the guess has no moments or is not of a robot of this length."""
    if guess.warm is None:
        return None
    if guess.positions.shape == (model.n_nodes, 3):
        return guess.positions, guess.rotations, guess.warm.total_moment
    if abs(guess.s[-1] - model.node_s[-1]) > 1e-9 * model.total_length:
        return None
    s = model.node_s

    def interp(a: np.ndarray) -> np.ndarray:
        return np.stack([np.interp(s, guess.s, a[:, c]) for c in range(3)], axis=1)

    nearest = np.clip(np.searchsorted(guess.s, s), 0, guess.s.size - 1)
    return interp(guess.positions), guess.rotations[nearest], interp(guess.warm.total_moment)


def _difference(target: StaticLoads, start: StaticLoads) -> StaticLoads:
    """target - start (comparable inputs, see `_blend`); lengths are left out."""
    return StaticLoads(
        tensions=None
        if target.tensions is None or start.tensions is None
        else target.tensions - start.tensions,
        lengths=None,
        tip_force=target.tip_force - start.tip_force,
        tip_moment=target.tip_moment - start.tip_moment,
        distributed_force=target.distributed_force - start.distributed_force,
        gravity=target.gravity - start.gravity,
        point_loads=tuple(
            (a[0], a[1] - b[1], a[2] - b[2])
            for a, b in zip(target.point_loads, start.point_loads, strict=True)
        ),
        tension_profile=target.tension_profile,
        field=target.field - start.field,
        field_gradient=target.field_gradient - start.field_gradient,
    )


@njit(cache=True)
def _tendon_bending(tendon_r, tendon_seg, tensions, seg_length, K_bt):
    """Sum over segments of |net tendon moment through it| * length / EI [rad] on the
    straight robot; a tendon's moment is r_i x (tau_i e3) on every segment up to its anchor."""
    angle = 0.0
    for j in range(seg_length.shape[0]):
        mx = 0.0
        my = 0.0
        for i in range(tensions.shape[0]):
            if tendon_seg[i] >= j:
                mx += tensions[i] * tendon_r[i, 1]
                my -= tensions[i] * tendon_r[i, 0]
        angle += np.sqrt(mx * mx + my * my) * seg_length[j] / min(K_bt[j, 0], K_bt[j, 1])
    return angle


def _tendon_number(model: RodModel, tensions: np.ndarray) -> float:
    """Bending angle [rad] the tensions (n_t,) [N] give the straight robot. Tendons are
    internal loads and do not enter `_load_number`, yet they bend a robot as much as the
    external loads do."""
    if tensions.size == 0:
        return 0.0
    return float(
        _tendon_bending(
            model.tendon_r,
            model.tendon_seg,
            np.ascontiguousarray(tensions, dtype=float),
            model.seg_length,
            model.K_bt,
        )
    )


def _tendon_estimate(model: RodModel, inp: StaticLoads) -> np.ndarray:
    """(n_t,) [N]: the tensions, or under length control their constant-curvature estimate."""
    if inp.tensions is not None:
        return inp.tensions
    assert inp.lengths is not None
    return _pcc_tensions(model, inp.lengths)


def _bending_number(model: RodModel, start: StaticLoads, target: StaticLoads) -> float:
    """Bending angle [rad] of the change of inputs from `start` to `target`: the external
    loads' load number plus the tendons' bending (the size of the continuation path)."""
    change = _difference(target, start)
    tendons = _tendon_estimate(model, target) - _tendon_estimate(model, start)
    internal = _tendon_number(model, tendons) + _magnetic_number(model, change)
    return _load_number(model, change) + internal


def _direct_ok(
    model: RodModel, start: StaticLoads, target: StaticLoads, external: float | None = None
) -> bool:
    """Whether Newton may go from the equilibrium at `start` to `target` in one solve: the
    external loads' change (`external`, computed when None) bends the robot by at most
    `_DIRECT_LOAD_ANGLE` and, with the tendons' change, by at most `_DIRECT_BENDING_ANGLE`."""
    # The change of inputs only where a number needs it (a warm start's external loads, a
    # field): building it is most of this test's time.
    change = _difference(target, start) if external is None or model.is_magnetic else None
    if external is None:
        assert change is not None
        external = _load_number(model, change)
    if external > _DIRECT_LOAD_ANGLE:
        return False
    tendons = _tendon_estimate(model, target) - _tendon_estimate(model, start)
    internal = _tendon_number(model, tendons)
    if change is not None:
        internal += _magnetic_number(model, change)
    return external + internal <= _DIRECT_BENDING_ANGLE


def _comparable(a: StaticLoads, b: StaticLoads) -> bool:
    """Whether `_blend(a, b, mu)` exists (same input mode, point loads at the same places),
    without building it."""
    if (a.lengths is None) != (b.lengths is None) or len(a.point_loads) != len(b.point_loads):
        return False
    if not a.point_loads:  # the usual case, without the generator
        return True
    return all(pa[0] == pb[0] for pa, pb in zip(a.point_loads, b.point_loads, strict=True))


def _tip_step_ok(
    model: RodModel,
    tip: np.ndarray,
    tip_cur: np.ndarray,
    tip_prev: np.ndarray | None,
    ratio: float,
) -> bool:
    """Whether a continuation step to `tip` stays on the branch: it moved at most
    `_MAX_TIP_MOVE` L from the last equilibrium's tip `tip_cur`, and (when a previous tip
    gives a secant) lies within `_MAX_TIP_DEVIATION` L of the secant prediction
    tip_cur + ratio (tip_cur - tip_prev)."""
    L = model.total_length
    if not np.all(np.isfinite(tip)) or np.linalg.norm(tip - tip_cur) > _MAX_TIP_MOVE * L:
        return False
    if tip_prev is None:
        return True
    predicted = tip_cur + ratio * (tip_cur - tip_prev)
    return bool(np.linalg.norm(tip - predicted) <= _MAX_TIP_DEVIATION * L)


#: Smallest tendon path density |v + u x r| (1 on the straight robot) below which a stopped
#: path is said to be at a tendon fold (`_fold_note`).
_FOLD_DENSITY = 0.1


def _fold_note(model: RodModel, X: np.ndarray, tau: np.ndarray) -> str:
    """Where a continuation path stopped: a note when a loaded tendon's path density
    |v + u x r| (X (n_nodes, 6) the strains (v, u), tau (n_t,) [N]) is below
    `_FOLD_DENSITY` somewhere. At 0 the backbone's curvature radius reaches the tendon's
    offset and the tendon would fold back on itself: its direction w / |w| flips, so the
    section balance K (u - u*) + tau r x w / |w| = R^T M has no solution beyond it (planar:
    u = (tau d + m) / EI needs u d < 1) and no equilibrium of the tendon model exists."""
    if model.is_routed or tau.size == 0 or not np.any(tau != 0.0):
        return ""
    node_seg = np.append(model.step_seg, model.step_seg[-1])
    best, where, which = np.inf, 0, 0
    for i in np.flatnonzero(tau != 0.0):
        on = node_seg <= model.tendon_seg[i]
        w = X[on, 0:3] + np.cross(X[on, 3:6], model.tendon_r[i])
        density = np.linalg.norm(w, axis=1)
        k = int(np.argmin(density))
        if density[k] < best:
            best, where, which = float(density[k]), int(np.flatnonzero(on)[k]), int(i)
    if best >= _FOLD_DENSITY:
        return ""
    return (
        f"; tendon {which} nearly folds back there (path density |v + u x r| = {best:.2g} at "
        f"s = {model.node_s[where]:.4g} m, 1 when straight): the tendon model is singular "
        "where the backbone's curvature radius reaches the tendon's offset"
    )


@dataclass
class _March:
    """State of a multiple-shooting march: the last equilibrium's inputs and node arrays."""

    inputs: StaticLoads
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
    target: StaticLoads,
    K: int,
    rtol: float,
    max_iter: int,
    Y: np.ndarray,
    X: np.ndarray,
) -> tuple[_March, float, int]:
    """Multiple shooting along the straight input path from `start` (an equilibrium) to
    `target`, in steps of at most `_DIRECT_LOAD_ANGLE` of bending (external loads and
    tendons). Each step starts every interval from the last equilibrium (frames, and moments
    plus the load change on its shape) and is accepted only when the tip stays on the branch
    (`_tip_step_ok`). Returns (last equilibrium, fraction of the path reached, status; 5 when
    the smallest step still jumped)."""
    number = _bending_number(model, start.inputs, target)
    dmu_max = min(1.0, _DIRECT_LOAD_ANGLE / max(number, 1e-12))
    dmu = dmu_max
    mu, cur, status, solves = 0.0, start, 0, 0
    mu_prev, tip_prev = 0.0, None
    loads_cur = _loads_at(model, cur.inputs, 1.0)
    while mu < 1.0 and solves < _MAX_CONTINUATION_SOLVES:
        if budget_expired():
            status = BUDGET_STATUS
            break
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
            _CONTINUATION_STEP_BOUND,
        )
        solves += 1
        cur.nit += it
        cur.nfev += fe
        tip_cur = cur.positions[-1]
        ratio = (trial - mu) / (mu - mu_prev) if tip_prev is not None and mu > mu_prev else 0.0
        if st == 0 and not _tip_step_ok(model, Y[-1, 0:3], tip_cur, tip_prev, ratio):
            st = 5
        if st == 0:
            tip_prev, mu_prev = tip_cur.copy(), mu
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
            if dmu < _MIN_LOAD_STEP or st == BUDGET_STATUS:
                break
    if mu >= 1.0:
        status = 0
    elif status == 0:
        status = 1
    return cur, mu, status


def _solve_multiple(
    model: RodModel,
    inp: StaticLoads,
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
    warm = guess.warm if guess is not None else None
    old = warm.balanced_loads if warm is not None else None
    on_grid = _resampled(model, guess) if guess is not None else None
    if (
        guess is not None
        and warm is not None
        and old is not None
        and on_grid is not None
        and _blend(old, inp, 0.0) is not None
    ):
        start = _March(old, *on_grid, guess.tendon_tension.copy(), guess.residual)
        result, frac, status = _march(model, start, inp, K, rtol, max_iter, Y, X)
        nit, nfev = result.nit, result.nfev
    lam = 1.0
    # A jump on the way from the guess is the answer (a failure): the ramp from rest would
    # reach an equilibrium the robot, coming from the guess's state, does not.
    if status not in (0, 5):
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
            _CONTINUATION_STEP_BOUND,
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
    else:
        lam = frac
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
        ) + _fold_note(model, X, tau)
    return _assemble(
        model,
        "shooting",
        Y,
        X,
        tau,
        pb.loads,
        status,
        message,
        result.residual,
        nit,
        nfev,
        lam,
        inputs=inp,
        balanced_loads=result.inputs,
    )


def _solve_shooting(
    model: RodModel,
    inp: StaticLoads,
    guess: StaticResult | None,
    rtol: float,
    max_iter: int,
    intervals: int | None = None,
    error_estimate: bool = True,
    tol: float | None = None,
) -> StaticResult:
    """Newton shooting (`_solve_once`) with a tip error estimate (`error_estimate`, on by
    default; a `tol` [m] turns it on): `_coarse_tip_error` after convergence, and where it
    exceeds `tol` (default `_DEFAULT_TIP_TOL` of the length) solves on grids of half the step,
    from the converged state, until the estimated tip error meets it (`_refine`). The batched
    solver refines its items the same way (`_batch._refine_item`)."""
    if tol is not None and not (isinstance(tol, int | float) and tol > 0 and np.isfinite(tol)):
        raise ValueError(f"tol must be a positive tip error [m], got {tol!r}")
    if not isinstance(error_estimate, bool):
        raise ValueError(f"error_estimate must be True or False, got {error_estimate!r}")
    wanted = error_estimate or tol is not None
    result = _solve_once(model, inp, guess, rtol, max_iter, intervals, wanted)
    if not wanted or not result.success:
        return result
    bound = float(tol) if tol is not None else _DEFAULT_TIP_TOL * model.total_length
    # The cheap estimate (one coarse integration, in `_solve_once`); the step-doubling solves
    # only where it is unavailable (multiple shooting) or above the bound.
    estimate = result.tip_error
    if estimate is not None and estimate <= bound:
        return result
    if inp.tension_profile is not None:
        # A friction tension profile (solve_sequence) lives on this grid and the friction fixed
        # point reads the shape at this grid's holes: keep the grid and say so.
        said = "no tip error estimate" if estimate is None else f"tip error {estimate:.2e} m"
        note = f"; {said} above tol {bound:.2e} m: grid kept (friction profile on it)"
        return dataclasses.replace(result, message=result.message + note)
    return _refine(model, inp, result, rtol, max_iter, intervals, bound)


def _refine(
    model: RodModel,
    inp: StaticLoads,
    result: StaticResult,
    rtol: float,
    max_iter: int,
    intervals: int | None,
    tol: float,
) -> StaticResult:
    """Step doubling: solve on a grid of half the step from the converged state (a warm start
    with unchanged loads: a couple of Newton iterations); the tip difference times 16/15
    (RK4, O(h^4)) estimates the coarser grid's tip error [m]. While it exceeds `tol` the finer
    result becomes the answer and is estimated in turn, up to `_MAX_DOUBLINGS` times."""
    extra = tuple(p[0] for p in inp.point_loads)
    steps = model.step_seg.shape[0]
    current = result
    for _ in range(_MAX_DOUBLINGS):
        if budget_expired():
            # The solve's time budget is spent: keep the answer and say so.
            note = f"; {BUDGET_MESSAGE}: grid not refined further ({steps} steps)"
            return dataclasses.replace(current, message=current.message + note)
        steps *= 2
        fine = _finer_model(model, steps, extra)
        finer = _solve_once(fine, inp, current, rtol, max_iter, intervals)
        if not finer.success:
            note = f"; no tip error estimate (the solve on {steps} steps failed)"
            return dataclasses.replace(current, message=current.message + note)
        error = 16.0 / 15.0 * float(np.linalg.norm(finer.tip_position - current.tip_position))
        current = dataclasses.replace(current, tip_error=error)
        if error <= tol:
            return current
        # The finer answer is ~16x more accurate; its own error needs the next doubling.
        current = dataclasses.replace(finer, tip_error=error / 16.0)
    note = (
        f"; estimated tip error {current.tip_error:.2e} m after {_MAX_DOUBLINGS} grid "
        f"doublings ({steps} steps) does not meet tol {tol:.2e} m"
    )
    return dataclasses.replace(current, message=current.message + note)


def result_at(model: RodModel, inp: StaticLoads, x: np.ndarray, rtol: float) -> StaticResult:
    """The converged single-shooting result at unknowns x (the `_newton` layout, e.g. a
    batch item's) under `inp`, without Newton iterations (what `_refine` starts from)."""
    n_t = model.n_tendons
    Y = np.empty((model.n_nodes, 15 + n_t))
    X = np.empty((model.n_nodes, 6))
    counters = np.zeros(3)
    pb = _problem(model, inp, 1.0)
    x = np.array(x, dtype=float)
    _newton(x, pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc, rtol, 0, Y, X,
            counters, np.inf)  # fmt: skip
    tau = x[3:].copy() if pb.length_mode else np.array(inp.tensions, dtype=float)
    if pb.length_mode:
        assert inp.lengths is not None
        tau[Y[-1, 15 : 15 + n_t] <= inp.lengths] = 0.0
    return _assemble(model, "shooting", Y, X, tau, pb.loads, 0, "converged", counters[2], 0, 0,
                     1.0, inputs=inp, balanced_loads=inp)  # fmt: skip


#: Finer grids of each model the error estimate has used (by coarse model; dropped with it).
_FINE_MODELS: weakref.WeakKeyDictionary[RodModel, dict[tuple[int, tuple[float, ...]], RodModel]] = (
    weakref.WeakKeyDictionary()
)


def _finer_model(model: RodModel, steps: int, extra: tuple[float, ...]) -> RodModel:
    """`as_model(model, steps, extra)`, kept per model: a warm-started sequence with error
    estimates reuses the same finer grid."""
    known = _FINE_MODELS.setdefault(model, {})
    key = (steps, extra)
    if key not in known:
        fine = as_model(model, steps, extra)
        # A kernel model's chamber tendons are not in its spec: add them on the new grid too.
        known[key] = fine.with_chambers if model.n_internal_tendons else fine
    return known[key]


@njit(cache=True)
def _corrected_tip(x, length_mode, tau_fixed, base, geo, ld, bc, tip_out):
    """Tip (3,) [m] of the shooting problem (geo, ld) after one Newton step from the unknowns
    x (the `_residual` layout): the IVP from x, corrected to first order so that the boundary
    conditions hold. Returns False on a failed integration or a singular Jacobian."""
    n = x.shape[0]
    ny = 15 + tau_fixed.shape[0]
    z = np.empty(ny * (1 + n))
    r = np.empty(n)
    J = np.empty((n, n))
    Y = np.empty((1, ny))
    X = np.empty((1, 6))
    # np.bool_, not the literal False: numba compiles `_residual` once for both values.
    if not _residual(x, length_mode, tau_fixed, base, geo, ld, bc, np.bool_(False), Y, X, z, r, J):
        return False
    cond = np.linalg.cond(J)
    if not cond < 1e14:
        return False
    dx = np.linalg.solve(J, -r)
    for a in range(3):
        tip_out[a] = z[a]
        for d in range(n):
            tip_out[a] += z[ny * (1 + d) + a] * dx[d]
    return np.isfinite(tip_out[0]) and np.isfinite(tip_out[1]) and np.isfinite(tip_out[2])


# Inlined into `_newton_with_maps` (not a kernel of its own): each compiled function that
# calls the integrator costs ~7 s of compilation on a cold cache.
@njit(inline="always")
def _tip_corrected_by(x, length_mode, tau_fixed, base, geo, ld, bc, jac, tip_out):
    """`_corrected_tip` with a given Jacobian: the IVP from x without sensitivity directions,
    corrected by one Newton step whose Jacobian and tip sensitivities are `jac`'s (`_newton`'s
    counters with the kept Jacobian, `_JACOBIAN_AT`: those of the solve's grid, equal to this
    grid's to O(h^4)). Returns False on a failed integration or a singular Jacobian."""
    n = x.shape[0]
    ny = 15 + tau_fixed.shape[0]
    z = np.empty(ny)
    r = np.empty(n)
    Y = np.empty((1, ny))
    X = np.empty((1, 6))
    store = np.bool_(False)  # not the literal: one compiled `_residual_value` for both values
    if not _residual_value(x, length_mode, tau_fixed, base, geo, ld, bc, store, Y, X, z, r):
        return False
    J = np.empty((n, n))
    for a in range(n):
        for d in range(n):
            J[a, d] = jac[_JACOBIAN_AT + a * n + d]
    cond = np.linalg.cond(J)
    if not cond < 1e14:
        return False
    dx = np.linalg.solve(J, -r)
    o = _JACOBIAN_AT + n * n
    for a in range(3):
        tip_out[a] = z[a]
        for d in range(n):
            tip_out[a] += jac[o + a * n + d] * dx[d]
    return np.isfinite(tip_out[0]) and np.isfinite(tip_out[1]) and np.isfinite(tip_out[2])


#: Coarse grids of each model (by coarse model key: the nodes point loads sit on), with the
#: fine node index of every coarse node and the error ratio (dropped with the model).
_COARSE_MODELS: weakref.WeakKeyDictionary[
    RodModel, dict[tuple[int, ...], tuple[RodModel, np.ndarray, float]]
] = weakref.WeakKeyDictionary()


def _coarse_model(model: RodModel, pinned: tuple[int, ...]) -> tuple[RodModel, np.ndarray, float]:
    """The model on its own grid with every other node dropped: (coarse model, (m,) fine index
    of each coarse node, ratio of the RK4 error sums sum h^5 coarse / fine). Kept are the ends,
    segment ends, nodes with a mass (disks) and the `pinned` nodes (point loads); a run of an
    odd number of steps between them keeps its last step as it is."""
    known = _COARSE_MODELS.setdefault(model, {})
    if pinned in known:
        return known[pinned]
    n = model.n_nodes
    seg = model.step_seg
    fixed = np.zeros(n, dtype=bool)
    fixed[[0, n - 1]] = True
    fixed[1:-1] |= seg[1:] != seg[:-1]
    fixed |= model.node_point_mass != 0.0
    fixed[list(pinned)] = True
    keep, run = [0], 0
    for k in range(1, n):
        run += 1
        if fixed[k] or run == 2:
            keep.append(k)
            run = 0
    idx = np.array(keep)
    coarse = dataclasses.replace(
        model,
        node_s=model.node_s[idx].copy(),
        node_point_mass=model.node_point_mass[idx].copy(),
        step_seg=seg[idx[:-1]].copy(),
    )
    ratio = float(np.sum(np.diff(coarse.node_s) ** 5) / np.sum(np.diff(model.node_s) ** 5))
    known[pinned] = (coarse, idx, ratio)
    return known[pinned]


#: Per coarse model (`_coarse_model`): its fine-grid step indices (`_coarse_problem`), built
#: once instead of twice a solve (dropped with the model).
_COARSE_STEPS: weakref.WeakKeyDictionary[RodModel, tuple[np.ndarray, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def _coarse_problem(
    model: RodModel, inp: StaticLoads, pb: _Problem
) -> tuple[tuple[Any, ...], tuple[Any, ...], float] | None:
    """The tip error estimate's problem on the grid of twice the step (`_coarse_model`): its
    kernel geometry, its load arrays (the fine grid's at the coarse steps) and the ratio of the
    RK4 error sums; None where the coarse grid is hardly coarser (every step ends at a disk)."""
    ld = pb.ld
    pinned: tuple[int, ...] = ()
    if inp.point_loads:
        pinned = tuple(int(np.argmin(np.abs(model.node_s - p[0]))) for p in inp.point_loads)
    mag = ld[4]
    if model.is_magnetic:
        # Point dipoles sit on grid nodes: the coarse grid keeps them like point loads.
        pinned += tuple(int(k) for k in np.flatnonzero(np.any(mag[1] != 0.0, axis=1)))
    coarse, idx, ratio = _coarse_model(model, pinned)
    if ratio < _MIN_COARSE_RATIO:
        return None
    steps = _COARSE_STEPS.get(coarse)
    if steps is None:
        # The fine step that ends at each coarse node, the fine node each coarse step leaves.
        steps = _COARSE_STEPS[coarse] = (idx[1:] - 1, idx[:-1])
    ends, starts = steps
    # The model's shared constant arrays (`RodModel.kernel_constants`) are the coarse model's
    # own on its grid: taken, not sliced.
    fine_c, coarse_c = model.kernel_constants, coarse.kernel_constants
    ld_c = (
        ld[0][ends],
        ld[1][starts],
        coarse_c.zero_nodes if ld[2] is fine_c.zero_nodes else ld[2][idx],
        # A friction profile is constant between holes: each coarse step keeps its first one's.
        coarse_c.ones if ld[3] is fine_c.ones else ld[3][starts],
        coarse_c.no_field if mag is fine_c.no_field else (mag[0], mag[1][idx], mag[2], mag[3]),
    )
    return coarse.kernel_geometry, ld_c, ratio


def _coarse_tip_error(
    model: RodModel, inp: StaticLoads, x: np.ndarray, tip_solved: np.ndarray, pb: _Problem
) -> float | None:
    """Estimated tip error [m] of a converged single-shooting solve (unknowns x, the `_newton`
    layout; its tip `tip_solved` (3,) [m]), at the cost of one integration (Richardson): the
    same problem on a grid of twice the step (`_coarse_problem`), integrated from the converged
    unknowns and corrected by one Newton step to meet its boundary conditions, lands `ratio`
    times further from the exact tip (RK4: 16 for a halved step), so the solve's error is the
    tip difference over (ratio - 1). None where the coarse grid is hardly coarser (every step
    ends at a disk) or its problem fails: the caller then solves on finer grids (`_refine`).
    This form integrates the coarse grid with its own three sensitivity directions for the
    correction; a solve of the target loads does it inside `_newton_with_maps` with Newton's
    last Jacobian instead (`_tip_corrected_by`, no directions)."""
    found = _coarse_problem(model, inp, pb)
    if found is None:
        return None
    geo_c, ld_c, ratio = found
    tip = np.empty(3)
    x = np.ascontiguousarray(x, dtype=float)
    if not _corrected_tip(x, pb.length_mode, pb.tau_fixed, pb.base, geo_c, ld_c, pb.bc, tip):
        return None
    return _richardson(tip, tip_solved, ratio)


def _richardson(tip_coarse: np.ndarray, tip_solved: np.ndarray, ratio: float) -> float:
    """The solve's tip error [m] from the coarse grid's tip: |difference| / (ratio - 1)
    (|d| as np.linalg.norm computes it, sqrt of d.d, without its dispatch)."""
    d = tip_coarse - tip_solved
    return math.sqrt(d.dot(d)) / (ratio - 1.0)


#: (model, inputs, kernel problem) of the last converged single-shooting solve: the stability
#: check of that result reuses its load arrays (`converged_problem`).
_LAST_PROBLEM: list[tuple[RodModel, StaticLoads, _Problem]] = []


def converged_problem(model: RodModel, inp: StaticLoads) -> _Problem | None:
    """The kernel problem of the last converged solve when it was of `model` under `inp` (the
    same objects), else None."""
    entry = next(iter(_LAST_PROBLEM), None)  # one read: another thread may replace it
    if entry is not None and entry[0] is model and entry[1] is inp:
        return entry[2]
    return None


def grid_model(model: RodModel, result: StaticResult) -> RodModel | None:
    """The model `result` was solved on: `model`, or the finer grid of it that the error
    estimate refined to; None when neither has the result's nodes."""
    if result.s.shape[0] == model.n_nodes:
        return model
    for fine in _FINE_MODELS.get(model, {}).values():
        if fine.n_nodes == result.s.shape[0] and np.allclose(fine.node_s, result.s):
            return fine
    return None


#: Whether the solves started in this context build the stability test's maps in Newton's last
#: evaluation (`recording_maps`; `solve_static` sets it when it will check stability).
_RECORD_MAPS: ContextVar[bool] = ContextVar("softrod_record_stability_maps", default=False)
#: (positions array, its tip (3,), interval maps (m - 1, 6, 6), checkpoint nodes (m,)) of the
#: last solve whose final evaluation built them: `recorded_maps` hands them to the test.
_LAST_MAPS: list[tuple[np.ndarray, tuple[float, ...], np.ndarray, np.ndarray]] = []


class recording_maps:  # noqa: N801 (used like a function: `with recording_maps(on):`)
    """Solves inside build the stability test's grouped transfer maps in Newton's last
    evaluation when `on` (the state and six directions restarted at each checkpoint, instead of
    the state alone and the test's own integration afterwards: one integration fewer). A class,
    not a generator context manager: it is entered on every solve."""

    __slots__ = ("_on", "_token")

    def __init__(self, on: bool) -> None:
        self._on = on

    def __enter__(self) -> None:
        self._token = _RECORD_MAPS.set(self._on)

    def __exit__(self, *exc: object) -> None:
        _RECORD_MAPS.reset(self._token)


def recorded_maps(result: StaticResult) -> tuple[np.ndarray, np.ndarray] | None:
    """The grouped transfer maps (m - 1, 6, 6) and checkpoint nodes (m,) that the solve of
    `result` built in its last evaluation (`recording_maps`), or None: the same numbers the
    test computes from the result's node states (`_stability._maps_and_nodes`)."""
    entry = next(iter(_LAST_MAPS), None)  # one read: another thread may replace it
    if entry is None or entry[0] is not result.positions:
        return None
    if entry[1] != tuple(result.positions[-1].tolist()):  # changed in place since
        return None
    return entry[2], entry[3]


@njit(cache=True)
def _newton_with_maps(
    x,
    length_mode,
    tau_fixed,
    base,
    geo,
    ld,
    bc,
    tol,
    iters,
    Y,
    X,
    counters,
    bound,
    nodes,
    maps,
    geo_c,
    ld_c,
    estimate,
    tip_out,
):
    """`_newton_maps`, then, when `estimate` and Newton converged, the tip error estimate's
    corrected coarse tip into tip_out (3,) [m] (`_tip_corrected_by` on the coarse problem
    geo_c, ld_c of `_coarse_problem`, with Newton's kept Jacobian: counters must hold it,
    `_JACOBIAN_AT`). Returns (status, m, whether tip_out was filled). One compiled call for
    Newton, its last evaluation with the maps and the estimate: the Python between them cost
    ~20 us a solve, and one kernel is one compilation (~7 s on a cold cache)."""
    st, m = _newton_maps(
        x, length_mode, tau_fixed, base, geo, ld, bc, tol, iters, Y, X, counters, bound, nodes, maps
    )
    ok = False
    if st == 0 and estimate:
        ok = _tip_corrected_by(x, length_mode, tau_fixed, base, geo_c, ld_c, bc, counters, tip_out)
    return st, m, ok


# Inlined into `_newton_with_maps`, as `_tip_corrected_by`.
@njit(inline="always")
def _newton_maps(
    x, length_mode, tau_fixed, base, geo, ld, bc, tol, iters, Y, X, counters, bound, nodes, maps
):
    """`_newton` (arguments as there) followed, when it leaves a predicted-converged iterate
    (status `_DEFERRED`, asked for by counters[3]), by that iterate's one evaluation with the
    stability test's maps: the IVP chained through the checkpoints of the iterate before
    (`_interval_maps` with chain), each interval restarting the six Jacobi directions. Where the
    prediction misses (or the IVP fails), Newton goes on from the iterate before with the
    iterations left. One compiled call: the Python between the two kernels cost ~10 us a solve.

    nodes (n_nodes,), maps (n_nodes - 1, 6, 6): work arrays. Returns (status, m): m > 0 when the
    maps were built (maps[:m - 1] across the checkpoints nodes[:m]); 0 when the new states give
    other checkpoints (the test then integrates its own); -1 when none were built."""
    nit = counters[0]
    st = _newton(x, length_mode, tau_fixed, base, geo, ld, bc, tol, iters, Y, X, counters, bound)
    if st != _DEFERRED:
        return st, -1
    x_before = Y[0, 12:15].copy()
    Y[0, 12:15] = x[:3]
    m = _interval_maps(Y, tau_fixed, geo, ld, nodes, maps, np.bool_(True), X)
    counters[1] += 1
    if m >= 0:
        M_tip = bc[0]
        last = Y.shape[0] - 1
        norm = 0.0
        for a in range(3):
            norm = max(norm, abs(Y[last, 12 + a] - M_tip[a]))
        norm /= bc[3]
        if norm <= tol and norm < counters[2]:
            counters[0] += 1
            counters[2] = norm
            return 0, m
    # The prediction missed (or the IVP failed): Newton on from the iterate before.
    x[:3] = x_before
    counters[3] = 0.0
    left = max(iters - np.int64(counters[0] - nit), 0)
    st = _newton(x, length_mode, tau_fixed, base, geo, ld, bc, tol, left, Y, X, counters, bound)
    return st, -1


#: Per model and input mode (length control or not): the unloaded inputs of a solve without
#: point loads, pressures or a tension profile (`_zero_of`; dropped with the model).
_ZEROS: weakref.WeakKeyDictionary[RodModel, dict[bool, StaticLoads]] = weakref.WeakKeyDictionary()


def _zero_of(model: RodModel, inp: StaticLoads) -> StaticLoads:
    """`_zero_inputs(model, inp)`, kept per model and input mode where it depends on nothing
    else (no point loads, pressures or tension profile): ~9 us of a warm-started solve, which
    reads it only (the path decisions, `_blend` and `_problem` build new arrays from it; its
    arrays are read-only to keep it so)."""
    if inp.point_loads or inp.pressures is not None or inp.tension_profile is not None:
        return _zero_inputs(model, inp)
    mode = inp.lengths is not None
    known = _ZEROS.setdefault(model, {})
    zero = known.get(mode)
    if zero is None:
        zero = _zero_inputs(model, inp)
        for value in vars(zero).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        known[mode] = zero
    return zero


def _blend_is_target(inp: StaticLoads) -> bool:
    """Whether `_blend(a, inp, 1.0)` equals `inp` in every field: true unless `inp` holds
    what the blend drops or rebuilds (moment inputs, pressures, held gradient forces)."""
    return inp.moments is None and inp.pressures is None and inp.magnet_forces is None


def _solve_once(
    model: RodModel,
    inp: StaticLoads,
    guess: StaticResult | None,
    rtol: float,
    max_iter: int,
    intervals: int | None = None,
    estimate: bool = False,
) -> StaticResult:
    """Newton shooting; `intervals` forces multiple shooting over that many intervals (default:
    single shooting, multiple shooting when the external load is large).

    The answer is the equilibrium reached by moving the inputs gradually from the unloaded
    robot (or from `guess`'s state): when the change of inputs bends the robot by more than
    `_DIRECT_LOAD_ANGLE` (external loads and tendons), it is followed by continuation whose
    steps are accepted only while the tip stays on the branch (`_tip_step_ok`).
    `estimate`: fill `tip_error` of a converged single-shooting solve (`_coarse_tip_error`)."""
    if intervals is not None and (not isinstance(intervals, int) or intervals < 1):
        raise ValueError(f"intervals must be a positive integer, got {intervals!r}")
    n_t = model.n_tendons
    length_mode = inp.lengths is not None
    n_unk = 3 + (n_t if length_mode else 0)
    Y = np.empty((model.n_nodes, 15 + n_t))
    X = np.empty((model.n_nodes, 6))
    # [nit, nfev, residual, defer, Jacobian, tip sensitivities, deferred step]: with defer
    # set, `_newton` leaves a predicted-converged iterate of the target to its evaluation with
    # the maps (`_newton_with_maps`) and one of continuation's intermediate steps unevaluated
    # (`step`); its last Jacobian goes to the estimate (`_coarse_tip_error`).
    counters = np.zeros(_JACOBIAN_AT + n_unk * (n_unk + 4))
    defer = _RECORD_MAPS.get() and not length_mode and not model.is_routed
    maps: list[tuple[np.ndarray, np.ndarray] | None] = [None]
    # Work arrays of the last evaluation with the stability test's maps (`_newton_with_maps`).
    map_nodes = np.empty(model.n_nodes, dtype=np.int64)
    map_work = np.empty((model.n_nodes - 1, 6, 6))

    last: list[_Problem] = []
    # The kernel problem of the target loads, built once (the predictor, the load number, the
    # direct solve and the result all read it).
    pb_inp = _problem(model, inp, 1.0)
    # The estimate's coarse problem (`_coarse_problem`); its corrected tip comes out of the
    # target's Newton call (`_newton_with_maps`), `estimated` says whether the last one made it.
    coarse = _coarse_problem(model, inp, pb_inp) if estimate else None
    tip_coarse = np.empty(3)
    estimated = [False]

    def run(x: np.ndarray, target: StaticLoads, iters: int, bound: float) -> int:
        pb = pb_inp if target is inp else _problem(model, target, 1.0)
        last[:] = [pb]
        maps[0] = None
        # Only the target's final evaluation is the answer the stability test reads.
        counters[3] = 1.0 if defer and target is inp else 0.0
        args = (pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc, rtol, iters)
        # The estimate is of the target's answer: asked for in the target's runs only.
        want = coarse is not None and pb is pb_inp
        geo_c, ld_c = (coarse[0], coarse[1]) if coarse is not None and want else (pb.geo, pb.ld)
        st, m, ok = _newton_with_maps(
            x, *args, Y, X, counters, bound, map_nodes, map_work, geo_c, ld_c, want, tip_coarse
        )
        if m > 0:
            maps[0] = (map_work[: m - 1], map_nodes[:m])
        estimated[0] = bool(want and ok)
        return int(st)

    def step(x: np.ndarray, target: StaticLoads, tol: float, tip: np.ndarray, secant: bool) -> int:
        # An intermediate step of continuation (`_batch_kernels._follow`'s): Newton on x to
        # tol; an iterate predicted to converge is taken unevaluated, its tip corrected to
        # first order (`_deferred_tip`); from a secant predictor (`secant`), the first Newton
        # step's iterate without sensitivities, with Broyden's update (`_BROYDEN_DEFER`).
        # tip (3,) receives the step's tip [m].
        pb = _problem(model, target, 1.0)
        last[:] = [pb]
        maps[0] = None
        counters[3] = _BROYDEN_DEFER if secant else 1.0
        st = _newton(x, pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc, tol, 12,
                     Y, X, counters, _CONTINUATION_STEP_BOUND)  # fmt: skip
        counters[3] = 0.0
        if st == _DEFERRED:
            counters[0] += 1
            _deferred_tip(Y, counters, n_unk, tip)
            return 0
        tip[:] = Y[-1, 0:3]
        return int(st)

    def follow(
        start: StaticLoads, x_start: np.ndarray, dmu: float
    ) -> tuple[np.ndarray, float, int]:
        # Move the inputs from `start` (an equilibrium at x_start) to `inp` with adaptive
        # increments and a secant predictor; a step is kept only if Newton converged with
        # bounded steps and the tip stayed on the branch. The step rule is the batch's
        # (`_next_load_step`: sized from the bounds the last step used), and intermediate
        # equilibria are converged to `_STEP_RTOL` only (the last to rtol), their last
        # iterate unevaluated when predicted to converge (`step`).
        mu, mu_prev, solves, st = 0.0, 0.0, 0, 0
        x_mu, x_prev = x_start.copy(), None
        run(x_mu, start, 0, np.inf)  # the starting shape (on this model's base pose)
        tip_mu, tip_prev = Y[-1, 0:3].copy(), np.zeros(3)
        tip = np.empty(3)
        dmu_max = max(dmu, 0.5)
        used = np.zeros(2)
        length = model.total_length
        while mu < 1.0 and solves < _MAX_CONTINUATION_SOLVES:
            if budget_expired():
                st = BUDGET_STATUS
                break
            trial = min(1.0, mu + dmu)
            ratio = (trial - mu) / (mu - mu_prev) if x_prev is not None and mu > mu_prev else 0.0
            x = x_mu.copy()
            if x_prev is not None:
                x += (x_mu - x_prev) * ratio
            # The last step's loads are the target itself (the same values, see
            # `_blend_is_target`): its problem is built once and its last evaluation can carry
            # the stability test's maps (`run` defers only for the target).
            at_target = trial >= 1.0 and _blend_is_target(inp)
            inp_t = inp if at_target else _blend(start, inp, trial)
            assert inp_t is not None
            if trial >= 1.0:
                st = run(x, inp_t, 12, _CONTINUATION_STEP_BOUND)
                tip[:] = Y[-1, 0:3]
            else:
                st = step(x, inp_t, max(rtol, _STEP_RTOL), tip, x_prev is not None)
            solves += 1
            on = x_prev is not None
            if st == 0 and not _tip_step_use(tip, tip_mu, tip_prev, on, ratio, length, used):
                st = 5
            dmu = _next_load_step(dmu, used, st, dmu_max)
            if st == 0:
                x_prev, mu_prev, tip_prev = x_mu, mu, tip_mu
                x_mu, mu, tip_mu = x.copy(), trial, tip.copy()
            elif dmu < _MIN_LOAD_STEP:
                break
        if mu < 1.0:
            inp_mu = _blend(start, inp, mu)
            assert inp_mu is not None
            # Leave the arrays describing the last equilibrium, converged to rtol.
            run(x_mu, inp_mu, 12, _CONTINUATION_STEP_BOUND)
            return x_mu, mu, st or 1
        return x_mu, 1.0, 0

    # The state a warm start moves from: the guess's unknowns and the loads it balances.
    x0 = np.zeros(n_unk)
    start: StaticLoads | None = None
    x_guess = np.zeros(n_unk)
    if guess is not None:
        if guess.tendon_tension.shape != (n_t,) or guess.base_moment.shape != (3,):
            raise ValueError(
                f"guess must be a result for a robot with {n_t} tendons, "
                f"got one with {guess.tendon_tension.shape[0]}"
            )
        on_grid = _resampled(model, guess)
        same_grid = on_grid is not None
        moment = _base_moment_on_shape(
            model, pb_inp.loads, on_grid[0] if on_grid is not None else None
        )
        old = None
        if guess.warm is not None and on_grid is not None:
            # The guess's load moments, on its own grid: their base value is what counts.
            old = guess.warm.load_moments
        # The guess's own unknown plus the change of the loads' moment on its shape: exact
        # when the loads are unchanged, the rigid-body predictor when they move.
        x0[:3] = guess.base_moment + (moment - old[0]) if same_grid and old is not None else moment
        if length_mode:
            x0[3:] = guess.tendon_tension
        balanced = guess.warm.balanced_loads if guess.warm is not None else None
        if balanced is not None and _comparable(balanced, inp):
            start = balanced
            x_guess[:3] = guess.base_moment
            if length_mode:
                x_guess[3:] = guess.tendon_tension
    else:
        x0[:3] = _base_moment_on_shape(model, pb_inp.loads, None)
        x0[:3] += _straight_magnetic_moment(model, inp)
        if length_mode:
            assert inp.lengths is not None
            x0[3:] = _pcc_tensions(model, inp.lengths)

    # Load number ~ P L^2 / EI: the largest distal force (tendons are internal) or the base
    # moment of the loads on the straight robot, over the bending stiffness. It sets both the
    # nonlinearity and the conditioning of shooting (growth ~ exp(sqrt(load number))).
    load_angle = _load_number(model, inp, pb_inp.loads)
    if intervals is None and load_angle > _MULTI_SHOOT_ANGLE:
        root = np.sqrt(load_angle) / _ROOT_ANGLE_PER_INTERVAL
        intervals = int(np.ceil(root)) if np.isfinite(root) else _MAX_INTERVALS
    if intervals is not None and intervals > 1:
        K = min(_MAX_INTERVALS, intervals)
        out = _solve_multiple(model, inp, guess, K, rtol, max_iter)
        return out
    zero = _zero_of(model, inp)
    origin = start if start is not None else zero
    # How far the inputs move (external loads and tendon bending): a long path goes through
    # continuation, since Newton started far away can land on another equilibrium branch. A
    # warm start also goes directly when a cold solve of the target would (a short path
    # from rest); a guess without the loads it balances (an observer update) is only a
    # starting point.
    direct = guess is not None and start is None
    direct = direct or _direct_ok(model, zero, inp, load_angle)
    direct = direct or (start is not None and _direct_ok(model, start, inp))
    if not direct:
        bending = _bending_number(model, origin, inp)
        x, lam_reached, status = follow(origin, x_guess, _FIRST_STEP_ANGLE / max(bending, 1e-12))
    else:
        x = x0.copy()
        status = run(x, inp, max_iter, _DIRECT_STEP_BOUND)
        lam_reached = 1.0
        # A stall at a residual already at round-off level (rtol set below it) keeps the
        # full-load answer and reports the stall; any other failure follows the input path.
        if status != 0 and not (status == 2 and counters[2] <= _ROUND_OFF_RESIDUAL):
            origin = start if start is not None else zero
            x, lam_reached, status = follow(origin, x_guess, 0.25)
    # A failed warm march (not a jump) falls back to the ramp from the unloaded robot.
    if status not in (0, 5) and start is not None:
        origin = zero
        x, lam_reached, status = follow(zero, np.zeros(n_unk), 0.25)
    # At the full load the blend is the target itself, value for value (0 a + 1 b = b), for
    # the inputs `_blend` carries; build it only where it differs (a part solve, moments).
    reached: StaticLoads | None = inp
    if lam_reached != 1.0 or not _blend_is_target(inp):
        reached = _blend(origin, inp, lam_reached)
    assert reached is not None
    # At the full load the blend is the target's values: its load arrays are pb_inp's.
    loads = pb_inp.loads if lam_reached == 1.0 else _loads_at(model, reached, 1.0)
    tau = x[3:].copy() if length_mode else np.array(reached.tensions, dtype=float)
    if length_mode:
        # A slack tendon carries exactly no tension (Newton leaves ~1e-27 of round-off).
        assert reached.lengths is not None
        tau[Y[-1, 15 : 15 + n_t] <= reached.lengths] = 0.0
    tip_error = None
    if status == 0:
        message = "converged"
        if last:
            _LAST_PROBLEM[:] = [(model, inp, last[0])]
            if estimate and last[0] is pb_inp:
                # Computed in the target's Newton call (None where the coarse grid is hardly
                # coarser or its corrected integration failed).
                if coarse is not None and estimated[0]:
                    tip_error = _richardson(tip_coarse, Y[-1, 0:3], coarse[2])
            elif estimate:
                tip_error = _coarse_tip_error(model, inp, x, Y[-1, 0:3], last[0])
    else:
        maps[0] = None
        where = "of the load" if origin is zero else "of the way from the guess's loads"
        message = (
            f"did not converge: {_STATUS_MESSAGES.get(status, 'failed')}; the shape returned is "
            f"the equilibrium at {100 * lam_reached:.1f}% {where}"
        ) + _fold_note(model, X, tau)
    result = _assemble(
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
        inputs=inp,
        # The loads this shape is in equilibrium with (warm starts march from them).
        balanced_loads=reached,
        tip_error=tip_error,
    )
    found = maps[0]
    if found is not None:
        _LAST_MAPS[:] = [(result.positions, tuple(result.positions[-1].tolist()), *found)]
    return result
