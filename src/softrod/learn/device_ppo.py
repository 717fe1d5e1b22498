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

Nothing lost when killed: every `checkpoint_every` updates `checkpoint.pt` is written atomically
with everything the continuation depends on, as it was right after that update: policy, value,
optimiser, learning-rate schedule (its bounds too), normalisers, torch's random states (CPU and
CUDA), the batched worlds (`BatchedEnv.state_dict`: every world's MuJoCo Warp state, episode
clock, targets and task arrays, last observations, the Generator that draws the next tasks),
skrl's rollout position (agent and memory counters; the memory's contents are all rewritten
before the next update reads them) and the progress (step, recoveries, wall time, last mean
reward). Ctrl-C or SIGTERM saves `policy.pt`, an interrupted summary and the checkpoint of the
last update with finite parameters (the state kept on the device after every such update). With
`resume=True` training continues from the checkpoint and its result (parameters, normaliser,
summary numbers but the wall time) is the uninterrupted run's, bit for bit on Warp's CPU device
(`tests/test_device_ppo.py::test_killed_ppo_resumes_from_its_checkpoint`). The checkpoint is
removed when training ends normally.

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

from softrod._jobs import sigterm_as_interrupt
from softrod._version import __version__

__all__ = [
    "CHECKPOINT_FILE",
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
    checkpoint_every : updates between checkpoints (`checkpoint.pt`, for `resume=True`).
    snapshot_minutes : minutes of training between policy snapshots (`policies/policy_<step>.pt`,
        each `policy.pt`'s format with its step, transitions and wall time; None: none), for
        choosing on validation episodes afterwards and for a distance-vs-minutes curve.
    init_log_std : initial log standard deviation of the Gaussian policy's actions (one learned,
        state-independent parameter per action component; -0.5: 0.61 of the [-1, 1] range).
    direct_solve : train on `BatchedEnv(direct_solve=True)` worlds (constraint-free models only;
        no PCG solve, ~1.65x the world-steps/s of Reach on an H100; see `BatchedEnv`). The
        policy is evaluated on the CPU env either way.
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
    checkpoint_every: int = 10
    snapshot_minutes: float | None = None
    init_log_std: float = -0.5
    direct_solve: bool = False


#: Settings a resumed run may change (how long it trains, how often it saves).
_RESUMABLE_CHANGES = ("timesteps", "max_minutes", "checkpoint_every", "snapshot_minutes")
#: Folder of a run's policy snapshots (`PPOConfig.snapshot_minutes`).
SNAPSHOT_DIR = "policies"
CHECKPOINT_FILE = "checkpoint.pt"
_CHECKPOINT_FORMAT = "softrod-ppo-checkpoint-2"


@dataclass(frozen=True)
class PPOResult:
    """What `train_ppo` did: the policy file, batched steps, transitions (steps x worlds),
    wall time [s], the mean reward per step of the last rollout with a finite one, how many
    non-finite updates were undone, whether Ctrl-C/SIGTERM stopped it, and the step a resumed
    run continued from (0: a fresh run)."""

    run_dir: Path
    policy_path: Path
    timesteps: int
    transitions: int
    wall_time: float
    last_mean_reward: float
    recoveries: int = 0
    interrupted: bool = False
    resumed_from: int = 0

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


def _models(
    obs_space: Any, act_space: Any, device: Any, hidden: tuple[int, ...], init_log_std: float
) -> dict[str, Any]:
    import torch
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model

    n_obs = int(np.prod(obs_space.shape))
    n_act = int(np.prod(act_space.shape))

    class Policy(GaussianMixin, Model):  # type: ignore[misc]
        def __init__(self) -> None:
            Model.__init__(self, observation_space=obs_space, action_space=act_space, device=device)
            GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, reduction="sum")
            self.net = _mlp([n_obs, *hidden, n_act])
            self.log_std = torch.nn.Parameter(torch.full((n_act,), float(init_log_std)))

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
    config: PPOConfig,
    run_dir: str | Path,
    *,
    log: Callable[[str], None] = print,
    resume: bool = False,
) -> PPOResult:
    """Train `config.env_id` with PPO on `config.num_envs` batched worlds (see the module);
    writes `run_dir/policy.pt` and `run_dir/summary.json`; `log` gets a progress line per
    update. resume : continue from `run_dir/checkpoint.pt` (written by a run of the same
    config, up to `timesteps`, `max_minutes` and `checkpoint_every`; ValueError otherwise)."""
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
    if config.checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be >= 1, got {config.checkpoint_every}")
    # skrl clips the log standard deviation to [-20, 2]: a start outside would be moved silently.
    if not -20.0 <= config.init_log_std <= 2.0:
        raise ValueError(f"init_log_std must be in [-20, 2], got {config.init_log_std}")
    if config.snapshot_minutes is not None and not config.snapshot_minutes > 0:
        raise ValueError(f"snapshot_minutes must be > 0, got {config.snapshot_minutes}")
    run = Path(run_dir)
    ckpt_path = run / CHECKPOINT_FILE
    state = _read_checkpoint(ckpt_path, config) if resume else None
    torch.manual_seed(config.seed)
    env = make_batched(
        config.env_id,
        config.num_envs,
        config.device,
        direct_solve=config.direct_solve,
        **config.env_kwargs,
    )
    if config.direct_solve and not env.constraint_free:
        env.close()
        raise ValueError(
            f"direct_solve: {config.env_id} has contacts or constraints (MuJoCo Warp's direct "
            "solve is for constraint-free models only); train without it"
        )
    # Made only once the worlds are accepted: a refused run leaves no empty run directory.
    run.mkdir(parents=True, exist_ok=True)
    dev = env.torch_device
    obs_space, act_space = env.single_observation_space, env.single_action_space
    models = _models(obs_space, act_space, dev, config.hidden, config.init_log_std)
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
    obs, _ = env.reset(seed=config.seed)
    guard = _Guard(agent, models, env)
    progress = _Progress(0, 0, 0.0, float("nan"))
    if state is not None:
        progress = _Progress(**state["progress"])
        # The agent, the random states and the worlds as they were after that update (the
        # env's `obs` tensor now holds that step's observations).
        _restore(agent, models, env, state)
        log(f"ppo: resumed from {ckpt_path} at step {progress.step}")
    start, recoveries, wall_before = progress.step, progress.recoveries, progress.wall_time
    last_mean = progress.last_mean_reward
    failure = ""
    guard.snapshot(progress)
    total = config.timesteps
    if total is None:
        total = 10**9 if config.max_minutes is not None else 10_000
    deadline = None if config.max_minutes is None else 60.0 * config.max_minutes
    # Policy snapshots at whole multiples of the interval (a resumed run goes on from its time).
    every = None if config.snapshot_minutes is None else 60.0 * config.snapshot_minutes
    next_snapshot = None if every is None else every * (np.floor(wall_before / every) + 1.0)
    # The env's tensors are views of buffers the next step overwrites: keep a copy.
    obs = obs.clone()
    t0 = time.perf_counter()
    reward_sum = torch.zeros((), device=dev)
    done_steps, interrupted = start, False
    # Ctrl-C or SIGTERM (a scheduler's stop): leave the loop, save the policy reached so far.
    with sigterm_as_interrupt():
        try:
            for step in range(start, total):
                agent.pre_interaction(timestep=step, timesteps=total)
                with torch.no_grad():
                    actions, _ = agent.act(obs, None, timestep=step, timesteps=total)
                    next_obs, reward, term, trunc, info = env.step(actions)
                    # Counted before skrl sees it: its truncation bootstrap adds
                    # discount * V(last observation) to the reward tensor in place.
                    reward_sum += reward.mean()
                    # Bootstrapping at the horizon uses the last observation, not the next
                    # episode's.
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
                agent.post_interaction(timestep=step, timesteps=total)
                obs = next_obs.clone()
                if (step + 1) % config.rollouts:
                    continue
                # The agent has just updated (every `rollouts` steps): keep it only if finite.
                done_steps = step + 1
                mean = float(reward_sum) / config.rollouts
                reward_sum.zero_()
                if np.isfinite(mean):
                    last_mean = mean
                wall = wall_before + time.perf_counter() - t0
                if guard.finite():
                    guard.snapshot(_Progress(done_steps, recoveries, wall, last_mean))
                    if (done_steps // config.rollouts) % config.checkpoint_every == 0:
                        _save_checkpoint(ckpt_path, guard.checkpoint(config))
                    if next_snapshot is not None and wall >= next_snapshot:
                        (run / SNAPSHOT_DIR).mkdir(exist_ok=True)
                        _save_policy(
                            run / SNAPSHOT_DIR / f"policy_{done_steps:09d}.pt",
                            agent,
                            models["policy"],
                            config,
                            obs_space,
                            act_space,
                            progress={
                                "step": done_steps,
                                "transitions": done_steps * config.num_envs,
                                "wall_time_s": wall,
                            },
                        )
                        while next_snapshot <= wall:
                            next_snapshot += every
                else:
                    recoveries += 1
                    lr = guard.restore_halving_lr()
                    log(
                        f"ppo step {done_steps}: non-finite parameters after an update "
                        f"({recoveries}/{config.max_recoveries}); restored the last finite "
                        f"ones, learning rate {lr:.3g}"
                    )
                    if recoveries > config.max_recoveries:
                        failure = (
                            f"PPO diverged: non-finite parameters after {recoveries} updates "
                            f"(max_recoveries {config.max_recoveries}); kept the last finite "
                            "policy"
                        )
                        break
                log(
                    f"ppo step {done_steps} transitions {done_steps * config.num_envs} "
                    f"mean_reward {mean:.4f} wall {wall:.1f} s"
                )
                if deadline is not None and wall >= deadline:
                    break
        except KeyboardInterrupt:
            # Stopped anywhere (mid-update too): back to the last update with finite parameters,
            # whose state (agent, random states, worlds) becomes the checkpoint and the policy.
            interrupted = True
            guard.restore()
            wall_spent = wall_before + time.perf_counter() - t0
            _save_checkpoint(ckpt_path, guard.checkpoint(config, wall_time=wall_spent))
            log(
                f"ppo: interrupted after step {done_steps}; saved the policy and the checkpoint "
                f"of step {guard.progress.step}"
            )
    wall = wall_before + time.perf_counter() - t0
    # Never save a non-finite policy: fall back to the last finite snapshot.
    if not guard.finite():
        guard.restore_halving_lr()
    policy_path = run / "policy.pt"
    _save_policy(policy_path, agent, models["policy"], config, obs_space, act_space)
    result = PPOResult(
        run,
        policy_path,
        done_steps,
        done_steps * config.num_envs,
        wall,
        last_mean,
        recoveries,
        interrupted,
        start,
    )
    summary = {
        "env_id": config.env_id,
        "status": "diverged" if failure else ("interrupted" if interrupted else "ok"),
        "failure": failure or None,
        "policy": "last finite policy (training diverged)" if failure else "final policy",
        "interrupted": interrupted,
        "resumed_from_step": start,
        "recoveries": recoveries,
        "timesteps": result.timesteps,
        "transitions": result.transitions,
        "wall_time_s": result.wall_time,
        "transitions_per_s": result.transitions_per_second,
        "last_mean_reward": last_mean if np.isfinite(last_mean) else None,
        "snapshots": _snapshot_rows(run),
        "config": _config_dict(config),
    }
    _write_atomic(run / "summary.json", json.dumps(summary, indent=2).encode())
    env.close()
    # A finished run needs no checkpoint; a stopped or diverged one keeps it for resume=True.
    if not (failure or interrupted):
        ckpt_path.unlink(missing_ok=True)
    if failure:
        raise PPODivergedError(failure, result)
    return result


@dataclass(frozen=True)
class _Progress:
    """Where training stands at a checkpoint: batched steps done, non-finite updates undone,
    wall time so far [s], mean reward per step of the last finite rollout."""

    step: int
    recoveries: int
    wall_time: float
    last_mean_reward: float


def _write_atomic(path: Path, data: bytes) -> None:
    """Write `data` under a temporary name beside `path`, then rename it over `path`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _scalers(agent: Any) -> dict[str, Any]:
    names = {"obs_scaler": "_observation_preprocessor", "value_scaler": "_value_preprocessor"}
    return {
        key: getattr(agent, name)
        for key, name in names.items()
        if hasattr(getattr(agent, name, None), "state_dict")
    }


def _to_cpu(obj: Any) -> Any:
    """`obj` (nested dicts / lists / tuples) with every torch tensor copied to the CPU."""
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


def _save_checkpoint(path: Path, payload: dict[str, Any]) -> None:
    """Write a checkpoint payload (`_Guard.checkpoint`; tensors on any device) atomically."""
    import io

    import torch

    buf = io.BytesIO()
    torch.save(_to_cpu(payload), buf)
    _write_atomic(path, buf.getvalue())


def _read_checkpoint(path: Path, config: PPOConfig) -> dict[str, Any]:
    """The payload of a PPO checkpoint written for `config` (ValueError naming the file for a
    truncated or corrupt file, another version or another configuration)."""
    import torch

    if not path.is_file():
        raise FileNotFoundError(f"resume: no PPO checkpoint at {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is reported the same way
        raise ValueError(
            f"cannot read the PPO checkpoint {path}: the file is truncated or corrupt ({exc})"
        ) from None
    if not isinstance(state, dict) or not str(state.get("format", "")).startswith(
        "softrod-ppo-checkpoint-"
    ):
        raise ValueError(f"{path} is not a softrod PPO checkpoint")
    if state["format"] != _CHECKPOINT_FORMAT:
        raise ValueError(
            f"{path} is a PPO checkpoint of format {state['format']}, this softrod reads "
            f"{_CHECKPOINT_FORMAT}; delete it to start over"
        )
    if state.get("softrod") != __version__:
        raise ValueError(
            f"{path} was written by softrod {state.get('softrod')}, this is {__version__}; "
            "delete it to start over"
        )
    # A setting added after the checkpoint was written counts as its default.
    defaults = {
        f.name: f.default
        for f in dataclasses.fields(PPOConfig)
        if f.default is not dataclasses.MISSING
    }
    mine, theirs = _config_dict(config), {**defaults, **state["config"]}
    changed = sorted(
        k
        for k in set(mine) | set(theirs)
        if k not in _RESUMABLE_CHANGES and mine.get(k) != theirs.get(k)
    )
    if changed:
        raise ValueError(
            f"{path} is the checkpoint of another PPO configuration ({', '.join(changed)} "
            "differ); resume with the same settings or start a new run"
        )
    return state


def _restore(agent: Any, models: dict[str, Any], env: Any, state: dict[str, Any]) -> None:
    """Load a checkpoint into the agent, the random states and the batched worlds."""
    import torch

    models["policy"].load_state_dict(state["policy"])
    models["value"].load_state_dict(state["value"])
    scalers = _scalers(agent)
    for key, module_state in state["scalers"].items():
        scalers[key].load_state_dict(module_state)
    agent.optimizer.load_state_dict(state["optimizer"])
    scheduler = getattr(agent, "scheduler", None)
    if scheduler is not None and state["scheduler"] is not None:
        scheduler.load_state_dict(state["scheduler"])
    rollout = state["rollout"]
    agent._rollout = rollout["agent"]
    memory = agent.memory
    memory.memory_index, memory.env_index = rollout["memory_index"], rollout["env_index"]
    memory.filled = rollout["memory_filled"]
    torch.set_rng_state(state["rng"])
    if state["cuda_rng"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    env.load_state_dict(state["env"])


class _Guard:
    """The state right after the last update with finite parameters, on the device: the agent's
    parameters, optimiser, schedule and normalisers, the random states, skrl's rollout position,
    the batched worlds and the progress. Undoes a non-finite update (`restore`: parameters and
    optimiser) and is what a checkpoint holds (`checkpoint`)."""

    def __init__(self, agent: Any, models: dict[str, Any], env: Any) -> None:
        self.agent, self.env = agent, env
        self.modules = {"policy": models["policy"], "value": models["value"], **_scalers(agent)}
        self.saved: dict[str, Any] = {}
        self.progress = _Progress(0, 0, 0.0, float("nan"))

    def finite(self) -> bool:
        import torch

        tensors = [t for m in self.modules.values() for t in m.state_dict().values()]
        checks = [torch.isfinite(t).all() for t in tensors if t.is_floating_point()]
        # One device -> host read per update.
        return bool(torch.stack(checks).all())

    def snapshot(self, progress: _Progress) -> None:
        """Keep the current state (right after an update, or at the start) as the last good
        one; `progress` is where training stands."""
        import torch

        agent, memory = self.agent, self.agent.memory
        scheduler = getattr(agent, "scheduler", None)
        modules = {
            name: {k: v.detach().clone() for k, v in m.state_dict().items()}
            for name, m in self.modules.items()
        }
        # Built whole, then assigned: an interrupt while copying keeps the previous snapshot.
        saved = {
            "modules": modules,
            "optimizer": copy.deepcopy(agent.optimizer.state_dict()),
            "scheduler": copy.deepcopy(scheduler.state_dict()) if scheduler is not None else None,
            "rollout": {
                "agent": int(agent._rollout),
                "memory_index": int(memory.memory_index),
                "env_index": int(memory.env_index),
                "memory_filled": bool(memory.filled),
            },
            "rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None,
            "env": self.env.state_dict(),
        }
        self.saved, self.progress = saved, progress

    def restore(self) -> None:
        """Restore the snapshot's parameters, normalisers and optimiser as they were taken."""
        for name, m in self.modules.items():
            m.load_state_dict(self.saved["modules"][name])
        self.agent.optimizer.load_state_dict(copy.deepcopy(self.saved["optimizer"]))

    def restore_halving_lr(self) -> float:
        """Restore the snapshot, halve the learning rate; returns the new rate."""
        opt = self.agent.optimizer
        lr = 0.5 * opt.param_groups[0]["lr"]
        self.restore()
        for group in opt.param_groups:
            group["lr"] = lr
        scheduler = getattr(self.agent, "scheduler", None)
        if scheduler is not None and hasattr(scheduler, "max_lr"):
            scheduler.max_lr = max(lr, scheduler.min_lr)
        return float(lr)

    def checkpoint(self, config: PPOConfig, *, wall_time: float | None = None) -> dict[str, Any]:
        """The snapshot as a checkpoint payload of `config` (`wall_time` [s]: the training time
        spent so far, when it runs past the snapshot's step)."""
        progress = self.progress
        if wall_time is not None:
            progress = dataclasses.replace(progress, wall_time=wall_time)
        saved = self.saved
        modules = saved["modules"]
        return {
            "format": _CHECKPOINT_FORMAT,
            "softrod": __version__,
            "config": _config_dict(config),
            "progress": dataclasses.asdict(progress),
            "policy": modules["policy"],
            "value": modules["value"],
            "scalers": {k: v for k, v in modules.items() if k not in ("policy", "value")},
            **{k: saved[k] for k in ("optimizer", "scheduler", "rollout", "rng", "cuda_rng")},
            "env": saved["env"],
        }


def _config_dict(config: PPOConfig) -> dict[str, Any]:
    out = dataclasses.asdict(config)
    out["hidden"] = list(config.hidden)
    return out


def _snapshot_rows(run: Path) -> list[dict[str, Any]]:
    """The run's policy snapshots in step order: file (relative to the run), step, transitions,
    wall time [s] when written."""
    rows = []
    for path in sorted((run / SNAPSHOT_DIR).glob("policy_*.pt")):
        payload = _read_policy(path)
        if payload is not None:
            rows.append({"file": f"{SNAPSHOT_DIR}/{path.name}", **payload.get("progress", {})})
    return rows


def _save_policy(
    path: Path,
    agent: Any,
    policy: Any,
    config: PPOConfig,
    obs_space: Any,
    act_space: Any,
    *,
    progress: dict[str, Any] | None = None,
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
        # Not used by the deterministic policy; kept to see how far exploration had shrunk.
        "log_std": policy.log_std.detach().cpu(),
        "obs_mean": scaler.running_mean.detach().cpu(),
        "obs_var": scaler.running_variance.detach().cpu(),
        "obs_clip": float(scaler.clip_threshold),
        **({"progress": progress} if progress is not None else {}),
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
