"""Warp kernels of `softrod.envs.batched_reach` (imported only when MuJoCo Warp is installed).

No `from __future__ import annotations` here: Warp reads the kernel signatures' types at
definition time.
"""

# mypy: ignore-errors
# (Warp kernel signatures are calls such as wp.array2d(dtype=...), not static types.)

import warp as wp


# Curvature-rate action -> clipped curvature command -> tendon-length controls.
@wp.kernel
def apply_action(
    action: wp.array2d(dtype=wp.float32),
    kappa_rate: float,
    kappa_max: float,
    length_map: wp.array2d(dtype=wp.float32),
    rest: wp.array(dtype=wp.float32),
    act_ids: wp.array(dtype=wp.int32),
    kappa: wp.array2d(dtype=wp.float32),
    ctrl: wp.array2d(dtype=wp.float32),
):
    w = wp.tid()
    n_cmd = kappa.shape[1]
    for k in range(n_cmd):
        a = wp.clamp(action[w, k], -1.0, 1.0)
        kappa[w, k] = wp.clamp(kappa[w, k] + kappa_rate * a, -kappa_max, kappa_max)
    for j in range(act_ids.shape[0]):
        ell = rest[j]
        for k in range(n_cmd):
            ell += length_map[j, k] * kappa[w, k]
        ctrl[w, act_ids[j]] = ell


# Observation (Reach-v0's 34 components), reward terms and distance of every world.
@wp.kernel
def observe(
    xpos: wp.array2d(dtype=wp.vec3),
    xmat: wp.array2d(dtype=wp.mat33),
    site_xpos: wp.array2d(dtype=wp.vec3),
    cvel: wp.array2d(dtype=wp.spatial_vector),
    subtree_com: wp.array2d(dtype=wp.vec3),
    end_body: wp.array(dtype=wp.int32),
    end_local: wp.array(dtype=wp.vec3),
    tip_site: int,
    tip_body: int,
    tip_root: int,
    mocap_pos: wp.array2d(dtype=wp.vec3),
    target_mocap: int,
    kappa: wp.array2d(dtype=wp.float32),
    kappa_max: float,
    distance_weight: float,
    z_low: float,
    z_high: float,
    obs: wp.array2d(dtype=wp.float32),
    reward: wp.array(dtype=wp.float32),
    distance: wp.array(dtype=wp.float32),
):
    w = wp.tid()
    for s in range(end_body.shape[0]):
        b = end_body[s]
        p = xpos[w, b] + xmat[w, b] * end_local[s]
        for i in range(3):
            obs[w, 3 * s + i] = p[i]
    o = 3 * end_body.shape[0]
    tip = site_xpos[w, tip_site]
    # Point velocity of the tip site, as mj_objectVelocity: v + omega x (p - subtree com).
    c = cvel[w, tip_body]
    omega = wp.vec3(c[0], c[1], c[2])
    v = wp.vec3(c[3], c[4], c[5]) + wp.cross(omega, tip - subtree_com[w, tip_root])
    tgt = mocap_pos[w, target_mocap]
    err = tgt - tip
    for i in range(3):
        obs[w, o + i] = v[i]
        obs[w, o + 3 + i] = tgt[i]
        obs[w, o + 6 + i] = err[i]
    for k in range(kappa.shape[1]):
        obs[w, o + 9 + k] = kappa[w, k] / kappa_max
    d = wp.length(err)
    r = wp.exp(-50.0 * d * d) - distance_weight * d
    if tip[2] < z_low or tip[2] > z_high:
        r = r - 0.5
    reward[w] = r
    distance[w] = d


# Uniform random actions in [-1, 1] for throughput measurements (seeded, on the device).
@wp.kernel
def random_actions(seed: int, action: wp.array2d(dtype=wp.float32)):
    w, k = wp.tid()
    state = wp.rand_init(seed, w * action.shape[1] + k)
    action[w, k] = 2.0 * wp.randf(state) - 1.0
