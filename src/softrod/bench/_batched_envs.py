"""`softrod bench batched-envs`: world-steps per second of `softrod.envs.make_batched`."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

__all__ = ["bench_batched_env", "data_bytes"]


def data_bytes(data: Any) -> int:
    """Bytes of every Warp array in a MuJoCo Warp `Data` (nested structs included)."""
    import warp as wp

    total = 0
    for field in dataclasses.fields(data):
        value = getattr(data, field.name)
        if isinstance(value, wp.array):
            total += int(value.capacity)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            total += data_bytes(value)
    return total


def bench_batched_env(
    env_id: str,
    n_worlds: int,
    *,
    steps: int = 200,
    device: str | None = None,
    seed: int = 0,
    lean: bool = True,
    direct_solve: bool = False,
) -> dict[str, float]:
    """Throughput of `make_batched(env_id, n_worlds, lean=, direct_solve=)` with random
    actions (resets
    at the horizon included): `steps_per_s` (world-steps per second), `ms_per_step` (one
    batched control step), `setup_s` (model upload, kernel compilation and graph capture),
    `data_kib_per_world` (MuJoCo Warp's per-world arrays), `device_kib_per_world` (CUDA with
    Warp's memory pool only: the pool's growth from before the env to after its warm-up, per
    world), `overflow` (1 when a world ran out of contact or constraint capacity in any step,
    warm-up included) and `overflow_world_steps` (how many world-steps did; `step_random`
    does not reset them, so a world can count in several steps)."""
    from softrod.envs import import_warp, make_batched

    wp, _ = import_warp()  # quiet Warp before it initializes (stdout: `case.metric` lines)
    dev = wp.get_device(device)
    # Warp's memory pool (CUDA): what this env allocates, not what the pool keeps from before.
    pooled = dev.is_cuda and wp.is_mempool_enabled(dev)
    used0 = wp.get_mempool_used_mem_current(dev) if pooled else 0
    t0 = time.perf_counter()
    env = make_batched(env_id, n_worlds, device=device, lean=lean, direct_solve=direct_solve)
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
    out = {
        "steps_per_s": n_worlds * steps / wall,
        "ms_per_step": 1e3 * wall / steps,
        "setup_s": setup,
        "data_kib_per_world": data_bytes(env.data) / n_worlds / 1024,
    }
    if pooled:
        used = wp.get_mempool_used_mem_current(dev) - used0
        out["device_kib_per_world"] = used / n_worlds / 1024
    out["overflow"] = float(env.overflow())
    out["overflow_world_steps"] = float(env.overflow_steps())
    env.close()
    return out
