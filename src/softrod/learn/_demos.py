"""Demonstrations: recording (scripted experts, teleoperation), the documented file format, and
seed 002's consecutive-duplicate-frame filter (App. E.2).

File format (one `.npz`, written by `DemoSet.save`, read by `DemoSet.load`):

| key | shape, dtype | content |
|---|---|---|
| `observations` | (n_frames, obs_dim) float32 | o_t before the action, episodes concatenated |
| `actions` | (n_frames, act_dim) float32 | a_t taken at o_t (the environment's units) |
| `episode_lengths` | (n_episodes,) int64 | frames per episode, in order |
| `success` | (n_episodes,) bool | the episode's final `info["success"]` |
| `seeds` | (n_episodes,) int64 | reset seed of each episode (-1: unknown) |
| `meta` | () str | JSON, see below |

`meta` holds `env_id`, `env_kwargs`, `control_period` [s], `source` (expert / teleop),
`dedup_tol` (None: raw frames), `action_noise` (std of the noise injected into the executed
actions while recording, per component; None: none), `softrod_version` and `format` (= 1).

The same sets are written and read in the LeRobot dataset layout (v3.0: Parquet + JSON, so
that LeRobot's trainers load them) by `DemoSet.save_lerobot` / `DemoSet.load_lerobot`
(`softrod demos ... --format lerobot`; layout in `softrod.learn._lerobot`).

A frame is an (observation, action) pair, as in seed 002; frames are recorded at the environment's
control rate (20 Hz here; seed 002 recorded at 60 Hz).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = [
    "DemoSet",
    "FORMAT_VERSION",
    "duplicate_mask",
    "record_demos",
]

FORMAT_VERSION = 1
#: Seed 002's tolerance for "identical" consecutive robot states (App. E.2).
DEDUP_TOL = 1e-9


def duplicate_mask(observations: np.ndarray, tol: float = DEDUP_TOL) -> np.ndarray:
    """Frames to keep (bool (n,)): False where the observation equals the previous frame's
    within `tol` (max-abs difference), i.e. seed 002's consecutive-duplicate filter. The first
    frame of a run of identical states is kept, the repeats are dropped."""
    obs = np.asarray(observations, dtype=float)
    if obs.ndim != 2:
        raise ValueError(f"observations must be 2-D (n, dim), got shape {obs.shape}")
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    keep = np.ones(len(obs), dtype=bool)
    if len(obs) > 1:
        keep[1:] = np.max(np.abs(np.diff(obs, axis=0)), axis=1) > tol
    return keep


@dataclass
class DemoSet:
    """Demonstrations of one environment, episode by episode (see the module's format table).

    observations, actions : lists of (T_i, dim) arrays; success : (n,) bool; seeds : (n,) int.
    """

    env_id: str
    observations: list[np.ndarray]
    actions: list[np.ndarray]
    success: np.ndarray
    seeds: np.ndarray
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    control_period: float = 0.05
    source: str = "expert"
    dedup_tol: float | None = None
    action_noise: list[float] | None = None

    def __post_init__(self) -> None:
        if len(self.observations) != len(self.actions):
            raise ValueError(
                f"observations and actions must list the same episodes, got "
                f"{len(self.observations)} and {len(self.actions)}"
            )
        for i, (o, a) in enumerate(zip(self.observations, self.actions, strict=True)):
            if len(o) != len(a):
                raise ValueError(f"episode {i}: {len(o)} observations but {len(a)} actions")
        self.success = np.asarray(self.success, dtype=bool).reshape(-1)
        self.seeds = np.asarray(self.seeds, dtype=np.int64).reshape(-1)
        if len(self.success) != self.n_episodes or len(self.seeds) != self.n_episodes:
            raise ValueError("success and seeds need one entry per episode")

    @property
    def n_episodes(self) -> int:
        return len(self.observations)

    @property
    def n_frames(self) -> int:
        return int(sum(len(o) for o in self.observations))

    def successful(self) -> DemoSet:
        """Only the successful episodes."""
        idx = np.flatnonzero(self.success)
        return self._select(idx)

    def _select(self, idx: np.ndarray) -> DemoSet:
        return DemoSet(
            self.env_id,
            [self.observations[i] for i in idx],
            [self.actions[i] for i in idx],
            self.success[idx],
            self.seeds[idx],
            dict(self.env_kwargs),
            self.control_period,
            self.source,
            self.dedup_tol,
            self.action_noise,
        )

    def remove_duplicates(self, tol: float = DEDUP_TOL) -> DemoSet:
        """A copy without consecutive duplicate frames (seed 002 App. E.2), per episode."""
        obs, act = [], []
        for o, a in zip(self.observations, self.actions, strict=True):
            keep = duplicate_mask(o, tol)
            obs.append(o[keep])
            act.append(a[keep])
        return DemoSet(
            self.env_id,
            obs,
            act,
            self.success.copy(),
            self.seeds.copy(),
            dict(self.env_kwargs),
            self.control_period,
            self.source,
            tol,
            self.action_noise,
        )

    def stats(self) -> dict[str, Any]:
        """Episodes, frames, success rate and mean duration [s]."""
        lengths = [len(o) for o in self.observations]
        return {
            "env_id": self.env_id,
            "episodes": self.n_episodes,
            "frames": self.n_frames,
            "success_rate": float(np.mean(self.success)) if self.n_episodes else 0.0,
            "mean_duration_s": float(np.mean(lengths) * self.control_period) if lengths else 0.0,
            "source": self.source,
            "dedup_tol": self.dedup_tol,
            "action_noise": self.action_noise,
        }

    def save(self, path: str | Path) -> Path:
        """Write the `.npz` file (format in the module docstring)."""
        from softrod._version import __version__

        p = Path(path)
        if p.suffix != ".npz":
            p = p.with_suffix(".npz")
        p.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "env_id": self.env_id,
            "env_kwargs": self.env_kwargs,
            "control_period": self.control_period,
            "source": self.source,
            "dedup_tol": self.dedup_tol,
            "action_noise": self.action_noise,
            "softrod_version": __version__,
            "format": FORMAT_VERSION,
        }
        obs = np.concatenate(self.observations) if self.n_episodes else np.zeros((0, 0))
        act = np.concatenate(self.actions) if self.n_episodes else np.zeros((0, 0))
        # Written under a temporary name and moved over `p` when complete (never a partial file).
        tmp = p.with_name(f".{p.stem}.{os.getpid()}.partial.npz")
        try:
            self._write(tmp, obs, act, meta)
            os.replace(tmp, p)
        finally:
            tmp.unlink(missing_ok=True)
        return p

    def _write(self, p: Path, obs: np.ndarray, act: np.ndarray, meta: dict) -> None:
        np.savez_compressed(
            p,
            observations=obs.astype(np.float32),
            actions=act.astype(np.float32),
            episode_lengths=np.array([len(o) for o in self.observations], dtype=np.int64),
            success=self.success,
            seeds=self.seeds,
            meta=np.array(json.dumps(meta)),
        )

    @classmethod
    def load(cls, path: str | Path) -> DemoSet:
        """Read a file written by `save`."""
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"no demonstrations at {p}")
        # Every array is read (and its checksum checked) here, so a truncated or corrupt file
        # is refused with one message naming it, never half read.
        try:
            with np.load(p, allow_pickle=False) as z:
                f = {key: z[key] for key in z.files}
        except Exception as exc:  # noqa: BLE001 - any unreadable file is refused alike
            raise ValueError(
                f"cannot read the demonstrations {p}: the file is truncated or corrupt ({exc})"
            ) from None
        missing = {
            "observations",
            "actions",
            "episode_lengths",
            "success",
            "seeds",
            "meta",
        } - set(f)
        if missing:
            raise ValueError(f"{p} is not a softrod demonstration file (missing {sorted(missing)})")
        meta = json.loads(str(f["meta"]))
        cuts = np.cumsum(f["episode_lengths"])[:-1]
        obs = np.split(f["observations"], cuts) if len(f["episode_lengths"]) else []
        act = np.split(f["actions"], cuts) if len(f["episode_lengths"]) else []
        return cls(
            meta["env_id"],
            list(obs),
            list(act),
            f["success"],
            f["seeds"],
            meta.get("env_kwargs", {}),
            meta.get("control_period", 0.05),
            meta.get("source", "expert"),
            meta.get("dedup_tol"),
            meta.get("action_noise"),
        )

    def save_lerobot(
        self, root: str | Path, *, task: str | None = None, overwrite: bool = False
    ) -> Path:
        """Write the set as a LeRobot v3.0 dataset folder (`softrod.learn._lerobot`)."""
        from softrod.learn._lerobot import write_lerobot

        return write_lerobot(self, root, task=task, overwrite=overwrite)

    @classmethod
    def load_lerobot(cls, root: str | Path) -> DemoSet:
        """Read a LeRobot v3.0 dataset folder (`softrod.learn._lerobot`)."""
        from softrod.learn._lerobot import read_lerobot

        return read_lerobot(root)


def record_episode(
    env: gym.Env, policy: Any, seed: int, action_noise: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Roll out one episode; returns (observations (T, o), actions (T, a), success).

    With `action_noise` (std per action component, the action's units) the *executed* action
    is perturbed by Gaussian noise while the policy's clean action is recorded (noise injection,
    "DART", Laskey et al. 2017): the data then show how the expert corrects small deviations,
    which behaviour cloning needs. The noise is drawn from a generator seeded with `seed`.
    """
    obs, _ = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset()
    act_fn = policy.act if hasattr(policy, "act") else policy
    rng = np.random.default_rng(seed)
    observations, actions = [], []
    info: dict[str, Any] = {}
    done = False
    space: Any = env.action_space
    while not done:
        a = np.asarray(act_fn(obs), dtype=np.float32)
        observations.append(np.asarray(obs, dtype=np.float32))
        actions.append(a)
        run = a
        if action_noise is not None:
            run = np.clip(a + rng.normal(size=a.shape) * action_noise, space.low, space.high)
        obs, _, term, trunc, info = env.step(run.astype(np.float32))
        done = term or trunc
    return np.array(observations), np.array(actions), bool(info.get("success", False))


def record_demos(
    env_id: str,
    n_episodes: int,
    *,
    policy_factory: Callable[[gym.Env], Any] | None = None,
    seed: int = 0,
    successful_only: bool = True,
    max_attempts: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
    action_noise: np.ndarray | float | None = None,
    record_kwargs: dict[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> DemoSet:
    """Record `n_episodes` demonstrations with a policy (default: the scripted expert).

    Episode k is reset with seed `seed + k` (k counts attempts). With `successful_only`, failed
    attempts are discarded, as seed 002's operators did, until n successes or `max_attempts`
    (default 2 n) attempts. `action_noise` (std per action component, or a scalar; None: the
    environment's `demo_action_noise` if it has one; 0: none) perturbs the executed
    actions (see `record_episode`). `record_kwargs` are environment options used only while
    recording (default for the seed-002 tasks: `terminate_on_success=False`, so that the demos
    continue past success and a cloned policy learns to finish the motion); the set stores
    `env_kwargs`, the evaluation environment's. `progress(kept, attempts)` is called after each
    attempt.
    """
    import softrod.envs  # noqa: F401
    from softrod.learn._experts import make_expert

    if n_episodes < 1:
        raise ValueError(f"n_episodes must be >= 1, got {n_episodes}")
    if record_kwargs is None:
        cls = gym.spec(env_id).entry_point
        takes = isinstance(cls, str) and cls.endswith(("WholeBodyGraspEnv", "FlipSwitchEnv"))
        record_kwargs = {"terminate_on_success": False} if takes else {}
    env = gym.make(env_id, **{**(env_kwargs or {}), **record_kwargs})
    policy = (policy_factory or make_expert)(env)
    if action_noise is None:
        action_noise = getattr(env.unwrapped, "demo_action_noise", None)
    noise = (
        None
        if action_noise is None
        else np.broadcast_to(np.asarray(action_noise, dtype=float), env.action_space.shape or ())
    )
    if noise is not None and not np.any(noise > 0):
        noise = None
    limit = max_attempts if max_attempts is not None else 2 * n_episodes
    obs_l: list[np.ndarray] = []
    act_l: list[np.ndarray] = []
    succ: list[bool] = []
    seeds: list[int] = []
    attempts = 0
    try:
        while len(obs_l) < n_episodes and attempts < limit:
            o, a, ok = record_episode(env, policy, seed + attempts, noise)
            if ok or not successful_only:
                obs_l.append(o)
                act_l.append(a)
                succ.append(ok)
                seeds.append(seed + attempts)
            attempts += 1
            if progress is not None:
                progress(len(obs_l), attempts)
    finally:
        env.close()
    return DemoSet(
        env_id,
        obs_l,
        act_l,
        np.array(succ, dtype=bool),
        np.array(seeds),
        dict(env_kwargs or {}),
        float(getattr(env.unwrapped, "dt", 0.05)),
        "expert",
        None,
        None if noise is None else [float(x) for x in noise],
    )
