"""`softrod bench batched-envs`: world-steps per second of `softrod.envs.make_batched`."""

from __future__ import annotations

import time

__all__ = ["bench_batched_env"]


def bench_batched_env(
    env_id: str, n_worlds: int, *, steps: int = 200, device: str | None = None, seed: int = 0
) -> dict[str, float]:
    """Throughput of `make_batched(env_id, n_worlds)` with random actions (resets at the
    horizon included): `steps_per_s` (world-steps per second), `ms_per_step` (one batched
    control step), `setup_s` (model upload, kernel compilation and graph capture) and
    `overflow` (1 when a world ran out of contact capacity)."""
    import warp as wp

    from softrod.envs import make_batched

    t0 = time.perf_counter()
    env = make_batched(env_id, n_worlds, device=device)
    env.reset(seed=seed)
    # Warm-up: compiles every kernel and captures the graph.
    env.step_random()
    wp.synchronize_device(env.device)
    setup = time.perf_counter() - t0
    env.reset(seed=seed)
    wp.synchronize_device(env.device)
    t1 = time.perf_counter()
    for _ in range(steps):
        env.step_random()
    wp.synchronize_device(env.device)
    wall = time.perf_counter() - t1
    return {
        "steps_per_s": n_worlds * steps / wall,
        "ms_per_step": 1e3 * wall / steps,
        "setup_s": setup,
        "overflow": float(env.overflow()),
    }
