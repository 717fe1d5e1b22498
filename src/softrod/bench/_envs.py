"""Environment throughput: steps per second in one process and with asynchronous workers.

Prints (via `softrod bench envs`) `<Env>.steps_per_s`, `<Env>.steps_per_cpu_s` (SomoGym's
metric: steps per CPU-second of the stepping process) and `<Env>.async<N>_steps_per_s`.
Random actions from a seeded action space; episodes reset when they end.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import gymnasium as gym

__all__ = ["bench_envs", "bench_env"]


def bench_env(env_id: str, steps: int = 1000, seed: int = 0) -> dict[str, float]:
    """Single-process steps/s (wall) and steps per CPU-second of one environment."""
    import softrod.envs  # noqa: F401

    env = gym.make(env_id)
    env.action_space.seed(seed)
    env.reset(seed=seed)
    # Warm up (first compile of lazy paths, caches).
    for _ in range(10):
        env.step(env.action_space.sample())
    env.reset(seed=seed)
    actions = [env.action_space.sample() for _ in range(steps)]
    t0, c0 = time.perf_counter(), time.process_time()
    for a in actions:
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    return {"steps_per_s": steps / wall, "steps_per_cpu_s": steps / max(cpu, 1e-9)}


def bench_async(env_id: str, workers: int, steps: int = 1000, seed: int = 0) -> float:
    """Total steps/s of a `gymnasium.vector.AsyncVectorEnv` with `workers` processes."""
    from softrod.learn import make_env_fn

    venv = gym.vector.AsyncVectorEnv([make_env_fn(env_id) for _ in range(workers)])
    try:
        venv.action_space.seed(seed)
        venv.reset(seed=seed)
        for _ in range(5):
            venv.step(venv.action_space.sample())
        n_iter = max(1, steps // workers)
        actions = [venv.action_space.sample() for _ in range(n_iter)]
        t0 = time.perf_counter()
        for a in actions:
            venv.step(a)
        wall = time.perf_counter() - t0
    finally:
        venv.close()
    return n_iter * workers / wall


def bench_envs(
    env_ids: Sequence[str] | None = None, steps: int = 1000, workers: int = 2, seed: int = 0
) -> dict[str, float]:
    """`bench_env` (and `bench_async` when workers > 0) for each id; flat `case.metric` dict."""
    from softrod.envs import ENV_IDS

    out: dict[str, float] = {}
    for env_id in env_ids or ENV_IDS:
        name = env_id.removeprefix("softrod/")
        for key, value in bench_env(env_id, steps, seed).items():
            out[f"{name}.{key}"] = value
        if workers > 0:
            out[f"{name}.async{workers}_steps_per_s"] = bench_async(env_id, workers, steps, seed)
    return out
