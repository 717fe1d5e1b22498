"""Soft Actor-Critic training on softrod environments (Stable-Baselines3, CPU torch).

A run directory holds everything the run produced, so that it can be inspected and resumed:

| file | content |
|---|---|
| `config.yaml` | the `SACConfig` that ran |
| `progress.csv`, `events.out.tfevents.*` | training statistics every `log_every` steps |
| `episodes.csv` | per finished episode: steps, return, length, final distance, success |
| `checkpoints/sac_<steps>_steps.zip` | periodic checkpoints |
| `model.zip` | the final policy |
| `replay_buffer.pkl` | the final replay buffer (a `resume` from `model.zip` restores it) |
| `learning_curve.png` | return and final distance against environment steps |
| `summary.json` | this process's steps, wall time [s], steps/s; total steps; resume; early stop |
| `expert_prefill.json` | with `expert_episodes`: the expert episodes put in the buffer first |

With `expert_ratio`, the buffer is `softrod.learn._replay.ExpertReplayBuffer`: the expert's
transitions stay in it for the whole run and fill that fraction of every minibatch.
"""

from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from softrod._jobs import end_if_importing_main, sigterm_as_interrupt, workers_cannot_start
from softrod.learn._config import SACConfig, save_config

__all__ = ["TrainResult", "train_sac", "make_env_fn", "set_torch_threads"]


@dataclass(frozen=True)
class TrainResult:
    """Outcome of a training run.

    run_dir : the run directory (see the module table); model_path : final policy (.zip).
    steps : environment steps taken by this run (a resumed run counts only its own);
    wall_time : seconds; episodes : finished episodes; interrupted : stopped by Ctrl-C/SIGTERM
    before `steps` (the model reached so far is saved all the same); time_limited : stopped by
    `max_minutes` before `steps` (saved the same way).
    """

    run_dir: Path
    model_path: Path
    steps: int
    wall_time: float
    episodes: int
    interrupted: bool = False
    time_limited: bool = False

    @property
    def steps_per_second(self) -> float:
        return self.steps / max(self.wall_time, 1e-9)


#: Replay buffer written beside a run's final model.zip (`SACConfig.save_replay_buffer`) and
#: restored by a `resume` from that model.zip.
REPLAY_BUFFER_FILE = "replay_buffer.pkl"


def _mean_defined(values: list[float]) -> float:
    """Mean over the values that are not NaN; NaN (without numpy's empty-slice warning) for a
    task that reports no distance."""
    a = np.asarray(values, dtype=float)
    a = a[~np.isnan(a)]
    return float(a.mean()) if a.size else float("nan")


def set_torch_threads(n: int) -> None:
    """Limit torch to n intra-op threads (2 threads were 15x slower than 1 on a 2-core box)."""
    import torch

    torch.set_num_threads(int(n))


def make_env_fn(
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    wrap: Callable[[gym.Env], gym.Env] | None = None,
) -> Callable[[], gym.Env]:
    """A picklable factory of `gym.make(env_id, **env_kwargs)` that registers softrod envs first
    (so it works in fresh worker processes)."""
    return _EnvFactory(env_id, dict(env_kwargs or {}), wrap)


class _EnvFactory:
    def __init__(
        self, env_id: str, env_kwargs: dict[str, Any], wrap: Callable[[gym.Env], gym.Env] | None
    ) -> None:
        self.env_id, self.env_kwargs, self.wrap = env_id, env_kwargs, wrap

    def __call__(self) -> gym.Env:
        import softrod.envs  # noqa: F401  (registers the ids in this process)

        env = gym.make(self.env_id, **self.env_kwargs)
        return self.wrap(env) if self.wrap is not None else env


#: First env seed of the expert episodes that fill a new run's replay buffer
#: (`SACConfig.expert_episodes`): run seed k uses EXPERT_SEED_BASE + 1000 k + i for episode i,
#: apart from the test (10000-10099) and validation (20000-20049) seeds.
EXPERT_SEED_BASE = 30_000


def prefill_with_expert(model: Any, config: SACConfig) -> dict[str, float]:
    """Put `config.expert_episodes` episodes of the env's scripted expert into `model`'s replay
    buffer (SAC from demonstrations: the critic sees rewarding transitions the random early
    policy would rarely find). Transitions are stored as SB3 stores its own: actions scaled to
    [-1, 1], time-limit ends marked truncated (bootstrapped), not terminal.

    Returns {"episodes", "transitions", "success_rate", "mean_return"} of the expert's episodes.
    """
    from softrod.learn._experts import make_expert

    env = make_env_fn(config.env_id, config.env_kwargs)()
    try:
        expert = make_expert(env)
        buffer = model.replay_buffer
        transitions, successes, returns = 0, 0, []
        for i in range(config.expert_episodes):
            obs, _ = env.reset(seed=EXPERT_SEED_BASE + 1000 * config.seed + i)
            expert.reset()
            done, total = False, 0.0
            info: dict[str, Any] = {}
            while not done:
                action = np.asarray(expert.act(obs), dtype=np.float32)
                nxt, reward, terminated, truncated, info = env.step(action)
                done = bool(terminated or truncated)
                buffer.add(
                    obs[None],
                    nxt[None],
                    model.policy.scale_action(action)[None],
                    np.array([reward], dtype=np.float32),
                    np.array([done]),
                    [{"TimeLimit.truncated": bool(truncated and not terminated)}],
                )
                obs, total, transitions = nxt, total + float(reward), transitions + 1
            successes += bool(info.get("success", False))
            returns.append(total)
    finally:
        env.close()
    n = max(config.expert_episodes, 1)
    return {
        "episodes": config.expert_episodes,
        "transitions": transitions,
        "success_rate": successes / n,
        "mean_return": float(np.mean(returns)) if returns else float("nan"),
    }


def _check_restored_buffer(buffer: Any, config: SACConfig, path: Path) -> None:
    """Refuse a restored replay buffer whose expert prefix disagrees with `config.expert_ratio`;
    otherwise the config's ratio applies from here on."""
    n_expert = int(getattr(buffer, "n_expert", 0))
    if config.expert_ratio is None and n_expert:
        raise ValueError(
            f"expert_ratio None, but the replay buffer {path} keeps {n_expert} expert "
            "transitions: resume with the run's expert_ratio"
        )
    if config.expert_ratio is not None:
        if not n_expert:
            raise ValueError(
                f"expert_ratio {config.expert_ratio}, but the replay buffer {path} keeps no expert "
                "transitions (written without expert_ratio): resume without it, or move the "
                "buffer away to refill the demonstrations"
            )
        buffer.expert_ratio = float(config.expert_ratio)


def _has_tb() -> bool:
    """Whether TensorBoard logging is available (the `rl` extra installs it)."""
    try:
        from torch.utils.tensorboard import SummaryWriter  # noqa: F401
    except ImportError:
        return False
    return True


def _make_vec_env(config: SACConfig) -> Any:
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [make_env_fn(config.env_id, config.env_kwargs, Monitor) for _ in range(config.n_envs)]
    vec: Any
    if config.vec_env == "subproc" and config.n_envs > 1:
        try:
            vec = SubprocVecEnv(fns)
        except (EOFError, ConnectionError):  # a worker ended before it answered
            raise workers_cannot_start("train", "nothing was trained") from None
    else:
        vec = DummyVecEnv(fns)
    vec.seed(config.seed)
    return vec


def _callback(
    config: SACConfig, run_dir: Path, progress: bool, max_minutes: float | None = None
) -> Any:
    """The run logger: episode rows, periodic log rows, checkpoints, a progress bar and, with
    `max_minutes`, a wall-clock limit (`logger.time_limited` tells whether it stopped the run)."""
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback

    class RunLogger(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[dict[str, float]] = []
            self._recent: list[dict[str, float]] = []
            self._next_log = config.log_every
            self._t0 = time.perf_counter()
            self._file = (run_dir / "episodes.csv").open("w", newline="")
            self._csv = csv.writer(self._file)
            self._csv.writerow(["steps", "return", "length", "final_distance", "success"])
            self._bar: Any = None
            self._task: Any = None
            self.time_limited = False

        def _on_training_start(self) -> None:
            if progress:
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeElapsedColumn,
                    TimeRemainingColumn,
                )

                self._bar = Progress(
                    TextColumn("[bold]{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("{task.fields[stats]}"),
                    TimeElapsedColumn(),
                    TimeRemainingColumn(),
                )
                self._bar.start()
                self._task = self._bar.add_task(
                    f"SAC {config.env_id}", total=config.steps, stats=""
                )

        def _on_step(self) -> bool:
            infos = self.locals.get("infos", [])
            dones = self.locals.get("dones", np.zeros(len(infos), dtype=bool))
            for done, info in zip(dones, infos, strict=False):
                if not done or "episode" not in info:
                    continue
                row = {
                    "steps": float(self.num_timesteps),
                    "return": float(info["episode"]["r"]),
                    "length": float(info["episode"]["l"]),
                    "final_distance": float(info.get("distance", np.nan)),
                    "success": float(bool(info.get("success", False))),
                }
                self._csv.writerow([row[k] for k in row])
                self._recent.append(row)
                self.rows.append(row)
            if self.num_timesteps >= self._next_log:
                self._next_log += config.log_every
                self._log_row()
            if self._bar is not None and self._task is not None:
                self._bar.update(self._task, completed=self.num_timesteps, stats=self._stats())
            # The time budget ends training between steps (SB3 stops when a callback says so).
            if max_minutes is not None and time.perf_counter() - self._t0 > 60.0 * max_minutes:
                self.time_limited = True
                return False
            return True

        def _stats(self) -> str:
            if not self.rows:
                return ""
            last = self.rows[-100:]
            d = _mean_defined([r["final_distance"] for r in last])
            s = np.mean([r["success"] for r in last])
            return f"dist {1e3 * d:6.1f} mm  success {100 * s:5.1f}%"

        def _log_row(self) -> None:
            elapsed = time.perf_counter() - self._t0
            self.logger.record("time/steps_per_second", self.num_timesteps / max(elapsed, 1e-9))
            self.logger.record("time/wall_time", elapsed)
            if self._recent:
                rec = self._recent
                self.logger.record("rollout/return_mean", np.mean([r["return"] for r in rec]))
                self.logger.record(
                    "rollout/final_distance", _mean_defined([r["final_distance"] for r in rec])
                )
                self.logger.record("rollout/success_rate", np.mean([r["success"] for r in rec]))
                self.logger.record("rollout/episodes", len(self.rows))
                self._recent = []
            self.logger.dump(self.num_timesteps)
            self._file.flush()

        def _on_training_end(self) -> None:
            self._log_row()
            self._file.close()
            if self._bar is not None:
                self._bar.stop()

    logger = RunLogger()

    class AtomicCheckpoint(CheckpointCallback):
        """SB3's periodic checkpoint, written under a temporary name and moved into place, so
        a kill (SIGKILL included) never leaves a truncated checkpoint behind."""

        def _on_step(self) -> bool:
            # On the run's total step count, not this process's calls: a run resumed at
            # 18 859 steps checkpoints at 20 000, 30 000, ... as an uninterrupted one does.
            total, every = self.num_timesteps, config.checkpoint_every
            if total // every > (total - config.n_envs) // every:
                _save_model_atomic(self.model, Path(self._checkpoint_path(extension="zip")))
            return True

    ckpt = AtomicCheckpoint(
        save_freq=max(config.checkpoint_every // config.n_envs, 1),
        save_path=str(run_dir / "checkpoints"),
        name_prefix="sac",
    )
    return logger, CallbackList([logger, ckpt])


def _save_model_atomic(model: Any, path: Path) -> None:
    """`model.save(path)` to a temporary `.zip` beside `path`, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.partial.zip")
    try:
        model.save(str(tmp))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _check_critic(model: Any, config: SACConfig, path: str | Path) -> None:
    """Refuse to resume a model whose critic is not the one `config.critic_layer_norm` names."""
    from softrod.learn._critic import LayerNormSACPolicy

    has = isinstance(model.policy, LayerNormSACPolicy)
    if has != config.critic_layer_norm:
        raise ValueError(
            f"critic_layer_norm {config.critic_layer_norm}, but the model {path} has "
            f"{'a layer-normalised' if has else 'a plain'} critic: resume with "
            f"critic_layer_norm {has} (CLI: {'with' if has else 'without'} --critic-layer-norm)"
        )


def load_sac(path: str | Path, **kwargs: Any) -> Any:
    """`SAC.load(path, **kwargs)`; a truncated or corrupt file is a ValueError naming it."""
    from stable_baselines3 import SAC

    try:
        return SAC.load(str(path), **kwargs)
    except (FileNotFoundError, TypeError):
        raise
    except Exception as exc:  # noqa: BLE001 - any unreadable model file is refused alike
        raise ValueError(
            f"cannot read the SAC model {path}: the file is truncated or corrupt ({exc})"
        ) from None


def train_sac(
    config: SACConfig,
    run_dir: str | Path,
    *,
    progress: bool = True,
    resume: str | Path | None = None,
    max_minutes: float | None = None,
) -> TrainResult:
    """Train SAC as configured; write the run directory (module table) and return a summary.

    Parameters
    ----------
    config : the run's `SACConfig` (environment, steps, hyperparameters).
    run_dir : output directory (created; existing files are overwritten).
    progress : show a rich progress bar with the recent final distance and success rate.
    resume : a checkpoint/model .zip to continue from; the hyperparameters of `config` replace
        the checkpoint's, and the replay buffer is restored when `replay_buffer.pkl` lies
        beside it (a run's final model; checkpoints have none).
    max_minutes : stop training after this many minutes of wall time (then the model and the
        replay buffer are saved as at the end of a full run; `time_limited` in the result).
    """
    end_if_importing_main()  # a subprocess env worker importing a script that trains at import
    from stable_baselines3 import SAC
    from stable_baselines3.common.logger import configure

    from softrod.learn._plots import plot_learning_curve

    if max_minutes is not None and not max_minutes > 0:
        raise ValueError(f"max_minutes must be > 0, got {max_minutes}")
    set_torch_threads(config.torch_threads)
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    # Temporary files of a run killed while saving (never read: their final names are).
    for stale in (*run.glob(".*.partial.*"), *run.glob("checkpoints/.*.partial.*")):
        stale.unlink(missing_ok=True)
    save_config(config, run / "config.yaml")
    env = _make_vec_env(config)
    try:
        # Hyperparameters a run may set, also when it continues another (the config wins).
        hyper: dict[str, Any] = {
            "learning_rate": config.learning_rate,
            "buffer_size": config.buffer_size,
            "batch_size": config.batch_size,
            "tau": config.tau,
            "gamma": config.gamma,
            "train_freq": config.train_freq,
            "gradient_steps": config.gradient_steps,
            "target_entropy": "auto" if config.target_entropy is None else config.target_entropy,
        }
        if config.expert_ratio is not None:
            from softrod.learn._replay import ExpertReplayBuffer

            hyper["replay_buffer_class"] = ExpertReplayBuffer
        restored = False
        if resume is not None:
            # The network and its weights come from the file, the hyperparameters from config.
            model = load_sac(resume, env=env, device="cpu", **hyper)
            _check_critic(model, config, resume)
            buffer = Path(resume).with_name(REPLAY_BUFFER_FILE)
            if buffer.is_file():
                # The run that wrote this model left its replay buffer: continue seamlessly.
                try:
                    model.load_replay_buffer(str(buffer))
                except Exception as exc:  # noqa: BLE001 - any unreadable buffer alike
                    raise ValueError(
                        f"cannot read the replay buffer {buffer}: the file is truncated or "
                        f"corrupt ({exc}); delete it to resume without it"
                    ) from None
                restored = True
                _check_restored_buffer(model.replay_buffer, config, buffer)
            else:
                # No buffer: refill `learning_starts` transitions before the first update, or
                # the first updates fit a handful of samples and undo part of the training.
                model.learning_starts = int(model.num_timesteps) + config.learning_starts
        else:
            # RLPD's layer-normalised critic, or SB3's plain one ("MlpPolicy").
            from softrod.learn._critic import LayerNormSACPolicy

            model = SAC(
                LayerNormSACPolicy if config.critic_layer_norm else "MlpPolicy",
                env,
                learning_starts=config.learning_starts,
                **hyper,
                policy_kwargs={"net_arch": list(config.net_arch)},
                seed=config.seed,
                device="cpu",
                verbose=0,
            )
        if config.expert_episodes and (
            resume is None or (config.expert_ratio is not None and not restored)
        ):
            # Demonstrations first. A resumed run has them in its restored buffer already; one
            # resumed from a checkpoint (no buffer) that keeps them gets the same episodes again.
            expert_stats = prefill_with_expert(model, config)
            (run / "expert_prefill.json").write_text(json.dumps(expert_stats, indent=2))
            if config.expert_ratio is not None:
                model.replay_buffer.protect_expert(config.expert_ratio)
        model.set_logger(configure(str(run), ["csv", *(["tensorboard"] if _has_tb() else [])]))
        start_steps = int(model.num_timesteps)
        logger, callbacks = _callback(config, run, progress, max_minutes)
        t0 = time.perf_counter()
        interrupted = False
        # SB3's own episode-count logging is replaced by the run logger's step-based rows.
        # Ctrl-C (or SIGTERM) ends training early but still saves the model reached so far.
        try:
            with sigterm_as_interrupt():
                model.learn(
                    total_timesteps=config.steps,
                    callback=callbacks,
                    log_interval=10**9,
                    reset_num_timesteps=resume is None,
                )
        except KeyboardInterrupt:
            interrupted = True
        wall = time.perf_counter() - t0
        model_path = run / "model.zip"
        # Final files appear complete or not at all (temporary name, then rename).
        _save_model_atomic(model, model_path)
        if config.save_replay_buffer:
            buffer_path = run / REPLAY_BUFFER_FILE
            tmp = buffer_path.with_name(f".{buffer_path.stem}.{os.getpid()}.partial.pkl")
            try:
                model.save_replay_buffer(str(tmp))
                os.replace(tmp, buffer_path)
            finally:
                tmp.unlink(missing_ok=True)
    finally:
        env.close()
    new_steps = int(model.num_timesteps) - start_steps
    result = TrainResult(
        run, model_path, new_steps, wall, len(logger.rows), interrupted, logger.time_limited
    )
    summary_tmp = run / f".summary.{os.getpid()}.partial.json"
    summary_tmp.write_text(
        json.dumps(
            {
                "env_id": config.env_id,
                "steps": result.steps,
                # A resumed run's steps and wall time are its own; these place it in the whole.
                "total_steps": int(model.num_timesteps),
                "resumed_from": None if resume is None else str(resume),
                "resumed_at_step": start_steps if resume is not None else None,
                "wall_time_s": round(wall, 2),
                "steps_per_second": round(result.steps_per_second, 2),
                "episodes": result.episodes,
                "interrupted": interrupted,
                "time_limited": logger.time_limited,
                "max_minutes": max_minutes,
            },
            indent=2,
        )
    )
    os.replace(summary_tmp, run / "summary.json")
    plot_learning_curve(run)
    return result
