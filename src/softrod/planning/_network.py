"""Compensation network of ALGORITHMS.md D.2: B_t = B~_t + Phi(q_{t-1}, q_t, B_{t-1}, B~_t).

* Input: [q_{t-1} (n_seg), q_t (n_seg), vec B_{t-1} (3m), vec B~_t (3m)]; output Delta B (3m);
  every feature min-max normalised to [0, 1] with training statistics.
* MLP with 3 hidden layers of 100 ReLU units (the paper's).
* Training: windows of 32 frames in batches of 128; within a window the first frame sees the
  measured B_{t-1} and later frames the network's own previous output, with gradients through
  the rollout; frame loss is the L1 error summed over (x, y, theta) of every plate.

Training needs torch (the `learn` extra); inference runs in NumPy from the saved weights, so
planning with a trained network needs no torch.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from softrod._jobs import load_npz, save_npz
from softrod.pneumatic import NoLoadModel, Recording

__all__ = ["CompensationNetwork", "TrainConfig", "train_compensation", "rollout_error"]

#: Min-max ranges below this are constant features (e.g. the clamped base plate); they are
#: scaled by 1 instead of divided by ~0.
_CONSTANT_FEATURE = 1e-12


@dataclass(frozen=True)
class TrainConfig:
    """Training hyper-parameters (paper values where it gives them)."""

    hidden: tuple[int, ...] = (100, 100, 100)
    """Hidden layer widths (paper: 3 x 100, ReLU)."""
    window: int = 32
    """Frames per training window (paper: 32)."""
    window_stride: int = 8
    """Frames between window starts [CHOICE]; < window gives overlapping windows."""
    batch_size: int = 128
    """Windows per batch (paper: 128)."""
    epochs: int = 400
    """Passes over the windows [CHOICE: the paper's 6000 SGD epochs do not fit a CPU budget]."""
    optimizer: str = "adam"
    """'adam' [CHOICE, converges in far fewer epochs] or 'sgd' (paper, lr 1e-4)."""
    learning_rate: float = 1e-3
    """Initial learning rate (cosine-decayed to 5 % over the epochs)."""
    position_scale: float | None = None
    """Length [m] that divides x, y in the L1 loss so that metres and radians weigh alike
    [CHOICE]; None uses the arm's rest length."""
    seed: int = 0
    """Seed of the torch generator (initialisation, window order)."""

    def __post_init__(self) -> None:
        if self.window < 1 or self.window_stride < 1 or self.batch_size < 1 or self.epochs < 0:
            raise ValueError(f"TrainConfig sizes must be positive, got {self}")
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"optimizer must be 'adam' or 'sgd', got {self.optimizer!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")


@dataclass
class CompensationNetwork:
    """A trained compensation network with its normalisation; NumPy inference.

    weights, biases : per layer, (n_out, n_in) and (n_out,).
    in_min, in_scale : (6 + 6 m,) input normalisation x_n = (x - in_min) / in_scale.
    out_min, out_scale : (3 m,) output normalisation.
    n_segments, n_plates : shapes it was trained for; meta : training record (JSON-able).
    """

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    in_min: np.ndarray
    in_scale: np.ndarray
    out_min: np.ndarray
    out_scale: np.ndarray
    n_segments: int
    n_plates: int
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Fold the normalisations into the first and last layers: one affine map less per call.
        ws = [np.asarray(w, dtype=float).copy() for w in self.weights]
        bs = [np.asarray(b, dtype=float).copy() for b in self.biases]
        ws[0] = ws[0] / self.in_scale[None, :]
        bs[0] = bs[0] - ws[0] @ self.in_min
        ws[-1] = ws[-1] * self.out_scale[:, None]
        bs[-1] = bs[-1] * self.out_scale + self.out_min
        # Inference in float32: BLAS is ~2x faster and 1e-7 relative error is ~1e-8 m here.
        self._wt = [np.ascontiguousarray(w.T, dtype=np.float32) for w in ws]
        self._b = [b.astype(np.float32) for b in bs]

    @property
    def n_inputs(self) -> int:
        return 2 * self.n_segments + 6 * self.n_plates

    def delta(self, features: np.ndarray) -> np.ndarray:
        """Compensation Delta B (n, 3m) for raw (unnormalised) features (n, 6 + 6m)."""
        h = features.astype(np.float32)
        last = len(self._wt) - 1
        for i, (wt, b) in enumerate(zip(self._wt, self._b, strict=True)):
            h = h @ wt
            h += b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h

    def step(
        self,
        q_prev: np.ndarray,
        q: np.ndarray,
        backbone_prev: np.ndarray,
        backbone_noload: np.ndarray,
    ) -> np.ndarray:
        """B_t = B~_t + Phi(...) for a batch: q_prev, q (n, n_seg) [Pa]; backbones (n, m, 3)."""
        n = q.shape[0]
        feats = np.concatenate(
            [q_prev, q, backbone_prev.reshape(n, -1), backbone_noload.reshape(n, -1)], axis=1
        )
        return backbone_noload + self.delta(feats).reshape(n, self.n_plates, 3).astype(float)

    def rollout(
        self,
        noload: NoLoadModel,
        commands: np.ndarray,
        backbone0: np.ndarray,
    ) -> np.ndarray:
        """Recurrent prediction along set-points (n+1, n_seg) from the known backbone0 (m, 3)
        at row 0; returns (n+1, m, 3) with row 0 = backbone0."""
        n = commands.shape[0] - 1
        out = np.empty((n + 1, self.n_plates, 3))
        out[0] = backbone0
        noload_bb = noload.backbone_unchecked(np.ascontiguousarray(commands[1:]))
        for t in range(1, n + 1):
            out[t] = self.step(
                commands[t - 1 : t], commands[t : t + 1], out[t - 1 : t], noload_bb[t - 1 : t]
            )[0]
        return out

    # Persistence ------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the weights, scalings and meta to an `.npz` file; returns its path."""
        arrays: dict[str, np.ndarray] = {
            "in_min": self.in_min,
            "in_scale": self.in_scale,
            "out_min": self.out_min,
            "out_scale": self.out_scale,
            "shape": np.array([self.n_segments, self.n_plates, len(self.weights)]),
            "meta": np.array(json.dumps(self.meta)),
        }
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            arrays[f"w{i}"] = w
            arrays[f"b{i}"] = b
        # Atomic: a kill mid-write leaves the old file or none, never a partial one.
        return save_npz(path, arrays)

    @classmethod
    def load(cls, path: str | Path) -> CompensationNetwork:
        """Read a saved network; a truncated or corrupt file is a ValueError naming it."""
        what = "compensation network"
        z = load_npz(path, what, ("shape", "in_min", "in_scale", "out_min", "out_scale", "meta"))
        n_seg, n_plates, n_layers = (int(v) for v in z["shape"])
        layers = [f"{p}{i}" for i in range(n_layers) for p in "wb"]
        missing = [k for k in layers if k not in z]
        if missing:
            raise ValueError(f"cannot read the {what} {path}: it lacks {', '.join(missing)}")
        return cls(
            weights=[z[f"w{i}"] for i in range(n_layers)],
            biases=[z[f"b{i}"] for i in range(n_layers)],
            in_min=z["in_min"],
            in_scale=z["in_scale"],
            out_min=z["out_min"],
            out_scale=z["out_scale"],
            n_segments=n_seg,
            n_plates=n_plates,
            meta=json.loads(str(z["meta"])),
        )


def _features_targets(
    rec: Recording, noload: NoLoadModel
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per frame t = 1..n: inputs (n, 6+6m) with the *measured* B_{t-1}, targets Delta B
    (n, 3m) and the no-load backbones (n, 3m)."""
    q = rec.commands
    n = rec.n_frames
    bnl = noload.backbone_unchecked(np.ascontiguousarray(q[1:])).reshape(n, -1)
    feats = np.concatenate([q[:-1], q[1:], rec.backbones[:-1].reshape(n, -1), bnl], axis=1)
    target = rec.backbones[1:].reshape(n, -1) - bnl
    return feats, target, bnl


def _minmax(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo = x.min(axis=0)
    rng = x.max(axis=0) - lo
    return lo, np.where(rng > _CONSTANT_FEATURE, rng, 1.0)


def rollout_error(
    net: CompensationNetwork | None, noload: NoLoadModel, rec: Recording
) -> dict[str, float]:
    """End-effector error on a recording at its settled frames (`rec.ends`): the network
    rolled out recurrently from the known initial backbone (or the no-load model when `net`
    is None). Keys: position_mean_m, position_std_m, orientation_mean_rad,
    orientation_std_rad, position_all_frames_mean_m."""
    if net is None:
        pred = noload.backbone_unchecked(np.ascontiguousarray(rec.commands))
    else:
        pred = net.rollout(noload, rec.commands, rec.backbones[0])
    pos = np.linalg.norm(pred[:, -1, :2] - rec.backbones[:, -1, :2], axis=1)
    ang = np.abs(pred[:, -1, 2] - rec.backbones[:, -1, 2])
    ends = rec.ends
    return {
        "position_mean_m": float(pos[ends].mean()),
        "position_std_m": float(pos[ends].std()),
        "orientation_mean_rad": float(ang[ends].mean()),
        "orientation_std_rad": float(ang[ends].std()),
        "position_all_frames_mean_m": float(pos[1:].mean()),
    }


def train_compensation(
    train: Recording,
    noload: NoLoadModel,
    config: TrainConfig | None = None,
    test: Recording | None = None,
    progress: Callable[[int, float, float | None], None] | None = None,
    eval_every: int = 25,
) -> CompensationNetwork:
    """Train the compensation network on a recording with windowed rollouts (D.2).

    Parameters
    ----------
    train : training recording (e.g. `record_transitions`).
    noload : the no-load model the network corrects.
    config : hyper-parameters; test : optional held-out recording, evaluated every
        `eval_every` epochs (recurrent end-effector error) and reported to `progress` as
        progress(epoch, train_loss, test_position_error_m or None).

    Returns
    -------
    CompensationNetwork with `meta` holding the config, losses and timings.
    """
    import torch

    cfg = config if config is not None else TrainConfig()
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    arm = noload.arm
    n_seg, m = arm.n_segments, arm.n_plates
    feats, target, bnl = _features_targets(train, noload)
    in_min, in_scale = _minmax(feats)
    out_min, out_scale = _minmax(target)
    pos_scale = cfg.position_scale or arm.total_rest_length
    loss_w = np.tile(np.array([1.0 / pos_scale, 1.0 / pos_scale, 1.0]), m)

    n = train.n_frames
    if n < cfg.window:
        raise ValueError(f"training recording has {n} frames, fewer than window={cfg.window}")
    starts = np.arange(0, n - cfg.window + 1, cfg.window_stride)
    dt = torch.float32
    t_q = torch.tensor(train.commands, dtype=dt)  # rows 0..n
    t_b = torch.tensor(train.backbones.reshape(n + 1, -1), dtype=dt)
    t_bnl = torch.tensor(bnl, dtype=dt)  # row i is frame i+1
    t_in_min = torch.tensor(in_min, dtype=dt)
    t_in_scale = torch.tensor(in_scale, dtype=dt)
    t_out_min = torch.tensor(out_min, dtype=dt)
    t_out_scale = torch.tensor(out_scale, dtype=dt)
    t_w = torch.tensor(loss_w, dtype=dt)

    layers: list[torch.nn.Module] = []
    width = 2 * n_seg + 6 * m
    for h in cfg.hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, 3 * m))
    mlp = torch.nn.Sequential(*layers)
    params = list(mlp.parameters())
    if cfg.optimizer == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=cfg.learning_rate)
    else:
        opt = torch.optim.SGD(params, lr=cfg.learning_rate)
    total_steps = max(1, cfg.epochs * math.ceil(len(starts) / cfg.batch_size))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda k: 0.05 + 0.95 * 0.5 * (1.0 + math.cos(math.pi * min(k, total_steps) / total_steps)),
    )
    offsets = torch.arange(cfg.window)
    t_starts = torch.tensor(starts)
    history: list[dict[str, float]] = []
    t0 = time.perf_counter()
    last_loss = float("nan")
    for epoch in range(cfg.epochs):
        perm = t_starts[torch.randperm(len(starts), generator=gen)]
        epoch_loss = 0.0
        for k in range(0, len(perm), cfg.batch_size):
            s0 = perm[k : k + cfg.batch_size]
            rows = s0[:, None] + offsets[None, :] + 1  # frame indices t (B, W)
            b_prev = t_b[s0]  # measured B_{t-1} for the window's first frame
            loss = torch.zeros(())
            for w in range(cfg.window):
                t = rows[:, w]
                x = torch.cat([t_q[t - 1], t_q[t], b_prev, t_bnl[t - 1]], dim=1)
                y = mlp((x - t_in_min) / t_in_scale) * t_out_scale + t_out_min
                b_pred = t_bnl[t - 1] + y
                loss = loss + ((b_pred - t_b[t]).abs() * t_w).sum(dim=1).mean()
                b_prev = b_pred
            loss = loss / cfg.window
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            epoch_loss += float(loss.detach()) * len(s0)
        last_loss = epoch_loss / len(starts)
        test_err = None
        if test is not None and (epoch + 1) % eval_every == 0:
            net = _export(mlp, in_min, in_scale, out_min, out_scale, n_seg, m, {})
            test_err = rollout_error(net, noload, test)["position_mean_m"]
            history.append({"epoch": epoch + 1, "loss": last_loss, "test_position_m": test_err})
        if progress is not None:
            progress(epoch + 1, last_loss, test_err)
    meta = {
        "config": asdict(cfg),
        "train_frames": int(n),
        "windows": int(len(starts)),
        "final_loss": last_loss,
        "train_time_s": time.perf_counter() - t0,
        "history": history,
    }
    return _export(mlp, in_min, in_scale, out_min, out_scale, n_seg, m, meta)


def _export(
    mlp: Any,
    in_min: np.ndarray,
    in_scale: np.ndarray,
    out_min: np.ndarray,
    out_scale: np.ndarray,
    n_seg: int,
    m: int,
    meta: dict[str, Any],
) -> CompensationNetwork:
    linears = [mod for mod in mlp if hasattr(mod, "weight")]
    return CompensationNetwork(
        weights=[lin.weight.detach().double().numpy().copy() for lin in linears],
        biases=[lin.bias.detach().double().numpy().copy() for lin in linears],
        in_min=in_min,
        in_scale=in_scale,
        out_min=out_min,
        out_scale=out_scale,
        n_segments=n_seg,
        n_plates=m,
        meta=meta,
    )
