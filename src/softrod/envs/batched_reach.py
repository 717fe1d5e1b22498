"""`BatchedReach`: thousands of `Reach-v0` worlds stepped together on a GPU with MuJoCo Warp.

The same robot, scene, control and reward as `softrod/Reach-v0` (module `reach_v0`): the host
builds one `ReachEnv` to get the MuJoCo model and its bookkeeping (rest tendon lengths, the
curvature-to-length map, segment-end points), `mujoco_warp.put_model` copies the model to the
device, and every world keeps its own commanded curvatures and target. One `step` is, for all
worlds at once: curvature-rate action -> tendon-length commands (a Warp kernel), 5 physics
substeps of 10 ms (`mujoco_warp.step`), a forward pass, then observation, reward and distance
(a Warp kernel). On CUDA the whole step is captured once as a CUDA graph and replayed.

Episodes are synchronous: every world starts at `reset` and is truncated after `episode_steps`
steps, when the caller resets (the usual fixed-horizon batched-simulation contract). Arrays
stay on the device (`warp.array`; `warp.to_torch` shares them without a copy).

Optional: needs the `warp` extra (`pip install softrod[warp]`, i.e. `mujoco-warp`, `warp-lang`).
Measured with `softrod bench warp-reach` (docs/learning.md).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from softrod.envs.reach_v0 import TARGET_HIGH, TARGET_LOW, Z_BAND, ReachEnv

__all__ = ["BatchedReach", "bench_batched_reach", "compare_with_reach_v0", "cross_check_seeds"]


def _import_warp() -> tuple[Any, Any]:
    try:
        import warp as wp

        # Keep stdout to the benchmark's `case.metric: value` lines: no banner, no compile log
        # (set before mujoco_warp is imported, which initializes Warp).
        wp.config.log_level = wp.LOG_WARNING
        import mujoco_warp as mjw
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ImportError(
            "BatchedReach needs MuJoCo Warp: pip install 'softrod[warp]' "
            f"(mujoco-warp, warp-lang); import failed: {exc}"
        ) from None
    return wp, mjw


class BatchedReach:
    """`n_worlds` copies of `softrod/Reach-v0` on one device (see module).

    Parameters
    ----------
    n_worlds : number of worlds (>= 1).
    device : Warp device ("cuda:0", "cpu"; None: Warp's default, the GPU when there is one).
    episode_steps, distance_weight, kappa_max, kappa_rate, links, tendon_stiffness : as
        `Reach-v0` (the defaults are Reach-v0's).
    nconmax, njmax : MuJoCo Warp contact / constraint capacity per world (None: its default).

    Arrays (device, float32): `obs` (n_worlds, 34), `reward` (n_worlds,), `distance`
    (n_worlds,) [m], `target` (n_worlds,) of vec3 [m] (a view of the target markers' mocap
    positions), `action` (n_worlds, 10) in [-1, 1]. Task settings (`episode_steps`,
    `kappa_rate`, ...) are those of `host`, the `ReachEnv` the model comes from.
    """

    def __init__(
        self,
        n_worlds: int,
        *,
        device: str | None = None,
        episode_steps: int = 50,
        distance_weight: float = 10.0,
        kappa_max: float = 12.0,
        kappa_rate: float = 1.5,
        links: int = 10,
        tendon_stiffness: float = 2.0e4,
        nconmax: int | None = None,
        njmax: int | None = None,
    ) -> None:
        if n_worlds < 1:
            raise ValueError(f"n_worlds must be >= 1, got {n_worlds}")
        if episode_steps < 1:
            raise ValueError(f"episode_steps must be >= 1, got {episode_steps}")
        wp, mjw = _import_warp()
        self._wp, self._mjw = wp, mjw
        wp.init()
        self.device = wp.get_device(device)
        # One host env gives the model and every index the kernels need.
        host = ReachEnv(
            episode_steps=episode_steps,
            links=links,
            tendon_stiffness=tendon_stiffness,
            kappa_max=kappa_max,
            kappa_rate=kappa_rate,
            distance_weight=distance_weight,
        )
        host.reset(seed=0)
        self.host = host
        self.n_worlds = int(n_worlds)
        m = host.model
        n_obs = int(np.prod(host.observation_space.shape or (0,)))
        self._tip_body = int(m.site_bodyid[host._tip_site])
        self._tip_root = int(m.body_rootid[self._tip_body])
        self._rand_calls = 0
        from softrod.envs import _warp_kernels

        self._k = _warp_kernels
        with wp.ScopedDevice(self.device):
            self.model = mjw.put_model(m)
            self.data = mjw.put_data(
                m, host.data, nworld=self.n_worlds, nconmax=nconmax, njmax=njmax
            )
            n, f32 = self.n_worlds, wp.float32
            self.kappa = wp.zeros((n, host.n_commands), dtype=f32)
            self.action = wp.zeros((n, host.n_commands), dtype=f32)
            self.obs = wp.zeros((n, n_obs), dtype=f32)
            self.reward = wp.zeros(n, dtype=f32)
            self.distance = wp.zeros(n, dtype=f32)
            self._length_map = wp.array(host.length_map.astype(np.float32), dtype=f32)
            self._rest = wp.array(host.rest_lengths.astype(np.float32), dtype=f32)
            self._act_ids = wp.array(host._act_ids.astype(np.int32), dtype=wp.int32)
            self._end_body = wp.array(host._end_body.astype(np.int32), dtype=wp.int32)
            self._end_local = wp.array(host._end_local.astype(np.float32), dtype=wp.vec3)
        self._step_count = 0
        self._graph: Any = None

    @property
    def episode_steps(self) -> int:
        return int(self.host.episode_steps)

    @property
    def n_substeps(self) -> int:
        return int(self.host.n_substeps)

    @property
    def target(self) -> Any:
        """Targets (n_worlds,) of vec3 [m]: the target markers' mocap positions (a view)."""
        return self.data.mocap_pos[:, int(self.host._target_mocap)]

    # -- episode ------------------------------------------------------------------------------

    def reset(self, rng: np.random.Generator | int) -> Any:
        """Reset every world to rest with a new target drawn from `rng` (a Generator, or a seed
        for one; uniform in Reach-v0's box); returns `obs` (n_worlds, 34)."""
        wp, mjw = self._wp, self._mjw
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(rng)
        m, n = self.host.model, self.n_worlds
        targets = rng.uniform(TARGET_LOW, TARGET_HIGH, size=(n, 3))
        # Mocap positions as the model places them, with each world's target marker moved.
        mocap = np.zeros((n, m.nmocap, 3), dtype=np.float32)
        for b in np.flatnonzero(m.body_mocapid >= 0):
            mocap[:, m.body_mocapid[b]] = m.body_pos[b]
        mocap[:, self.host._target_mocap] = targets
        ctrl = np.zeros((n, m.nu), dtype=np.float32)
        ctrl[:, self.host._act_ids] = self.host.rest_lengths
        with wp.ScopedDevice(self.device):
            mjw.reset_data(self.model, self.data)
            self.kappa.zero_()
            self.data.ctrl.assign(ctrl)
            self.data.mocap_pos.assign(mocap)
            mjw.forward(self.model, self.data)
            self._observe()
        self._step_count = 0
        return self.obs

    def step(self, action: Any = None) -> tuple[Any, Any, Any, bool]:
        """Advance every world one control step (0.05 s).

        action : (n_worlds, 10) in [-1, 1] (numpy or a Warp array); None reuses `self.action`.
        Returns (obs, reward, distance, truncated); truncated is True for all worlds after
        `episode_steps` steps (then call `reset`).
        """
        wp = self._wp
        if action is not None:
            a = (
                action
                if isinstance(action, wp.array)
                else wp.array(
                    np.asarray(action, dtype=np.float32), dtype=wp.float32, device=self.device
                )
            )
            if tuple(a.shape) != tuple(self.action.shape):
                raise ValueError(f"action must have shape {self.action.shape}, got {a.shape}")
            wp.copy(self.action, a)
        with wp.ScopedDevice(self.device):
            if self._graph is not None:
                wp.capture_launch(self._graph)
            else:
                # The first step runs (and compiles) every kernel; on CUDA the step is then
                # captured once as a graph (recorded, not run), and later steps replay it.
                self._step_body()
                if self.device.is_cuda:
                    with wp.ScopedCapture() as cap:
                        self._step_body()
                    self._graph = cap.graph
        self._step_count += 1
        return self.obs, self.reward, self.distance, self._step_count >= self.episode_steps

    def random_actions(self) -> None:
        """Fill `self.action` with seeded uniform actions on the device (for benchmarks)."""
        self._wp.launch(
            self._k.random_actions,
            dim=self.action.shape,
            inputs=[self._rand_calls],
            outputs=[self.action],
            device=self.device,
        )
        self._rand_calls += 1

    def overflow(self) -> bool:
        """True when a world ran out of contact or constraint capacity (results unreliable)."""
        flags = getattr(self.data, "overflow", None)
        return bool(flags is not None and np.any(flags.numpy() != 0))

    # -- internals ----------------------------------------------------------------------------

    def _step_body(self) -> None:
        wp, mjw, host = self._wp, self._mjw, self.host
        wp.launch(
            self._k.apply_action,
            dim=self.n_worlds,
            inputs=[
                self.action,
                host.kappa_rate,
                host.kappa_max,
                self._length_map,
                self._rest,
                self._act_ids,
            ],
            outputs=[self.kappa, self.data.ctrl],
        )
        for _ in range(self.n_substeps):
            mjw.step(self.model, self.data)
        # As Reach-v0: observe the state after the last integration, not before it.
        mjw.forward(self.model, self.data)
        self._observe()

    def _observe(self) -> None:
        wp, d, host = self._wp, self.data, self.host
        wp.launch(
            self._k.observe,
            dim=self.n_worlds,
            inputs=[
                d.xpos,
                d.xmat,
                d.site_xpos,
                d.cvel,
                d.subtree_com,
                self._end_body,
                self._end_local,
                int(host._tip_site),
                self._tip_body,
                self._tip_root,
                d.mocap_pos,
                int(host._target_mocap),
                self.kappa,
                host.kappa_max,
                host.distance_weight,
                float(Z_BAND[0]),
                float(Z_BAND[1]),
            ],
            outputs=[self.obs, self.reward, self.distance],
        )


def compare_with_reach_v0(
    n_worlds: int = 3,
    *,
    steps: int = 20,
    device: str | None = None,
    seed: int = 0,
    action_seed: int | None = None,
) -> dict[str, float]:
    """Cross-model check: `n_worlds` batched worlds against as many `Reach-v0` (MuJoCo C,
    float64) with the same targets (drawn with `seed`) and uniform random actions (drawn with
    `action_seed`, default seed + 1) for `steps` control steps.

    Returns the largest absolute differences: `reset_obs_error` (observation after reset),
    `tip_error_m` (target - tip, every step and world) [m], `reward_error` (per step), and
    `truncated` / `overflow` (1.0 when the batch reported them within the steps).
    """
    import mujoco

    batch = BatchedReach(n_worlds, device=device)
    obs0 = batch.reset(np.random.default_rng(seed)).numpy()
    targets = batch.target.numpy().astype(float)
    envs, reset_err = [], 0.0
    for i in range(n_worlds):
        env = ReachEnv()
        env.reset(seed=0)
        env._set_target(targets[i])
        mujoco.mj_forward(env.model, env.data)
        reset_err = max(
            reset_err, float(np.abs(env._observation(env.tip_position()) - obs0[i]).max())
        )
        envs.append(env)
    a_seed = seed + 1 if action_seed is None else action_seed
    actions = np.random.default_rng(a_seed).uniform(-1, 1, (steps, n_worlds, 10))
    tip_err = reward_err = 0.0
    trunc = False
    for k in range(steps):
        obs, reward, _, trunc = batch.step(actions[k].astype(np.float32))
        obs, reward = obs.numpy(), reward.numpy()
        for i, env in enumerate(envs):
            o, r, _, _, _ = env.step(actions[k, i].astype(np.float32))
            tip_err = max(tip_err, float(np.abs(obs[i, 21:24] - o[21:24]).max()))
            reward_err = max(reward_err, abs(float(reward[i]) - r))
    return {
        "reset_obs_error": reset_err,
        "tip_error_m": tip_err,
        "reward_error": reward_err,
        "truncated": float(trunc),
        "overflow": float(batch.overflow()),
    }


def cross_check_seeds(n_seeds: int, *, device: str | None = None) -> dict[str, float]:
    """`compare_with_reach_v0` for seeds 0..n_seeds-1: median and max of each error [as
    there], and `overflow` (1.0 when any run overflowed)."""
    runs = [compare_with_reach_v0(device=device, seed=s) for s in range(n_seeds)]
    out: dict[str, float] = {}
    for key in ("reset_obs_error", "tip_error_m", "reward_error"):
        vals = [r[key] for r in runs]
        out[f"{key}_median"] = float(np.median(vals))
        out[f"{key}_max"] = float(np.max(vals))
    out["overflow"] = float(max(r["overflow"] for r in runs))
    return out


def bench_batched_reach(
    n_worlds: int, *, steps: int = 200, device: str | None = None, seed: int = 0
) -> dict[str, float]:
    """Throughput of `BatchedReach` with random actions: env steps/s summed over worlds.

    Returns `steps_per_s` (world-steps per second), `physics_steps_per_s` (x5 substeps),
    `ms_per_step` (one batched control step), `setup_s` (model upload, kernel compilation
    and graph capture), `mean_distance_m` (after the last step, a sanity check) and `overflow`
    (1 when a world ran out of contact capacity).
    """
    wp = _import_warp()[0]
    t0 = time.perf_counter()
    env = BatchedReach(n_worlds, device=device)
    rng = np.random.default_rng(seed)
    env.reset(rng)
    # Warm-up: compiles every kernel and captures the graph.
    env.random_actions()
    env.step()
    wp.synchronize_device(env.device)
    setup = time.perf_counter() - t0
    env.reset(rng)
    wp.synchronize_device(env.device)
    t1 = time.perf_counter()
    for _ in range(steps):
        env.random_actions()
        _, _, _, trunc = env.step()
        if trunc:
            env.reset(rng)
    wp.synchronize_device(env.device)
    wall = time.perf_counter() - t1
    return {
        "steps_per_s": n_worlds * steps / wall,
        "physics_steps_per_s": n_worlds * steps * env.n_substeps / wall,
        "ms_per_step": 1e3 * wall / steps,
        "setup_s": setup,
        "mean_distance_m": float(np.mean(env.distance.numpy())),
        "overflow": float(env.overflow()),
    }
