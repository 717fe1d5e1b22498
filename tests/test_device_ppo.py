"""`softrod.learn.device_ppo`: non-finite updates are undone, a non-finite policy never saved.

Needs the optional `warp` extra and skrl; runs on Warp's CPU device (a few worlds, a few
updates) unless SOFTROD_WARP_DEVICE names another.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mujoco_warp")
pytest.importorskip("skrl")
torch = pytest.importorskip("torch")

from skrl.agents.torch.ppo import PPO  # noqa: E402

from softrod.learn.device_ppo import (  # noqa: E402
    PPOConfig,
    PPODivergedError,
    load_ppo_policy,
    train_ppo,
)

DEVICE = os.environ.get("SOFTROD_WARP_DEVICE", "cpu")


def _config(**kw: Any) -> PPOConfig:
    base: dict[str, Any] = {
        "env_id": "Reach-v0",
        "num_envs": 2,
        "device": DEVICE,
        "timesteps": 16,
        "rollouts": 4,
        "learning_epochs": 1,
        "mini_batches": 1,
        "hidden": (8,),
        "env_kwargs": {"episode_steps": 6},
    }
    return PPOConfig(**{**base, **kw})


def _poison_updates(monkeypatch: pytest.MonkeyPatch, which: set[int]) -> list[int]:
    """Make PPO's updates number `which` (0-based) write a NaN into a policy weight."""
    original = PPO.update
    calls: list[int] = []

    def update(self: Any, *, timestep: int, timesteps: int) -> None:
        original(self, timestep=timestep, timesteps=timesteps)
        if len(calls) in which:
            with torch.no_grad():
                next(self.policy.parameters()).view(-1)[0] = float("nan")
        calls.append(timestep)

    monkeypatch.setattr(PPO, "update", update)
    return calls


def _finite_policy(run: Path) -> None:
    policy = load_ppo_policy(run)
    action = policy(np.zeros(34, dtype=np.float32))
    assert np.all(np.isfinite(action))
    weights = torch.load(run / "policy.pt", weights_only=False)["net"]
    assert all(torch.isfinite(w).all() for w in weights.values())


def test_one_nan_update_is_undone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN written by the second update: the last finite parameters come back, the
    learning rate halves, one line is logged and training goes on to the end."""
    torch.set_num_threads(1)
    calls = _poison_updates(monkeypatch, {1})
    lines: list[str] = []
    result = train_ppo(_config(), tmp_path, log=lines.append)
    assert len(calls) == 4 and result.recoveries == 1 and result.timesteps == 16
    assert sum("non-finite parameters" in line for line in lines) == 1
    assert "learning rate" in next(line for line in lines if "non-finite" in line)
    assert np.isfinite(result.last_mean_reward)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["recoveries"] == 1
    _finite_policy(tmp_path)


def test_always_nan_fails_keeping_finite_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every update NaN: after max_recoveries restores training stops with PPODivergedError;
    the saved policy is the last finite one and the summary says so; the CLI exits 1."""
    torch.set_num_threads(1)
    _poison_updates(monkeypatch, set(range(100)))
    with pytest.raises(PPODivergedError, match="diverged") as exc:
        train_ppo(_config(timesteps=40, max_recoveries=2), tmp_path, log=lambda _: None)
    assert exc.value.result.recoveries == 3 and exc.value.result.timesteps == 12
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "diverged" and "last finite" in summary["policy"]
    assert summary["last_mean_reward"] is not None
    _finite_policy(tmp_path)

    # The CLI: one line, exit 1 (train_ppo's failure replayed, not retrained).
    import softrod.learn.device_ppo as device_ppo
    from softrod.cli import main

    def diverged(config: PPOConfig, run_dir: Path, **_: Any) -> None:
        raise PPODivergedError("PPO diverged: test", exc.value.result)

    monkeypatch.setattr(device_ppo, "train_ppo", diverged)
    args = ["train", "Reach-v0", "--algo", "ppo", "--num-envs", "2", "--device", DEVICE]
    args += ["--timesteps", "8", "-o", str(tmp_path / "cli")]
    capsys.readouterr()
    assert main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["softrod: error: PPO diverged: test"]
