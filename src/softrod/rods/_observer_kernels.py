"""Numba kernels of the observer's coarse predictor grid (issue 19 item 4).

The observer's updates may run on a subset of the model's nodes (`ObserverGains.
predictor_stride`): every stride-th node, plus every node where something changes (a
segment boundary, a point force or moment, a change of line load, tension profile or
dipole). Between kept nodes the loads are then exactly those of the full grid, so the
coarse problem is the same boundary-value problem integrated with longer RK4 steps; the
observer's final residual and shape stay on the full grid.
"""

from __future__ import annotations

from numba import njit

#: A jump of the distal force at a node below this fraction of the largest distal force is
#: round-off of `_static_kernels._distal_loads`, not a point force.
_JUMP_RTOL = 1e-12


@njit(cache=True)
def _coarse_keep(stride, geo, ld, keep_out):
    """The kept nodes of the predictor grid: writes their indices (ascending, first 0 and last
    n_nodes - 1) into keep_out (n_nodes,) and returns their number. geo, ld as
    `_static_kernels._integrate`; stride >= 1 (1 keeps every node)."""
    node_s, step_seg = geo[0], geo[1]
    N_end, q_step, node_moment, tau_scale, mag = ld
    node_dip = mag[1]
    n_steps = step_seg.shape[0]
    big = 0.0
    for k in range(n_steps):
        for a in range(3):
            big = max(big, abs(N_end[k, a]))
    tol = _JUMP_RTOL * (1.0 + big)
    n_keep = 0
    for k in range(n_steps + 1):
        keep = k == 0 or k == n_steps or k % stride == 0
        if not keep:
            # Something changes at node k: keep it so that the coarse loads are exact.
            keep = step_seg[k] != step_seg[k - 1]
            h = node_s[k + 1] - node_s[k]
            for a in range(3):
                keep = keep or node_moment[k, a] != 0.0 or node_dip[k, a] != 0.0
                keep = keep or q_step[k, a] != q_step[k - 1, a]
                keep = keep or abs(N_end[k - 1, a] - N_end[k, a] - q_step[k, a] * h) > tol
            for j in range(tau_scale.shape[1]):
                keep = keep or tau_scale[k, j] != tau_scale[k - 1, j]
        if keep:
            keep_out[n_keep] = k
            n_keep += 1
    return n_keep


@njit(cache=True)
def _coarse_fill(keep, geo, ld, node_s_out, step_seg_out, N_end_out, q_out, nm_out, ts_out, nd_out):
    """The predictor grid's geometry and loads on the kept nodes keep (n_keep,): node_s_out
    (n_keep,) [m], step_seg_out (n_keep - 1,), N_end_out and q_out (n_keep - 1, 3) [N, N/m],
    nm_out and nd_out (n_keep, 3) [N m, A m^2], ts_out (n_keep - 1, n_t) [-] (the layouts of
    `_static_kernels._integrate`'s geo and ld)."""
    node_s, step_seg = geo[0], geo[1]
    N_end, q_step, node_moment, tau_scale, mag = ld
    node_dip = mag[1]
    n_keep = keep.shape[0]
    for j in range(n_keep):
        k = keep[j]
        node_s_out[j] = node_s[k]
        for a in range(3):
            nm_out[j, a] = node_moment[k, a]
            nd_out[j, a] = node_dip[k, a]
        if j + 1 < n_keep:
            # The coarse step keep[j]..keep[j + 1]: the fine steps inside share their loads,
            # and its distal force at the end is that of the last fine step inside.
            step_seg_out[j] = step_seg[k]
            e = keep[j + 1] - 1
            for a in range(3):
                q_out[j, a] = q_step[k, a]
                N_end_out[j, a] = N_end[e, a]
            for i in range(tau_scale.shape[1]):
                ts_out[j, i] = tau_scale[k, i]
