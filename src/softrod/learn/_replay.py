"""A replay buffer that keeps demonstrations (SAC from demonstrations, `SACConfig.expert_ratio`).

Its own module so that importing softrod needs no Stable-Baselines3 (the `rl` extra): only
`train_sac` imports it, and a pickled buffer names this class by this module's path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.buffers import ReplayBuffer

__all__ = ["ExpertReplayBuffer"]


class ExpertReplayBuffer(ReplayBuffer):
    """SB3's replay buffer with a protected prefix of expert transitions.

    The first `n_expert` slots (filled by `prefill_with_expert`, then frozen by
    `protect_expert`) are never overwritten: once the buffer is full, writing wraps to slot
    `n_expert`, not 0. Each minibatch takes round(`expert_ratio` * batch) transitions uniformly
    from the prefix and the rest uniformly from the agent's own (symmetric sampling, RLPD: Ball
    et al. 2023), so the demonstrations keep their weight however long the run. With `n_expert`
    0 it behaves as SB3's `ReplayBuffer` exactly. Randomness: NumPy's global generator, as SB3's
    own sampling (seeded by the model's seed).
    """

    n_expert: int = 0
    expert_ratio: float = 0.5

    def protect_expert(self, expert_ratio: float) -> None:
        """Freeze the transitions stored so far as the expert prefix; `expert_ratio` in (0, 1)."""
        if self.optimize_memory_usage or self.full or self.pos >= self.buffer_size - 1:
            raise ValueError(
                f"buffer_size {self.buffer_size} must exceed the {self.pos} expert transitions "
                "by at least 2 (and the buffer must not be memory-optimised)"
            )
        if not 0 < expert_ratio < 1:
            raise ValueError(f"expert_ratio must be in (0, 1), got {expert_ratio}")
        self.n_expert, self.expert_ratio = int(self.pos), float(expert_ratio)

    def add(self, *args: Any, **kwargs: Any) -> None:
        super().add(*args, **kwargs)
        if self.n_expert and self.pos == 0:
            # Wrapped: the next write replaces the oldest agent transition, never the expert's.
            self.pos = self.n_expert

    def sample(self, batch_size: int, env: Any = None) -> Any:
        if not self.n_expert:
            return super().sample(batch_size, env=env)
        upper = self.buffer_size if self.full else self.pos
        # Before the agent has stored anything, the whole minibatch is expert data.
        n_exp = batch_size if upper <= self.n_expert else int(round(self.expert_ratio * batch_size))
        # NumPy's global generator, as SB3's own sampling: the model's seed makes runs repeat.
        inds = np.concatenate(
            [
                np.random.randint(0, self.n_expert, size=n_exp),  # noqa: NPY002
                np.random.randint(  # noqa: NPY002
                    self.n_expert, max(upper, self.n_expert + 1), size=batch_size - n_exp
                ),
            ]
        )
        return self._get_samples(inds, env=env)
