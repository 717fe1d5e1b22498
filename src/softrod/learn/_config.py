"""Typed configurations of training runs (pydantic; written beside every run as YAML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, Field, model_validator

from softrod.description import Spec

__all__ = ["SACConfig", "BCConfig", "save_config", "load_config"]


class _Config(Spec):
    """A run configuration; its YAML names its class (`kind: SACConfig`) for `load_config`."""

    spec_what: ClassVar[str] = "training configuration"

    @model_validator(mode="before")
    @classmethod
    def _drop_kind(cls, data: Any) -> Any:
        # The class name `to_dict` writes is not a field; another class's name stays an error.
        if isinstance(data, dict) and data.get("kind") == cls.__name__:
            return {k: v for k, v in data.items() if k != "kind"}
        return data

    def to_dict(self) -> dict[str, Any]:
        """Every field (None included) after `kind`, the class name."""
        return {"kind": type(self).__name__, **self.model_dump(mode="json")}


class SACConfig(_Config):
    """A Soft Actor-Critic run. Defaults: SoftManiSim's Table 6 (ALGORITHMS.md A.4)."""

    env_id: str = Field(description="Registered environment id, e.g. softrod/Reach-v0.")
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="Environment kwargs.")
    steps: int = Field(default=2_000_000, description="Environment steps (all workers).")
    seed: int = Field(default=0, description="Seed of the policy, the buffer and the envs.")
    n_envs: int = Field(default=1, description="Parallel environments (vectorized).")
    vec_env: Literal["dummy", "subproc"] = Field(
        default="dummy", description="In-process (dummy) or one process per env (subproc)."
    )
    learning_rate: float = Field(default=3e-4, description="Adam learning rate.")
    batch_size: int = Field(default=64, description="Minibatch size.")
    buffer_size: int = Field(default=50_000, description="Replay buffer transitions.")
    gamma: float = Field(default=0.99, description="Discount factor.")
    tau: float = Field(default=0.005, description="Target network smoothing.")
    learning_starts: int = Field(default=1000, description="Random-action steps first.")
    train_freq: int = Field(default=1, description="Environment steps between updates.")
    gradient_steps: int = Field(default=1, description="Gradient steps per update.")
    net_arch: list[int] = Field(
        default_factory=lambda: [256, 256], description="Hidden layers of actor and critics."
    )
    checkpoint_every: int = Field(default=50_000, description="Steps between checkpoints.")
    log_every: int = Field(default=1000, description="Steps between CSV/TensorBoard rows.")
    torch_threads: int = Field(default=1, description="torch intra-op threads per process.")
    target_entropy: float | None = Field(
        default=None,
        description="Entropy the temperature is tuned toward; None: SB3's -dim(action). Lower "
        "values make the behaviour policy less noisy, for tasks that need fine precision.",
    )
    save_replay_buffer: bool = Field(
        default=True,
        description="Write the replay buffer beside model.zip (resumes continue seamlessly).",
    )
    expert_episodes: int = Field(
        default=0,
        description="Episodes of the env's scripted expert (softrod.learn.make_expert) put in "
        "the replay buffer before training (a new run only; one env). They stay there only "
        "while buffer_size exceeds them plus the training steps, unless expert_ratio is set.",
    )
    expert_ratio: float | None = Field(
        default=None,
        description="With expert_episodes: the fraction of every minibatch drawn from the "
        "expert's transitions, which then stay in the buffer for the whole run (symmetric "
        "sampling, RLPD: Ball et al. 2023, uses 0.5). None: they are sampled uniformly with "
        "the agent's own transitions and overwritten once the buffer is full.",
    )
    critic_layer_norm: bool = Field(
        default=False,
        description="LayerNorm after every hidden layer of the critics (RLPD, Ball et al. "
        "2023: it keeps their values bounded where the demonstrations do not reach). A resumed "
        "run must name the critic its model file holds.",
    )

    @model_validator(mode="after")
    def _check(self) -> SACConfig:
        for name in (
            "steps",
            "n_envs",
            "batch_size",
            "buffer_size",
            "train_freq",
            "gradient_steps",
            "checkpoint_every",
            "log_every",
            "torch_threads",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.learning_starts < 0:
            raise ValueError(f"learning_starts must be >= 0, got {self.learning_starts}")
        if self.expert_episodes < 0:
            raise ValueError(f"expert_episodes must be >= 0, got {self.expert_episodes}")
        if self.expert_episodes and self.n_envs != 1:
            raise ValueError(
                f"expert_episodes needs n_envs 1 (one expert env), got n_envs {self.n_envs}"
            )
        if self.expert_ratio is not None:
            if not 0 < self.expert_ratio < 1:
                raise ValueError(f"expert_ratio must be in (0, 1), got {self.expert_ratio}")
            if not self.expert_episodes:
                raise ValueError(
                    f"expert_ratio {self.expert_ratio} needs expert_episodes >= 1, got 0"
                )
        if not 0 < self.gamma <= 1 or not 0 < self.tau <= 1 or not self.learning_rate > 0:
            raise ValueError(
                "gamma and tau must be in (0, 1] and learning_rate > 0, got "
                f"{self.gamma}, {self.tau}, {self.learning_rate}"
            )
        if not self.net_arch or min(self.net_arch) < 1:
            raise ValueError(f"net_arch must list positive layer widths, got {self.net_arch}")
        return self


class BCConfig(_Config):
    """Behaviour cloning from demonstrations with action chunking (MLP or ACT's transformer).

    Defaults: the configuration that reached the seed-002 success rates here (docs/learning.md):
    an MLP predicting 10-step chunks, 3 x 512, 10 000 AdamW steps, no observation noise. Seed
    002's ACT (Table 6: 512 wide, 8 heads, 4 encoder / 1 decoder layers, 2048 feed-forward,
    latent 32, lr 1e-5, KL 10, chunk 75 at 60 Hz, 50 000 iterations) is `policy="act"` with
    those sizes; on one CPU thread a step of that size took about 1.5 s.
    """

    policy: Literal["mlp", "act"] = Field(
        default="mlp",
        description="'mlp': an MLP predicting the next `chunk` actions; 'act': "
        "the CVAE transformer of ACT.",
    )
    chunk: int = Field(default=10, description="Actions predicted per query (1: plain BC).")
    hidden: int = Field(default=512, description="Hidden width (MLP layers / transformer).")
    layers: int = Field(default=3, description="MLP layers / transformer encoder layers.")
    decoder_layers: int = Field(default=1, description="Transformer decoder layers (ACT).")
    heads: int = Field(default=4, description="Attention heads (ACT).")
    feedforward: int = Field(default=1024, description="Transformer feed-forward width (ACT).")
    latent: int = Field(default=32, description="CVAE latent dimension (ACT).")
    dropout: float = Field(default=0.1, description="Dropout (ACT).")
    kl_weight: float = Field(default=10.0, description="KL weight of the CVAE loss (ACT).")
    learning_rate: float = Field(default=1e-4, description="AdamW learning rate.")
    weight_decay: float = Field(default=1e-4, description="AdamW weight decay.")
    iterations: int = Field(default=10_000, description="Gradient steps.")
    batch_size: int = Field(default=256, description="Minibatch size.")
    obs_noise: list[float] | Literal["none", "env"] = Field(
        default="none",
        description="Std of Gaussian noise added to each observation component in training: "
        "a list (one per component), 'env' (the environment's `observation_noise`, seed 002 "
        "Table 4) or 'none'.",
    )
    temporal_ensemble: float = Field(
        default=0.01,
        description="Exponential weight k of ACT's temporal ensembling (w = "
        "exp(-k i), i = 0 the oldest prediction); < 0 disables ensembling (run each chunk).",
    )
    select_execution: bool = Field(
        default=False,
        description="Validate every candidate both ways (open-loop chunks, and ensembled with "
        "`temporal_ensemble`) and keep the better (iteration, way); the saved policy runs "
        "the chosen way. Needs chunk > 1, temporal_ensemble >= 0 and validation episodes.",
    )
    time_input: bool = Field(
        default=False,
        description="Give the policy the time since the episode started [s] as an extra input "
        "(FlipSwitch-v0 needs it: docs/learning.md).",
    )
    pad: Literal["hold", "mask"] = Field(
        default="hold",
        description="Chunk steps past an episode's end: 'hold' trains them on the last action, "
        "'mask' leaves them out of the loss (ACT).",
    )
    dedup_tol: float | None = Field(
        default=1e-9,
        description="Drop consecutive frames whose observations agree within "
        "this tolerance (seed 002 App. E.2); None keeps every frame.",
    )
    ema_decay: float = Field(
        default=0.0,
        description="Decay of an exponential moving average of the weights, updated after every "
        "step (warm-up: min(decay, (1 + t) / (10 + t)) at step t); the average, not the raw "
        "weights, is validated and saved. 0 disables it.",
    )
    lr_schedule: Literal["constant", "cosine"] = Field(
        default="constant",
        description="constant: `learning_rate` throughout (seed 002, ACT); cosine: "
        "learning_rate * (1 + cos(pi (t - 1) / iterations)) / 2 at step t, from the full rate "
        "down to ~0 at the last step.",
    )
    seed: int = Field(default=0, description="Seed of the initialisation and minibatches.")
    torch_threads: int = Field(default=1, description="torch intra-op threads.")

    @model_validator(mode="after")
    def _check(self) -> BCConfig:
        for name in (
            "chunk",
            "hidden",
            "layers",
            "heads",
            "feedforward",
            "latent",
            "iterations",
            "batch_size",
            "torch_threads",
            "decoder_layers",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.policy == "act" and self.hidden % self.heads:
            raise ValueError(
                f"hidden must be a multiple of heads, got {self.hidden} and {self.heads}"
            )
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.select_execution and (self.chunk < 2 or self.temporal_ensemble < 0):
            raise ValueError(
                "select_execution needs chunk > 1 and temporal_ensemble >= 0 (the ensembled "
                f"way to compare with open loop), got chunk {self.chunk} and "
                f"temporal_ensemble {self.temporal_ensemble}"
            )
        if not 0 <= self.ema_decay < 1:
            raise ValueError(f"ema_decay must be in [0, 1), got {self.ema_decay}")
        if not self.learning_rate > 0 or self.weight_decay < 0 or self.kl_weight < 0:
            raise ValueError(
                "learning_rate must be > 0, weight_decay and kl_weight >= 0, got "
                f"{self.learning_rate}, {self.weight_decay}, {self.kl_weight}"
            )
        return self


def save_config(config: BaseModel, path: str | Path) -> None:
    """Write a configuration as YAML (with its class name, so `load_config` can restore it)."""
    if isinstance(config, _Config):
        config.to_yaml(path)
        return
    data = {"kind": type(config).__name__, **config.model_dump(mode="json")}
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False))


def load_config(path: str | Path) -> SACConfig | BCConfig:
    """Read a configuration written by `save_config`; a ValueError names a bad field."""
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, dict) or data.get("kind") not in ("SACConfig", "BCConfig"):
        raise ValueError(f"{path} is not a softrod training configuration")
    # Validated from the file again, so that an error names it (DescriptionError).
    return SACConfig.load(path) if data["kind"] == "SACConfig" else BCConfig.load(path)
