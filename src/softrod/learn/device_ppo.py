"""PPO on the device: skrl's PPO agent on `softrod.envs.make_batched` worlds (MuJoCo Warp).

Observations, actions, rewards and the rollout memory stay on the device: the batched env's
Warp arrays are shared with torch (`warp.to_torch`, no copies), skrl's agent samples actions on
the same device and the env reads them back with `warp.from_torch`.

Why skrl (not rsl-rl-lib): rsl-rl-lib 5.x needs tensordict, a compiled package built for one
torch version, while skrl is pure Python (gymnasium, tqdm, packaging, tensorboard) with a torch
PPO that takes torch tensors of any vectorised environment; it installs beside any torch.

Guarded against divergence: the learning rate adapts to the KL divergence between the old and
new policy (skrl's `KLAdaptiveLR`, threshold `kl_threshold`, as Isaac Lab / rsl-rl), gradients
are clipped to a global norm of `grad_norm_clip` (1.0, rsl-rl's), and after every update every
policy, value and normaliser parameter is checked: a non-finite one restores the last finite
snapshot (kept on the device), halves the learning rate (the KL schedule may not raise it above
that again) and logs one line; after `max_recoveries` such events training stops with
`PPODivergedError`. A non-finite policy is never saved: `policy.pt` is the last finite one.

`train_ppo(config, run_dir)` writes `policy.pt` (atomically: a temporary file renamed), with
the policy network, the observation normaliser and the config; `load_ppo_policy(path)` turns it
into a numpy policy for `softrod.learn.evaluate` (the CPU env, seeded episodes).

Optional: needs skrl, torch and the `warp` extra (`pip install 'softrod[warp]'`).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "PPOConfig",
    "PPODivergedError",
    "PPOResult",
    "is_ppo_policy",
    "load_ppo_policy",
    "train_ppo",
]


@dataclass(frozen=True)
class PPOConfig:
    """Settings of `train_ppo`.

    timesteps : batched control steps (each is `num_envs` transitions); None: until
    `max_minutes` (then 10 000 when neither is given). max_minutes : wall-clock bound of the
    training loop [min] (None: none). rollouts : steps per world between updates;
    learning_epochs, mini_batches, learning_rate, discount, gae_lambda, entropy_scale : PPO's;
    hidden : widths of the policy and value MLPs (ELU). kl_threshold : target KL divergence of
    the adaptive learning rate (0: a fixed rate). grad_norm_clip : global gradient-norm bound.
    max_recoveries : non-finite updates undone (snapshot restored, rate halved) before failing.
    """

    env_id: str
    num_envs: int = 4096
    device: str = "cuda:0"
    timesteps: int | None = None
    max_minutes: float | None = None
    seed: int = 0
    rollouts: int = 24
    learning_epochs: int = 5
    mini_batches: int = 4
    learning_rate: float = 3e-4
    discount: float = 0.99
    gae_lambda: float = 0.95
    entropy_scale: float = 0.0
    hidden: tuple[int, ...] = (256, 128, 64)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    kl_threshold: float = 0.01
    grad_norm_clip: float = 1.0
    max_recoveries: int = 3


@dataclass(frozen=True)
class PPOResult:
    """What `train_ppo` did: the policy file, batched steps, transitions (steps x worlds),
    wall time [s], the mean reward per step of the last rollout with a finite one, and how
    many non-finite updates were undone."""

    run_dir: Path
    policy_path: Path
    timesteps: int
    transitions: int
    wall_time: float
    last_mean_reward: float
    recoveries: int = 0

    @property
    def transitions_per_second(self) -> float:
        return self.transitions / max(self.wall_time, 1e-9)


class PPODivergedError(RuntimeError):
    """Training stopped after too many non-finite updates; `result` is the run (its
    `policy.pt` the last finite policy, its summary.json says so)."""

    def __init__(self, message: str, result: PPOResult) -> None:
        super().__init__(message)
        self.result = result


def _mlp(sizes: list[int]) -> Any:
    import torch.nn as nn

    layers: list[Any] = []
    for a, b in zip(sizes[:-2], sizes[1:-1], strict=True):
        layers += [nn.Linear(a, b), nn.ELU()]
    layers.append(nn.Linear(sizes[-2], sizes[-1]))
    return nn.Sequential(*layers)


def _models(obs_space: Any, act_space: Any, device: Any, hidden: tuple[int, ...]) -> dict[str, Any]:
    import torch
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model

    n_obs = int(np.prod(obs_space.shape))
    n_act = int(np.prod(act_space.shape))

    class Policy(GaussianMixin, Model):  # type: ignore[misc]
        def __init__(self) -> None:
            Model.__init__(self, observation_space=obs_space, action_space=act_space, device=device)
            GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, reduction="sum")
            self.net = _mlp([n_obs, *hidden, n_act])
            self.log_std = torch.nn.Parameter(torch.full((n_act,), -0.5))

        def compute(self, inputs: dict[str, Any], role: str = "") -> tuple[Any, dict[str, Any]]:
            return self.net(inputs["observations"]), {"log_std": self.log_std}

    class Value(DeterministicMixin, Model):  # type: ignore[misc]
        def __init__(self) -> None:
            Model.__init__(self, observation_space=obs_space, action_space=act_space, device=device)
            DeterministicMixin.__init__(self, clip_actions=False)
            self.net = _mlp([n_obs, *hidden, 1])

        def compute(self, inputs: dict[str, Any], role: str = "") -> tuple[Any, dict[str, Any]]:
            return self.net(inputs["observations"]), {}

    return {"policy": Policy().to(device), "value": Value().to(device)}


def train_ppo(
    config: PPOConfig, run_dir: str | Path, *, log: Callable[[str], None] = print
) -> PPOResult:
    """Train `config.env_id` with PPO on `config.num_envs` batched worlds (see the module);
    writes `run_dir/policy.pt` and `run_dir/summary.json`; `log` gets a progress line per
    update."""
    import torch
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.resources.preprocessors.torch import RunningStandardScaler
    from skrl.resources.schedulers.torch import KLAdaptiveLR

    from softrod.envs import make_batched

    if config.num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {config.num_envs}")
    if config.timesteps is not None and config.timesteps < 1:
        raise ValueError(f"timesteps must be >= 1, got {config.timesteps}")
    if config.max_minutes is not None and not config.max_minutes > 0:
        raise ValueError(f"max_minutes must be > 0, got {config.max_minutes}")
    if config.max_recoveries < 0:
        raise ValueError(f"max_recoveries must be >= 0, got {config.max_recoveries}")
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    env = make_batched(config.env_id, config.num_envs, config.device, **config.env_kwargs)
    dev = env.torch_device
    obs_space, act_space = env.single_observation_space, env.single_action_space
    models = _models(obs_space, act_space, dev, config.hidden)
    cfg = PPO_CFG(
        rollouts=config.rollouts,
        learning_epochs=config.learning_epochs,
        mini_batches=config.mini_batches,
        discount_factor=config.discount,
        gae_lambda=config.gae_lambda,
        learning_rate=config.learning_rate,
        learning_rate_scheduler=KLAdaptiveLR if config.kl_threshold > 0 else None,
        learning_rate_scheduler_kwargs={"kl_threshold": config.kl_threshold},
        grad_norm_clip=config.grad_norm_clip,
        entropy_loss_scale=config.entropy_scale,
        value_loss_scale=1.0,
        time_limit_bootstrap=True,
        observation_preprocessor=RunningStandardScaler,
        observation_preprocessor_kwargs={"size": obs_space, "device": dev},
        value_preprocessor=RunningStandardScaler,
        value_preprocessor_kwargs={"size": 1, "device": dev},
    )
    # No TensorBoard files or skrl checkpoints: the run directory holds our own outputs.
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    cfg.experiment.directory = str(run)
    memory = RandomMemory(memory_size=config.rollouts, num_envs=config.num_envs, device=dev)
    agent = PPO(
        models=models,
        memory=memory,
        observation_space=obs_space,
        action_space=act_space,
        device=dev,
        cfg=cfg,
    )
    agent.init()
    agent.enable_training_mode(True)
    guard = _Guard(agent, models)
    recoveries, failure = 0, ""
    total = config.timesteps
    if total is None:
        total = 10**9 if config.max_minutes is not None else 10_000
    deadline = None if config.max_minutes is None else 60.0 * config.max_minutes
    obs, _ = env.reset(seed=config.seed)
    # The env's tensors are views of buffers the next step overwrites: keep a copy.
    obs = obs.clone()
    t0 = time.perf_counter()
    reward_sum = torch.zeros((), device=dev)
    last_mean, done_steps = float("nan"), 0
    for step in range(total):
        agent.pre_interaction(timestep=step, timesteps=total)
        with torch.no_grad():
            actions, _ = agent.act(obs, None, timestep=step, timesteps=total)
            next_obs, reward, term, trunc, info = env.step(actions)
            # Bootstrapping at the horizon uses the last observation, not the next episode's.
            agent.record_transition(
                observations=obs,
                states=None,
                actions=actions,
                rewards=reward.view(-1, 1),
                next_observations=info.get("final_obs", next_obs),
                next_states=None,
                terminated=term.view(-1, 1),
                truncated=trunc.view(-1, 1),
                infos=info,
                timestep=step,
                timesteps=total,
            )
            reward_sum += reward.mean()
        agent.post_interaction(timestep=step, timesteps=total)
        obs = next_obs.clone()
        done_steps = step + 1
        if done_steps % config.rollouts == 0:
            # The agent has just updated (every `rollouts` steps): keep it only if finite.
            mean = float(reward_sum) / config.rollouts
            reward_sum.zero_()
            if np.isfinite(mean):
                last_mean = mean
            wall = time.perf_counter() - t0
            if guard.finite():
                guard.snapshot()
            else:
                recoveries += 1
                lr = guard.restore_halving_lr()
                log(
                    f"ppo step {done_steps}: non-finite parameters after an update "
                    f"({recoveries}/{config.max_recoveries}); restored the last finite ones, "
                    f"learning rate {lr:.3g}"
                )
                if recoveries > config.max_recoveries:
                    failure = (
                        f"PPO diverged: non-finite parameters after {recoveries} updates "
                        f"(max_recoveries {config.max_recoveries}); kept the last finite policy"
                    )
                    break
            log(
                f"ppo step {done_steps} transitions {done_steps * config.num_envs} "
                f"mean_reward {mean:.4f} wall {wall:.1f} s"
            )
            if deadline is not None and wall >= deadline:
                break
    wall = time.perf_counter() - t0
    # Never save a non-finite policy: fall back to the last finite snapshot.
    if not guard.finite():
        guard.restore_halving_lr()
    policy_path = run / "policy.pt"
    _save_policy(policy_path, agent, models["policy"], config, obs_space, act_space)
    result = PPOResult(
        run, policy_path, done_steps, done_steps * config.num_envs, wall, last_mean, recoveries
    )
    summary = {
        "env_id": config.env_id,
        "status": "diverged" if failure else "ok",
        "failure": failure or None,
        "policy": "last finite policy (training diverged)" if failure else "final policy",
        "recoveries": recoveries,
        "timesteps": result.timesteps,
        "transitions": result.transitions,
        "wall_time_s": result.wall_time,
        "transitions_per_s": result.transitions_per_second,
        "last_mean_reward": last_mean if np.isfinite(last_mean) else None,
        "config": _config_dict(config),
    }
    (run / "summary.json").write_text(json.dumps(summary, indent=2))
    env.close()
    if failure:
        raise PPODivergedError(failure, result)
    return result


class _Guard:
    """The last finite parameters of the agent (models, optimiser, normalisers), on the
    device; checks and restores them."""

    def __init__(self, agent: Any, models: dict[str, Any]) -> None:
        self.agent = agent
        self.modules = [models["policy"], models["value"]]
        for name in ("_observation_preprocessor", "_value_preprocessor"):
            pre = getattr(agent, name, None)
            if hasattr(pre, "state_dict"):
                self.modules.append(pre)
        self.saved: list[Any] = []
        self.snapshot()

    def finite(self) -> bool:
        import torch

        tensors = [t for m in self.modules for t in m.state_dict().values()]
        checks = [torch.isfinite(t).all() for t in tensors if t.is_floating_point()]
        # One device -> host read per update.
        return bool(torch.stack(checks).all())

    def snapshot(self) -> None:
        modules = [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in self.modules]
        self.saved = [modules, copy.deepcopy(self.agent.optimizer.state_dict())]

    def restore_halving_lr(self) -> float:
        """Restore the snapshot, halve the learning rate; returns the new rate."""
        modules, optimizer = self.saved
        for m, state in zip(self.modules, modules, strict=True):
            m.load_state_dict(state)
        opt = self.agent.optimizer
        lr = 0.5 * opt.param_groups[0]["lr"]
        opt.load_state_dict(copy.deepcopy(optimizer))
        for group in opt.param_groups:
            group["lr"] = lr
        scheduler = getattr(self.agent, "scheduler", None)
        if scheduler is not None and hasattr(scheduler, "max_lr"):
            scheduler.max_lr = max(lr, scheduler.min_lr)
        return float(lr)


def _config_dict(config: PPOConfig) -> dict[str, Any]:
    out = dataclasses.asdict(config)
    out["hidden"] = list(config.hidden)
    return out


def _save_policy(
    path: Path, agent: Any, policy: Any, config: PPOConfig, obs_space: Any, act_space: Any
) -> None:
    import torch

    scaler = agent._observation_preprocessor
    payload = {
        "format": "softrod-ppo-1",
        "config": _config_dict(config),
        "n_obs": int(np.prod(obs_space.shape)),
        "n_act": int(np.prod(act_space.shape)),
        "act_low": np.asarray(act_space.low, dtype=np.float32),
        "act_high": np.asarray(act_space.high, dtype=np.float32),
        "net": {k: v.detach().cpu() for k, v in policy.net.state_dict().items()},
        "obs_mean": scaler.running_mean.detach().cpu(),
        "obs_var": scaler.running_variance.detach().cpu(),
        "obs_clip": float(scaler.clip_threshold),
    }
    # Atomic: a reader sees the old file or the whole new one, never a partial write.
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


def _read_policy(path: str | Path) -> dict[str, Any] | None:
    """The payload of a softrod PPO `policy.pt` (or its run directory); None for other files."""
    import torch

    p = Path(path)
    if p.is_dir():
        p = p / "policy.pt"
    if not p.is_file() or p.suffix != ".pt":
        return None
    payload = torch.load(p, map_location="cpu", weights_only=False)
    if not isinstance(payload, dict) or payload.get("format") != "softrod-ppo-1":
        return None
    return payload


def is_ppo_policy(path: str | Path) -> bool:
    """Whether `path` is a policy written by `train_ppo` (a .pt file or its run directory;
    behaviour-cloning runs also write a policy.pt, of another format)."""
    return _read_policy(path) is not None


def load_ppo_policy(path: str | Path) -> Callable[[np.ndarray], np.ndarray]:
    """The deterministic policy (mean action) of a `policy.pt` (or its run directory), as a
    numpy function obs (n_obs,) -> action (n_act,) on the CPU (for `softrod.learn.evaluate`).
    Attributes of the function: `env_id`, `env_kwargs`."""
    import torch

    payload = _read_policy(path)
    if payload is None:
        raise FileNotFoundError(f"no softrod PPO policy at {path}")
    cfg = payload["config"]
    net = _mlp([payload["n_obs"], *cfg["hidden"], payload["n_act"]])
    net.load_state_dict(payload["net"])
    net.eval()
    mean, var = payload["obs_mean"].float(), payload["obs_var"].float()
    clip = payload["obs_clip"]
    low, high = payload["act_low"], payload["act_high"]

    def policy(obs: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32))
        x = torch.clamp((x - mean) / (torch.sqrt(var) + 1e-8), -clip, clip)
        with torch.no_grad():
            a = net(x).numpy()
        return np.clip(a, low, high)

    policy.env_id = cfg["env_id"]  # type: ignore[attr-defined]
    policy.env_kwargs = dict(cfg.get("env_kwargs") or {})  # type: ignore[attr-defined]
    return policy
