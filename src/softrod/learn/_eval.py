"""Evaluate a policy over seeded episodes: success rate and final distance."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["EvalResult", "evaluate", "load_sb3_policy"]

Policy = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class EvalResult:
    """Per-episode outcomes of `evaluate` (episode i used reset seed `seed + i`).

    final_distance : (n,) task distance at the last step [m] (info["distance"]; NaN if the
    task reports none); success : (n,) the `success` flag at the last step; returns : (n,).
    """

    env_id: str
    seed: int
    final_distance: np.ndarray
    success: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)
    final_info: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_episodes(self) -> int:
        return len(self.returns)

    @property
    def success_rate(self) -> float:
        return float(np.mean(self.success))

    def summary(self) -> dict[str, Any]:
        """Success rate, final distance mean/std/median [m], return mean; JSON-ready."""
        d = self.final_distance
        return {
            "env_id": self.env_id,
            "episodes": self.n_episodes,
            "seed": self.seed,
            "success_rate": self.success_rate,
            "final_distance_mean": float(np.nanmean(d)) if np.isfinite(d).any() else None,
            "final_distance_std": float(np.nanstd(d)) if np.isfinite(d).any() else None,
            "final_distance_median": float(np.nanmedian(d)) if np.isfinite(d).any() else None,
            "return_mean": float(np.mean(self.returns)),
            **self.extra,
        }

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.summary(), indent=2))


def load_sb3_policy(path: str | Path) -> Policy:
    """A deterministic policy function from an SB3 SAC .zip (or a run directory)."""
    from softrod.learn._sac import load_sac, set_torch_threads

    set_torch_threads(1)
    p = Path(path)
    if p.is_dir():
        p = p / "model.zip"
    if not p.is_file():
        raise FileNotFoundError(f"no policy at {path} (expected a .zip or a run directory)")
    model = load_sac(p, device="cpu")

    def policy(obs: np.ndarray) -> np.ndarray:
        action, _ = model.predict(obs, deterministic=True)
        return np.asarray(action)

    return policy


def evaluate(
    policy: Policy | Any,
    env_id: str,
    *,
    episodes: int = 100,
    seed: int = 10_000,
    env_kwargs: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> EvalResult:
    """Run `episodes` episodes (reset seeds seed, seed+1, ...) and collect the outcomes.

    policy : obs -> action, or an object with `reset()` and `act(obs)` (stateful policies such
    as action-chunking BC with temporal ensembling).
    """
    import softrod.envs  # noqa: F401

    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    env = gym.make(env_id, **(env_kwargs or {}))
    dist, succ, rets, lens = [], [], [], []
    finals: list[dict[str, float]] = []
    try:
        for i in range(episodes):
            obs, info = env.reset(seed=seed + i)
            if hasattr(policy, "reset"):
                policy.reset()
            act = policy.act if hasattr(policy, "act") else policy
            ret, n, done = 0.0, 0, False
            action = _first_action(act, obs, env_id, env_kwargs) if i == 0 else act(obs)
            while not done:
                obs, r, term, trunc, info = env.step(action)
                ret += float(r)
                n += 1
                done = term or trunc
                if not done:
                    action = act(obs)
            dist.append(float(info.get("distance", np.nan)))
            succ.append(bool(info.get("success", False)))
            rets.append(ret)
            lens.append(n)
            finals.append(_numeric_scalars(info))
            if progress is not None:
                progress(i + 1)
    finally:
        env.close()
    # Task metrics beside the distance: only the keys every episode reported.
    keys = set(finals[0]).intersection(*finals[1:]) if finals else set()
    final_info = {k: np.array([f[k] for f in finals]) for k in sorted(keys)}
    return EvalResult(
        env_id,
        seed,
        np.array(dist),
        np.array(succ),
        np.array(rets),
        np.array(lens),
        final_info=final_info,
    )


def _first_action(act: Callable, obs: Any, env_id: str, env_kwargs: dict | None) -> Any:
    """The policy's first action; a policy made for other observations (an environment built
    with other kwargs, or another task) fails here with one error that says so."""
    try:
        return act(obs)
    except (ValueError, RuntimeError) as exc:
        shape = getattr(obs, "shape", None)
        raise ValueError(
            f"the policy cannot act on {env_id}'s observations of shape {shape} "
            f"(env_kwargs {env_kwargs or {}}); was it trained with other env kwargs? ({exc})"
        ) from exc


def _numeric_scalars(info: dict[str, Any]) -> dict[str, float]:
    """The entries of a step's `info` that are one real number (bools as 0/1)."""
    out = {}
    for k, v in info.items():
        if isinstance(v, bool | int | float | np.number | np.bool_) or (
            isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "biuf"
        ):
            out[k] = float(v)
    return out
