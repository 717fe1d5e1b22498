"""Trained policies shipped inside the package (`softrod/learn/shipped/<env>/`), found by env id.

Each folder holds one policy, small enough for a wheel (<= 5 MB each, <= 20 MB in all):

| file | content |
|---|---|
| `policy.npz` | SAC: the deterministic actor only (float32; no critic, optimiser, buffer) |
| `policy.pt` | BC: the `train_bc` policy file (network, normalization, env id) |
| `provenance.json` | env id and kwargs, commands, seed, steps, wall time, git commit, selection, |
| | and the test evaluation (summary and per-episode outcomes) |
| `PROVENANCE.md` | the same for a reader |

`load_shipped("Reach-v0")` returns the policy (`softrod eval shipped:Reach-v0` runs it).
`export_sac_actor(model_zip, path)` writes a SAC run's actor in the shipped form.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "MAX_SHIPPED_BYTES",
    "MAX_SHIPPED_TOTAL_BYTES",
    "SACActor",
    "export_sac_actor",
    "load_shipped",
    "shipped_policies",
    "shipped_provenance",
]

#: Largest shipped policy folder [bytes] (issue 17: each <= 5 MB).
MAX_SHIPPED_BYTES = 5 * 1024 * 1024
#: Largest total of all shipped policies [bytes] (issue 17: <= 20 MB).
MAX_SHIPPED_TOTAL_BYTES = 20 * 1024 * 1024
#: Marker stored in an exported SAC actor.
_SAC_KIND = "softrod-sac-actor"
#: Largest difference [action units] allowed between an exported actor and SB3's predict.
_EXPORT_TOL = 1e-5


def _shipped_dir() -> Path:
    """Folder of the shipped policies inside the package."""
    return Path(str(resources.files("softrod.learn").joinpath("shipped")))


def shipped_policies() -> dict[str, Path]:
    """Shipped policies: full env id (`softrod/Reach-v0`) -> folder, sorted by id."""
    folder = _shipped_dir()
    if not folder.is_dir():
        return {}
    found = [p for p in folder.iterdir() if (p / "provenance.json").is_file()]
    return {f"softrod/{p.name}": p for p in sorted(found)}


def _folder(env_id: str) -> Path:
    """The shipped folder of `env_id` (`Reach-v0` or `softrod/Reach-v0`); ValueError listing
    the shipped ids otherwise."""
    full = env_id if env_id.startswith("softrod/") else f"softrod/{env_id}"
    shipped = shipped_policies()
    if full not in shipped:
        names = ", ".join(i.removeprefix("softrod/") for i in shipped) or "none"
        raise ValueError(f"no shipped policy for {env_id!r}; shipped: {names}")
    return shipped[full]


def shipped_provenance(env_id: str) -> dict[str, Any]:
    """The provenance record of a shipped policy (`provenance.json`, module table)."""
    return dict(json.loads((_folder(env_id) / "provenance.json").read_text()))


class SACActor:
    """The deterministic SAC actor: `tanh(mu(relu(... relu(W0 obs + b0))))` scaled to the
    action bounds, in numpy (no torch), as Stable-Baselines3's `predict(deterministic=True)`.

    weights, biases : per hidden layer then the mean head, (out, in) and (out,) float32;
    action_low, action_high : (act_dim,) bounds of the action space [env units].
    Call with an observation (obs_dim,) -> action (act_dim,) float32.
    """

    def __init__(
        self,
        weights: list[np.ndarray],
        biases: list[np.ndarray],
        action_low: np.ndarray,
        action_high: np.ndarray,
        env_id: str = "",
        env_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.weights = [np.asarray(w, dtype=np.float32) for w in weights]
        self.biases = [np.asarray(b, dtype=np.float32) for b in biases]
        self.action_low = np.asarray(action_low, dtype=np.float32)
        self.action_high = np.asarray(action_high, dtype=np.float32)
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32)
        # Hidden layers (ReLU), then the squashed mean.
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            x = np.maximum(w @ x + b, 0.0)
        a = np.tanh(self.weights[-1] @ x + self.biases[-1])
        return self.action_low + 0.5 * (a + 1.0) * (self.action_high - self.action_low)

    @classmethod
    def load(cls, path: str | Path) -> SACActor:
        """Read an actor written by `export_sac_actor`."""
        with np.load(path, allow_pickle=False) as blob:
            if str(blob["kind"]) != _SAC_KIND:
                raise ValueError(f"{path} is not a softrod SAC actor")
            n = int(blob["n_layers"])
            return cls(
                [blob[f"w{i}"] for i in range(n)],
                [blob[f"b{i}"] for i in range(n)],
                blob["action_low"],
                blob["action_high"],
                str(blob["env_id"]),
                json.loads(str(blob["env_kwargs"])),
            )


def export_sac_actor(
    model_zip: str | Path, path: str | Path, env_id: str, env_kwargs: dict[str, Any]
) -> Path:
    """Write the actor of an SB3 SAC model (.zip) as a float32 `.npz` (`SACActor.load` reads it)
    and check it against SB3's deterministic predict on random observations."""
    from softrod.learn._sac import load_sac, set_torch_threads

    set_torch_threads(1)
    model = load_sac(model_zip, device="cpu")
    state = {k: v.detach().cpu().numpy() for k, v in model.actor.state_dict().items()}
    hidden = sorted(
        {int(k.split(".")[1]) for k in state if k.startswith("latent_pi.")},
    )
    weights = [state[f"latent_pi.{i}.weight"] for i in hidden] + [state["mu.weight"]]
    biases = [state[f"latent_pi.{i}.bias"] for i in hidden] + [state["mu.bias"]]
    space = model.action_space
    out = Path(path)
    arrays = {f"w{i}": w.astype(np.float32) for i, w in enumerate(weights)}
    arrays |= {f"b{i}": b.astype(np.float32) for i, b in enumerate(biases)}
    np.savez_compressed(
        out,
        kind=np.array(_SAC_KIND),
        n_layers=np.array(len(weights)),
        action_low=np.asarray(space.low, dtype=np.float32),
        action_high=np.asarray(space.high, dtype=np.float32),
        env_id=np.array(env_id),
        env_kwargs=np.array(json.dumps(env_kwargs)),
        **arrays,
    )
    # The numpy actor must act as SB3 does (same weights, same squashing and scaling).
    actor = SACActor.load(out)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(64, *model.observation_space.shape)).astype(np.float32)
    ref, _ = model.predict(obs, deterministic=True)
    err = float(np.max(np.abs(np.array([actor(o) for o in obs]) - ref)))
    if err > _EXPORT_TOL:
        raise ValueError(f"exported actor differs from SB3's predict by {err:.3g}")
    return out


def load_shipped(env_id: str) -> Any:
    """The policy shipped for `env_id` (`Reach-v0` or `softrod/Reach-v0`).

    Returns a `SACActor` (obs -> action) or a `BCPolicy` (`reset()`, `act(obs)`); both carry
    `env_id` and `env_kwargs` (the environment settings it was trained and tested with), and
    `softrod.learn.evaluate` runs either. ValueError names the shipped ids for an unknown one.
    """
    folder = _folder(env_id)
    prov = shipped_provenance(env_id)
    path = folder / str(prov["policy_file"])
    if path.suffix == ".npz":
        return SACActor.load(path)
    from softrod.learn._bc import load_bc_policy

    return load_bc_policy(path)
