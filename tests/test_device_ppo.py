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


def test_policy_snapshots_and_direct_solve(tmp_path: Path, learning_example) -> None:
    """`snapshot_minutes` writes a policy after each due update (here: every update), each
    loadable and named in the summary with its step; the last one is the final policy.
    `init_log_std` sets the starting exploration noise. `direct_solve` trains on direct-solve
    worlds and is refused where contacts can occur."""
    torch.set_num_threads(1)
    config = _config(snapshot_minutes=1e-9, direct_solve=True, init_log_std=-1.5)
    result = train_ppo(config, tmp_path, log=print)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["config"]["direct_solve"] is True
    rows = summary["snapshots"]
    assert [r["step"] for r in rows] == [4, 8, 12, 16]
    assert [r["transitions"] for r in rows] == [8, 16, 24, 32]
    assert all(r["wall_time_s"] <= result.wall_time for r in rows)
    last = torch.load(tmp_path / rows[-1]["file"], weights_only=False)["net"]
    final = torch.load(result.policy_path, weights_only=False)["net"]
    assert all(torch.equal(last[k], final[k]) for k in final)
    # The exploration noise started where asked (four small updates move it little).
    log_std = torch.load(result.policy_path, weights_only=False)["log_std"]
    assert log_std.shape == (10,) and abs(float(log_std.mean()) + 1.5) < 0.05
    for row in rows:
        _finite_policy_file(tmp_path / row["file"])
    # examples/learning/seed_spread.py chooses among the snapshots and the final policy.
    spread = learning_example("seed_spread")
    cands = spread._candidates(tmp_path)
    assert [str(c.relative_to(tmp_path)) for c in cands] == [r["file"] for r in rows] + [
        "policy.pt"
    ]
    assert spread._run_settings(tmp_path, summary) == ({"episode_steps": 6}, 0, 32)
    with pytest.raises(ValueError, match="direct_solve: ReachObstacle-v0"):
        train_ppo(
            _config(env_id="ReachObstacle-v0", num_envs=1, direct_solve=True, env_kwargs={}),
            tmp_path / "obstacle",
            log=print,
        )
    assert not (tmp_path / "obstacle").exists()


def _finite_policy_file(path: Path) -> None:
    action = load_ppo_policy(path)(np.zeros(34, dtype=np.float32))
    assert np.all(np.isfinite(action))


def test_logged_reward_is_the_envs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mean reward per step that training logs is the environment's: skrl's truncation
    bootstrap (discount * V(last observation), added to the reward tensor in place at each
    episode's last step) is left out of it."""
    torch.set_num_threads(1)
    import softrod.envs

    seen: list[float] = []
    make = softrod.envs.make_batched

    def recording(*args: Any, **kw: Any) -> Any:
        env = make(*args, **kw)
        step = env.step

        def logged(actions: Any) -> Any:
            out = step(actions)
            seen.append(float(out[1].mean()))
            return out

        env.step = logged
        return env

    monkeypatch.setattr(softrod.envs, "make_batched", recording)
    # Episodes of 4 steps, rollouts of 4: every rollout ends with a truncation.
    result = train_ppo(_config(env_kwargs={"episode_steps": 4}), tmp_path, log=lambda _: None)
    assert len(seen) == 16
    assert result.last_mean_reward == pytest.approx(np.mean(seen[-4:]), rel=1e-5, abs=1e-6)


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


def test_killed_ppo_resumes_from_its_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL right after the checkpoint of step 8 of a 16-step run: that checkpoint is the
    uninterrupted run's state at step 8 (parameters, normaliser, random state, every world's
    MuJoCo Warp state and task), and resuming from it ends with the uninterrupted run's final
    policy, normaliser and summary numbers, bit for bit (Warp's CPU device, one torch thread;
    the worlds pass an auto-reset at step 12, the resumed run's first update is at step 12).
    The same for a run stopped by Ctrl-C / SIGTERM mid-rollout."""
    import signal
    import subprocess
    import sys

    import softrod.learn.device_ppo as device_ppo
    from softrod.learn.device_ppo import CHECKPOINT_FILE

    torch.set_num_threads(1)
    # The uninterrupted run, its checkpoint of step 8 kept in memory.
    saved: dict[int, Any] = {}
    save = device_ppo._save_checkpoint

    def keep(path: Path, payload: dict[str, Any]) -> None:
        save(path, payload)
        saved[payload["progress"]["step"]] = torch.load(path, weights_only=False)

    monkeypatch.setattr(device_ppo, "_save_checkpoint", keep)
    whole = train_ppo(_config(checkpoint_every=1), tmp_path / "whole", log=lambda _: None)
    monkeypatch.undo()
    assert sorted(saved) == [4, 8, 12, 16] and whole.timesteps == 16
    # A finished run keeps no checkpoint.
    assert not (whole.run_dir / CHECKPOINT_FILE).exists()

    run = tmp_path / "killed"
    kw = {
        "env_id": "Reach-v0",
        "num_envs": 2,
        "device": DEVICE,
        "timesteps": 16,
        "rollouts": 4,
        "learning_epochs": 1,
        "mini_batches": 1,
        "hidden": (8,),
        "env_kwargs": {"episode_steps": 6},
        "checkpoint_every": 1,
    }
    assert _config(checkpoint_every=1) == PPOConfig(**kw)
    code = (
        "import os, signal, torch\n"
        "torch.set_num_threads(1)\n"
        "import softrod.learn.device_ppo as d\n"
        "save = d._save_checkpoint\n"
        "def kill_after(path, payload):\n"
        "    save(path, payload)\n"
        "    if payload['progress']['step'] >= 8:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "d._save_checkpoint = kill_after\n"
        f"d.train_ppo(d.PPOConfig(**{kw!r}), {str(run)!r}, log=lambda _: None)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ}, timeout=600)
    assert proc.returncode == -signal.SIGKILL
    assert not (run / "policy.pt").exists()
    # The killed run's checkpoint is the uninterrupted run's at step 8, world state included.
    ckpt, at8 = torch.load(run / CHECKPOINT_FILE, weights_only=False), saved[8]
    assert ckpt["progress"]["step"] == 8
    for key, value in at8["policy"].items():
        assert torch.equal(ckpt["policy"][key], value), key
    assert torch.equal(ckpt["rng"], at8["rng"])
    for name, value in at8["env"]["arrays"].items():
        assert torch.equal(ckpt["env"]["arrays"][name], value), name
    # Mid-episode (step 2 of 6) with moving worlds: the world state is not a reset's.
    assert ckpt["env"]["step_count"] == 2
    assert torch.any(ckpt["env"]["arrays"]["data.qvel"] != 0)

    lines: list[str] = []
    resumed = train_ppo(PPOConfig(**kw), run, log=lines.append, resume=True)
    assert (resumed.resumed_from, resumed.timesteps) == (8, 16)
    assert any("resumed from" in line for line in lines)
    # The result is the uninterrupted run's: final policy, normaliser, summary numbers.
    final, whole_final = (
        torch.load(p, weights_only=False) for p in (run / "policy.pt", whole.policy_path)
    )
    for key, value in whole_final["net"].items():
        assert torch.equal(final["net"][key], value), key
    assert torch.equal(final["obs_mean"], whole_final["obs_mean"])
    assert torch.equal(final["obs_var"], whole_final["obs_var"])
    summary = json.loads((run / "summary.json").read_text())
    whole_summary = json.loads((whole.run_dir / "summary.json").read_text())
    for key in ("status", "timesteps", "transitions", "recoveries", "last_mean_reward"):
        assert summary[key] == whole_summary[key], key
    assert summary["status"] == "ok" and summary["resumed_from_step"] == 8
    assert resumed.last_mean_reward == whole.last_mean_reward
    _finite_policy(run)
    # The checkpoint is gone with the finished run; no temporary files are left.
    assert sorted(p.name for p in run.iterdir()) == ["policy.pt", "summary.json"]

    # Ctrl-C / SIGTERM mid-rollout (in the 14th step, after the update at step 12): the
    # checkpoint is step 12's state, and resuming from it also ends as the uninterrupted run.
    from softrod.envs._batched import BatchedEnv

    step, calls = BatchedEnv.step, [0]

    def interrupt_at_14(self: Any, actions: Any) -> Any:
        calls[0] += 1
        if calls[0] == 14:
            raise KeyboardInterrupt
        return step(self, actions)

    monkeypatch.setattr(BatchedEnv, "step", interrupt_at_14)
    stopped = train_ppo(PPOConfig(**kw), tmp_path / "stopped", log=lambda _: None)
    monkeypatch.undo()
    assert stopped.interrupted and stopped.timesteps == 12
    resumed = train_ppo(PPOConfig(**kw), stopped.run_dir, log=lambda _: None, resume=True)
    assert (resumed.resumed_from, resumed.timesteps) == (12, 16)
    final = torch.load(resumed.policy_path, weights_only=False)
    for key, value in whole_final["net"].items():
        assert torch.equal(final["net"][key], value), key
    assert torch.equal(final["obs_var"], whole_final["obs_var"])
    assert resumed.last_mean_reward == whole.last_mean_reward


def test_damaged_or_foreign_ppo_checkpoints_are_refused(tmp_path: Path) -> None:
    from softrod._version import __version__
    from softrod.learn.device_ppo import (
        _CHECKPOINT_FORMAT,
        CHECKPOINT_FILE,
        _config_dict,
        _save_checkpoint,
    )

    torch.set_num_threads(1)
    with pytest.raises(FileNotFoundError, match="no PPO checkpoint"):
        train_ppo(_config(), tmp_path / "none", resume=True)
    # A checkpoint of this run's config written by hand, then damaged or mismatched.
    config = _config()
    with pytest.raises(ValueError, match="checkpoint_every must be >= 1"):
        train_ppo(_config(checkpoint_every=0), tmp_path / "x")

    path = tmp_path / CHECKPOINT_FILE
    header = {"softrod": __version__, "config": _config_dict(config)}
    # A checkpoint of an older format (no world state): refused by name.
    _save_checkpoint(path, {**header, "format": "softrod-ppo-checkpoint-1"})
    with pytest.raises(ValueError, match="format softrod-ppo-checkpoint-1"):
        train_ppo(config, tmp_path, resume=True)
    _save_checkpoint(path, {**header, "format": _CHECKPOINT_FORMAT})
    with pytest.raises(ValueError, match=r"another PPO configuration \(hidden differ\)"):
        train_ppo(_config(hidden=(16,)), tmp_path, resume=True)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"cannot read the PPO checkpoint .*checkpoint\.pt"):
        train_ppo(config, tmp_path, resume=True)


def test_cli_ppo_stopped_by_sigterm_saves_and_resumes(tmp_path: Path) -> None:
    """`softrod train --algo ppo` stopped by SIGTERM (a scheduler, Ctrl-C): exit 130 with the
    policy and a checkpoint of the last update saved; `--resume RUN` trains on from there."""
    import signal
    import subprocess
    import sys

    from softrod.cli import main

    torch.set_num_threads(1)
    run = tmp_path / "run"
    args = ["train", "Reach-v0", "--algo", "ppo", "--num-envs", "2", "--device", DEVICE]
    args += ["--env-kwargs", '{"episode_steps": 6}', "--eval-episodes", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from softrod.cli import _entry; _entry()", *args]
        + ["--timesteps", "1000000", "-o", str(run)],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            # The first update's progress line: a policy worth keeping exists.
            if line.startswith("ppo step"):
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted after" in err and f"--resume {run}" in err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["interrupted"] is True
    step = torch.load(run / "checkpoint.pt", weights_only=False)["progress"]["step"]
    assert step >= 24 and step % 24 == 0
    _finite_policy(run)
    # The same settings again, longer: continued in place from the checkpoint.
    assert main([*args, "--timesteps", str(step + 24), "--resume", str(run)]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["resumed_from_step"] == step and summary["timesteps"] == step + 24
    assert not (run / "checkpoint.pt").exists()
    # A finished run has no checkpoint left to continue: one line, exit 2.
    assert main([*args, "--timesteps", "10", "--resume", str(run)]) == 2
