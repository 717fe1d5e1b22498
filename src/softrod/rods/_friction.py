"""Tendon friction with memory: quasi-static sequences of the exact static solver.

Formulation (docs/friction.md). A tendon passes holes: the base plate (it arrives from the
actuator along the base's z axis) and every disk before the one it is anchored at. Between two
holes it runs straight, so it bends only at the holes, by the wrap angle alpha_h between the
straight pieces on either side (the angle between the arrival axis and the first piece at the
base). Coulomb friction at a hole lets the tension change by at most the capstan factor:
exp(-mu alpha_h) <= tau_after / tau_before <= exp(+mu alpha_h) (Euler-Eytelwein). With
theta_i(s) the wrap accumulated by tendon i over the holes proximal to s, a tendon pulled in
from the base tension T slides everywhere and carries T exp(-mu theta_i(s)); one let out
carries T exp(+mu theta_i(s)). After a change of command the tendon slides from the base up
to where the new limit profile meets the old tension and sticks beyond it (an elastic tendon
that does not slide keeps its tension), which is the clamp

    tau_i(s) <- min(max(tau_prev_i(s), T exp(-mu theta_i(s))), T exp(+mu theta_i(s))).

A reversal of the tension command smaller than the stick band keeps the whole profile (static
friction at the base). The solver sees the profile as the tension scale c = tau_i(s) / T per
integration step (`StaticLoads.tension_profile`); c depends on the shape through theta, which is
resolved by a fixed point: solve with c frozen, recompute c from the solved shape, re-solve
warm-started, until c changes by less than `DEFAULT_FRICTION_TOL`.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from softrod.description import RobotSpec
from softrod.rods._inputs import StaticLoads, _problem, check_inputs
from softrod.rods._methods import METHODS
from softrod.rods._model import RodModel, as_model
from softrod.rods._result import StaticResult
from softrod.rods._shooting import result_at
from softrod.rods._stability import stable_equilibrium
from softrod.rods._static import DEFAULT_MAX_ITER, DEFAULT_RTOL
from softrod.rods._static_kernels import _residual, _residual_value

__all__ = [
    "DEFAULT_FRICTION_TOL",
    "FrictionState",
    "SequenceResult",
    "capstan_update",
    "solve_sequence",
    "tendon_wrap",
]

#: The fixed point on the tension scale stops when c changes by less than this between two
#: solves: the shape then balances the profile of its own wrap angles to ~1e-10 relative.
DEFAULT_FRICTION_TOL = 1e-10
#: Fixed-point solves per step before the step is reported as not converged (the map contracts
#: by ~mu times the wrap angle's sensitivity to the tension: a few iterations at mu <= 0.3).
DEFAULT_FRICTION_MAX_ITER = 100
#: Newton step (in scaled unknowns) above which the compiled loop hands a row to `_step`
#: (continuation): the direct Newton solve's bound (`_shooting._DIRECT_STEP_BOUND`), so a jump is
#: never taken blindly.
_STEP_BOUND = 4.0
#: The compiled loop moves the tension scale once the Newton residual (scaled) is below this
#: fraction of the scale's change, and asks for a new Jacobian when a chord step reduced the
#: residual by less than `_CHORD_RATIO`.
_INNER_RATIO = 1e-1
_CHORD_RATIO = 0.1
#: Iterates the Anderson mixing of the tension scale remembers (`_anderson_out`).
_ANDERSON_DEPTH = 4
#: Moves of the tension scale whose equilibrium shifts the compiled loop remembers to predict
#: the next move's shift (`_shift_out`), kept from row to row.
_SHIFT_DEPTH = 4
#: Status of a step whose friction fixed point did not converge in the iterations allowed.
FRICTION_STATUS = 20


@dataclass(frozen=True, eq=False)
class FrictionState:
    """What the next step of a sequence reads (pass it as `state=` to continue a sequence).

    tension : (n_steps, n_t) tension of each tendon in each integration step [N] (the profile
        the last step left; 0 before any pull).
    command : (n_t,) effective command of each tendon: the tension [N] its profile was last set
        by (tension control) or the commanded length [m] (length control); NaN before any step.
    direction : (n_t,) +1 when the last change pulled the tendon in, -1 when it let it out,
        0 before any change.
    result : the last equilibrium (warm start and wrap angles of the next step), None at rest.
    step_change : (base tension change (n_t,) [N], command change (n_t,), wrap change
        (n_steps, n_t) [rad]) over the last step, None before two steps: under length control
        the next step extrapolates the base tensions and the wrap along it to start its fixed
        point closer to the answer (fewer solves, the same answer).
    """

    tension: np.ndarray
    command: np.ndarray
    direction: np.ndarray
    result: StaticResult | None = None
    step_change: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


@dataclass(frozen=True, eq=False)
class SequenceResult:
    """A quasi-static sequence of equilibria with tendon friction (SciPy-style per step).

    tip_position : (T, 3) [m]. success : (T,) bool. status : (T,) int (the static solver's
    status, or `FRICTION_STATUS` when the friction fixed point did not converge). message :
    (T,) str. tendon_tension : (T, n_t) base tension of each tendon [N] (the command under
    tension control, solved under length control; a stuck tendon keeps its last one).
    tip_tension : (T, n_t) tension at each tendon's anchor [N]. friction_iterations : (T,)
    fixed-point solves per step (the compiled loop: its interleaved Newton / fixed-point
    iterations). positions : (T, n_nodes, 3) [m] when `shapes=True`, else None.
    state : the friction state after the last step (`solve_sequence(..., state=state)`).
    tip_rotation : (T, 3, 3) the tip's section frame (columns: body axes in the world).
    """

    tip_position: np.ndarray
    success: np.ndarray
    status: np.ndarray
    message: tuple[str, ...]
    tendon_tension: np.ndarray
    tip_tension: np.ndarray
    friction_iterations: np.ndarray
    positions: np.ndarray | None
    state: FrictionState
    tip_rotation: np.ndarray | None = None


def tendon_wrap(model: RodModel, positions: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """Accumulated wrap angle of every tendon path over the holes proximal to each step.

    positions : (n_nodes, 3) [m]; rotations : (n_nodes, 3, 3) a shape on the model's grid.
    Returns theta (n_steps, n_t) [rad]: in step k (nodes k..k+1) the sum of the wrap angles at
    the tendon's holes at nodes <= k (base plate and disks before its anchor); 0 past the anchor.
    """
    model.require_straight_routing("softrod.rods.tendon_wrap")
    n_t = model.n_tendons - model.n_internal_tendons
    theta = np.empty((model.step_seg.shape[0], n_t))
    hole_node, n_hole = _holes(model)
    _wrap_angles(
        np.ascontiguousarray(positions, dtype=float),
        np.ascontiguousarray(rotations, dtype=float),
        np.ascontiguousarray(model.tendon_r[:n_t]),
        hole_node,
        n_hole,
        theta,
    )
    return theta


#: Hole tables of the models seen (by model; dropped with it): a sequence reads them per solve.
_HOLES: weakref.WeakKeyDictionary[RodModel, tuple[np.ndarray, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def _holes(model: RodModel) -> tuple[np.ndarray, np.ndarray]:
    """Hole nodes of every tendon: hole_node (n_t, n_max + 1) node index of its holes (the
    base, then the disks before its anchor) followed by its anchor, padded with -1; n_hole
    (n_t,) the number of holes (the anchor is not one)."""
    known = _HOLES.get(model)
    if known is None:
        known = _HOLES[model] = _hole_table(model)
    return known


def _hole_table(model: RodModel) -> tuple[np.ndarray, np.ndarray]:
    n_t = model.n_tendons - model.n_internal_tendons
    disk_node = np.searchsorted(model.node_s, model.disk_s - 1e-12 * model.total_length)
    rows = []
    for i in range(n_t):
        anchor = int(disk_node[model.disk_seg == model.tendon_seg[i]][-1])
        rows.append([0, *disk_node[disk_node < anchor].tolist(), anchor])
    width = max((len(r) for r in rows), default=1)
    hole_node = np.full((n_t, width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        hole_node[i, : len(r)] = r
    return hole_node, np.array([len(r) - 1 for r in rows], dtype=np.int64)


def hole_count(model: RodModel) -> np.ndarray:
    """(n_steps, n_t) number of holes of each tendon at nodes <= each step's first node (the
    holes proximal to the step; 0 past the anchor): the wrap a `hole_wrap` per hole adds."""
    hole_node, n_hole = _holes(model)
    n_steps = model.step_seg.shape[0]
    count = np.zeros((n_steps, hole_node.shape[0]))
    k = np.arange(n_steps)
    for i in range(hole_node.shape[0]):
        nodes = hole_node[i, : n_hole[i]]
        anchor = hole_node[i, n_hole[i]]
        count[:, i] = np.where(k < anchor, np.searchsorted(nodes, k, side="right"), 0)
    return count


@njit(cache=True)
def _wrap_angles(positions, rotations, tendon_r, hole_node, n_hole, theta_out):
    """theta_out (n_steps, n_t) [rad] of `tendon_wrap` from the shape and the hole table of
    `_holes`; tendon_r (n_t, 3) body-frame offsets [m]."""
    n_steps, n_t = theta_out.shape
    for i in range(n_t):
        r0, r1, r2 = tendon_r[i, 0], tendon_r[i, 1], tendon_r[i, 2]
        # The tendon arrives at the base hole along the base's z axis.
        d0, d1, d2 = rotations[0, 0, 2], rotations[0, 1, 2], rotations[0, 2, 2]
        anchor = hole_node[i, n_hole[i]]
        cum = 0.0
        h = 0
        q = np.empty(3)
        for k in range(n_steps):
            # Add the wrap at every hole the tendon has passed by step k.
            while h < n_hole[i] and hole_node[i, h] <= k:
                a, b = hole_node[i, h], hole_node[i, h + 1]
                for c in range(3):
                    qa = positions[a, c] + rotations[a, c, 0] * r0
                    qa += rotations[a, c, 1] * r1 + rotations[a, c, 2] * r2
                    qb = positions[b, c] + rotations[b, c, 0] * r0
                    qb += rotations[b, c, 1] * r1 + rotations[b, c, 2] * r2
                    q[c] = qb - qa
                c0 = d1 * q[2] - d2 * q[1]
                c1 = d2 * q[0] - d0 * q[2]
                c2 = d0 * q[1] - d1 * q[0]
                cum += math.atan2(
                    math.sqrt(c0 * c0 + c1 * c1 + c2 * c2), d0 * q[0] + d1 * q[1] + d2 * q[2]
                )
                d0, d1, d2 = q[0], q[1], q[2]
                h += 1
            theta_out[k, i] = cum if k < anchor else 0.0


@njit(cache=True)
def _wrap_states(Y, tendon_r, hole_node, n_hole, baseline, theta_out):
    """`_wrap_angles` read from the integrated states Y (n_nodes, >= 12) of `_integrate`
    (p, then R row-major), plus the holes' own wrap `baseline` (n_steps, n_t) [rad]."""
    n_steps, n_t = theta_out.shape
    for i in range(n_t):
        r0, r1, r2 = tendon_r[i, 0], tendon_r[i, 1], tendon_r[i, 2]
        # The tendon arrives at the base hole along the base's z axis (R[:, 2]).
        d0, d1, d2 = Y[0, 5], Y[0, 8], Y[0, 11]
        anchor = hole_node[i, n_hole[i]]
        cum = 0.0
        h = 0
        q0 = q1 = q2 = 0.0
        for k in range(n_steps):
            # Add the wrap at every hole the tendon has passed by step k.
            while h < n_hole[i] and hole_node[i, h] <= k:
                a, b = hole_node[i, h], hole_node[i, h + 1]
                q0 = Y[b, 0] + Y[b, 3] * r0 + Y[b, 4] * r1 + Y[b, 5] * r2
                q0 -= Y[a, 0] + Y[a, 3] * r0 + Y[a, 4] * r1 + Y[a, 5] * r2
                q1 = Y[b, 1] + Y[b, 6] * r0 + Y[b, 7] * r1 + Y[b, 8] * r2
                q1 -= Y[a, 1] + Y[a, 6] * r0 + Y[a, 7] * r1 + Y[a, 8] * r2
                q2 = Y[b, 2] + Y[b, 9] * r0 + Y[b, 10] * r1 + Y[b, 11] * r2
                q2 -= Y[a, 2] + Y[a, 9] * r0 + Y[a, 10] * r1 + Y[a, 11] * r2
                c0 = d1 * q2 - d2 * q1
                c1 = d2 * q0 - d0 * q2
                c2 = d0 * q1 - d1 * q0
                cum += math.atan2(
                    math.sqrt(c0 * c0 + c1 * c1 + c2 * c2), d0 * q0 + d1 * q1 + d2 * q2
                )
                d0, d1, d2 = q0, q1, q2
                h += 1
            theta_out[k, i] = (cum if k < anchor else 0.0) + baseline[k, i]


@njit(cache=True)
def _scale_out(prev, base, theta, mu, held, scale_out):
    """`_scale` in place: scale_out (n_steps, n_t) [-] = clamped profile / base tension (the
    previous profile for a held tendon), 1 where the base tension is 0."""
    n_steps, n_t = scale_out.shape
    for i in range(n_t):
        b = base[i]
        for k in range(n_steps):
            if b > 0.0:
                p = prev[k, i]
                if not held[i]:
                    # One exponential a step (none where there is no wrap: the limits meet at b).
                    t = mu[i] * theta[k, i]
                    if t != 0.0:
                        e = math.exp(t)
                        p = min(max(p, b / e), b * e)
                    else:
                        p = b
                scale_out[k, i] = p / b
            else:
                scale_out[k, i] = 1.0


@njit(cache=True)
def _anderson_out(c, c_new, hist_x, hist_f, x_prev, f_prev, moves):
    """Anderson mixing (type II) of the fixed point c = C(c), in place on c (N,): residual
    f = c_new - c; with the differences of the last m = hist_x.shape[0] iterates and residuals
    (hist_x, hist_f (m, N), a ring written here; x_prev, f_prev (N,) the last pair; moves the
    number of earlier moves in this row), c <- c + f - (dX + dF) gamma, gamma the least-squares
    fit of f by dF; plain c <- c_new on the first move. Result clipped at 0."""
    m = hist_x.shape[0]
    n = c.shape[0]
    if moves > 0:
        slot = (moves - 1) % m
        for a in range(n):
            hist_x[slot, a] = c[a] - x_prev[a]
            hist_f[slot, a] = (c_new[a] - c[a]) - f_prev[a]
    k = min(moves, m)
    for a in range(n):
        x_prev[a] = c[a]
        f_prev[a] = c_new[a] - c[a]
    gamma = np.zeros(k)
    if k > 0:
        G = np.zeros((k, k))
        b = np.zeros(k)
        for p in range(k):
            for q in range(k):
                acc = 0.0
                for a in range(n):
                    acc += hist_f[p, a] * hist_f[q, a]
                G[p, q] = acc
            acc = 0.0
            for a in range(n):
                acc += hist_f[p, a] * f_prev[a]
            b[p] = acc
        trace = 0.0
        for p in range(k):
            trace += G[p, p]
        if trace > 0.0:
            # A little Tikhonov regularisation keeps nearly parallel residuals harmless.
            for p in range(k):
                G[p, p] += 1e-12 * trace
            gamma = np.linalg.solve(G, b)
    for a in range(n):
        v = c[a] + f_prev[a]
        for p in range(k):
            v -= (hist_x[p, a] + hist_f[p, a]) * gamma[p]
        c[a] = max(v, 0.0)


@njit(cache=True)
def _shift_out(dc, hist_c, hist_x, count, x):
    """Predicted equilibrium shift of a move of the tension scale, added to x (n,) in place:
    with the last moves' scale changes hist_c (m, N) and the equilibrium shifts they caused
    hist_x (m, n) (the first count rows valid), x += hist_x^T beta, beta the least-squares fit
    of the move dc (N,) by hist_c (the equilibrium is linear in the scale to first order, and
    successive moves of a fixed point are nearly parallel)."""
    k = min(count, hist_c.shape[0])
    if k == 0:
        return
    G = np.zeros((k, k))
    b = np.zeros(k)
    n = dc.shape[0]
    for p in range(k):
        for q in range(p, k):
            acc = 0.0
            for a in range(n):
                acc += hist_c[p, a] * hist_c[q, a]
            G[p, q] = acc
            G[q, p] = acc
        acc = 0.0
        for a in range(n):
            acc += hist_c[p, a] * dc[a]
        b[p] = acc
    trace = 0.0
    for p in range(k):
        trace += G[p, p]
    if not trace > 0.0:
        return
    # A little Tikhonov regularisation keeps nearly parallel moves harmless.
    for p in range(k):
        G[p, p] += 1e-12 * trace
    beta = np.linalg.solve(G, b)
    for a in range(x.shape[0]):
        for p in range(k):
            x[a] += hist_x[p, a] * beta[p]


@njit(cache=True)
def _taut_rows_out(z_full, L_cmd, k_t, t_scale, n, taut, G_out):
    """Taut rows of the tension equations of `_residual`'s Jacobian from its sensitivities
    z_full (ny (1 + n),): G_out (n_t, n) = -k_j d l_j / d x / t_scale, and taut (n_t,) whether
    each tendon is stretched at that point (its row in the Jacobian is G_out's, else 0)."""
    n_t = L_cmd.shape[0]
    ny = 15 + n_t
    for j in range(n_t):
        taut[j] = z_full[15 + j] > L_cmd[j]
        for d in range(n):
            G_out[j, d] = -k_t[j] * z_full[ny * (1 + d) + 15 + j] / t_scale


class _FrictionArrays(NamedTuple):
    """The robot's arrays the compiled loop reads (`_sequence_rows`), fixed over a sequence.

    base, geo, ld, bc : the static kernels' tuples (`_inputs._problem`); ld[3], the tension
        scale (n_steps, n_t) [-], and bc[1], the commanded lengths (n_t,) [m], are written per
        row. hole_node (n_t, n_max + 1), n_hole (n_t,) : the hole table (`_holes`).
    tendon_r : (n_t, 3) body-frame offsets [m]. baseline : (n_steps, n_t) the holes' own wrap
        [rad]. mu, band : (n_t,) friction coefficient [-] and stick band [N]. anchor_step :
        (n_t,) the step that ends at each tendon's anchor.
    """

    base: tuple
    geo: tuple
    ld: tuple
    bc: tuple
    hole_node: np.ndarray
    n_hole: np.ndarray
    tendon_r: np.ndarray
    baseline: np.ndarray
    mu: np.ndarray
    band: np.ndarray
    anchor_step: np.ndarray


class _RowState(NamedTuple):
    """What the compiled loop carries from row to row (in/out, the last equilibrium's).

    x : (n,) shooting unknowns (M0 [, tau]). dx (n,), d_cmd (n_t,), d_theta (n_steps, n_t):
    their change over the last row, has_change (1,) bool whether there is one (the
    length-control predictor). eff (n_t,) effective commands, direction (n_t,) +1 / -1 / 0
    (tension control: the stick band). prof (n_steps, n_t) [N] tension profile. theta
    (n_steps, n_t) [rad] wrap of the last equilibrium (with the holes' own).
    """

    x: np.ndarray
    dx: np.ndarray
    d_cmd: np.ndarray
    has_change: np.ndarray
    eff: np.ndarray
    direction: np.ndarray
    prof: np.ndarray
    theta: np.ndarray
    d_theta: np.ndarray


class _RowsOut(NamedTuple):
    """Per-row outputs of the compiled loop: tips (T, 3) [m], rotations (T, 3, 3), tension and
    tip_tension (T, n_t) [N], iterations (T,) evaluations, positions (T or 0, n_nodes, 3) [m],
    phases (T, N_PHASES) the evaluations by what asked for them (`PHASES`)."""

    tips: np.ndarray
    rotations: np.ndarray
    tension: np.ndarray
    tip_tension: np.ndarray
    iterations: np.ndarray
    positions: np.ndarray
    phases: np.ndarray


#: What asked for each evaluation of the compiled loop (`_RowsOut.phases`, dev scripts): the
#: row's first Jacobian, a later Jacobian (a slow contraction), a chord step (residual only),
#: the line search (a step that did not reduce the residual: halved, or back for a Jacobian),
#: and a move of the tension scale (the friction fixed point).
PHASES = ("start", "jacobian", "chord", "line search", "scale move")


@njit(cache=True)
def _sequence_rows(commands, length_mode, fr, st, rtol, ftol, max_iter, max_step, out, Y, X):
    """The rows of `commands` (T, n_t) (lengths [m] or tensions [N]) solved in order, each
    warm-started from the previous equilibrium, in one compiled loop (`solve_sequence`'s
    compiled path; the formulation of `_step`).

    Per row: Newton on the shooting unknowns x = (M0 [, tau]) with the tension scale c
    (`ld[3]`, written in place) frozen, its Jacobian from `_residual` at the row's start (and
    again when a step contracts the residual by less than `_CHORD_RATIO`), chord steps between
    on residuals alone (`_evaluate` without sensitivities, a quarter of the cost); a step that
    does not reduce the residual goes back for a new Jacobian or is halved (`_newton`'s line
    search). Every evaluation also gives the scale of its own shape (`_wrap_states`,
    `_scale_out`); once the residual is below `_INNER_RATIO` times the scale's change, c moves
    (Anderson mixing, `_anderson_out`). The row has converged when max |r| <= rtol and the
    scale changes by less than ftol: `_step`'s fixed point (an equilibrium under a frozen scale
    that reproduces itself), reached without solving every intermediate scale to rtol.

    fr : the robot's arrays (`_FrictionArrays`; fr.ld[3] and fr.bc[1] written per row). st :
    the state carried from row to row (`_RowState`, in/out). rtol : residual tolerance (scaled);
    ftol : the scale's tolerance [-]; max_iter : evaluations per row. max_step : a Newton step
    longer than this in scaled unknowns stops the loop (the caller's solver then takes the row:
    continuation). out : the per-row outputs (`_RowsOut`). Y, X: the last state. Returns the
    rows done (fewer than T when a row fails: non-finite, too long a step, or not converged in
    max_iter).
    """
    base, geo, ld, bc = fr.base, fr.geo, fr.ld, fr.bc
    hole_node, n_hole, tendon_r, baseline = fr.hole_node, fr.n_hole, fr.tendon_r, fr.baseline
    mu, band, anchor_step = fr.mu, fr.band, fr.anchor_step
    x, dx, d_cmd, has_change, eff = st.x, st.dx, st.d_cmd, st.has_change, st.eff
    direction, prof, theta, d_theta = st.direction, st.prof, st.theta, st.d_theta
    n_rows, n_t = commands.shape
    n = x.shape[0]
    n_steps = theta.shape[0]
    ny = 15 + n_t
    scale = ld[3]
    L_cmd, k_t, m_scale, t_scale = bc[1], bc[2], bc[3], bc[4]
    z_full = np.empty(ny * (1 + n))
    z = np.empty(ny)
    r = np.empty(n)
    J = np.zeros((n, n))
    tau = np.zeros(n_t)
    tb = np.zeros(n_t)  # base tensions the scale is relative to
    held = np.zeros(n_t, dtype=np.bool_)
    new = np.empty((n_steps, n_t))
    x_base = np.empty(n)
    step = np.zeros(n)
    hist_x = np.empty((_ANDERSON_DEPTH, n_steps * n_t))
    hist_f = np.empty((_ANDERSON_DEPTH, n_steps * n_t))
    x_prev = np.empty(n_steps * n_t)
    f_prev = np.empty(n_steps * n_t)
    theta_start = np.empty((n_steps, n_t))
    x_start = np.empty(n)
    # The tension rows of the Jacobian when taut, and which tendons were taut where it was taken.
    G = np.zeros((n_t, n))
    taut = np.zeros(n_t, dtype=np.bool_)
    # The scale moves' equilibrium shifts (`_shift_out`), and the move still waiting for its own.
    shift_c = np.empty((_SHIFT_DEPTH, n_steps * n_t))
    shift_x = np.empty((_SHIFT_DEPTH, n))
    shifts = 0
    pend_c = np.empty(n_steps * n_t)
    pend_x = np.empty(n)
    c_old = np.empty(n_steps * n_t)
    store = np.bool_(True)
    for row in range(n_rows):
        cmd = commands[row]
        predicted = False
        for a in range(n):
            x_start[a] = x[a]
        for k in range(n_steps):
            for i in range(n_t):
                theta_start[k, i] = theta[k, i]
        if length_mode:
            for i in range(n_t):
                L_cmd[i] = cmd[i]
                tb[i] = x[3 + i]
            if has_change[0]:
                # Extrapolate along the last row's change (a ramp of commands).
                num = 0.0
                den = 0.0
                for i in range(n_t):
                    num += (cmd[i] - eff[i]) * d_cmd[i]
                    den += d_cmd[i] * d_cmd[i]
                ratio = min(max(num / den if den > 0.0 else 0.0, 0.0), 2.0)
                predicted = ratio > 0.0
                for a in range(n):
                    x[a] += ratio * dx[a]
                for i in range(n_t):
                    x[3 + i] = max(x[3 + i], 0.0)
                    tb[i] = x[3 + i]
                for k in range(n_steps):
                    for i in range(n_t):
                        theta[k, i] = max(theta[k, i] + ratio * d_theta[k, i], 0.0)
        else:
            # A reversal within the stick band keeps the tendon's profile and command.
            for i in range(n_t):
                change = cmd[i] - eff[i]
                sgn = 1.0 if change > 0.0 else (-1.0 if change < 0.0 else 0.0)
                held[i] = direction[i] != 0.0 and sgn == -direction[i] and abs(change) < band[i]
                tau[i] = eff[i] if held[i] else cmd[i]
                tb[i] = tau[i]
        _scale_out(prof, tb, theta, mu, held, scale)
        # Newton with the scale frozen; the scale moves once the residual is small against
        # the scale's own change (the fixed point of `_step`, one evaluation an iteration).
        need_jac = True
        phase = 0  # what asks for the next evaluation (`PHASES`)
        kind = 0  # the last step: 0 none, 1 chord, 2 Newton (Jacobian at its start)
        alpha = 1.0
        moves = 0
        pending = False
        r_last = np.inf
        it = 0
        converged = False
        while it < max_iter:
            it += 1
            out.phases[row, phase] += 1
            had_jac = need_jac
            if need_jac:
                ok = _residual(x, length_mode, tau, base, geo, ld, bc, store, Y, X, z_full, r, J)
                if ok and length_mode:
                    _taut_rows_out(z_full, L_cmd, k_t, t_scale, n, taut, G)
            else:
                # The residual alone (no sensitivities): a chord step on the last Jacobian.
                # `_residual_value` is the static solver's own (one compiled `_integrate`).
                ok = _residual_value(x, length_mode, tau, base, geo, ld, bc, store, Y, X, z, r)
            if not ok:
                return row
            r_norm = 0.0
            for a in range(n):
                if not np.isfinite(r[a]):
                    return row
                r_norm = max(r_norm, abs(r[a]))
            if length_mode and not had_jac:
                # A tendon gone slack (or taut) since the Jacobian: its row is known exactly
                # (the identity when slack, the stored sensitivities when taut), so the chord
                # steps keep contracting without a new Jacobian.
                for j in range(n_t):
                    now = Y[-1, 15 + j] > L_cmd[j]
                    if now != taut[j]:
                        taut[j] = now
                        for d in range(n):
                            J[3 + j, d] = G[j, d] if now else 0.0
                        J[3 + j, 3 + j] += 1.0 / t_scale
            # The scale of the shape just integrated (slack tendons carry exactly nothing).
            _wrap_states(Y, tendon_r, hole_node, n_hole, baseline, theta)
            if length_mode:
                for j in range(n_t):
                    tb[j] = x[3 + j] if Y[-1, 15 + j] > L_cmd[j] else 0.0
            _scale_out(prof, tb, theta, mu, held, new)
            change = 0.0
            for k in range(n_steps):
                for i in range(n_t):
                    change = max(change, abs(new[k, i] - scale[k, i]))
            if r_norm <= rtol and change < ftol:
                converged = True
                break
            if r_norm <= max(rtol, _INNER_RATIO * change):
                # Equilibrium for this scale: move the scale (the fixed point's step),
                # accelerated by Anderson mixing over the last moves (`_anderson_out`).
                flat = scale.ravel()
                c_old[:] = flat
                _anderson_out(flat, new.ravel(), hist_x, hist_f, x_prev, f_prev, moves)
                # The equilibrium moves with the scale: remember how far the last move moved
                # it and start this one from the shift the earlier moves predict.
                if pending:
                    slot = shifts % _SHIFT_DEPTH
                    shift_c[slot] = pend_c
                    for a in range(n):
                        shift_x[slot, a] = x[a] - pend_x[a]
                    shifts += 1
                for a in range(flat.shape[0]):
                    pend_c[a] = flat[a] - c_old[a]
                pend_x[:] = x
                pending = True
                _shift_out(pend_c, shift_c, shift_x, shifts, x)
                moves += 1
                r_last = np.inf
                kind = 0
                need_jac = False
                phase = 4
                continue
            if r_norm >= r_last and kind != 0:
                # The step did not reduce the residual: a chord step goes back for the
                # Jacobian at its start, a Newton step is halved (as `_newton`'s line search).
                if kind == 1:
                    for a in range(n):
                        x[a] = x_base[a]
                    need_jac = True
                    kind = 0
                    phase = 3
                    continue
                if alpha <= 1.0 / 64.0:
                    return row  # Newton stalls here: the caller's solver takes the row
                alpha *= 0.5
                for a in range(n):
                    x[a] = x_base[a] + alpha * step[a]
                need_jac = False
                phase = 3
                continue
            # A slow contraction asks for the Jacobian at the next iterate.
            need_jac = r_norm > _CHORD_RATIO * r_last
            phase = 1 if need_jac else 2
            r_last = r_norm
            step = np.linalg.solve(J, -r)
            size = 0.0
            for a in range(n):
                size = max(size, abs(step[a]) / (m_scale if a < 3 else t_scale))
            if not size <= max_step and predicted and it == 1:
                # The extrapolation overshot a jump of the commands: start again from the last
                # equilibrium before handing the row over.
                predicted = False
                for a in range(n):
                    x[a] = x_start[a]
                for i in range(n_t):
                    tb[i] = x[3 + i]
                    for k in range(n_steps):
                        theta[k, i] = theta_start[k, i]
                _scale_out(prof, tb, theta, mu, held, scale)
                need_jac = True
                kind = 0
                phase = 3
                r_last = np.inf
                continue
            if not size <= max_step:
                return row
            kind = 2 if had_jac else 1
            alpha = 1.0
            for a in range(n):
                x_base[a] = x[a]
                x[a] += step[a]
        if not converged:
            return row
        # The row's equilibrium: outputs and the memory the next row reads.
        for a in range(3):
            out.tips[row, a] = Y[-1, a]
        for a in range(9):
            out.rotations[row, a // 3, a % 3] = Y[-1, 3 + a]
        if out.positions.shape[0] > 0:
            for m in range(Y.shape[0]):
                for a in range(3):
                    out.positions[row, m, a] = Y[m, a]
        for i in range(n_t):
            if length_mode:
                x[3 + i] = tb[i]
            out.tension[row, i] = tb[i]
            for k in range(n_steps):
                prof[k, i] = scale[k, i] * tb[i]
            out.tip_tension[row, i] = prof[anchor_step[i], i]
        out.iterations[row] = it
        if length_mode:
            for a in range(n):
                dx[a] = x[a] - x_start[a]
            for i in range(n_t):
                d_cmd[i] = cmd[i] - eff[i]
                eff[i] = cmd[i]
            for k in range(n_steps):
                for i in range(n_t):
                    d_theta[k, i] = theta[k, i] - theta_start[k, i]
            has_change[0] = True
        else:
            for i in range(n_t):
                if not held[i]:
                    if cmd[i] != eff[i]:
                        prior = 0.0 if np.isnan(eff[i]) else eff[i]
                        if cmd[i] > prior:
                            direction[i] = 1.0
                        elif cmd[i] < prior:
                            direction[i] = -1.0
                        else:
                            direction[i] = 0.0
                    eff[i] = cmd[i]
    return n_rows


def _clamped_profile(
    prev: np.ndarray, base: np.ndarray, theta: np.ndarray, mu: np.ndarray
) -> np.ndarray:
    """The clamp of the module doc: prev (n_steps, n_t) [N] within the capstan limits of the
    base tensions base (n_t,) [N] over the wrap theta (n_steps, n_t) [rad]."""
    low = base * np.exp(-mu * theta)
    high = base * np.exp(mu * theta)
    return np.minimum(np.maximum(prev, low), high)


def capstan_update(
    tension: np.ndarray,
    command: np.ndarray,
    effective: np.ndarray,
    direction: np.ndarray,
    theta: np.ndarray,
    piece_tendon: np.ndarray,
    mu: np.ndarray,
    stick_band: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One update of the friction memory on a discretised tendon path (the clamp and stick band
    of the module doc), for models that carry one tension per straight piece of the path (the
    MuJoCo chain's sites, the LGVI's vertices).

    tension : (n_p,) piece tensions [N] (the memory); command : (n_t,) base tensions now [N];
    effective : (n_t,) the command the memory was last set by (NaN: never); direction : (n_t,)
    +1 / -1 / 0 its last change; theta : (n_p,) wrap [rad] over the holes proximal to each
    piece; piece_tendon : (n_p,) tendon of each piece; mu, stick_band : (n_t,).
    Returns (tension, effective, direction) after the update (new arrays).
    """
    change = command - effective
    # A reversal inside the stick band keeps the profile and the effective command.
    held = (direction != 0.0) & (np.sign(change) == -direction) & (np.abs(change) < stick_band)
    tau = command[piece_tendon]
    m = mu[piece_tendon]
    clamped = np.minimum(np.maximum(tension, tau * np.exp(-m * theta)), tau * np.exp(m * theta))
    new_tension = np.where(held[piece_tendon], tension, clamped)
    step = np.sign(command - np.nan_to_num(effective, nan=0.0))
    moved = ~held & (command != effective) & (step != 0.0)
    new_direction = np.where(moved, step, direction)
    return new_tension, np.where(held, effective, command), new_direction


def _per_tendon(name: str, value: Any, n_t: int) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=float), (n_t,)).copy()
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr >= 0.0)))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] must be a finite number >= 0, got {arr[bad[0]]}")
    return arr


def _friction_of(spec: RobotSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mu (n_t,), stick_band (n_t,), hole_wrap (n_t,)) from the description:
    `tendons[i].friction`, else the robot's `tendon_friction`, else none."""
    default = spec.tendon_friction
    mu, band, wrap = [], [], []
    for _, tendon in spec.tendon_list():
        fr = tendon.friction if tendon.friction is not None else default
        mu.append(0.0 if fr is None else fr.mu)
        band.append(0.0 if fr is None else fr.stick_band)
        wrap.append(0.0 if fr is None else fr.hole_wrap)
    return np.array(mu, dtype=float), np.array(band, dtype=float), np.array(wrap, dtype=float)


def _rows(name: str, value: Any, n_rows: int, width: int) -> np.ndarray:
    """value as (n_rows, width): a (width,) value repeats, None is zeros."""
    if value is None:
        return np.zeros((n_rows, width))
    arr = np.asarray(value, dtype=float)
    if arr.shape == (width,):
        return np.broadcast_to(arr, (n_rows, width)).copy()
    if arr.shape != (n_rows, width):
        raise ValueError(
            f"{name} must have shape ({width},) or ({n_rows}, {width}), got {arr.shape}"
        )
    return arr


def _solve_frozen(
    model: RodModel,
    inp: StaticLoads,
    guess: StaticResult | None,
    rtol: float,
    max_iter: int,
    check_stability: bool,
    estimate: bool = True,
) -> StaticResult:
    """`solve_static`'s shooting path on loads that carry a tension profile; the stability
    test only when asked (the fixed point runs it once, on its last solve); the tip error
    estimate only with `estimate` (the fixed point runs it on a step's first solve)."""
    # The registry's solvers take options by keyword (`METHODS`: **options).
    solver: Callable[..., StaticResult] = METHODS["shooting"]

    def solve(loads: StaticLoads, start: StaticResult | None) -> StaticResult:
        return solver(model, loads, start, rtol, max_iter, error_estimate=estimate)

    result = solve(inp, guess)
    if check_stability and result.success:
        result = stable_equilibrium(model, inp, result, solve)
    return result


def solve_sequence(
    robot: RodModel | RobotSpec,
    *,
    tensions: Sequence[Sequence[float]] | np.ndarray | None = None,
    lengths: Sequence[Sequence[float]] | np.ndarray | None = None,
    mu: float | Sequence[float] | np.ndarray | None = None,
    stick_band: float | Sequence[float] | np.ndarray | None = None,
    hole_wrap: float | Sequence[float] | np.ndarray | None = None,
    tip_force: Sequence[float] | np.ndarray | None = None,
    tip_moment: Sequence[float] | np.ndarray | None = None,
    distributed_force: Sequence[float] | np.ndarray | None = None,
    gravity: Sequence[float] | np.ndarray | None = None,
    state: FrictionState | None = None,
    shapes: bool = False,
    rtol: float = DEFAULT_RTOL,
    max_iter: int = DEFAULT_MAX_ITER,
    steps: int | None = None,
    check_stability: bool = True,
    friction_tol: float = DEFAULT_FRICTION_TOL,
    friction_max_iter: int = DEFAULT_FRICTION_MAX_ITER,
) -> SequenceResult:
    """Quasi-static equilibria along a command sequence with tendon friction and its memory.

    Parameters
    ----------
    robot : a `RodModel` or RobotSpec (load dicts and paths with `softrod.load_robot`).
    tensions : (T, n_t) base tensions [N] at the actuators, >= 0, one row per step; or
    lengths : (T, n_t) commanded tendon lengths [m] (elastic tendons, `stiffness` set).
    mu : friction coefficient, scalar or (n_t,) [-]; None takes the description's
        (`tendons[i].friction.mu`, else `tendon_friction.mu`, else 0).
    stick_band : tension reversal [N] that keeps a tendon stuck, scalar or (n_t,); None takes
        the description's. Tension control only (with lengths it must be 0).
    hole_wrap : wrap angle [rad] every hole adds to the tendon's path, also where the robot is
        straight (clearance and misalignment of the holes), scalar or (n_t,); None takes the
        description's (`friction.hole_wrap`, default 0: the wrap is the shape's alone).
    tip_force, tip_moment, distributed_force, gravity : (3,) for every step or (T, 3) per step,
        as in `solve_static` [N], [N m], [N/m], [m/s^2].
    state : the `SequenceResult.state` of a previous sequence to continue from; None starts
        from the unloaded robot at rest.
    shapes : also return every step's node positions.
    rtol, max_iter, steps, check_stability : as in `solve_static`.
    friction_tol : the fixed point on the tension scale stops below this change [-].
    friction_max_iter : fixed-point solves per step before the step is reported failed.

    Returns
    -------
    SequenceResult; with mu = 0 every step is `solve_static`'s answer.
    """
    if (tensions is None) == (lengths is None):
        raise ValueError("give tensions or lengths (one row per step), not both")
    model = as_model(robot, steps)
    model.require_straight_routing("softrod.rods.solve_sequence (tendon friction)")
    n_t = model.n_tendons - model.n_internal_tendons
    if model.n_chambers:
        raise ValueError("solve_sequence does not take robots with chambers yet")
    length_mode = lengths is not None
    cmd = np.asarray(lengths if length_mode else tensions, dtype=float)
    if cmd.ndim != 2 or cmd.shape[1] != n_t or cmd.shape[0] < 1:
        name = "lengths" if length_mode else "tensions"
        raise ValueError(f"{name} must have shape (T, {n_t}) with T >= 1, got {cmd.shape}")
    n_rows = cmd.shape[0]
    mu_d, band_d, wrap_d = _friction_of(model.spec)
    mu_v = mu_d if mu is None else _per_tendon("mu", mu, n_t)
    band = band_d if stick_band is None else _per_tendon("stick_band", stick_band, n_t)
    wrap = wrap_d if hole_wrap is None else _per_tendon("hole_wrap", hole_wrap, n_t)
    # The wrap of the holes themselves, added to the shape's at every step.
    baseline = hole_count(model) * wrap[None, :] if np.any(wrap > 0.0) else None
    if length_mode and np.any(band > 0.0):
        raise ValueError("stick_band applies to tension control only; give tensions or band 0")
    for name, value in (("rtol", rtol), ("friction_tol", friction_tol)):
        if not (isinstance(value, int | float) and value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    for name, count in (("max_iter", max_iter), ("friction_max_iter", friction_max_iter)):
        if not (isinstance(count, int) and count >= 1):
            raise ValueError(f"{name} must be a positive integer, got {count!r}")
    loads = [
        _rows(name, value, n_rows, 3)
        for name, value in (
            ("tip_force", tip_force),
            ("tip_moment", tip_moment),
            ("distributed_force", distributed_force),
            ("gravity", gravity),
        )
    ]
    n_steps = model.step_seg.shape[0]
    if state is None:
        state = FrictionState(
            tension=np.zeros((n_steps, n_t)),
            command=np.full(n_t, np.nan),
            direction=np.zeros(n_t),
        )
    elif state.tension.shape != (n_steps, n_t):
        raise ValueError(
            f"state.tension must have shape {(n_steps, n_t)} on this robot's grid, "
            f"got {state.tension.shape}"
        )

    tips = np.empty((n_rows, 3))
    tip_rotation = np.empty((n_rows, 3, 3))
    success = np.zeros(n_rows, dtype=bool)
    status = np.zeros(n_rows, dtype=np.int64)
    messages: list[str] = []
    base_tension = np.empty((n_rows, n_t))
    tip_tension = np.empty((n_rows, n_t))
    n_fix = np.zeros(n_rows, dtype=np.int64)
    positions = np.empty((n_rows, model.n_nodes, 3)) if shapes else None
    anchor_step = _anchor_steps(model, n_t)
    # Every step's inputs are checked before the first solve.
    inputs = []
    for row in range(n_rows):
        try:
            inputs.append(
                check_inputs(
                    model,
                    None if length_mode else cmd[row],
                    cmd[row] if length_mode else None,
                    *(arr[row] for arr in loads),
                )
            )
        except ValueError as err:
            raise ValueError(f"step {row}: {err}") from None
    # Constant loads without the stability test: the rows run in one compiled loop
    # (`_sequence_rows`) from the first equilibrium on; a row it cannot finish (a long step,
    # not converged) is solved here, with continuation, and the loop resumes after it.
    compiled = not check_stability and all(bool(np.all(arr == arr[0])) for arr in loads)
    outs = (tips, tip_rotation, base_tension, tip_tension, n_fix, positions)
    row = 0
    while row < n_rows:
        if compiled and state.result is not None:
            done, state = _compiled_rows(
                model, inputs, row, state, mu_v, band, baseline, rtol, max_iter,
                friction_tol, friction_max_iter, anchor_step, outs,
            )  # fmt: skip
            success[row : row + done] = True
            messages.extend(["converged"] * done)
            row += done
            if row == n_rows:
                break
        inp = inputs[row]
        state, result, fixes, converged = _step(
            model,
            inp,
            state,
            mu_v,
            band,
            baseline,
            rtol,
            max_iter,
            check_stability,
            friction_tol,
            friction_max_iter,
        )
        tips[row] = result.tip_position
        tip_rotation[row] = result.tip_rotation
        success[row] = result.success and converged
        status[row] = result.status if result.status != 0 or converged else FRICTION_STATUS
        msg = result.message
        if result.success and not converged:
            msg += f"; friction fixed point not converged in {fixes} solves"
        messages.append(msg)
        base_tension[row] = result.tendon_tension
        tip_tension[row] = state.tension[anchor_step, np.arange(n_t)]
        n_fix[row] = fixes
        if positions is not None:
            positions[row] = result.positions
        row += 1
    return SequenceResult(
        tip_position=tips,
        success=success,
        status=status,
        message=tuple(messages),
        tendon_tension=base_tension,
        tip_tension=tip_tension,
        friction_iterations=n_fix,
        positions=positions,
        state=state,
        tip_rotation=tip_rotation,
    )


def _compiled_rows(
    model: RodModel,
    inputs: list[StaticLoads],
    start: int,
    state: FrictionState,
    mu: np.ndarray,
    band: np.ndarray,
    baseline: np.ndarray | None,
    rtol: float,
    max_iter: int,
    tol: float,
    max_fix: int,
    anchor_step: np.ndarray,
    outs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None],
) -> tuple[int, FrictionState]:
    """Rows start.. of a sequence through `_sequence_rows`, continuing `state` (which has an
    equilibrium); writes the outputs `outs` = (tips (T, 3), tip rotations (T, 3, 3), base
    tensions (T, n_t), tip tensions (T, n_t), iterations (T,), positions (T, n_nodes, 3) or
    None) of the rows done.
    Returns (rows done, the state after them)."""
    res = state.result
    assert res is not None
    first = inputs[start]
    length_mode = first.lengths is not None
    n_steps, n_t = state.tension.shape
    pb = _problem(model, dataclasses.replace(first, tension_profile=np.ones((n_steps, n_t))))
    commands = np.array(
        [inp.lengths if length_mode else inp.tensions for inp in inputs[start:]], dtype=float
    )
    tension0 = np.asarray(res.tendon_tension, dtype=float)
    x = np.r_[res.base_moment, tension0] if length_mode else np.array(res.base_moment, float)
    dx = np.zeros_like(x)
    d_cmd = np.zeros(n_t)
    d_theta = np.zeros((n_steps, n_t))
    has_change = np.zeros(1, dtype=bool)
    if length_mode and state.step_change is not None:
        dx[3:], d_cmd[:], d_theta[:] = state.step_change
        has_change[0] = True
    wrap = np.zeros((n_steps, n_t)) if baseline is None else baseline
    theta = tendon_wrap(model, res.positions, res.rotations) + wrap
    hole_node, n_hole = _holes(model)
    st = _RowState(
        x, dx, d_cmd, has_change, state.command.copy(), state.direction.copy(),
        state.tension.copy(), theta, d_theta,
    )  # fmt: skip
    fr = _FrictionArrays(
        pb.base, pb.geo, pb.ld, pb.bc, hole_node, n_hole,
        np.ascontiguousarray(model.tendon_r[:n_t]), np.ascontiguousarray(wrap), mu, band,
        anchor_step,
    )  # fmt: skip
    tips, rotations, tension, tip_tension, n_fix, positions = outs
    k = len(commands)
    out = _RowsOut(
        np.empty((k, 3)), np.empty((k, 3, 3)), np.empty((k, n_t)), np.empty((k, n_t)),
        np.zeros(k, dtype=np.int64),
        np.empty((k if positions is not None else 0, model.n_nodes, 3)),
        np.zeros((k, len(PHASES)), dtype=np.int64),
    )  # fmt: skip
    Y = np.empty((model.n_nodes, 15 + n_t))
    X = np.empty((model.n_nodes, 6))
    done = _sequence_rows(
        commands, length_mode, fr, st, rtol, tol, max_iter + max_fix, _STEP_BOUND, out, Y, X
    )
    end = start + done
    tips[start:end] = out.tips[:done]
    rotations[start:end] = out.rotations[:done]
    tension[start:end] = out.tension[:done]
    tip_tension[start:end] = out.tip_tension[:done]
    n_fix[start:end] = out.iterations[:done]
    if positions is not None:
        positions[start:end] = out.positions[:done]
    if done == 0:
        return 0, state
    # The last row's equilibrium as a result (the next solve's warm start and wrap).
    scale = np.array(pb.ld[3][:, :n_t])
    last = dataclasses.replace(inputs[end - 1], tension_profile=scale)
    result = result_at(model, last, x, rtol)
    change = (dx[3:].copy(), d_cmd.copy(), d_theta.copy()) if has_change[0] else None
    new_state = FrictionState(
        tension=st.prof, command=st.eff, direction=st.direction, result=result,
        step_change=change,
    )  # fmt: skip
    return done, new_state


def _anchor_steps(model: RodModel, n_t: int) -> np.ndarray:
    """Index of the last step of each tendon (the one ending at its anchor) (n_t,)."""
    ends = model.seg_start[model.tendon_seg[:n_t]] + model.seg_length[model.tendon_seg[:n_t]]
    return np.searchsorted(model.node_s, ends - 1e-12 * model.total_length) - 1


def _step(
    model: RodModel,
    inp: StaticLoads,
    state: FrictionState,
    mu: np.ndarray,
    band: np.ndarray,
    baseline: np.ndarray | None,
    rtol: float,
    max_iter: int,
    check_stability: bool,
    tol: float,
    max_fix: int,
) -> tuple[FrictionState, StaticResult, int, bool]:
    """One step of the sequence: (new state, result, fixed-point solves, converged).
    baseline : (n_steps, n_t) wrap [rad] of the holes themselves (`hole_wrap`), or None."""

    def wrap_of(res: StaticResult | None) -> np.ndarray:
        theta = (
            tendon_wrap(model, res.positions, res.rotations)
            if res is not None
            else np.zeros_like(state.tension)
        )
        return theta if baseline is None else theta + baseline

    n_t = mu.shape[0]
    length_mode = inp.lengths is not None
    prev = state.tension
    held = np.zeros(n_t, dtype=bool)
    command = inp.lengths if length_mode else inp.tensions
    assert command is not None
    if not length_mode:
        # A reversal within the stick band keeps the tendon's profile and effective command.
        change = command - state.command
        held = (
            (state.direction != 0.0)
            & (np.sign(change) == -state.direction)
            & (np.abs(change) < band)
        )
        tau = np.where(held, state.command, command)
        inp = dataclasses.replace(inp, tensions=tau)
    guess = state.result
    # Start from the wrap of the last shape (the straight robot at rest).
    theta = theta_start = wrap_of(guess)
    base = inp.tensions if inp.tensions is not None else _guess_tension(guess, n_t)
    if length_mode and state.step_change is not None and guess is not None:
        # Extrapolate the base tensions and the wrap along the last step (a ramp of
        # commands): the profile scale then starts near its fixed point, not one row behind.
        d_tension, d_command, d_theta = state.step_change
        step = command - state.command
        denom = float(d_command @ d_command)
        ratio = min(max(float(step @ d_command) / denom if denom > 0.0 else 0.0, 0.0), 2.0)
        base = np.maximum(base + ratio * d_tension, 0.0)
        theta = np.maximum(theta + ratio * d_theta, 0.0)
    scale = _scale(prev, base, theta, mu, held)
    first: StaticResult | None = None
    result: StaticResult | None = None
    converged = False
    fixes = 0
    last: tuple[np.ndarray, np.ndarray] | None = None
    used = scale
    while fixes < max_fix:
        fixes += 1
        used = scale
        frozen = dataclasses.replace(inp, tension_profile=scale)
        # The tip error estimate on the first solve only: the later ones move the shape by the
        # fixed point's small corrections (its note is carried to the answer below).
        result = _solve_frozen(model, frozen, guess, rtol, max_iter, False, first is None)
        first = first or result
        if not result.success:
            break
        theta = wrap_of(result)
        base = result.tendon_tension
        new = _scale(prev, base, theta, mu, held)
        change = float(np.max(np.abs(new - scale), initial=0.0))
        if change < tol and check_stability:
            # Test the converged equilibrium once; a move to a stable one goes round again.
            checked = stable_equilibrium(
                model,
                frozen,
                result,
                lambda a, b: _solve_frozen(model, a, b, rtol, max_iter, False),
            )
            replaced = checked.stable is not True or checked.positions is not result.positions
            result = checked
            if replaced:
                if not result.success:
                    break
                theta = wrap_of(result)
                new = _scale(prev, result.tendon_tension, theta, mu, held)
                change = float(np.max(np.abs(new - scale), initial=0.0))
        if change < tol:
            converged = True
            break
        scale, last = _anderson(scale, new, last)
        guess = result
    assert result is not None and first is not None
    if not result.success:
        # A failed step leaves the state as it was (the next step starts from there).
        return state, result, fixes, False
    if result is not first:
        note = first.message.partition(";")[2] if "grid kept" in first.message else ""
        result = dataclasses.replace(
            result,
            tip_error=first.tip_error,
            message=result.message + (f";{note}" if note else ""),
        )
    profile = used * result.tendon_tension
    direction = state.direction.copy()
    eff = state.command.copy()
    if not length_mode:
        moved = ~held & (command != state.command)
        direction[moved] = np.sign(command - np.nan_to_num(state.command, nan=0.0))[moved]
        eff[~held] = command[~held]
    else:
        eff = command.copy()
    change_of_step = None
    if length_mode and state.result is not None:
        change_of_step = (
            result.tendon_tension - state.result.tendon_tension,
            command - state.command,
            wrap_of(result) - theta_start,
        )
    new_state = FrictionState(
        tension=profile,
        command=eff,
        direction=direction,
        result=result,
        step_change=change_of_step,
    )
    return new_state, result, fixes, converged


def _guess_tension(guess: StaticResult | None, n_t: int) -> np.ndarray:
    """Base tensions (n_t,) [N] of a previous result (zeros at rest): the first estimate of the
    unknown tensions under length control."""
    return np.zeros(n_t) if guess is None else guess.tendon_tension.copy()


def _anderson(
    x: np.ndarray, fx: np.ndarray, last: tuple[np.ndarray, np.ndarray] | None
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Next iterate of the fixed point x = f(x) by Anderson mixing with one previous pair
    (x_prev, f(x_prev)): a secant step along the last change of the residual, which turns the
    linear contraction (~0.01 per solve on ftdcr_v4 at mu = 0.1) into a faster one; plain
    x <- f(x) on the first iteration. The convergence test (on f(x) - x at a solved x) does
    not depend on it. Returns (next iterate >= 0, the pair to pass next time)."""
    r = fx - x
    nxt = fx
    if last is not None:
        x_prev, f_prev = last
        dr = r - (f_prev - x_prev)
        denom = float(np.sum(dr * dr))
        if denom > 0.0:
            nxt = fx - float(np.sum(r * dr)) / denom * (fx - f_prev)
    return np.maximum(nxt, 0.0), (x, fx)


def _scale(
    prev: np.ndarray, base: np.ndarray, theta: np.ndarray, mu: np.ndarray, held: np.ndarray
) -> np.ndarray:
    """Tension scale (n_steps, n_t) [-] = profile / base tension: the clamped profile, or the
    previous profile for a stuck tendon; 1 where the base tension is 0."""
    profile = np.where(held, prev, _clamped_profile(prev, base, theta, mu))
    safe = np.where(base > 0.0, base, 1.0)
    return np.where(base > 0.0, profile / safe, 1.0)
