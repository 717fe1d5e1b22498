"""Kernels of the stability test (`_stability`, module doc there): the checkpoints of the
condensed test and the transfer maps of the Jacobi equation across them. Apart from
`_stability` so that the shooting solve can build the maps in its last Newton evaluation
(`_shooting`) without importing the test's search for a stable branch."""

from __future__ import annotations

import numpy as np
from numba import njit

from softrod.rods._static_kernels import _evaluate_interval

__all__: list[str] = []

#: Largest phase omega * length [rad] of the Jacobi equation over one interval of the default
#: test (`_checkpoints`): 1.0 is a third of the pi at which a conjugate point can first appear.
_GROUP_ANGLE = 1.0


@njit(cache=True)
def _checkpoints(Y, tau, geo, ld, nodes_out):
    """Nodes (the first m entries of nodes_out (n_nodes,)) at which the condensed test breaks
    the rod; returns m. Consecutive checkpoints are at most `_GROUP_ANGLE` / omega apart, with
    omega [1/m] the largest local wavenumber of the Jacobi equation over the interval:
    sqrt((|N| + sum |tau|) / EI) + |M| / EI (EI the smallest bending or torsion stiffness;
    a clamped-free column buckles at omega L = pi / 2, a shaft under an axial moment at
    |M| L / EI ~ pi). An interval that short holds no conjugate point, the condition of
    Morse's theorem, and the test then reads as few transfer maps as that allows."""
    node_s, step_seg, seg_par, _, _ = geo
    N_end, q_step, tau_scale = ld[0], ld[1], ld[3]
    n_nodes = Y.shape[0]
    stiff = np.inf
    for j in range(seg_par.shape[0]):
        for a in range(3):
            stiff = min(stiff, seg_par[j, a])
    pull = 0.0
    for i in range(tau.shape[0]):
        # Friction raises a tension along the tendon by up to its largest profile factor.
        top = 1.0
        for k in range(tau_scale.shape[0]):
            top = max(top, tau_scale[k, i])
        pull += abs(tau[i]) * top
    m = 0
    nodes_out[m] = 0
    m += 1
    start = 0
    omega = 0.0
    for k in range(n_nodes - 1):
        # The wavenumber over step k: its distal force at both ends and the moment at both nodes.
        h = node_s[k + 1] - node_s[k]
        n_a = 0.0
        n_b = 0.0
        mom = 0.0
        for a in range(3):
            n_b += N_end[k, a] * N_end[k, a]
            f = N_end[k, a] + q_step[k, a] * h
            n_a += f * f
        for a in range(3):
            mom = max(mom, abs(Y[k, 12 + a]), abs(Y[k + 1, 12 + a]))
        w = np.sqrt((np.sqrt(max(n_a, n_b)) + pull) / stiff) + np.sqrt(3.0) * mom / stiff
        omega = max(omega, w)
        if k + 1 == n_nodes - 1 or (node_s[k + 2] - node_s[start]) * omega > _GROUP_ANGLE:
            nodes_out[m] = k + 1
            m += 1
            start = k + 1
            omega = 0.0
    return m


@njit(cache=True)
def _interval_maps(Y, tau, geo, ld, nodes, maps_out, chain, X_out):
    """Transfer maps of (eta, p) from node nodes[j] to nodes[j + 1], maps_out (m - 1, 6, 6)
    for the m = nodes.shape[0] checkpoints (`_transfer_maps` with every node a checkpoint).
    Each interval starts from the node state Y[nodes[j]] (n_nodes, 15 + n_t). Returns m, or
    -1 on a failed integration.

    chain : False, the maps of an equilibrium whose states Y holds (Y is read only, X_out
    unused). True, the IVP itself from Y[0] (the base state with the new base moment): the
    checkpoints are those of the states Y holds before (`_checkpoints`, written into nodes
    (n_nodes,), maps_out (n_nodes - 1, 6, 6)); every interval continues from the end state of
    the one before, which it writes into Y and the strains into X_out (n_nodes, 6). The maps
    are then those the test reads from the stored states afterwards, the same numbers
    (`_shooting`: Newton's last evaluation), when the new states give the same checkpoints;
    else it returns 0 (the states are still the IVP's)."""
    n_nodes = Y.shape[0]
    n_t = tau.shape[0]
    ny = 15 + n_t
    n_cp = nodes.shape[0]
    if chain:
        n_cp = _checkpoints(Y, tau, geo, ld, nodes)
    z = np.empty(ny * 7)
    # The chained IVP stores its states where the next interval reads its start.
    Ys = Y if chain else np.empty((n_nodes, ny))
    Xs = X_out if chain else np.empty((n_nodes, 6))
    p0 = np.empty(3)
    R0 = np.empty((3, 3))
    M0 = np.empty(3)
    l0 = np.empty(n_t)
    raw = np.empty((6, 6))
    W = np.empty((6, 6))
    for j in range(n_cp - 1):
        k = nodes[j]
        for a in range(3):
            p0[a] = Y[k, a]
            M0[a] = Y[k, 12 + a]
            for c in range(3):
                R0[a, c] = Y[k, 3 + 3 * a + c]
        for i in range(n_t):
            l0[i] = Y[k, 15 + i]
        k1 = nodes[j + 1]
        # Non-literal flags (np.bool_, np.int64): the kernel compiles once for every caller.
        rot, n_tau = np.bool_(True), np.int64(0)
        if not _evaluate_interval(p0, R0, M0, l0, tau, rot, n_tau, geo, ld, k, k1, Ys, Xs, z):
            return -1
        # Directions 0-2 rotate the start frame by R0 e_d (world), 3-5 move M(s_k) by e_d:
        # read the end rotation as world eta = vee(dR R1^T) and the end moment change dM.
        for d in range(6):
            o = ny * (1 + d)
            for a in range(3):
                for c in range(3):
                    # (dR R1^T)[a, c] with R1 the end frame.
                    W[a, c] = (
                        z[o + 3 + 3 * a] * z[3 + 3 * c]
                        + z[o + 4 + 3 * a] * z[4 + 3 * c]
                        + z[o + 5 + 3 * a] * z[5 + 3 * c]
                    )
            raw[0, d] = 0.5 * (W[2, 1] - W[1, 2])
            raw[1, d] = 0.5 * (W[0, 2] - W[2, 0])
            raw[2, d] = 0.5 * (W[1, 0] - W[0, 1])
            for a in range(3):
                raw[3 + a, d] = z[o + 12 + a]
        # World-frame start rotations: the first three columns act on R0^T eta.
        for a in range(6):
            for c in range(3):
                W[a, c] = raw[a, 0] * R0[c, 0] + raw[a, 1] * R0[c, 1] + raw[a, 2] * R0[c, 2]
                W[a, 3 + c] = raw[a, 3 + c]
        # Symplectic momenta p = dM - eta x M / 2 at both ends: with S = [M / 2]x,
        # (eta, p)_1 = T(M1) W T(M0)^-1 (eta, p)_0 and T(M) = [[I, 0], [S, I]].
        s0 = 0.5 * M0[0], 0.5 * M0[1], 0.5 * M0[2]
        s1 = 0.5 * z[12], 0.5 * z[13], 0.5 * z[14]
        for a in range(6):
            # Right factor T(M0)^-1 = [[I, 0], [-S0, I]]: column c of the eta block gets
            # -sum_j W[a, 3 + j] S0[j, c].
            w3, w4, w5 = W[a, 3], W[a, 4], W[a, 5]
            W[a, 0] -= w4 * s0[2] - w5 * s0[1]
            W[a, 1] -= -w3 * s0[2] + w5 * s0[0]
            W[a, 2] -= w3 * s0[1] - w4 * s0[0]
        for c in range(6):
            # Left factor T(M1): the p rows get + S1 (eta rows).
            e0, e1, e2 = W[0, c], W[1, c], W[2, c]
            maps_out[j, 0, c] = e0
            maps_out[j, 1, c] = e1
            maps_out[j, 2, c] = e2
            maps_out[j, 3, c] = W[3, c] + (-s1[2] * e1 + s1[1] * e2)
            maps_out[j, 4, c] = W[4, c] + (s1[2] * e0 - s1[0] * e2)
            maps_out[j, 5, c] = W[5, c] + (-s1[1] * e0 + s1[0] * e1)
    if chain:
        # The maps are the test's only on the checkpoints the new states give.
        again = np.empty(n_nodes, dtype=np.int64)
        if _checkpoints(Y, tau, geo, ld, again) != n_cp:
            return 0
        for j in range(n_cp):
            if again[j] != nodes[j]:
                return 0
    return n_cp
