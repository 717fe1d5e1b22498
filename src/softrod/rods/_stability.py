"""Stability of a static equilibrium: the sign of the energy's second variation (docs/stability.md).

The test (Morse's broken-extremal form of the Jacobi test). Perturb the section frames by
world-frame rotations eta(s), eta(0) = 0 at the clamped base. The linearised balance laws are
the Jacobi equations of the energy: in the variables (eta, p) with p = dM - eta x M / 2 (dM the
change of the total section moment M), they are a linear Hamiltonian system, so the transfer
map of every integration step is symplectic (checked in tests/test_stability.py). On each
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
from scipy.linalg import eig_banded

from softrod.rods._budget import BUDGET_MESSAGE, budget_expired
from softrod.rods._inputs import StaticLoads, _blend, _problem, _zero_inputs
from softrod.rods._model import RodModel
from softrod.rods._result import StaticResult, _replaced
from softrod.rods._shooting import converged_problem, grid_model, recorded_maps
from softrod.rods._stability_kernels import _checkpoints, _interval_maps

__all__: list[str] = []

#: `StaticResult.status` of an unstable equilibrium from which no stable one was reached.
STATUS_UNSTABLE = 7
#: Imperfection sizes tried, as a tip force over EI / L^2 (or a tip moment over EI / L) along
#: the unstable mode: 1e-2 is small against any load that buckles (P_cr L^2 / EI >= 2.47 for a
#: clamped-free rod) so removing it is a short warm-started path, yet it tilts the ramp from rest
#: onto one branch at a finite distance from the bifurcation; 1e-1 is the retry.
_IMPERFECTIONS = (1e-2, 1e-1)
#: First and largest load-fraction step of the ramp from the unloaded robot.
_RAMP_STEP = 0.125
#: Smallest ramp step before a path is given up.
_MIN_RAMP_STEP = 1e-3
#: A warm-started step whose tip moves more than this fraction of the length is taken for a
#: branch jump and retried with a smaller step.
_MAX_TIP_JUMP = 0.2
#: Said when dead moments leave the verdict open (`stable_equilibrium`).
_UNDECIDED = (
    "; stability not decided: the world-fixed moments are not conservative, the symmetric "
    "part of the energy's second variation is indefinite but the whole tangent stiffness has "
    "no static (divergence) instability; a static test cannot exclude flutter"
)
#: Said when dead moments make the linearised dynamics flutter (`_flutter_checked`).
_FLUTTER = (
    "; stability not decided: under the world-fixed moments the linearised undamped dynamics "
    "flutters (its fastest-growing mode grows at {:.2g} of its frequency: a robot holds this "
    "shape only with a modal damping ratio above about that; docs/stability.md)"
)
#: Said when the flutter is slow enough for a real robot's damping (`_flutter_checked`).
_SLOW_FLUTTER = (
    "; under the world-fixed moments the linearised undamped dynamics flutters slowly (growth "
    "{:.2g} of its frequency): stable with a modal damping ratio above that"
)
#: Growth over frequency of the linearised dynamics below which a mode is taken for a real
#: (oscillating) one: round-off of the non-symmetric eigenvalues is ~1e-10 relative.
_FLUTTER_TOL = 1e-6
#: Dead moments smaller than this, as |M| L / EI (EI the smallest bending or torsion
#: stiffness), skip the flutter check: the growth ratio measured at most 0.22 |M| L / EI (a
#: straight shaft under an axial torque, whose double modes flutter first; the probe's bent
#: cases 0.003-0.11), so below 0.05 it stays under 0.011 < `_FLUTTER_DAMPING`.
_FLUTTER_SCREEN = 0.05
#: Growth over frequency up to which flutter is taken to be held by the robot's damping: the
#: smallest first-mode damping ratio of the measured rods (docs/validation.md, SoRoSim's
#: records: TPU 1.8-3.9 %, steel 2.6-5 %). A mode growing at g of its frequency decays under a
#: modal damping ratio above g.
_FLUTTER_DAMPING = 0.018
#: Most steps whose non-symmetric condensed stiffness (3 n_steps square) `_diverges` solves
#: densely: 400 steps (a 1200 x 1200 eigenvalue problem) take ~0.5 s on one core; longer
#: grids use the checkpoint maps (`_divergence_maps`).
_DENSE_EIG_STEPS = 400


@njit(cache=True)
def _mm3(a, b, out):
    """out (3, 3) = a @ b for 3 x 3 arrays (explicit loops: BLAS calls cost more here)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@njit(cache=True)
def _inv3(a, out):
    """out (3, 3) = a^-1 by cofactors; returns det(a) (out is garbage when it is 0)."""
    c00 = a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]
    c01 = a[0, 2] * a[2, 1] - a[0, 1] * a[2, 2]
    c02 = a[0, 1] * a[1, 2] - a[0, 2] * a[1, 1]
    det = a[0, 0] * c00 + a[1, 0] * c01 + a[2, 0] * c02
    if det == 0.0:
        return 0.0
    inv = 1.0 / det
    out[0, 0] = c00 * inv
    out[0, 1] = c01 * inv
    out[0, 2] = c02 * inv
    out[1, 0] = (a[1, 2] * a[2, 0] - a[1, 0] * a[2, 2]) * inv
    out[1, 1] = (a[0, 0] * a[2, 2] - a[0, 2] * a[2, 0]) * inv
    out[1, 2] = (a[0, 2] * a[1, 0] - a[0, 0] * a[1, 2]) * inv
    out[2, 0] = (a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]) * inv
    out[2, 1] = (a[0, 1] * a[2, 0] - a[0, 0] * a[2, 1]) * inv
    out[2, 2] = (a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]) * inv
    return det


@njit(cache=True)
def _negative_count3(d):
    """Negative eigenvalues of a symmetric 3 x 3 d (Sylvester: the signs of the leading-minor
    ratios); -1 when d is singular."""
    m1 = d[0, 0]
    m2 = d[0, 0] * d[1, 1] - d[0, 1] * d[1, 0]
    m3 = (
        d[0, 0] * (d[1, 1] * d[2, 2] - d[1, 2] * d[2, 1])
        - d[0, 1] * (d[1, 0] * d[2, 2] - d[1, 2] * d[2, 0])
        + d[0, 2] * (d[1, 0] * d[2, 1] - d[1, 1] * d[2, 0])
    )
    if m3 == 0.0:
        return -1
    if m1 == 0.0 or m2 == 0.0:
        # A zero leading minor: fall back to the eigenvalues.
        return int(np.sum(np.linalg.eigvalsh(d) < 0.0))
    return int(m1 < 0.0) + int(m2 / m1 < 0.0) + int(m3 / m2 < 0.0)


@njit(cache=True)
def _transfer_maps(Y, tau, geo, ld, maps_out):
    """Transfer map of (eta (3,) [rad], p (3,) [N m]) across every step, maps_out (n_steps, 6, 6).

    Y : (n_nodes, 15 + n_t) the equilibrium's node states (`_integrate` layout); tau : (n_t,)
    [N]; geo, ld : the kernels' model and load tuples. Returns False on a failed integration.
    """
    nodes = np.arange(Y.shape[0])
    return _interval_maps(Y, tau, geo, ld, nodes, maps_out, np.bool_(False), np.empty((0, 6))) > 0


@njit(cache=True)
def _second_variation_inertia(maps):
    """Number of negative eigenvalues of the condensed second variation (see module doc).

    maps : (n_steps, 6, 6) step transfer maps of (eta, p). Returns the count, or -1 when a
    block is singular (an equilibrium at a stability boundary).
    """
    n = maps.shape[0]
    a = np.empty((3, 3))
    b = np.empty((3, 3))
    c = np.empty((3, 3))
    d = np.empty((3, 3))
    bi = np.empty((3, 3))
    t1 = np.empty((3, 3))
    t2 = np.empty((3, 3))
    E00 = np.empty((3, 3))
    E01 = np.empty((3, 3))
    E11 = np.empty((3, 3))
    D = np.zeros((3, 3))  # the pivot being built for the current node
    C = np.zeros((3, 3))  # coupling of the previous node to the current one
    Dinv = np.zeros((3, 3))
    negative = 0
    for k in range(n + 1):
        if k < n:
            for i in range(3):
                for j in range(3):
                    a[i, j] = maps[k, i, j]
                    b[i, j] = maps[k, i, 3 + j]
                    c[i, j] = maps[k, 3 + i, j]
                    d[i, j] = maps[k, 3 + i, 3 + j]
            if _inv3(b, bi) == 0.0:
                return -1
            # (-p_k, p_k+1) = E (eta_k, eta_k+1), E = [[b^-1 a, -b^-1], [c - d b^-1 a, d b^-1]];
            # its symmetric part (module doc): E00, E01 (and E10 = E01^T), E11.
            _mm3(bi, a, t1)
            _mm3(d, t1, t2)
            _mm3(d, bi, E11)
            for i in range(3):
                for j in range(3):
                    E00[i, j] = 0.5 * (t1[i, j] + t1[j, i])
                    E01[i, j] = 0.5 * (-bi[i, j] + c[j, i] - t2[j, i])
            for i in range(3):
                for j in range(i + 1):
                    s = 0.5 * (E11[i, j] + E11[j, i])
                    E11[i, j] = s
                    E11[j, i] = s
        if k > 0:
            # Finish node k's pivot: the left step's E11 (in D) plus the right step's E00,
            # minus the elimination of node k - 1 (C^T Dinv C).
            if k < n:
                for i in range(3):
                    for j in range(3):
                        D[i, j] += E00[i, j]
            if k > 1:
                _mm3(Dinv, C, t1)
                for i in range(3):
                    for j in range(3):
                        D[i, j] -= C[0, i] * t1[0, j] + C[1, i] * t1[1, j] + C[2, i] * t1[2, j]
            for i in range(3):
                for j in range(i + 1):
                    s = 0.5 * (D[i, j] + D[j, i])
                    D[i, j] = s
                    D[j, i] = s
            count = _negative_count3(D)
            if count < 0:
                return -1
            negative += count
            _inv3(D, Dinv)
        if k < n:
            for i in range(3):
                for j in range(3):
                    C[i, j] = E01[i, j]
                    D[i, j] = E11[i, j]
    return negative


#: The strains argument of `_interval_maps` where it only reads (no chained IVP).
_NO_STRAINS = np.empty((0, 6))


def _node_states(result: StaticResult, total_moment: np.ndarray) -> np.ndarray:
    """The kernels' node states Y (n_nodes, 15 + n_t) of a result whose total section moment
    is total_moment (n_nodes, 3) [N m] (tendon lengths, unused by the test, are left 0)."""
    n = result.s.shape[0]
    Y = np.zeros((n, 15 + result.tendon_tension.shape[0]))
    Y[:, 0:3] = result.positions
    Y[:, 3:12] = result.rotations.reshape(n, 9)
    Y[:, 12:15] = total_moment
    return Y


def stability_maps(
    model: RodModel, result: StaticResult, grouped: bool = False
) -> np.ndarray | None:
    """Step transfer maps (n_steps, 6, 6) of (eta, p) at a converged shooting result, or None
    where the test does not apply (another method, a failed solve, length control).
    `grouped`: maps across the intervals of `_checkpoints` instead (n_intervals, 6, 6), the
    same inertia at a fraction of the integration calls (modes need the step maps)."""
    found = _maps_and_nodes(model, result, grouped)
    return None if found is None else found[0]


def _maps_and_nodes(
    model: RodModel, result: StaticResult, grouped: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """`stability_maps` and the node indices (m + 1,) of the grid its maps run between."""
    if grouped and result.success and result.method == "shooting":
        # Built by the solve in its last evaluation (the same numbers, one integration fewer).
        found = recorded_maps(result)
        if found is not None:
            return found
    inp = result.inputs
    warm = result.warm
    on_grid = grid_model(model, result)
    if (
        result.method != "shooting"
        or not result.success
        or warm is None
        or inp.lengths is not None
        or on_grid is None
        or model.is_routed  # general tendon routing: not checked yet (docs/routing.md)
    ):
        return None
    model = on_grid
    # The solve's own load arrays when this is the result just solved (saves a rebuild).
    pb = converged_problem(model, inp) if result.load_scale == 1.0 else None
    if pb is None:
        pb = _problem(model, inp, result.load_scale)
    tau = np.ascontiguousarray(pb.tau_fixed)
    Y = _node_states(result, warm.total_moment)
    nodes = np.arange(model.n_nodes)
    if grouped:
        nodes = nodes[: _checkpoints(Y, tau, pb.geo, pb.ld, nodes)].copy()
    maps = np.empty((nodes.shape[0] - 1, 6, 6))
    if _interval_maps(Y, tau, pb.geo, pb.ld, nodes, maps, np.bool_(False), _NO_STRAINS) < 0:
        return None
    return maps, nodes


def _dead_moments(inp: StaticLoads) -> bool:
    """Whether the loads hold a world-fixed moment (tip or point moment): the only loads of
    softrod that are not conservative."""
    return bool(np.any(inp.tip_moment != 0.0)) or any(np.any(p[2] != 0.0) for p in inp.point_loads)


def _divergence_maps(model: RodModel, result: StaticResult) -> np.ndarray | None:
    """The maps `_diverges` examines: the step maps, or on long grids (over
    `_DENSE_EIG_STEPS` steps, where its dense non-symmetric eigenvalue problem of 3 n_steps
    would take seconds) the checkpoint maps of the default test, whose condensed stiffness is
    singular exactly where the step one is (an exact elimination of the nodes between)."""
    steps = stability_maps(model, result)
    if steps is not None and steps.shape[0] > _DENSE_EIG_STEPS:
        return stability_maps(model, result, grouped=True)
    return steps


def _diverges(maps: np.ndarray) -> bool:
    """Whether the whole (non-symmetric) condensed stiffness of step maps (n_steps, 6, 6) has
    an eigenvalue with a real part <= 0: a static (divergence) instability of a
    non-conservative equilibrium, which the symmetric part alone cannot tell from a stiffness
    whose circulatory part only couples stable directions."""
    eig = np.linalg.eigvals(_condensed_matrix(maps, symmetric=False))
    return bool(np.any(eig.real <= 0.0))


def is_stable(model: RodModel, result: StaticResult) -> bool | None:
    """True when `result` is a strict local minimum of the potential energy, False when the
    second variation has a negative (or zero) direction, None when not checked (see the
    module doc for where the test applies and what it means for dead moments) or not decided
    (dead moments whose symmetric part is indefinite without a divergence)."""
    maps = stability_maps(model, result, grouped=True)
    if maps is None:
        return None
    if _second_variation_inertia(maps) == 0:
        return True
    if _dead_moments(result.inputs) and not budget_expired():
        steps = _divergence_maps(model, result)
        if steps is not None and not _diverges(steps):
            return None
    return False


def _step_forms(maps: np.ndarray, symmetric: bool = True) -> np.ndarray:
    """The step forms E_k (n_steps, 6, 6) of maps (n_steps, 6, 6), (-p_k, p_k+1) = E_k
    (eta_k, eta_k+1) (module doc), their symmetric parts unless `symmetric` is False."""
    a, b = maps[:, 0:3, 0:3], maps[:, 0:3, 3:6]
    c, d = maps[:, 3:6, 0:3], maps[:, 3:6, 3:6]
    bi = np.linalg.inv(b)
    bia = bi @ a
    E = np.empty(maps.shape)
    E[:, 0:3, 0:3] = bia
    E[:, 0:3, 3:6] = -bi
    E[:, 3:6, 0:3] = c - d @ bia
    E[:, 3:6, 3:6] = d @ bi
    if symmetric:
        E = 0.5 * (E + E.transpose(0, 2, 1))
    return E


def _condensed_matrix(maps: np.ndarray, symmetric: bool = True) -> np.ndarray:
    """The symmetric condensed second variation (3 n_steps, 3 n_steps) in eta_1..eta_n;
    `symmetric=False` keeps the antisymmetric part that dead moments give (the tangent
    stiffness of a non-conservative load)."""
    n = maps.shape[0]
    E = _step_forms(maps, symmetric)
    # Node k (k >= 1) is unknown k - 1; the base (k = 0) is clamped: step k couples unknowns
    # k - 1 and k (its first half drops out for k = 0).
    H4 = np.zeros((n, 3, n, 3))
    idx = np.arange(n)
    H4[idx, :, idx, :] += E[:, 3:6, 3:6]
    H4[idx[:-1], :, idx[:-1], :] += E[1:, 0:3, 0:3]
    H4[idx[:-1], :, idx[1:], :] += E[1:, 0:3, 3:6]
    H4[idx[1:], :, idx[:-1], :] += E[1:, 3:6, 0:3]
    return H4.reshape(3 * n, 3 * n)


def _condensed_band(maps: np.ndarray) -> np.ndarray:
    """The symmetric condensed second variation of `_condensed_matrix` in LAPACK's lower band
    storage (6, 3 n_steps): band[i - j, j] = H[i, j] for 0 <= i - j <= 5 (3 x 3 blocks,
    block tridiagonal), for `scipy.linalg.eig_banded`: O(n) memory, no dense matrix."""
    n = maps.shape[0]
    E = _step_forms(maps)
    # Diagonal blocks D_j and sub-diagonal blocks S_j = H[j + 1, j] of the unknowns.
    D = E[:, 3:6, 3:6].copy()
    D[:-1] += E[1:, 0:3, 0:3]
    S = E[1:, 3:6, 0:3]
    band = np.zeros((6, 3 * n))
    for col in range(3):
        for row in range(3):
            # Within a diagonal block (row >= col) and into the block below.
            if row >= col:
                band[row - col, col::3] = D[:, row, col]
            band[3 + row - col, col : 3 * (n - 1) : 3] = S[:, row, col]
    return band


def _skew(m: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -m[2], m[1]], [m[2], 0.0, -m[0]], [-m[1], m[0], 0.0]])


def dead_tangent(maps: np.ndarray, tip_moment: np.ndarray) -> np.ndarray:
    """Tangent stiffness (3 m, 3 m) of the node rotations eta_1..eta_m [N m / rad] under dead
    loads: the non-symmetric condensed form of step or interval maps (m, 6, 6), with the tip
    condition of a world-fixed tip moment, dM(L) = 0.

    The condensed form's own tip condition is its natural one, p(L) = dM - eta x M / 2 = 0:
    that of a moment turning half as much as the tip section (conservative; it buckles a
    straight shaft at a finite torque). A world-fixed moment keeps dM(L) = 0, i.e. p(L) =
    -eta x M(L) / 2: the tip block gains the antisymmetric -[M(L)]x / 2 (docs/stability.md
    "Dead moments: flutter"). Interior point moments need nothing: the maps carry the jump of
    p across them. tip_moment : (3,) [N m] the material moment at the tip, M(L).
    """
    K = _condensed_matrix(maps, symmetric=False)
    K[-3:, -3:] -= 0.5 * _skew(tip_moment)
    return K


def rotation_mass(model: RodModel, result: StaticResult, nodes: np.ndarray) -> np.ndarray:
    """Mass matrix (3 m, 3 m) [kg m^2] of the rotations eta (3,) [rad] at the checkpoints
    nodes[1:] (nodes (m + 1,) indices into the result's grid, nodes[0] = 0 the clamped base).

    Between checkpoints eta is interpolated linearly in s; a node k then moves by dx_k =
    sum_{j<k} (eta_j + eta_j+1) / 2 x (x_j+1 - x_j) (inextensible: the stiff shear and
    stretch follow quasi-statically) and turns by eta_k. The masses are the backbone's (rho A
    lumped on nodes) and the disks', the rotary inertias rho A (I, I, J) / A of the sections;
    a massless robot gets a uniform line density (the verdict depends on the distribution)."""
    on_grid = grid_model(model, result)
    assert on_grid is not None
    s = on_grid.node_s
    n = s.shape[0]
    h = np.diff(s)
    seg = on_grid.step_seg
    line = on_grid.rho_A[seg] * h
    point = on_grid.node_point_mass
    if line.sum() + point.sum() <= 0.0:
        line, point = h, np.zeros(n)
    m_node = np.zeros(n)
    m_node[:-1] += 0.5 * line
    m_node[1:] += 0.5 * line
    m_node += point
    # Section rotary inertia per node: rho A (I / A, I / A, J / A), I / A = EI / EA.
    ratio = on_grid.K_bt[seg] / on_grid.K_se[seg][:, [2, 2, 0]]
    rot = np.zeros((n, 3))
    rot[:-1] += 0.5 * (line[:, None] * ratio)
    rot[1:] += 0.5 * (line[:, None] * ratio)
    # Linear interpolation weights W (n, m) of the checkpoint rotations (the base is clamped).
    m = nodes.shape[0] - 1
    W = np.zeros((n, m))
    for c in range(m):
        a, b = nodes[c], nodes[c + 1]
        t = (s[a : b + 1] - s[a]) / (s[b] - s[a])
        W[a : b + 1, c] = t
        if c > 0:
            W[a : b + 1, c - 1] = 1.0 - t
    # dx_k = G_k eta: cumulative -[x_j+1 - x_j]x / 2 (W_j + W_j+1).
    chord = np.diff(result.positions, axis=0)
    T = -0.5 * np.stack([_skew(c) for c in chord])
    inc = np.einsum("jab,jc->jacb", T, W[:-1] + W[1:]).reshape(n - 1, 3, 3 * m)
    G = np.concatenate([np.zeros((1, 3, 3 * m)), np.cumsum(inc, axis=0)])
    M = np.einsum("k,kai,kaj->ij", m_node, G, G)
    J = np.einsum("kab,kb,kcb->kac", result.rotations, rot, result.rotations)
    M += np.einsum("kc,kd,kab->cadb", W, W, J).reshape(3 * m, 3 * m)
    return M


def flutter_growth(model: RodModel, result: StaticResult) -> float | None:
    """Largest growth rate over frequency, Re(lambda) / |lambda|, of the linearised undamped
    dynamics M eta'' + K eta = 0 at a converged shooting result (`dead_tangent`,
    `rotation_mass` on the checkpoints of the default test): 0 when every mode oscillates
    (every eigenvalue of M^-1 K real and positive), > 0 under flutter (a complex pair) or
    divergence (1: a real one <= 0). None where the test does not apply."""
    found = _maps_and_nodes(model, result, grouped=True)
    if found is None or result.warm is None:
        return None
    maps, nodes = found
    K = dead_tangent(maps, result.warm.total_moment[-1])
    M = rotation_mass(model, result, nodes)
    mu = np.linalg.eigvals(np.linalg.solve(M, K))
    lam = np.sqrt(-mu.astype(complex))
    growth = np.abs(lam.real) / np.maximum(np.abs(lam), np.finfo(float).tiny)
    return float(growth.max(initial=0.0))


def _flutter_checked(model: RodModel, inp: StaticLoads, result: StaticResult) -> StaticResult:
    """`result` (whose energy's second variation is positive) marked stable; under dead
    moments only if the linearised dynamics does not flutter faster than `_FLUTTER_DAMPING`
    (slower flutter is said in the message), else marked not decided with a message
    (docs/stability.md: a world-fixed axial torque flutters a straight shaft at any size,
    which the second variation calls stable)."""
    if not inp.point_loads and not inp.tip_moment.any():
        return _replaced(result, stable=True)
    moment = max(
        [float(np.linalg.norm(inp.tip_moment))]
        + [float(np.linalg.norm(p[2])) for p in inp.point_loads]
    )
    if moment * model.total_length > _FLUTTER_SCREEN * float(model.K_bt.min()):
        growth = flutter_growth(model, result)
        if growth is not None and growth > _FLUTTER_DAMPING:
            message = result.message + _FLUTTER.format(growth)
            return dataclasses.replace(result, stable=None, message=message)
        if growth is not None and growth > _FLUTTER_TOL:
            message = result.message + _SLOW_FLUTTER.format(growth)
            return dataclasses.replace(result, stable=True, message=message)
    return _replaced(result, stable=True)


def unstable_modes(maps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (m,) and rotation fields (m, n_nodes, 3) [rad] of the negative directions of
    the condensed second variation, most negative first (eta = 0 at the clamped base); the
    lowest one alone when none is negative (a marginal equilibrium).

    Only those eigenpairs are computed, from the block-tridiagonal band (`_condensed_band`,
    `scipy.linalg.eig_banded`): O(n) work and memory where a dense eigensolver of the
    3 n x 3 n matrix took seconds on long rods."""
    n_neg = _second_variation_inertia(maps)
    k = max(int(n_neg), 1)
    w, V = eig_banded(_condensed_band(maps), lower=True, select="i", select_range=(0, k - 1))
    neg = np.flatnonzero(w < 0.0) if w[0] < 0.0 else np.array([0])
    n_nodes = maps.shape[0] + 1
    modes = np.zeros((neg.size, n_nodes, 3))
    for i, j in enumerate(neg):
        modes[i, 1:] = V[:, j].reshape(-1, 3)
    return w[neg], modes


# ---------------------------------------------------------------------------------------------
# Onto the stable branch

Solve = Callable[[StaticLoads, StaticResult | None], StaticResult]


def _mode_imperfection(
    model: RodModel,
    result: StaticResult,
    found: tuple[np.ndarray, np.ndarray],
    eps: float,
) -> tuple[np.ndarray, np.ndarray]:
    """A small dead tip force (3,) [N] and moment (3,) [N m] that push along the most unstable
    mode of found = `unstable_modes(maps)`. Among equally unstable modes (an axisymmetric rod)
    the one whose tip moves most along the base frame's x axis is taken, so the choice is
    reproducible."""
    w, modes = found
    near = np.abs(w - w[0]) <= 1e-6 * max(abs(w[0]), np.finfo(float).tiny)
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
    equilibrium at t = 1, or None when the path is lost or the solve's time budget ran out."""
    cur = start if start is not None else solve(path(0.0), None)
    if not cur.success:
        return None
    t, dt = 0.0, _RAMP_STEP
    while t < 1.0:
        if budget_expired():
            return None
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
    maps = stability_maps(model, result, grouped=True)
    if maps is None:
        return dataclasses.replace(result, stable=None)
    n_neg = _second_variation_inertia(maps)
    if n_neg == 0:
        return _flutter_checked(model, inp, result)
    # The unstable modes live on the step grid.
    maps = stability_maps(model, result)
    if maps is None:
        return dataclasses.replace(result, stable=None)
    n_neg = _second_variation_inertia(maps)
    if n_neg == 0:
        return _flutter_checked(model, inp, result)
    unstable = dataclasses.replace(
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
    # The search below is budgeted like the solve: its solves stop at the deadline, and it
    # asks before every dense eigenvalue problem (`_diverges`) and every ramp step.
    out_of_time = dataclasses.replace(
        unstable,
        message=(
            f"the equilibrium found is unstable ({max(n_neg, 1)} negative direction(s) of the "
            f"energy's second variation); the search for a stable one stopped: {BUDGET_MESSAGE}"
        ),
    )
    if budget_expired():
        return out_of_time
    divergence = _divergence_maps(model, result) if maps.shape[0] > _DENSE_EIG_STEPS else maps
    if _dead_moments(inp) and divergence is not None and not _diverges(divergence):
        # World-fixed moments are not conservative: the symmetric part is only a sufficient
        # test there, and the whole tangent stiffness shows no static instability.
        return dataclasses.replace(result, stable=None, message=result.message + _UNDECIDED)
    L = model.total_length
    zero = _zero_inputs(model, inp)
    modes = unstable_modes(maps)
    for eps in _IMPERFECTIONS:
        if budget_expired():
            return out_of_time
        force, moment = _mode_imperfection(model, result, modes, eps)

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
        if found is None or not found.success or budget_expired():
            continue
        # Only a strict minimum is taken (`is_stable` True; its dense divergence test could
        # only tell "not decided" from "unstable", which are both a miss here).
        grouped = stability_maps(model, found, grouped=True)
        if grouped is not None and _second_variation_inertia(grouped) == 0:
            message = (
                f"{found.message}; the equilibrium first found was unstable "
                f"({max(n_neg, 1)} negative direction(s) of the energy's second variation): "
                "this is the stable one reached by loading with a small imperfection along "
                "the unstable mode and removing it"
            )
            return dataclasses.replace(found, message=message, stable=True)
    return out_of_time if budget_expired() else unstable
