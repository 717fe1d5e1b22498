"""`BatchedReach`: thousands of `Reach-v0` worlds stepped together on a GPU with MuJoCo Warp.

A thin alias of the one batched layer, `make_batched("Reach-v0", n_worlds, device)`
(`softrod.envs._batched.BatchedEnv`: the same model, kernels and cross-checks as every batched
env), with the original array API: `reset(rng)` draws every world's target from `rng` and returns
`obs` as a Warp array, `step(action)` returns Warp arrays (obs, reward, distance, truncated) and
does not reset (episodes are synchronous: every world starts at `reset` and is truncated after
`episode_steps` steps, when the caller resets). On CUDA the step is captured once as a CUDA graph
and replayed.

Optional: needs the `warp` extra (`pip install softrod[warp]`, i.e. `mujoco-warp`, `warp-lang`)
and torch (as `make_batched`). Measured with `softrod bench warp-reach` (docs/learning.md).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from softrod.envs._batched import BatchedEnv, import_warp
from softrod.envs.reach_v0 import ReachEnv

__all__ = ["BatchedReach", "bench_batched_reach", "compare_with_reach_v0", "cross_check_seeds"]


class BatchedReach(BatchedEnv):
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
        super().__init__(
            "softrod/Reach-v0",
            n_worlds,
            device=device,
            nconmax=nconmax,
            njmax=njmax,
            episode_steps=episode_steps,
            links=links,
            tendon_stiffness=tendon_stiffness,
            kappa_max=kappa_max,
            kappa_rate=kappa_rate,
            distance_weight=distance_weight,
        )
        self.n_worlds = self.num_envs

    @property
    def target(self) -> Any:
        """Targets (n_worlds,) of vec3 [m]: the target markers' mocap positions (a view)."""
        return self.data.mocap_pos[:, int(self.host._target_mocap)]

    # -- episode ------------------------------------------------------------------------------

    def reset(self, rng: np.random.Generator | int) -> Any:  # type: ignore[override]
        """Reset every world to rest with a new target drawn from `rng` (a Generator, or a seed
        for one; uniform in Reach-v0's box); returns `obs` (n_worlds, 34) (a Warp array)."""
        self._rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self._reset_worlds(None)
        return self.obs

    def step(self, action: Any = None) -> tuple[Any, Any, Any, bool]:  # type: ignore[override]
        """Advance every world one control step (0.05 s).

        action : (n_worlds, 10) in [-1, 1] (numpy or a Warp array); None reuses `self.action`.
        Returns (obs, reward, distance, truncated) (Warp arrays and a bool); truncated is True
        for all worlds after `episode_steps` steps (then call `reset`).
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
        self._advance()
        self._step_count += 1
        return self.obs, self.reward, self.distance, self._step_count >= self.episode_steps


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
    wp = import_warp()[0]
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
