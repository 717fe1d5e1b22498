"""Behaviour cloning from demonstrations: an MLP, or an ACT-style action-chunking transformer.

`policy="act"` is the state-only ACT of seed 002 (ALGORITHMS.md C.4; Zhao et al. 2023): a
conditional VAE whose encoder (training only) reads [CLS, observation, action chunk] and
predicts a latent style z; the policy, a transformer encoder over [z, observation] and a
decoder with one learned query per future step, predicts the next `chunk` actions. The loss is
L1 on the chunk (steps past the episode's end hold its last action, `pad="hold"`, or are
masked as in ACT, `pad="mask"`) plus `kl_weight` x KL(z). At run time z = 0 and the chunks that
cover the current step are averaged with exponential weights exp(-k i), i = 0 for the oldest
(temporal ensembling), querying every step. `policy="mlp"` regresses the next `chunk` actions
with an MLP (L1; chunk = 1 is plain behaviour cloning), ensembled the same way.

With `time_input` the policy also reads the time since the episode started, its own step
counter x the control period: the seed-002 observation has no velocities and the toggle state is
not observed, so the end of a switch demonstration (behind the plate, TDCR straight) looks like
its beginning (measured: without it the cloned policy started over; with it, 86 % success).
On the grasp, whose phases the state shows, the time input made the policy run ahead of the arm
and knock the cylinder over (5 % instead of 91 %), so it is off by default.

Observations and actions are standardized with the demonstrations' mean and std; during training
Gaussian noise with the environment's `observation_noise` (seed 002 Table 4) is added to the
raw observations. A trained policy is one `.pt` file (tensors and plain metadata) with the
environment id, so `softrod eval` can run it.

With `val_episodes` > 0 the network is evaluated every `val_every` iterations (and at the end)
on validation episodes (reset seeds `val_seed`, `val_seed` + 1, ...; 20000+ by default, disjoint
from the test seeds 10000-10099) and the best of these checkpoints (highest success rate, then
lowest mean final distance; the later one on a tie) is written as the policy; the validation
history and the chosen iteration are in `summary.json`. Without, the last weights are the policy.
With `select_execution` each candidate is validated twice, its chunks run open loop and then
ensembled, and the better (iteration, way) pair is the policy (a tie at one iteration keeps the
ensembled way, seed 002's): how a policy runs its chunks can matter as much as its weights
(docs/learning.md, "The grasp, both ways").
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from softrod._jobs import stop_requested
from softrod._version import __version__
from softrod.learn._config import BCConfig, save_config
from softrod.learn._demos import DemoSet, duplicate_mask

__all__ = ["BCPolicy", "BCResult", "train_bc", "load_bc_policy", "is_bc_policy"]

#: Marker stored in policy files.
_KIND = "softrod-bc-policy"
#: Smallest standard deviation used to standardize a component (constant components).
_STD_FLOOR = 1e-4


def _build_net(cfg: BCConfig, obs_dim: int, act_dim: int) -> Any:
    import torch
    from torch import nn

    class MLPNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers: list[nn.Module] = []
            width = obs_dim
            for _ in range(cfg.layers):
                layers += [nn.Linear(width, cfg.hidden), nn.ReLU()]
                width = cfg.hidden
            layers.append(nn.Linear(width, cfg.chunk * act_dim))
            self.net = nn.Sequential(*layers)

        def forward(self, obs: torch.Tensor, actions: Any = None, is_pad: Any = None) -> Any:
            return self.net(obs).reshape(obs.shape[0], cfg.chunk, act_dim), None, None

    class ACTNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            h, k = cfg.hidden, cfg.chunk
            # CVAE encoder: [CLS, obs, a_1..a_k] -> (mu, logvar) of z.
            self.cls = nn.Parameter(torch.zeros(1, 1, h))
            self.enc_obs = nn.Linear(obs_dim, h)
            self.enc_act = nn.Linear(act_dim, h)
            self.enc_pos = nn.Parameter(0.02 * torch.randn(1, k + 2, h))
            layer = nn.TransformerEncoderLayer(
                h, cfg.heads, cfg.feedforward, cfg.dropout, batch_first=True
            )
            self.cvae = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
            self.to_latent = nn.Linear(h, 2 * cfg.latent)
            # Policy: encoder over [z, obs], decoder with k learned queries.
            self.z_in = nn.Linear(cfg.latent, h)
            self.obs_in = nn.Linear(obs_dim, h)
            self.src_pos = nn.Parameter(0.02 * torch.randn(1, 2, h))
            self.query = nn.Parameter(0.02 * torch.randn(1, k, h))
            self.transformer = nn.Transformer(
                d_model=h,
                nhead=cfg.heads,
                num_encoder_layers=cfg.layers,
                num_decoder_layers=cfg.decoder_layers,
                dim_feedforward=cfg.feedforward,
                dropout=cfg.dropout,
                batch_first=True,
            )
            self.head = nn.Linear(h, act_dim)

        def forward(self, obs: torch.Tensor, actions: Any = None, is_pad: Any = None) -> Any:
            b = obs.shape[0]
            if actions is not None:
                tokens = (
                    torch.cat(
                        [
                            self.cls.expand(b, -1, -1),
                            self.enc_obs(obs)[:, None],
                            self.enc_act(actions),
                        ],
                        dim=1,
                    )
                    + self.enc_pos
                )
                mask = torch.cat([torch.zeros(b, 2, dtype=torch.bool), is_pad], dim=1)
                hid = self.cvae(tokens, src_key_padding_mask=mask)[:, 0]
                mu, logvar = self.to_latent(hid).chunk(2, dim=-1)
                z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
            else:
                mu = logvar = None
                z = torch.zeros(b, cfg.latent)
            src = torch.stack([self.z_in(z), self.obs_in(obs)], dim=1) + self.src_pos
            out = self.transformer(src, self.query.expand(b, -1, -1))
            return self.head(out), mu, logvar

    return ACTNet() if cfg.policy == "act" else MLPNet()


def kl_to_prior(mu: Any, logvar: Any) -> Any:
    """KL divergence [nats] of each diagonal Gaussian N(mu, exp(logvar)) from N(0, I): (..., latent)
    tensors -> (...); the CVAE's KL term in training and `bc_diagnostics`' latent usage."""
    return -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1)


def _learning_rate(config: BCConfig, it: int) -> float:
    """The rate of gradient step `it` (1-based) under `config.lr_schedule`; a function of the
    step alone, so a resumed run follows the same schedule."""
    if config.lr_schedule == "cosine":
        return config.learning_rate * 0.5 * (1 + math.cos(math.pi * (it - 1) / config.iterations))
    return config.learning_rate


def _ema_update(ema: Any, net: Any, decay: float) -> None:
    """ema <- decay ema + (1 - decay) net, parameter by parameter; buffers are copied."""
    import torch

    with torch.no_grad():
        for avg, p in zip(ema.parameters(), net.parameters(), strict=True):
            avg.mul_(decay).add_(p.detach(), alpha=1.0 - decay)
        for avg, b in zip(ema.buffers(), net.buffers(), strict=True):
            avg.copy_(b)


def _chunks(
    demos: DemoSet, k: int, dedup_tol: float | None, time_input: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(inputs (N, o [+1]), action chunks (N, k, a), is_pad (N, k)) over the kept frames.

    Consecutive duplicate frames are dropped per episode (`dedup_tol`); with `time_input` the
    input gains the frame's time since the episode started [s] (taken before dropping).
    """
    obs_l, act_l, pad_l = [], [], []
    for o, a in zip(demos.observations, demos.actions, strict=True):
        if time_input:
            o = np.column_stack([o, np.arange(len(o)) * demos.control_period])
        if dedup_tol is not None:
            keep = duplicate_mask(o[:, :-1] if time_input else o, dedup_tol)
            o, a = o[keep], a[keep]
        t_len = len(o)
        idx = np.arange(t_len)[:, None] + np.arange(k)[None, :]
        pad = idx >= t_len
        act_l.append(a[np.minimum(idx, t_len - 1)])
        pad_l.append(pad)
        obs_l.append(o)
    return np.concatenate(obs_l), np.concatenate(act_l), np.concatenate(pad_l)


def _noise_std(env_id: str, env_kwargs: dict[str, Any], obs_dim: int, cfg: BCConfig) -> np.ndarray:
    if cfg.obs_noise == "none":
        return np.zeros(obs_dim)
    if cfg.obs_noise != "env":
        std = np.asarray(cfg.obs_noise, dtype=float)
        if std.shape != (obs_dim,):
            raise ValueError(f"obs_noise needs {obs_dim} values, got {std.size}")
        return std
    import gymnasium as gym

    import softrod.envs  # noqa: F401

    env = gym.make(env_id, **env_kwargs)
    found = getattr(env.unwrapped, "observation_noise", None)
    env.close()
    return np.zeros(obs_dim) if found is None else np.asarray(found, dtype=float)


@dataclass(frozen=True)
class BCResult:
    """A BC run: the policy file, iterations done, wall time [s], final loss; `interrupted`
    when stopped early (the state is in `run_dir/checkpoint.pt`, no policy file yet)."""

    run_dir: Path
    policy_path: Path
    iterations: int
    wall_time: float
    final_loss: float
    frames: int
    interrupted: bool = False
    #: Iteration whose weights are the policy (the last one without validation episodes).
    selected_iteration: int | None = None
    #: How the policy runs its chunks (`BCConfig.temporal_ensemble`: the chosen way with
    #: `select_execution`, -1 = open loop).
    temporal_ensemble: float | None = None


#: Iterations between training checkpoints (a few seconds of training; a checkpoint of the
#: default networks is ~10 MB and takes ~20 ms to write).
CHECKPOINT_EVERY = 500
#: The resumable state of a BC run, beside its outputs.
CHECKPOINT_FILE = "checkpoint.pt"
#: Where `train_bc(..., keep_candidates=True)` writes each validated candidate's policy file.
CANDIDATES_DIR = "candidates"
#: Reset seed of the first validation episode (test episodes use 10000-10099).
VAL_SEED = 20_000


def _save_atomic(obj: Any, path: Path) -> None:
    """torch.save to a temporary file, then rename over `path` (never a partial file)."""
    import torch

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


class BCPolicy:
    """A trained BC policy: `reset()` per episode, `act(obs) -> action` (numpy, env units)."""

    def __init__(
        self,
        net: Any,
        cfg: BCConfig,
        stats: dict[str, np.ndarray],
        env_id: str,
        env_kwargs: dict[str, Any],
        control_period: float = 0.05,
    ) -> None:
        self.net = net.eval()
        self.control_period = float(control_period)
        self.cfg = cfg
        self.stats = stats
        self.env_id = env_id
        self.env_kwargs = env_kwargs
        self.reset()

    def set_temporal_ensemble(self, k: float) -> None:
        """Run the chunks with ensembling weight `k` (>= 0), or open loop (k < 0), from now on
        (the weights are unchanged; the next episode starts afresh)."""
        self.cfg = self.cfg.model_copy(update={"temporal_ensemble": float(k)})
        self.reset()

    def reset(self) -> None:
        self._t = 0
        self._preds: list[tuple[int, np.ndarray]] = []  # (query step, (k, a) actions)
        self._plan: np.ndarray | None = None

    def _predict(self, obs: np.ndarray) -> np.ndarray:
        import torch

        s = self.stats
        x = np.asarray(obs, dtype=np.float64)
        if self.cfg.time_input:
            x = np.append(x, self._t * self.control_period)
        x = (x - s["obs_mean"]) / s["obs_std"]
        with torch.no_grad():
            out, _, _ = self.net(torch.as_tensor(x, dtype=torch.float32)[None])
        return out[0].numpy() * s["act_std"] + s["act_mean"]

    def act(self, obs: np.ndarray) -> np.ndarray:
        k = self.cfg.chunk
        if k > 1 and self.cfg.temporal_ensemble < 0:
            # Open-loop chunks: query every k steps.
            if self._plan is None or self._t % k == 0:
                self._plan = self._predict(obs)
            a = self._plan[self._t % k]
        elif k > 1:
            self._preds.append((self._t, self._predict(obs)))
            self._preds = [(q, p) for q, p in self._preds if self._t - q < k]
            acts = np.array([p[self._t - q] for q, p in self._preds])  # oldest first
            w = np.exp(-self.cfg.temporal_ensemble * np.arange(len(acts)))
            a = (w[:, None] * acts).sum(0) / w.sum()
        else:
            a = self._predict(obs)[0]
        self._t += 1
        return a.astype(np.float32)

    __call__ = act


def _val_key(row: dict[str, Any]) -> tuple[float, float]:
    """Order of validated candidates: success rate, then the lower mean final distance."""
    dist = row["final_distance_mean"]
    return (row["success_rate"], -(np.inf if dist is None else dist))


def train_bc(
    demos: DemoSet | str | Path,
    config: BCConfig,
    run_dir: str | Path,
    *,
    progress: bool = True,
    resume: bool = False,
    checkpoint_every: int = CHECKPOINT_EVERY,
    val_episodes: int = 0,
    val_every: int | None = None,
    val_seed: int = VAL_SEED,
    keep_checkpoint: bool = False,
    keep_candidates: bool = False,
) -> BCResult:
    """Train a BC policy on the successful demonstrations; write `run_dir` (policy.pt,
    config.yaml, losses.csv, summary.json) and return a summary.

    Every `checkpoint_every` iterations (and on Ctrl-C/SIGTERM) the whole training state
    (weights, optimiser, both random generators, losses, the softrod version) is written
    atomically to `run_dir/checkpoint.pt`; with `resume` a run continues from it and ends with
    the same weights as an uninterrupted run (CPU, one thread). A checkpoint of another softrod
    version (or of another configuration) is refused with a ValueError naming the file. An
    interrupted run returns `interrupted=True` without a policy.pt.

    With `keep_checkpoint` the final state stays in `checkpoint.pt` (otherwise it is deleted at
    the end), so that the finished run can be extended: a resume whose configuration differs
    only in a larger `iterations`, under the constant learning rate (a cosine schedule depends
    on `iterations`), continues it and ends with the weights of a run made that long at once.

    With `keep_candidates` every validated candidate is also written as a policy file,
    `run_dir/candidates/policy_<iteration>.pt` (run the way the configuration says; with
    `select_execution`, ensembled: `softrod eval --temporal-ensemble` runs it the other way),
    so that a candidate other than the selected one can be evaluated without retraining.

    val_episodes : validation episodes per candidate (0: no selection, the last weights);
    val_every : iterations between candidates [iterations // 4]; the last iteration is always
    one. val_seed : reset seed of the first validation episode (module docstring).
    """
    import copy

    import torch

    from softrod.learn._eval import evaluate

    if val_episodes < 0:
        raise ValueError(f"val_episodes must be >= 0, got {val_episodes}")
    if config.select_execution and val_episodes == 0:
        raise ValueError("select_execution needs validation episodes (val_episodes > 0), got 0")
    if val_every is None:
        val_every = max(config.iterations // 4, 1)
    if val_every < 1:
        raise ValueError(f"val_every must be >= 1, got {val_every}")

    from softrod.learn._sac import set_torch_threads

    set_torch_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    data = demos if isinstance(demos, DemoSet) else DemoSet.load(demos)
    data = data.successful()
    if data.n_episodes == 0:
        raise ValueError("no successful demonstrations to learn from")
    obs, chunks, pad = _chunks(data, config.chunk, config.dedup_tol, config.time_input)
    obs_dim, act_dim = obs.shape[1], chunks.shape[2]
    env_dim = obs_dim - (1 if config.time_input else 0)
    noise = _noise_std(data.env_id, data.env_kwargs, env_dim, config)
    if config.time_input:
        noise = np.append(noise, 0.0)
    stats = {
        "obs_mean": obs.mean(0),
        "obs_std": np.maximum(obs.std(0), np.maximum(noise, _STD_FLOOR)),
        "act_mean": chunks[:, 0].mean(0),
        "act_std": np.maximum(chunks[:, 0].std(0), _STD_FLOOR),
    }
    net = _build_net(config, obs_dim, act_dim)
    # The averaged weights (`ema_decay` > 0) are what is validated and saved.
    ema = copy.deepcopy(net).eval() if config.ema_decay > 0 else None
    opt = torch.optim.AdamW(
        net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    a_norm = torch.as_tensor((chunks - stats["act_mean"]) / stats["act_std"], dtype=torch.float32)
    pad_t = torch.as_tensor(pad)
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    save_config(config, run / "config.yaml")
    bar: Any = None
    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        bar = Progress(
            TextColumn(f"[bold]BC ({config.policy}) {data.env_id}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]:.4f}"),
        )
        bar.start()
        task = bar.add_task("bc", total=config.iterations, loss=float("nan"))
    losses: list[tuple[int, float, float]] = []
    # Validation: one row per candidate; the best candidate's weights so far.
    val_rows: list[dict[str, Any]] = []
    best: dict[str, Any] | None = None
    val_time = 0.0
    start = 1
    ckpt_path = run / CHECKPOINT_FILE
    if resume and ckpt_path.is_file():
        # Continue exactly where the checkpoint stopped: weights, optimiser and both RNGs.
        try:
            ckpt = torch.load(ckpt_path, weights_only=False)
        except Exception as exc:  # noqa: BLE001 - any unreadable checkpoint is refused alike
            raise ValueError(
                f"cannot read the checkpoint {ckpt_path}: the file is truncated or corrupt "
                f"({exc}); delete it to start over"
            ) from None
        if not isinstance(ckpt, dict):
            raise ValueError(f"{ckpt_path} is not a softrod BC checkpoint; delete it to start over")
        # Another version may train differently (weights, defaults): refused, never mixed.
        written_by = ckpt.get("softrod", "of unknown version (before versions were recorded)")
        if written_by != __version__:
            raise ValueError(
                f"{ckpt_path} was written by softrod {written_by}, this is {__version__}; "
                "delete it to start over"
            )
        # Fields added since the checkpoint was written compare at their defaults.
        try:
            written_with = BCConfig.model_validate(ckpt.get("config")).model_dump(mode="json")
        except Exception:  # noqa: BLE001 - an unreadable config is another configuration
            written_with = None
        now = config.model_dump(mode="json")
        if written_with != now:
            # Only `iterations` may differ (extending a run), and only under a constant rate.
            if written_with is None or {**written_with, "iterations": now["iterations"]} != now:
                raise ValueError(f"{ckpt_path} was written with another configuration; not resumed")
            if config.lr_schedule != "constant":
                raise ValueError(
                    f"{ckpt_path} was written for {written_with['iterations']} iterations and the "
                    f"{config.lr_schedule} learning rate depends on them; not resumed with "
                    f"iterations {config.iterations}"
                )
        if config.iterations <= int(ckpt["iteration"]):
            raise ValueError(
                f"{ckpt_path} is at iteration {ckpt['iteration']}; iterations must be larger to "
                f"resume, got {config.iterations}"
            )
        net.load_state_dict(ckpt["state_dict"])
        if ema is not None:
            ema.load_state_dict(ckpt["ema_state_dict"])
        opt.load_state_dict(ckpt["optimizer"])
        rng.bit_generator.state = ckpt["numpy_rng"]
        torch.set_rng_state(ckpt["torch_rng"])
        losses = [tuple(row) for row in ckpt["losses"]]  # type: ignore[misc]
        val_rows = list(ckpt.get("val_rows", []))
        best = ckpt.get("best")
        start = int(ckpt["iteration"]) + 1

    def checkpoint(it: int) -> None:
        _save_atomic(
            {
                "iteration": it,
                "softrod": __version__,
                "state_dict": net.state_dict(),
                "ema_state_dict": None if ema is None else ema.state_dict(),
                "optimizer": opt.state_dict(),
                "numpy_rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "losses": losses,
                "config": config.model_dump(mode="json"),
                "val_rows": val_rows,
                "best": best,
            },
            ckpt_path,
        )

    def save_policy(judged: Any, cfg: BCConfig, target: Path) -> None:
        # What `load_bc_policy` reads: the network, its configuration and normalization, the task.
        _save_atomic(
            {
                "kind": _KIND,
                "state_dict": judged.state_dict(),
                "config": cfg.model_dump(mode="json"),
                "stats": {key: torch.as_tensor(v) for key, v in stats.items()},
                "env_id": data.env_id,
                "env_kwargs": json.dumps(data.env_kwargs),
                "obs_dim": obs_dim,
                "act_dim": act_dim,
                "control_period": float(data.control_period),
            },
            target,
        )

    def validate(it: int) -> None:
        # The network as a policy (eval mode: z = 0, no dropout, no random numbers drawn, so
        # training continues as without validation) on the validation episodes; with
        # `select_execution` open loop first, then ensembled (the later wins a tie).
        nonlocal best, val_time
        t_val = time.perf_counter()
        judged = net if ema is None else ema
        judged.eval()
        ways = (-1.0, config.temporal_ensemble) if config.select_execution else (None,)
        for way in ways:
            cfg = config if way is None else config.model_copy(update={"temporal_ensemble": way})
            pol = BCPolicy(judged, cfg, stats, data.env_id, data.env_kwargs, data.control_period)
            res = evaluate(
                pol, data.env_id, episodes=val_episodes, seed=val_seed, env_kwargs=data.env_kwargs
            )
            d = res.final_distance
            # Per-episode outcomes too, so that a selection on a subset of the episodes (or a
            # comparison with a run validated on fewer) can be redone from summary.json.
            row: dict[str, Any] = {
                "iteration": it,
                "success_rate": res.success_rate,
                "final_distance_mean": float(np.nanmean(d)) if np.isfinite(d).any() else None,
                "success": [bool(x) for x in res.success],
                "final_distance": [float(x) if np.isfinite(x) else None for x in d],
            }
            if way is not None:
                row["temporal_ensemble"] = way
            val_rows.append(row)
            if best is None or _val_key(row) >= _val_key(best["row"]):
                best = {"row": row, "state_dict": copy.deepcopy(judged.state_dict())}
        if keep_candidates:
            kept = config.model_copy(update={"select_execution": False})
            (run / CANDIDATES_DIR).mkdir(exist_ok=True)
            save_policy(judged, kept, run / CANDIDATES_DIR / f"policy_{it:06d}.pt")
        net.train()
        val_time += time.perf_counter() - t_val

    t0 = time.perf_counter()
    net.train()
    n = len(obs)
    loss_val = float("nan")
    it = start - 1
    interrupted = False
    if bar is not None:
        bar.update(task, completed=it)
    try:
        with stop_requested() as stop:
            for it in range(start, config.iterations + 1):
                idx = rng.integers(0, n, size=min(config.batch_size, n))
                o = obs[idx] + rng.normal(size=(len(idx), obs_dim)) * noise
                o_t = torch.as_tensor(
                    (o - stats["obs_mean"]) / stats["obs_std"], dtype=torch.float32
                )
                target, mask = a_norm[idx], pad_t[idx]
                pred, mu, logvar = net(o_t, target if config.policy == "act" else None, mask)
                # "hold": steps past the episode's end count, with the last action as their target
                # (the demonstrations stop at success, e.g. the instant the tip crosses the plate;
                # masking them leaves the chunk's tail untrained and the ensembled policy stalls).
                valid = (~mask if config.pad == "mask" else torch.ones_like(mask)).float()[
                    ..., None
                ]
                l1 = (torch.abs(pred - target) * valid).sum() / (valid.sum() * act_dim)
                kl = torch.zeros(())
                if mu is not None:
                    kl = kl_to_prior(mu, logvar).mean()
                loss = l1 + config.kl_weight * kl
                opt.zero_grad()
                loss.backward()
                for group in opt.param_groups:
                    group["lr"] = _learning_rate(config, it)
                opt.step()
                if ema is not None:
                    _ema_update(ema, net, min(config.ema_decay, (1 + it) / (10 + it)))
                loss_val = float(loss.detach())
                if it % 50 == 0 or it == config.iterations:
                    losses.append((it, float(l1.detach()), float(kl.detach())))
                    if bar is not None:
                        bar.update(task, completed=it, loss=loss_val)
                # A stop request (Ctrl-C, SIGTERM) is honoured between iterations, so the
                # checkpoint holds one consistent state.
                if stop.requested:
                    interrupted = True
                    checkpoint(it)
                    break
                if val_episodes > 0 and (it % val_every == 0 or it == config.iterations):
                    validate(it)
                if it % checkpoint_every == 0 and it < config.iterations:
                    checkpoint(it)
    finally:
        if bar is not None:
            bar.stop()
    wall = time.perf_counter() - t0
    path = run / "policy.pt"
    if interrupted:
        return BCResult(run, path, it, wall, loss_val, int(n), interrupted=True)
    if keep_checkpoint:
        # The final training state, before the best candidate is loaded into the network, so
        # that the run can be extended (`resume` with more iterations).
        checkpoint(config.iterations)
    selected = config.iterations
    # The configuration the policy file holds: with `select_execution`, the chosen way.
    run_config = config
    if ema is not None:
        net = ema
    if best is not None:
        # The best validated candidate is the policy.
        net.load_state_dict(best["state_dict"])
        selected = int(best["row"]["iteration"])
        if "temporal_ensemble" in best["row"]:
            # The policy runs the chosen way; the choice is made.
            way = best["row"]["temporal_ensemble"]
            run_config = config.model_copy(
                update={"temporal_ensemble": way, "select_execution": False}
            )
    net.eval()
    save_policy(net, run_config, path)
    if not keep_checkpoint:
        ckpt_path.unlink(missing_ok=True)
    with (run / "losses.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["iteration", "l1", "kl"])
        w.writerows(losses)
    (run / "summary.json").write_text(
        json.dumps(
            {
                "env_id": data.env_id,
                "policy": config.policy,
                "iterations": config.iterations,
                "wall_time_s": round(wall, 2),
                "frames": int(n),
                "episodes": data.n_episodes,
                "final_loss": loss_val,
                "resumed_from_iteration": start - 1,
                "selected_iteration": selected,
                "selected_temporal_ensemble": run_config.temporal_ensemble,
                "validation": {
                    "episodes": val_episodes,
                    "seed": val_seed,
                    "every": val_every,
                    "wall_time_s": round(val_time, 2),
                    "candidates": val_rows,
                }
                if val_episodes > 0
                else None,
            },
            indent=2,
        )
    )
    return BCResult(
        run,
        path,
        config.iterations,
        wall,
        loss_val,
        int(n),
        selected_iteration=selected,
        temporal_ensemble=run_config.temporal_ensemble,
    )


def is_bc_policy(path: str | Path) -> bool:
    """Whether `path` is a BC policy file (or a run directory holding policy.pt)."""
    p = Path(path)
    return (p / "policy.pt").is_file() if p.is_dir() else p.suffix == ".pt"


def load_bc_policy(path: str | Path) -> BCPolicy:
    """Load a policy written by `train_bc` (a .pt file or its run directory)."""
    import torch

    from softrod.learn._sac import set_torch_threads

    set_torch_threads(1)
    p = Path(path)
    if p.is_dir():
        p = p / "policy.pt"
    if not p.is_file():
        raise FileNotFoundError(f"no BC policy at {path}")
    try:
        blob = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is refused alike
        raise ValueError(
            f"cannot read the BC policy {p}: the file is truncated or corrupt ({exc})"
        ) from None
    if not isinstance(blob, dict) or blob.get("kind") != _KIND:
        raise ValueError(f"{p} is not a softrod BC policy")
    cfg = BCConfig.model_validate(blob["config"])
    net = _build_net(cfg, int(blob["obs_dim"]), int(blob["act_dim"]))
    net.load_state_dict(blob["state_dict"])
    stats = {key: v.numpy() for key, v in blob["stats"].items()}
    return BCPolicy(
        net,
        cfg,
        stats,
        blob["env_id"],
        json.loads(blob["env_kwargs"]),
        float(blob.get("control_period", 0.05)),
    )
