"""Method "shooting": Newton shooting on the base moment, load continuation, and multiple
shooting for heavy loads (ALGORITHMS.md; `_multishoot` holds the multiple-shooting Newton)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from softrod.rods._budget import BUDGET_MESSAGE, BUDGET_STATUS, budget_expired
from softrod.rods._inputs import (
    StaticLoads,
    _base_moment_on_shape,
    _blend,
    _distal_moments,
    _load_number,
    _loads_at,
    _problem,
    _zero_inputs,
)
from softrod.rods._model import RodModel
from softrod.rods._multishoot import multiple_shooting
from softrod.rods._pcc import _pcc_tensions
from softrod.rods._result import StaticResult, _assemble
from softrod.rods._static_kernels import _newton

__all__: list[str] = []

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


_STATUS_MESSAGES = {
    0: "converged",
    1: "maximum number of Newton iterations reached",
    4: "observer update left a boundary residual above rtol",
    2: "Newton line search stalled (at round-off if the residual is tiny: rtol too small?)",
    3: "integration produced non-finite values (load beyond what the model can carry?)",
    BUDGET_STATUS: f"{BUDGET_MESSAGE} (raise it with softrod.rods.solve_time_limit)",
}


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
    `target`, in steps of at most `_DIRECT_LOAD_ANGLE` of load number. Each step starts every
    interval from the last equilibrium (frames, and moments plus the load change on its
    shape). Returns (last equilibrium, fraction of the path reached, status)."""
    gap = _blend(target, start.inputs, 1.0)
    assert gap is not None
    delta = StaticLoads(
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
    if (
        guess is not None
        and warm is not None
        and old is not None
        and guess.positions.shape == (model.n_nodes, 3)
        and _blend(old, inp, 0.0) is not None
    ):
        start = _March(
            old,
            guess.positions,
            guess.rotations,
            warm.total_moment,
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
        old = guess.warm.load_moments if guess.warm is not None else None
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
            if budget_expired():
                st = BUDGET_STATUS
                break
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
    return _assemble(
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
        balanced_loads=_blend(_zero_inputs(model, inp), inp, lam_reached),
    )
