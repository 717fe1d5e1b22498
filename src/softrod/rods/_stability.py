"""Stability of a static equilibrium: the sign of the energy's second variation (docs/stability.md).

The test (Morse's broken-extremal form of the Jacobi test). Perturb the section frames by
world-frame rotations eta(s), eta(0) = 0 at the clamped base. The linearised balance laws are
the Jacobi equations of the energy: in the variables (eta, p) with p = dM - eta x M / 2 (dM the
change of the total section moment M), they are a linear Hamiltonian system, so the transfer
map of every integration step is symplectic (checked by `transfer_maps` in the tests). On each
step [s_k, s_k+1] the Jacobi field with given end rotations (eta_k, eta_k+1) has end moments
(-p_k, p_k+1) = E_k (eta_k, eta_k+1), and the second variation restricted to such piecewise
Jacobi fields is the block-tridiagonal quadratic form sum_k (eta_k, eta_k+1) . E_k (eta_k,
eta_k+1) in the node rotations eta_1..eta_n (the tip is free: its natural condition p = 0).
By Morse's theorem its number of negative eigenvalues is that of the full second variation,
and a block LDL^T factorisation counts them (Sylvester's law of inertia). The steps are the
solver's own RK4 steps, whose sensitivities are exact for the discrete solution, so the test
changes sign exactly where the shooting Jacobian is singular.

What "stable" means: a strict local minimum of the total potential energy (strain energy, the
work of dead external forces, and tau_i times the path length of each tendon, which is the
potential of a tendon held at a constant tension: the section balance of `_static_kernels` is
the stationarity of W(v, u) + sum_i tau_i |v + u x r_i|). Under tension control every load of
softrod is then conservative except dead moments (tip and point moments fixed in the world
frame), whose second variation has an antisymmetric part; the test uses the symmetric part of
E_k, so with dead moments "stable" means the symmetric (potential) part of the stiffness is
positive definite. Length control (elastic tendons whose tensions are unknowns) is not checked
(None).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from numba import njit

from softrod.rods._inputs import StaticLoads, _blend, _problem, _zero_inputs
from softrod.rods._model import RodModel
from softrod.rods._result import StaticResult
from softrod.rods._static_kernels import _evaluate_interval

__all__: list[str] = []

#: `StaticResult.status` of an unstable equilibrium from which no stable one was reached.
STATUS_UNSTABLE = 5
#: Imperfection sizes tried, as a tip force over EI / L^2 (or a tip moment over EI / L) along
#: the unstable mode: 1e-2 bends the clamped-free column at 1.001 P_cr ~3x farther than its
#: buckled shape (a smooth path onto the branch), the larger ones are retries.
_IMPERFECTIONS = (1e-2, 1e-1)
#: First and largest load-fraction step of the ramp from the unloaded robot.
_RAMP_STEP = 0.125
#: Smallest ramp step before a path is given up.
_MIN_RAMP_STEP = 1e-3
#: A warm-started step whose tip moves more than this fraction of the length is taken for a
#: branch jump and retried with a smaller step.
_MAX_TIP_JUMP = 0.2


@njit(cache=True)
def _skew_into(v, out):
    """out (3, 3) = [v]x."""
    out[0, 0] = 0.0
    out[0, 1] = -v[2]
    out[0, 2] = v[1]
    out[1, 0] = v[2]
    out[1, 1] = 0.0
    out[1, 2] = -v[0]
    out[2, 0] = -v[1]
    out[2, 1] = v[0]
    out[2, 2] = 0.0


@njit(cache=True)
def _transfer_maps(Y, tau, geo, ld, maps_out):
    """Transfer map of (eta (3,) [rad], p (3,) [N m]) across every step, maps_out (n_steps, 6, 6).

    Y : (n_nodes, 15 + n_t) the equilibrium's node states (`_integrate` layout); tau : (n_t,)
    [N]; geo, ld : the kernels' model and load tuples. Returns False on a failed integration.
    """
    n_nodes = Y.shape[0]
    n_t = tau.shape[0]
    ny = 15 + n_t
    z = np.empty(ny * 7)
    Ys = np.empty((n_nodes, ny))
    Xs = np.empty((n_nodes, 6))
    R0 = np.empty((3, 3))
    R1 = np.empty((3, 3))
    dR = np.empty((3, 3))
    raw = np.empty((6, 6))
    world = np.empty((6, 6))
    S0 = np.empty((3, 3))
    S1 = np.empty((3, 3))
    for k in range(n_nodes - 1):
        for a in range(3):
            for c in range(3):
                R0[a, c] = Y[k, 3 + 3 * a + c]
        ok = _evaluate_interval(
            Y[k, 0:3].copy(),
            R0,
            Y[k, 12:15].copy(),
            Y[k, 15:ny].copy(),
            tau,
            True,
            0,
            geo,
            ld,
            k,
            k + 1,
            Ys,
            Xs,
            z,
        )
        if not ok:
            return False
        for a in range(3):
            for c in range(3):
                R1[a, c] = z[3 + 3 * a + c]
        # Directions 0-2 rotate the start frame by R0 e_d (world), 3-5 move M(s_k) by e_d:
        # read the end rotation as world eta = vee(dR R1^T) and the end moment change dM.
        for d in range(6):
            o = ny * (1 + d)
            for a in range(3):
                for c in range(3):
                    dR[a, c] = z[o + 3 + 3 * a + c]
            W = dR @ R1.T
            raw[0, d] = 0.5 * (W[2, 1] - W[1, 2])
            raw[1, d] = 0.5 * (W[0, 2] - W[2, 0])
            raw[2, d] = 0.5 * (W[1, 0] - W[0, 1])
            for a in range(3):
                raw[3 + a, d] = z[o + 12 + a]
        # World-frame start rotations: the first three columns act on R0^T eta.
        for a in range(6):
            for c in range(3):
                world[a, c] = raw[a, 0] * R0[c, 0] + raw[a, 1] * R0[c, 1] + raw[a, 2] * R0[c, 2]
                world[a, 3 + c] = raw[a, 3 + c]
        # Symplectic momenta p = dM - eta x M / 2 = dM - S eta, S = [-M / 2]x, at both ends:
        # (eta, p)_1 = T(M1) world T(M0)^-1 (eta, p)_0 with T(M) = [[I, 0], [-S, I]].
        _skew_into(-0.5 * Y[k, 12:15], S0)
        _skew_into(-0.5 * z[12:15], S1)
        wa = world[0:3, 0:3].copy()
        wb = world[0:3, 3:6].copy()
        wc = world[3:6, 0:3].copy()
        wd = world[3:6, 3:6].copy()
        top = wa + wb @ S0
        maps_out[k, 0:3, 0:3] = top
        maps_out[k, 0:3, 3:6] = wb
        maps_out[k, 3:6, 0:3] = wc + wd @ S0 - S1 @ top
        maps_out[k, 3:6, 3:6] = wd - S1 @ wb
    return True


@njit(cache=True)
def _second_variation_inertia(maps, pivots_out):
    """Number of negative eigenvalues of the condensed second variation (see module doc).

    maps : (n_steps, 6, 6) step transfer maps of (eta, p). pivots_out : (n_steps,) receives the
    smallest eigenvalue of each block pivot D_k of the LDL^T factorisation [N m], scaled by
    the step length (so that it reads as a stiffness EI-like) -- pivots_out[-1] is the tip's.
    Returns the count (-1 when a pivot is singular or the maps are not invertible).
    """
    n = maps.shape[0]
    E = np.empty((6, 6))
    D = np.zeros((3, 3))
    C = np.zeros((3, 3))  # coupling of the previous node to this one
    Dprev = np.eye(3)
    negative = 0
    for k in range(n):
        a = maps[k, 0:3, 0:3].copy()
        b = maps[k, 0:3, 3:6].copy()
        c = maps[k, 3:6, 0:3].copy()
        d = maps[k, 3:6, 3:6].copy()
        if abs(np.linalg.det(b)) == 0.0:
            return -1
        bi = np.linalg.inv(b)
        # (-p_k, p_k+1) = E (eta_k, eta_k+1); symmetric part (see module doc).
        E[0:3, 0:3] = bi @ a
        E[0:3, 3:6] = -bi
        E[3:6, 0:3] = c - d @ bi @ a
        E[3:6, 3:6] = d @ bi
        Es = 0.5 * (E + E.T)
        if k > 0:
            # Finish node k's pivot: its own blocks minus the previous elimination.
            D += Es[0:3, 0:3]
            if k > 1:
                D -= C.T @ np.linalg.solve(Dprev, C)
            Ds = 0.5 * (D + D.T)
            ev = np.linalg.eigvalsh(Ds)
            pivots_out[k - 1] = ev[0]
            if ev[0] == 0.0:
                return -1
            negative += int(np.sum(ev < 0.0))
            Dprev = Ds.copy()
        C = Es[0:3, 3:6].copy()
        D = Es[3:6, 3:6].copy()
        Dprev = Dprev.copy()
    # The free tip: no step beyond it.
    if n > 1:
        D -= C.T @ np.linalg.solve(Dprev, C)
    Ds = 0.5 * (D + D.T)
    ev = np.linalg.eigvalsh(Ds)
    pivots_out[n - 1] = ev[0]
    if ev[0] == 0.0:
        return -1
    negative += int(np.sum(ev < 0.0))
    return negative


def _node_states(result: StaticResult) -> np.ndarray:
    """The kernels' node states Y (n_nodes, 15 + n_t) of a result (tendon lengths unused)."""
    n = result.s.shape[0]
    Y = np.zeros((n, 15 + result.tendon_tension.shape[0]))
    Y[:, 0:3] = result.positions
    Y[:, 3:12] = result.rotations.reshape(n, 9)
    assert result.warm is not None
    Y[:, 12:15] = result.warm.total_moment
    return Y


def stability_maps(model: RodModel, result: StaticResult) -> np.ndarray | None:
    """Step transfer maps (n_steps, 6, 6) of (eta, p) at a converged shooting result, or None
    where the test does not apply (another method, a failed solve, length control)."""
    inp = result.inputs
    if (
        result.method != "shooting"
        or not result.success
        or result.warm is None
        or inp.lengths is not None
        or result.s.shape[0] != model.n_nodes
    ):
        return None
    pb = _problem(model, inp, result.load_scale)
    maps = np.empty((model.n_nodes - 1, 6, 6))
    tau = np.ascontiguousarray(pb.tau_fixed)
    if not _transfer_maps(_node_states(result), tau, pb.geo, pb.ld, maps):
        return None
    return maps


def is_stable(model: RodModel, result: StaticResult) -> bool | None:
    """True when `result` is a strict local minimum of the potential energy, False when the
    second variation has a negative (or zero) direction, None when not checked (see the
    module doc for where the test applies and what it means for dead moments)."""
    maps = stability_maps(model, result)
    if maps is None:
        return None
    pivots = np.empty(maps.shape[0])
    return bool(_second_variation_inertia(maps, pivots) == 0)


def _condensed_matrix(maps: np.ndarray) -> np.ndarray:
    """The symmetric condensed second variation (3 n_steps, 3 n_steps) in eta_1..eta_n."""
    n = maps.shape[0]
    H = np.zeros((3 * n, 3 * n))
    for k in range(n):
        a, b = maps[k, 0:3, 0:3], maps[k, 0:3, 3:6]
        c, d = maps[k, 3:6, 0:3], maps[k, 3:6, 3:6]
        bi = np.linalg.inv(b)
        E = np.block([[bi @ a, -bi], [c - d @ bi @ a, d @ bi]])
        E = 0.5 * (E + E.T)
        # Node k (k >= 1) is unknown k - 1; the base (k = 0) is clamped.
        lo, hi = 3 * (k - 1), 3 * k
        if k > 0:
            H[lo:hi, lo:hi] += E[0:3, 0:3]
            H[lo:hi, hi : hi + 3] += E[0:3, 3:6]
            H[hi : hi + 3, lo:hi] += E[3:6, 0:3]
        H[hi : hi + 3, hi : hi + 3] += E[3:6, 3:6]
    return H


def unstable_modes(maps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (m,) and rotation fields (m, n_nodes, 3) [rad] of the negative directions of
    the condensed second variation, most negative first (eta = 0 at the clamped base)."""
    H = _condensed_matrix(maps)
    w, V = np.linalg.eigh(H)
    neg = np.flatnonzero(w < 0.0)
    n_nodes = maps.shape[0] + 1
    modes = np.zeros((neg.size, n_nodes, 3))
    for i, j in enumerate(neg):
        modes[i, 1:] = V[:, j].reshape(-1, 3)
    return w[neg], modes


# ---------------------------------------------------------------------------------------------
# Onto the stable branch

Solve = Callable[[StaticLoads, StaticResult | None], StaticResult]


def _mode_imperfection(
    model: RodModel, result: StaticResult, maps: np.ndarray, eps: float
) -> tuple[np.ndarray, np.ndarray]:
    """A small dead tip force (3,) [N] and moment (3,) [N m] that push along the most unstable
    mode. Among equally unstable modes (an axisymmetric rod) the one whose tip moves most along
    the base frame's x axis is taken, so the choice is reproducible."""
    w, modes = unstable_modes(maps)
    near = np.abs(w - w[0]) <= 1e-6 * abs(w[0])
    seg = np.diff(result.positions, axis=0)
    # Tip displacement of each mode: the integral of eta x p' along the rod.
    mid = 0.5 * (modes[near, 1:] + modes[near, :-1])
    tips = np.cross(mid, seg[None]).sum(axis=1)
    x_axis = model.base_rotation[:, 0]
    coef = tips @ x_axis
    if np.linalg.norm(coef) <= 1e-9 * np.abs(tips).max(initial=0.0):
        coef = np.eye(int(near.sum()))[0]
    tip = coef @ tips
    L = model.total_length
    if np.linalg.norm(tip) > 1e-6 * L * np.linalg.norm(coef) * np.abs(modes[near]).max():
        direction = tip / np.linalg.norm(tip)
        return eps * model.moment_scale / L * direction, np.zeros(3)
    # A mode that does not move the tip (twist): push it with a tip moment instead.
    eta_tip = coef @ modes[near][:, -1]
    return np.zeros(3), eps * model.moment_scale * eta_tip / np.linalg.norm(eta_tip)


def _with_imperfection(inp: StaticLoads, force: np.ndarray, moment: np.ndarray) -> StaticLoads:
    return dataclasses.replace(
        inp, tip_force=inp.tip_force + force, tip_moment=inp.tip_moment + moment
    )


def _follow(
    solve: Solve,
    path: Callable[[float], StaticLoads],
    start: StaticResult | None,
    length: float,
) -> StaticResult | None:
    """Warm-started solves along path(t), t from 0 to 1, with adaptive steps; a step that
    fails or moves the tip by more than `_MAX_TIP_JUMP` of the length is halved. The last
    equilibrium at t = 1, or None when the path is lost."""
    cur = start if start is not None else solve(path(0.0), None)
    if not cur.success:
        return None
    t, dt = 0.0, _RAMP_STEP
    while t < 1.0:
        trial = min(1.0, t + dt)
        nxt = solve(path(trial), cur)
        jump = np.linalg.norm(nxt.tip_position - cur.tip_position)
        if nxt.success and jump <= _MAX_TIP_JUMP * length:
            cur, t = nxt, trial
            dt = min(2.0 * dt, _RAMP_STEP)
        else:
            dt *= 0.5
            if dt < _MIN_RAMP_STEP:
                return None
    return cur


def stable_equilibrium(
    model: RodModel, inp: StaticLoads, result: StaticResult, solve: Solve
) -> StaticResult:
    """`result` with `stable` set; an unstable one is replaced by a stable equilibrium of the
    same loads when one is reached, else it is returned with success=False.

    The stable branch is reached as a real robot reaches it: the loads are ramped from the
    unloaded robot with a small imperfection (a tip load along the most unstable mode, see
    `_mode_imperfection`) that selects the branch, then the imperfection is removed, each step
    warm-started from the last. solve(loads, guess) is the solver's method on `model`.
    """
    maps = stability_maps(model, result)
    if maps is None:
        return dataclasses.replace(result, stable=None)
    pivots = np.empty(maps.shape[0])
    n_neg = _second_variation_inertia(maps, pivots)
    if n_neg == 0:
        return dataclasses.replace(result, stable=True)
    L = model.total_length
    zero = _zero_inputs(model, inp)
    for eps in _IMPERFECTIONS:
        force, moment = _mode_imperfection(model, result, maps, eps)

        def ramp(t: float, force: np.ndarray = force, moment: np.ndarray = moment) -> StaticLoads:
            blend = _blend(zero, inp, t)
            assert blend is not None
            return _with_imperfection(blend, force, moment)

        def release(
            t: float, force: np.ndarray = force, moment: np.ndarray = moment
        ) -> StaticLoads:
            return _with_imperfection(inp, (1.0 - t) * force, (1.0 - t) * moment)

        loaded = _follow(solve, ramp, None, L)
        found = _follow(solve, release, loaded, L) if loaded is not None else None
        if found is not None and found.success and is_stable(model, found):
            message = (
                f"{found.message}; the equilibrium first found was unstable "
                f"({max(n_neg, 1)} negative direction(s) of the energy's second variation): "
                "this is the stable one reached by loading with a small imperfection along "
                "the unstable mode and removing it"
            )
            return dataclasses.replace(found, message=message, stable=True)
    return dataclasses.replace(
        result,
        success=False,
        status=STATUS_UNSTABLE,
        message=(
            f"the equilibrium found is unstable ({max(n_neg, 1)} negative direction(s) of the "
            "energy's second variation) and no stable equilibrium of these loads was reached "
            "by loading with an imperfection along the unstable mode"
        ),
        stable=False,
    )
