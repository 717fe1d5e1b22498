"""Warp kernels of `softrod.envs._batched` (imported only when MuJoCo Warp is installed).

No `from __future__ import annotations` here: Warp reads the kernel signatures' types at
definition time. Every kernel runs one thread per world unless its docstring says otherwise.
"""

# mypy: ignore-errors
# (Warp kernel signatures are calls such as wp.array2d(dtype=...), not static types.)

import warp as wp

#: Bound of every observation component (softrod.envs._base.OBS_LIMIT).
OBS_LIMIT = 1.0e3


@wp.func
def clean(x: float):
    # As the CPU envs' `_clean`: NaN -> 0, then clip to +-OBS_LIMIT.
    if wp.isnan(x):
        return 0.0
    return wp.clamp(x, -OBS_LIMIT, OBS_LIMIT)


# The episode clock of every world (one thread): all worlds share the horizon.
@wp.kernel
def tick(clock: wp.array(dtype=wp.int32)):
    clock[0] = clock[0] + 1


# Curvature-rate action -> clipped curvature command -> tendon-length controls (Reach family).
@wp.kernel
def curvature_action(
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


# Robot-object contacts per world (one thread per contact slot): MuJoCo's contact list.
@wp.kernel
def count_contacts(
    nacon: wp.array(dtype=int),
    contact_geom: wp.array(dtype=wp.vec2i),
    contact_world: wp.array(dtype=int),
    contact_type: wp.array(dtype=int),
    geom_class: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
):
    c = wp.tid()
    if c >= nacon[0]:
        return
    if (contact_type[c] & 1) == 0:
        return
    g = contact_geom[c]
    if g[0] < 0 or g[1] < 0:
        return
    a = geom_class[g[0]]
    b = geom_class[g[1]]
    # Class 1: a robot geom, class 2: an object geom whose contacts with the robot are counted.
    if (a == 1 and b == 2) or (a == 2 and b == 1):
        wp.atomic_add(count, contact_world[c], 1)


# Moving targets (TrackTrajectory): start point + the path's offset at this step.
@wp.kernel
def move_target(
    clock: wp.array(dtype=wp.int32),
    hold_steps: int,
    path: wp.array3d(dtype=wp.float32),
    path_id: wp.array(dtype=wp.int32),
    center: wp.array(dtype=wp.vec3),
    target_mocap: int,
    mocap_pos: wp.array2d(dtype=wp.vec3),
):
    w = wp.tid()
    i = wp.clamp(clock[0] - hold_steps, 0, path.shape[1] - 1)
    p = path_id[w]
    mocap_pos[w, target_mocap] = center[w] + wp.vec3(path[p, i, 0], path[p, i, 1], path[p, i, 2])


# Observation, reward and success of the Reach family (Reach, ReachObstacle, PlanarReach,
# TrackTrajectory): the layouts of their `_evaluate`, selected by the flags.
@wp.kernel
def observe_reach(
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
    planar: int,
    error_gain: float,
    reach_gain: float,
    distance_weight: float,
    use_bounds: int,
    z_low: float,
    z_high: float,
    precision_weight: float,
    precision_scale: float,
    contacts: wp.array(dtype=wp.int32),
    contact_penalty: float,
    success_radius: float,
    clock: wp.array(dtype=wp.int32),
    track: int,
    hold_steps: int,
    episode_steps: int,
    path_vel: wp.array3d(dtype=wp.float32),
    path_id: wp.array(dtype=wp.int32),
    error_sum: wp.array(dtype=wp.float32),
    obs: wp.array2d(dtype=wp.float32),
    reward: wp.array(dtype=wp.float32),
    distance: wp.array(dtype=wp.float32),
    success: wp.array(dtype=wp.int32),
):
    w = wp.tid()
    # Components kept: x, y, z, or x, z in the planar task.
    n_c = 3
    if planar != 0:
        n_c = 2
    o = int(0)  # noqa: UP018 (a Warp variable, not a constant)
    for s in range(end_body.shape[0]):
        b = end_body[s]
        p = xpos[w, b] + xmat[w, b] * end_local[s]
        for i in range(3):
            if planar == 0 or i != 1:
                obs[w, o] = clean(p[i])
                o += 1
    tip = site_xpos[w, tip_site]
    # Point velocity of the tip site, as mj_objectVelocity: v + omega x (p - subtree com).
    c = cvel[w, tip_body]
    omega = wp.vec3(c[0], c[1], c[2])
    v = wp.vec3(c[3], c[4], c[5]) + wp.cross(omega, tip - subtree_com[w, tip_root])
    tgt = mocap_pos[w, target_mocap]
    err = tgt - tip
    k = int(0)  # noqa: UP018 (a Warp variable, not a constant)
    for i in range(3):
        if planar == 0 or i != 1:
            obs[w, o + k] = clean(v[i])
            obs[w, o + n_c + k] = clean(tgt[i])
            obs[w, o + 2 * n_c + k] = clean(err[i])
            k += 1
    o = o + 3 * n_c
    for j in range(kappa.shape[1]):
        obs[w, o + j] = clean(kappa[w, j] / kappa_max)
    o = o + kappa.shape[1]
    if error_gain > 0.0:
        for i in range(3):
            obs[w, o + i] = wp.clamp(error_gain * err[i], -1.0, 1.0)
        o = o + 3
    d = wp.length(err)
    r = wp.exp(-reach_gain * d * d) - distance_weight * d
    if use_bounds != 0:
        if tip[2] < z_low or tip[2] > z_high:
            r = r - 0.5
    if precision_weight > 0.0:
        r = r + precision_weight * wp.exp(-d / precision_scale)
    ok = d <= success_radius
    if contact_penalty != 0.0:
        if contacts[w] > 0:
            r = r + contact_penalty
            ok = False
    if track != 0:
        # Target velocity, the tracking error's running mean, success at the last step.
        step = clock[0]
        moving = step >= hold_steps
        i_path = wp.clamp(step - hold_steps, 0, path_vel.shape[1] - 1)
        for i in range(3):
            vel = float(0.0)  # noqa: UP018 (a Warp variable, not a constant)
            if moving:
                vel = path_vel[path_id[w], i_path, i]
            obs[w, o + i] = clean(vel)
        n_err = int(1)  # noqa: UP018 (a Warp variable, not a constant)
        if moving:
            error_sum[w] = error_sum[w] + d
            n_err = step - hold_steps + 1
        ok = step >= episode_steps and error_sum[w] / float(n_err) <= success_radius
    reward[w] = r
    distance[w] = d
    if ok:
        success[w] = 1
    else:
        success[w] = 0


# Field direction from the action (MagneticNavigate): B = strength a / |a|, zero when a ~ 0.
@wp.kernel
def field_action(
    action: wp.array2d(dtype=wp.float32),
    strength: float,
    field: wp.array(dtype=wp.vec3),
):
    w = wp.tid()
    a = wp.vec3(
        wp.clamp(action[w, 0], -1.0, 1.0),
        wp.clamp(action[w, 1], -1.0, 1.0),
        wp.clamp(action[w, 2], -1.0, 1.0),
    )
    n = wp.length(a)
    if n > 1.0e-9:
        field[w] = strength * a / n
    else:
        field[w] = wp.vec3(0.0, 0.0, 0.0)


# Torques m x B on every dipole at the current orientation (one thread per world and dipole);
# a pure torque on a body, as MagneticField.apply's mj_applyFT with a zero gradient.
@wp.kernel
def dipole_torques(
    xmat: wp.array2d(dtype=wp.mat33),
    dipole_body: wp.array(dtype=wp.int32),
    dipole_moment: wp.array(dtype=wp.vec3),
    field: wp.array(dtype=wp.vec3),
    xfrc_applied: wp.array2d(dtype=wp.spatial_vector),
):
    w, i = wp.tid()
    b = dipole_body[i]
    tau = wp.cross(xmat[w, b] * dipole_moment[i], field[w])
    xfrc_applied[w, b] = wp.spatial_vector(0.0, 0.0, 0.0, tau[0], tau[1], tau[2])


# Observation, reward and success of MagneticNavigate.
@wp.kernel
def observe_magnetic(
    site_xpos: wp.array2d(dtype=wp.vec3),
    site_xmat: wp.array2d(dtype=wp.mat33),
    tip_site: int,
    mocap_pos: wp.array2d(dtype=wp.vec3),
    target_mocap: int,
    field: wp.array(dtype=wp.vec3),
    strength: float,
    distance_weight: float,
    success_radius: float,
    obs: wp.array2d(dtype=wp.float32),
    reward: wp.array(dtype=wp.float32),
    distance: wp.array(dtype=wp.float32),
    success: wp.array(dtype=wp.int32),
):
    w = wp.tid()
    tip = site_xpos[w, tip_site]
    rot = site_xmat[w, tip_site]
    tgt = mocap_pos[w, target_mocap]
    err = tgt - tip
    b = field[w] / strength
    for i in range(3):
        obs[w, i] = clean(tip[i])
        obs[w, 3 + i] = clean(rot[i, 2])
        obs[w, 6 + i] = clean(tgt[i])
        obs[w, 9 + i] = clean(err[i])
        obs[w, 12 + i] = clean(b[i])
    d = wp.length(err)
    reward[w] = -distance_weight * d + wp.exp(-d / 0.01)
    distance[w] = d
    if d <= success_radius:
        success[w] = 1
    else:
        success[w] = 0


# Uniform random actions in [-1, 1] for throughput measurements (seeded, on the device).
@wp.kernel
def random_actions(seed: int, action: wp.array2d(dtype=wp.float32)):
    w, k = wp.tid()
    state = wp.rand_init(seed, w * action.shape[1] + k)
    action[w, k] = 2.0 * wp.randf(state) - 1.0


#: MuJoCo's bound of a sane state component (mjMAXVAL): beyond it MuJoCo C warns and resets.
MAX_STATE = 1.0e10


@wp.func
def bad(x: float):
    return wp.isnan(x) or wp.isinf(x) or wp.abs(x) > MAX_STATE


# A world is unstable when its state, reward or distance is non-finite (or its state beyond
# MAX_STATE): the batched counterpart of the CPU envs' bad-acceleration `unstable` flag.
@wp.kernel
def check_unstable(
    qpos: wp.array2d(dtype=wp.float32),
    qvel: wp.array2d(dtype=wp.float32),
    reward: wp.array(dtype=wp.float32),
    distance: wp.array(dtype=wp.float32),
    unstable: wp.array(dtype=wp.int32),
):
    w = wp.tid()
    flag = wp.int32(0)
    if bad(reward[w]) or bad(distance[w]):
        flag = wp.int32(1)
    for i in range(qpos.shape[1]):
        if bad(qpos[w, i]):
            flag = wp.int32(1)
    for i in range(qvel.shape[1]):
        if bad(qvel[w, i]):
            flag = wp.int32(1)
    unstable[w] = flag


# A world overflowed when MuJoCo Warp's per-world overflow bits (`Data.overflow`, set by the
# step's collision and constraint stages, sticky until reset) show a capacity bit of `mask`, or
# its constraint rows of the last forward pass exceed `njmax` (rows beyond it were dropped).
# Those bits are then cleared, so the flag is this step's; `count` (1,) adds the world-steps.
@wp.kernel
def check_overflow(
    nefc: wp.array(dtype=wp.int32),
    njmax: int,
    mask: int,
    flags: wp.array(dtype=wp.int32),
    overflowed: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
):
    w = wp.tid()
    hit = wp.int32(0)
    if (flags[w] & mask) != 0 or nefc[w] > njmax:
        hit = wp.int32(1)
        wp.atomic_add(count, 0, 1)
    flags[w] = flags[w] & ~mask
    overflowed[w] = hit
