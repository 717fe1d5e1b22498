"""Learning pipeline end to end: SAC for a few hundred steps, evaluation, CLI, benchmark.

Long runs are benchmarks (docs/learning.md); these only prove that the pipeline works.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")
torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

import softrod.cli._learn_cmds  # noqa: E402, F401  (registers the commands)
from softrod.cli import main  # noqa: E402
from softrod.learn import (  # noqa: E402
    SACConfig,
    evaluate,
    load_config,
    load_sb3_policy,
    read_episodes,
    train_sac,
)

torch.set_num_threads(1)

#: Steps of the smoke training run: enough for several episodes and some gradient updates.
SMOKE_STEPS = 300


def test_sac_trains_logs_checkpoints_and_evaluates(tmp_path: Path) -> None:
    cfg = SACConfig(
        env_id="softrod/PlanarReach-v0",
        steps=SMOKE_STEPS,
        learning_starts=100,
        log_every=100,
        checkpoint_every=150,
        seed=3,
    )
    res = train_sac(cfg, tmp_path / "run", progress=False)
    run = res.run_dir
    assert res.steps == SMOKE_STEPS and res.episodes == SMOKE_STEPS // 40
    for name in (
        "config.yaml",
        "progress.csv",
        "episodes.csv",
        "model.zip",
        "learning_curve.png",
        "summary.json",
    ):
        assert (run / name).is_file(), name
    assert list(run.glob("events.out.tfevents.*")), "TensorBoard log"
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "sac_150_steps.zip",
        "sac_300_steps.zip",
    ]
    assert load_config(run / "config.yaml") == cfg
    ep = read_episodes(run)
    assert len(ep["steps"]) == res.episodes and np.all(np.isfinite(ep["final_distance"]))

    pol = load_sb3_policy(run)
    ev = evaluate(pol, cfg.env_id, episodes=3, seed=7)
    again = evaluate(pol, cfg.env_id, episodes=3, seed=7)
    np.testing.assert_array_equal(ev.final_distance, again.final_distance)
    # The last step's numeric info rides along (seed_spread.py's task metrics).
    np.testing.assert_array_equal(ev.final_info["distance"], ev.final_distance)
    np.testing.assert_array_equal(ev.final_info["success"], ev.success.astype(float))
    s = ev.summary()
    assert s["episodes"] == 3 and 0.0 <= s["success_rate"] <= 1.0
    assert s["final_distance_mean"] > 0


def test_sac_resume_restores_buffer_and_applies_config(tmp_path: Path) -> None:
    """A resume from a run's model.zip continues with its replay buffer and the new config's
    hyperparameters; from a bare checkpoint it refills `learning_starts` transitions first."""
    from stable_baselines3 import SAC

    base = SACConfig(
        env_id="softrod/PlanarReach-v0", steps=200, learning_starts=50, checkpoint_every=120, seed=1
    )
    first = train_sac(base, tmp_path / "a", progress=False)
    assert (first.run_dir / "replay_buffer.pkl").is_file()
    more = base.model_copy(
        update={"steps": 80, "learning_rate": 1e-4, "batch_size": 32, "target_entropy": -7.5}
    )
    train_sac(more, tmp_path / "b", progress=False, resume=first.run_dir / "model.zip")
    # Checkpoints fall on the run's total steps (240), not 120 steps after the resume (320).
    assert [p.name for p in (tmp_path / "b" / "checkpoints").iterdir()] == ["sac_240_steps.zip"]
    model = SAC.load(tmp_path / "b" / "model.zip", device="cpu")
    model.load_replay_buffer(tmp_path / "b" / "replay_buffer.pkl")
    assert model.num_timesteps == 280 and model.batch_size == 32
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert (summary["steps"], summary["total_steps"], summary["resumed_at_step"]) == (80, 280, 200)
    assert summary["resumed_from"] == str(first.run_dir / "model.zip")
    assert json.loads((first.run_dir / "summary.json").read_text())["resumed_from"] is None
    assert model.learning_rate == pytest.approx(1e-4)
    assert model.target_entropy == pytest.approx(-7.5)
    assert model.replay_buffer.size() == 280  # 200 carried over + 80 new


def test_sac_max_minutes_stops_early_and_saves_a_loadable_model(tmp_path: Path) -> None:
    """A time budget far below the requested steps ends the run early; the model and the
    replay buffer are saved as at the end of a full run and the model loads and acts."""
    cfg = SACConfig(env_id="softrod/PlanarReach-v0", steps=100_000, learning_starts=20, seed=0)
    res = train_sac(cfg, tmp_path / "run", progress=False, max_minutes=0.002)
    assert res.time_limited and not res.interrupted and 0 < res.steps < cfg.steps
    assert (res.run_dir / "replay_buffer.pkl").is_file()
    summary = json.loads((res.run_dir / "summary.json").read_text())
    assert summary["time_limited"] and summary["steps"] == res.steps
    ev = evaluate(
        load_sb3_policy(res.run_dir), cfg.env_id, episodes=1, env_kwargs={"episode_steps": 3}
    )
    assert ev.lengths[0] == 3 and np.isfinite(ev.final_distance[0])
    with pytest.raises(ValueError, match="max_minutes"):
        train_sac(cfg, tmp_path / "bad", progress=False, max_minutes=0)


#: Expert episodes put in the buffer by the prefill test (PushCube-v1 episodes are 120 steps).
PREFILL_EPISODES = 2
PUSH_EPISODE_STEPS = 120


def test_sac_expert_prefill_stores_the_experts_episodes(tmp_path: Path) -> None:
    """`expert_episodes` puts the scripted expert's whole episodes in the replay buffer before
    training, as SB3 stores its own transitions: episode ends done and marked truncated (time
    limit, bootstrapped), rewards summing to the expert's returns; training then appends."""
    from stable_baselines3 import SAC

    cfg = SACConfig(
        env_id="softrod/PushCube-v1",
        steps=30,
        learning_starts=10,
        expert_episodes=PREFILL_EPISODES,
        buffer_size=1000,
        seed=4,
    )
    res = train_sac(cfg, tmp_path / "run", progress=False)
    stats = json.loads((res.run_dir / "expert_prefill.json").read_text())
    n = PREFILL_EPISODES * PUSH_EPISODE_STEPS
    assert stats["episodes"] == PREFILL_EPISODES and stats["transitions"] == n
    model = SAC.load(res.run_dir / "model.zip", device="cpu")
    model.load_replay_buffer(res.run_dir / "replay_buffer.pkl")
    buf = model.replay_buffer
    assert buf.size() == n + cfg.steps
    ends = np.flatnonzero(buf.dones[:n, 0])
    np.testing.assert_array_equal(ends, np.arange(1, PREFILL_EPISODES + 1) * PUSH_EPISODE_STEPS - 1)
    np.testing.assert_array_equal(np.flatnonzero(buf.timeouts[:n, 0]), ends)
    assert buf.rewards[:n].sum() == pytest.approx(PREFILL_EPISODES * stats["mean_return"], 1e-5)
    assert np.all(np.abs(buf.actions[:n]) <= 1.0) and np.any(buf.actions[:n] != 0.0)
    # Within an episode, one transition's next observation is the next one's observation.
    inside = buf.dones[: n - 1, 0] == 0
    np.testing.assert_array_equal(
        buf.next_observations[: n - 1][inside], buf.observations[1:n][inside]
    )
    for bad, needle in [
        ({"expert_episodes": -1}, "expert_episodes must be >= 0"),
        ({"expert_episodes": 1, "n_envs": 2}, "n_envs 1"),
    ]:
        with pytest.raises(ValueError, match=needle):
            SACConfig(env_id="softrod/PushCube-v1", **bad)


#: Minibatch of the buffer-sampling check: large enough that a wrong mix shows, exact either way.
RATIO_BATCH = 1000


def test_expert_replay_buffer_keeps_the_prefix_and_mixes_minibatches() -> None:
    """`ExpertReplayBuffer`: the protected expert prefix survives any number of wraps, writes
    cycle through the agent's slots only, and every minibatch holds exactly round(ratio * batch)
    expert transitions (all expert before the agent has stored anything)."""
    from gymnasium import spaces

    from softrod.learn._replay import ExpertReplayBuffer

    box = spaces.Box(-1e6, 1e6, (1,), np.float32)
    buf = ExpertReplayBuffer(10, box, box, device="cpu")

    def add(b: ExpertReplayBuffer, value: float) -> None:
        v = np.array([[value]], np.float32)
        b.add(v, v, np.zeros((1, 1), np.float32), np.zeros(1), np.zeros(1), [{}])

    for i in range(3):  # expert transitions carry negative observations
        add(buf, -1.0 - i)
    buf.protect_expert(0.25)
    only_expert = buf.sample(RATIO_BATCH).observations.numpy()
    assert np.all(only_expert < 0)
    for i in range(42):  # agent transitions 0, 1, ..., 41 through 7 slots: six wraps
        add(buf, float(i))
    np.testing.assert_array_equal(buf.observations[:3, 0, 0], [-1.0, -2.0, -3.0])
    assert buf.full and buf.pos == 3
    # The 7 agent slots hold the 7 newest agent transitions.
    assert sorted(buf.observations[3:, 0, 0]) == list(range(35, 42))
    obs = buf.sample(RATIO_BATCH).observations.numpy()
    assert (obs < 0).sum() == round(0.25 * RATIO_BATCH)
    assert set(np.unique(obs[obs >= 0])) <= set(range(35, 42))
    # No room left for the agent: refused.
    small = ExpertReplayBuffer(3, box, box, device="cpu")
    for i in range(2):
        add(small, -1.0 - i)
    with pytest.raises(ValueError, match="buffer_size 3 must exceed the 2 expert transitions"):
        small.protect_expert(0.5)


def test_sac_expert_ratio_keeps_demonstrations_across_resumes(tmp_path: Path) -> None:
    """With `expert_ratio`, a run whose buffer wraps still holds the expert's episodes intact at
    the end; a resume takes the config's ratio, refuses a buffer whose prefix disagrees with
    it, and a resume from a checkpoint (no buffer) puts the same episodes back."""
    from stable_baselines3 import SAC

    from softrod.learn._replay import ExpertReplayBuffer

    n = PREFILL_EPISODES * PUSH_EPISODE_STEPS
    base = dict(
        env_id="softrod/PushCube-v1", learning_starts=10, expert_episodes=PREFILL_EPISODES, seed=4
    )
    # 30 agent steps through 10 agent slots: the buffer wraps three times.
    cfg = SACConfig(steps=30, buffer_size=n + 10, expert_ratio=0.5, **base)
    res = train_sac(cfg, tmp_path / "run", progress=False)
    stats = json.loads((res.run_dir / "expert_prefill.json").read_text())

    def buffer_of(run: Path) -> Any:
        model = SAC.load(run / "model.zip", device="cpu")
        model.load_replay_buffer(run / "replay_buffer.pkl")
        return model.replay_buffer

    buf = buffer_of(res.run_dir)
    assert isinstance(buf, ExpertReplayBuffer) and buf.n_expert == n and buf.expert_ratio == 0.5
    assert buf.full and buf.pos == n
    ends = np.flatnonzero(buf.dones[:n, 0])
    np.testing.assert_array_equal(ends, np.arange(1, PREFILL_EPISODES + 1) * PUSH_EPISODE_STEPS - 1)
    assert buf.rewards[:n].sum() == pytest.approx(PREFILL_EPISODES * stats["mean_return"], 1e-5)

    # A resume: the config's ratio applies; a ratio-less config is refused (and vice versa).
    more = cfg.model_copy(update={"steps": 5, "expert_ratio": 0.25})
    train_sac(more, tmp_path / "more", progress=False, resume=res.run_dir / "model.zip")
    assert buffer_of(tmp_path / "more").expert_ratio == 0.25
    with pytest.raises(ValueError, match=f"keeps {n} expert transitions"):
        train_sac(
            cfg.model_copy(update={"expert_ratio": None}),
            tmp_path / "bad",
            progress=False,
            resume=res.run_dir / "model.zip",
        )
    plain = train_sac(
        SACConfig(steps=12, buffer_size=n + 20, **base), tmp_path / "plain", progress=False
    )
    with pytest.raises(ValueError, match="keeps no expert transitions"):
        train_sac(cfg, tmp_path / "bad", progress=False, resume=plain.model_path)

    # A checkpoint has no buffer beside it: the same expert episodes are put back and frozen.
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(res.model_path, lone / "model.zip")
    again = train_sac(
        cfg.model_copy(update={"steps": 5}),
        tmp_path / "again",
        progress=False,
        resume=lone / "model.zip",
    )
    rebuilt = buffer_of(again.run_dir)
    assert rebuilt.n_expert == n
    np.testing.assert_array_equal(rebuilt.observations[:n], buf.observations[:n])
    for bad, needle in [
        ({"expert_ratio": 1.0}, "expert_ratio must be in (0, 1), got 1.0"),
        ({"expert_ratio": 0.5, "expert_episodes": 0}, "needs expert_episodes >= 1"),
    ]:
        with pytest.raises(ValueError, match=re.escape(needle)):
            SACConfig(env_id="softrod/PushCube-v1", **{"expert_episodes": 1, **bad})


#: Scale of the critic inputs "far outside the data" (PlanarReach observations are O(1)).
FAR_INPUT_SCALE = 1e6
#: How far a plain critic's |Q| exceeds the LayerNorm bound there (ReLU MLPs grow linearly with
#: the input: ~1e6 times; 1e3 leaves a wide margin and still shows the bound is not trivial).
PLAIN_CRITIC_EXCESS = 1e3


def _layer_norm_q_bound(q_net: Any) -> float:
    """An upper bound on |Q| for any input of a `LayerNormCritic` Q network: its last hidden
    activation is relu(gamma * z + beta) with sum(z^2) = width (z normalised), so |Q| <= |b| +
    ||w|| (max|gamma| sqrt(width) + ||beta||) for the output layer's weights w and bias b."""
    norm, out = q_net[-3], q_net[-1]
    width = norm.normalized_shape[0]
    hidden = norm.weight.abs().max() * width**0.5 + norm.bias.norm()
    return float((out.bias.abs().max() + out.weight.norm() * hidden).detach())


def test_sac_critic_layer_norm_bounds_q_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """`--critic-layer-norm` trains a critic with a LayerNorm after every hidden layer (target
    too), whose Q stays inside the LayerNorm bound for inputs a million times the data's scale
    where the plain critic's does not; the saved model loads back with it, and a resume that
    names the other critic is one clear error."""
    from stable_baselines3 import SAC

    from softrod.learn._critic import LayerNormSACPolicy

    out = tmp_path / "ln"
    argv = ["train", "PlanarReach-v0", "--steps", "120", "--learning-starts", "60"]
    argv += ["--no-progress", "--checkpoint-every", "1000", "--critic-layer-norm"]
    assert main([*argv, "-o", str(out)]) == 0
    assert load_config(out / "config.yaml").critic_layer_norm  # type: ignore[union-attr]
    model = SAC.load(out / "model.zip", device="cpu")
    assert isinstance(model.policy, LayerNormSACPolicy)
    for critic in (model.critic, model.critic_target):
        kinds = [type(m).__name__ for m in critic.qf0]
        assert kinds == ["Linear", "LayerNorm", "ReLU"] * 2 + ["Linear"], kinds
    import gymnasium as gym

    plain = SAC("MlpPolicy", gym.make("softrod/PlanarReach-v0"), seed=0, device="cpu")
    obs_dim = model.policy.observation_space.shape[0]
    act_dim = model.policy.action_space.shape[0]
    far = FAR_INPUT_SCALE * torch.randn(
        256, obs_dim + act_dim, generator=torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        q_ln = model.critic.qf0(far).abs().max().item()
        q_plain = plain.critic.qf0(far).abs().max().item()
    assert q_ln <= _layer_norm_q_bound(model.critic.qf0)
    assert q_plain > PLAIN_CRITIC_EXCESS * _layer_norm_q_bound(model.critic.qf0)
    # A resume continues with the same critic; naming the other one is refused in one line.
    more = ["train", "PlanarReach-v0", "--steps", "10", "--no-progress", "--resume"]
    assert main([*more, str(out / "model.zip"), "-o", str(out), "--critic-layer-norm"]) == 0
    capsys.readouterr()
    assert main([*more, str(out / "model.zip"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "has a layer-normalised critic" in err and err.count("\n") == 1, err


def test_cli_train_eval_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "cli_run"
    rc = main(
        [
            "train",
            "PlanarReach-v0",
            "--steps",
            "200",
            "--learning-starts",
            "100",
            "--out",
            str(out),
            "--no-progress",
            "--checkpoint-every",
            "1000",
            "--target-entropy",
            "-3",
        ]
    )
    assert rc == 0
    assert (out / "model.zip").is_file()
    assert load_config(out / "config.yaml").target_entropy == -3.0  # type: ignore[union-attr]
    capsys.readouterr()
    rc = main(["eval", str(out), "--episodes", "2", "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["env_id"] == "softrod/PlanarReach-v0" and summary["episodes"] == 2

    run = tmp_path / "refused"
    for argv, needle in [
        (["train", "Nope-v0", "--steps", "10"], "unknown environment"),
        (["train", "Reach-v0", "--algo", "dqn"], "--algo"),
        (["train", "Reach-v0", "--env-kwargs", "[1]"], "--env-kwargs"),
        (["eval", str(tmp_path / "missing")], "no policy"),
        (["eval", str(out), "--temporal-ensemble", "off"], "BC policies only"),
        (["bench", "envs", "--steps", "2"], "--steps"),
        # An unknown kwarg or a value of the wrong type: one line, and no run directory made.
        (["train", "Reach-v0", "--env-kwargs", '{"foo": 1}', "-o", str(run)], "'foo'"),
        (["train", "Reach-v0", "--env-kwargs", '{"error_gain": "x"}', "-o", str(run)], "'str'"),
        (["train", "Reach-v0", "--steps", "-5", "-o", str(run)], "steps must be >= 1, got -5"),
        (["train", "Reach-v0", "--expert-episodes", "3", "-o", str(run)], "no scripted expert"),
        (
            ["train", "PushCube-v1", "--expert-ratio", "0.5", "-o", str(run)],
            "needs expert_episodes",
        ),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err
        assert "validation error" not in err and "errors.pydantic.dev" not in err, err
    assert not run.exists()


def test_bench_envs_reports_every_metric(capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "envs", "--envs", "Reach-v0", "--steps", "20", "--workers", "2"]) == 0
    lines = dict(line.split(": ") for line in capsys.readouterr().out.strip().splitlines())
    assert set(lines) == {
        "Reach-v0.steps_per_s",
        "Reach-v0.steps_per_cpu_s",
        "Reach-v0.async2_steps_per_s",
    }
    assert all(float(v) > 0 for v in lines.values())


# -- demonstrations, duplicate filter, experts, behaviour cloning, teleoperation ---------------

from softrod.learn import BCConfig  # noqa: E402
from softrod.learn._bc import BCPolicy, is_bc_policy, load_bc_policy, train_bc  # noqa: E402
from softrod.learn._demos import DemoSet, duplicate_mask, record_demos  # noqa: E402
from softrod.learn._teleop import record_teleop, script_keys  # noqa: E402

#: Seed 002 App. E.2: consecutive frames whose robot states agree within 1e-9 are duplicates.
DEDUP_TOL = 1e-9


def test_duplicate_filter_drops_only_consecutive_repeats() -> None:
    base = np.array(
        [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0 + 5e-10], [0.5, 1.0], [0.0, 1.0], [0.0, 1.0 + 2e-9]]
    )
    keep = duplicate_mask(base, DEDUP_TOL)
    # Repeats (within tolerance) of the previous frame go; a return to an earlier state and a
    # change just above the tolerance stay.
    np.testing.assert_array_equal(keep, [True, False, False, True, True, True])
    with pytest.raises(ValueError, match="2-D"):
        duplicate_mask(np.zeros(3))

    demos = DemoSet(
        "softrod/Reach-v0",
        [base, base[:2]],
        [np.arange(6.0)[:, None], np.arange(2.0)[:, None]],
        [True, False],
        [3, 4],
    )
    clean = demos.remove_duplicates(DEDUP_TOL)
    assert [len(o) for o in clean.observations] == [4, 1]
    np.testing.assert_array_equal(clean.actions[0][:, 0], [0, 3, 4, 5])
    assert clean.dedup_tol == DEDUP_TOL and clean.successful().n_episodes == 1


def test_demo_file_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    demos = DemoSet(
        "softrod/Reach-v0",
        [rng.normal(size=(5, 3)), rng.normal(size=(2, 3))],
        [rng.normal(size=(5, 2)), rng.normal(size=(2, 2))],
        [True, False],
        [7, 8],
        {"episode_steps": 10},
        0.05,
        "teleop",
    )
    path = demos.save(tmp_path / "d.npz")
    back = DemoSet.load(path)
    assert back.env_id == demos.env_id and back.env_kwargs == {"episode_steps": 10}
    assert back.source == "teleop" and back.dedup_tol is None
    for a, b in zip(back.observations, demos.observations, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_array_equal(back.success, [True, False])
    np.testing.assert_array_equal(back.seeds, [7, 8])
    with pytest.raises(FileNotFoundError):
        DemoSet.load(tmp_path / "missing.npz")


@functools.cache
def _expert_demo(env_id: str) -> DemoSet:
    """One scripted expert episode (seed 5), recorded once per test run: the expert test and
    both behaviour-cloning tests read the same FlipSwitch demo (none of them changes it)."""
    return record_demos(env_id, 1, seed=5, max_attempts=2)


@pytest.mark.parametrize("env_id", ["softrod/WholeBodyGrasp-v0", "softrod/FlipSwitch-v0"])
def test_scripted_expert_records_a_successful_demo(env_id: str) -> None:
    demos = _expert_demo(env_id)
    assert demos.n_episodes == 1 and demos.success.all()
    assert demos.observations[0].shape[1] == 19 and demos.actions[0].shape[1] == 16
    assert demos.source == "expert" and demos.control_period == pytest.approx(0.05)


def _tiny_demo_file(tmp_path: Path) -> Path:
    return _expert_demo("softrod/FlipSwitch-v0").save(tmp_path / "switch1.npz")


@pytest.mark.parametrize("policy", ["mlp", "act"])
def test_behaviour_cloning_trains_saves_and_runs(tmp_path: Path, policy: str) -> None:
    path = _tiny_demo_file(tmp_path)
    cfg = BCConfig(
        policy=policy,
        iterations=20,
        hidden=32,
        layers=1,
        heads=2,
        feedforward=64,
        chunk=5,
        batch_size=32,
    )
    res = train_bc(path, cfg, tmp_path / policy, progress=False)
    assert np.isfinite(res.final_loss) and res.policy_path.is_file()
    assert is_bc_policy(res.run_dir) and (res.run_dir / "losses.csv").is_file()
    pol = load_bc_policy(res.policy_path)
    assert pol.env_id == "softrod/FlipSwitch-v0"
    ev = evaluate(pol, pol.env_id, episodes=1, env_kwargs={"episode_steps": 8})
    assert 1 <= ev.lengths[0] <= 8
    # Deterministic at run time (z = 0, no dropout): the same episode twice.
    again = evaluate(pol, pol.env_id, episodes=1, env_kwargs={"episode_steps": 8})
    assert ev.returns[0] == again.returns[0]


def test_bc_policy_runs_chunks_ensembled_or_open_loop() -> None:
    """BCPolicy.act with temporal ensembling averages, at step t, entry t - q of every chunk
    queried at q in (t - k, t], weights exp(-m i) with i = 0 the oldest; with it off (m < 0)
    the policy queries every k-th step and plays that chunk open loop."""
    k, m, steps = 4, 0.7, 11
    cfg = BCConfig(chunk=k, hidden=8, layers=1, temporal_ensemble=m)
    stats = {n: np.zeros(1) for n in ("obs_mean", "act_mean")}
    stats |= {n: np.ones(1) for n in ("obs_std", "act_std")}
    pol = BCPolicy(torch.nn.Linear(1, 1), cfg, stats, "softrod/FlipSwitch-v0", {})
    queried: list[int] = []

    def chunk_at(q: int) -> np.ndarray:
        # The chunk queried at step q: entry j is 100 q + j (one action dimension).
        return (100.0 * q + np.arange(k))[:, None]

    def predict(obs: np.ndarray) -> np.ndarray:
        queried.append(pol._t)
        return chunk_at(pol._t)

    pol._predict = predict  # type: ignore[method-assign]
    got = [pol.act(np.zeros(1))[0] for _ in range(steps)]
    for t in range(steps):
        qs = np.arange(max(0, t - k + 1), t + 1)  # oldest first
        w = np.exp(-m * np.arange(len(qs)))
        want = sum(wi * chunk_at(q)[t - q, 0] for wi, q in zip(w, qs, strict=True)) / w.sum()
        assert got[t] == pytest.approx(want, rel=1e-6), t
    assert queried == list(range(steps))
    queried.clear()
    pol.set_temporal_ensemble(-1.0)  # also starts a new episode
    got = [pol.act(np.zeros(1))[0] for _ in range(steps)]
    assert queried == [0, 4, 8]
    assert got == [100.0 * (t - t % k) + t % k for t in range(steps)]


#: Iterations and decay of the weight-averaging test (decay high enough that the warm-up
#: min(decay, (1 + t) / (10 + t)) sets every step's weight).
EMA_ITERATIONS = 3
EMA_DECAY = 0.9


def test_behaviour_cloning_ema_saves_the_average_of_the_weights(tmp_path: Path) -> None:
    """With `ema_decay` the saved policy is the running average of the weights: e_0 = w_0 (the
    initialisation), e_t = d_t e_{t-1} + (1 - d_t) w_t with d_t = min(decay, (1 + t) / (10 + t)),
    checked against the raw weights w_t of runs stopped at each iteration (averaging draws no
    random numbers, so they are the averaged run's)."""
    from softrod.learn._bc import _build_net

    path = _tiny_demo_file(tmp_path)
    cfg = BCConfig(iterations=EMA_ITERATIONS, hidden=16, layers=1, chunk=3, batch_size=16)
    raw = [
        load_bc_policy(
            train_bc(
                path, cfg.model_copy(update={"iterations": t}), tmp_path / f"w{t}", progress=False
            ).policy_path
        )
        for t in range(1, EMA_ITERATIONS + 1)
    ]
    # w_0: the initialisation train_bc draws first after seeding torch.
    torch.manual_seed(cfg.seed)
    first = torch.load(tmp_path / "w1" / "policy.pt", weights_only=False)
    expected = _build_net(cfg, first["obs_dim"], first["act_dim"]).state_dict()
    for t, pol in enumerate(raw, start=1):
        d = min(EMA_DECAY, (1 + t) / (10 + t))
        for key, w in pol.net.state_dict().items():
            expected[key] = d * expected[key] + (1 - d) * w
    averaged = cfg.model_copy(update={"ema_decay": EMA_DECAY})
    got = load_bc_policy(train_bc(path, averaged, tmp_path / "ema", progress=False).policy_path)
    for key, value in got.net.state_dict().items():
        torch.testing.assert_close(value, expected[key], rtol=1e-6, atol=1e-7)
    assert not torch.equal(got.net.state_dict()[key], raw[-1].net.state_dict()[key])
    with pytest.raises(ValueError, match="ema_decay"):
        BCConfig(ema_decay=1.0)


#: Iterations of the learning-rate schedule test; its interrupted run stops after this step.
SCHEDULE_ITERATIONS = 4
SCHEDULE_STOP = 3


def test_behaviour_cloning_cosine_schedule_and_older_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`lr_schedule="cosine"` steps at lr (1 + cos(pi (t - 1) / T)) / 2 at step t (the rates
    the optimiser actually steps with, recorded), and a resumed run continues the schedule;
    a checkpoint written before the field existed resumes under the default, constant rate
    and is refused for a cosine run (another configuration)."""
    import math
    import signal

    from softrod.learn._bc import CHECKPOINT_FILE

    path = _tiny_demo_file(tmp_path)
    const = BCConfig(
        iterations=SCHEDULE_ITERATIONS,
        hidden=16,
        layers=1,
        chunk=3,
        batch_size=16,
        learning_rate=1e-3,
    )
    cosine = const.model_copy(update={"lr_schedule": "cosine"})
    rates: list[float] = []
    stop_after: list[int] = []
    step = torch.optim.AdamW.step

    def recording_step(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        rates.append(self.param_groups[0]["lr"])
        if len(rates) in stop_after:
            os.kill(os.getpid(), signal.SIGTERM)  # train_bc checkpoints and stops
        return step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)
    whole = train_bc(path, cosine, tmp_path / "cosine", progress=False)
    n = SCHEDULE_ITERATIONS
    want = [1e-3 * 0.5 * (1 + math.cos(math.pi * (t - 1) / n)) for t in range(1, n + 1)]
    np.testing.assert_allclose(rates, want, rtol=1e-12)
    # Stopped after step 3 and resumed: step 4 at its scheduled rate, the same weights.
    rates.clear()
    stop_after.append(SCHEDULE_STOP)
    assert train_bc(path, cosine, tmp_path / "cut", progress=False).interrupted
    resumed = train_bc(path, cosine, tmp_path / "cut", progress=False, resume=True)
    np.testing.assert_allclose(rates, want, rtol=1e-12)
    a = load_bc_policy(whole.policy_path).net.state_dict()
    b = load_bc_policy(resumed.policy_path).net.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    # The schedule changes the weights.
    rates.clear()
    stop_after.clear()
    c = load_bc_policy(train_bc(path, const, tmp_path / "c", progress=False).policy_path)
    assert rates == [1e-3] * n
    assert any(not torch.equal(a[k], c.net.state_dict()[k]) for k in a)
    # A checkpoint without the field (written before it existed) resumes as constant.
    rates.clear()
    stop_after.append(SCHEDULE_STOP)
    assert train_bc(path, const, tmp_path / "old", progress=False).interrupted
    ckpt_path = tmp_path / "old" / CHECKPOINT_FILE
    ckpt = torch.load(ckpt_path, weights_only=False)
    del ckpt["config"]["lr_schedule"]
    torch.save(ckpt, ckpt_path)
    with pytest.raises(ValueError, match="another configuration"):
        train_bc(path, cosine, tmp_path / "old", progress=False, resume=True)
    old = train_bc(path, const, tmp_path / "old", progress=False, resume=True)
    d = load_bc_policy(old.policy_path).net.state_dict()
    assert all(torch.equal(c.net.state_dict()[k], d[k]) for k in d)
    with pytest.raises(ValueError, match="lr_schedule"):
        BCConfig(lr_schedule="linear")


def test_a_kept_behaviour_cloning_run_extends_to_the_longer_run(tmp_path: Path) -> None:
    """A run finished with `keep_checkpoint` and resumed with more iterations (constant rate)
    ends with the weights, losses and validation history of a run made that long at once; a
    cosine run, fewer iterations, or another change are refused; without the option the
    checkpoint is deleted at the end."""
    import dataclasses

    from softrod.learn._bc import CHECKPOINT_FILE

    short = dataclasses.replace(
        _expert_demo("softrod/FlipSwitch-v0"), env_kwargs={"episode_steps": 6}
    )
    four = BCConfig(iterations=4, hidden=16, layers=1, chunk=3, batch_size=16, ema_decay=0.5)
    six = four.model_copy(update={"iterations": 6})
    val = {"val_episodes": 1, "val_every": 2}
    kept = train_bc(short, four, tmp_path / "ext", progress=False, keep_checkpoint=True, **val)
    assert kept.selected_iteration is not None and (tmp_path / "ext" / CHECKPOINT_FILE).is_file()
    extended = train_bc(short, six, tmp_path / "ext", progress=False, resume=True, **val)
    whole = train_bc(short, six, tmp_path / "whole", progress=False, **val)
    a = load_bc_policy(extended.policy_path).net.state_dict()
    b = load_bc_policy(whole.policy_path).net.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    summary = {r: json.loads((tmp_path / r / "summary.json").read_text()) for r in ("ext", "whole")}
    assert summary["ext"]["resumed_from_iteration"] == 4
    for key in ("final_loss", "selected_iteration", "validation"):
        if key == "validation":
            for run in summary.values():
                run[key].pop("wall_time_s")
        assert summary["ext"][key] == summary["whole"][key], key
    # The same losses, plus the shorter run's last one (logged as its end).
    ext_losses = (tmp_path / "ext" / "losses.csv").read_text().splitlines()
    assert [r for r in ext_losses if not r.startswith("4,")] == (
        (tmp_path / "whole" / "losses.csv").read_text().splitlines()
    )
    assert not (tmp_path / "ext" / CHECKPOINT_FILE).is_file()  # not kept this time
    # Refused: a cosine run (its rates depend on the length), no more iterations, other changes.
    cosine = four.model_copy(update={"lr_schedule": "cosine"})
    for cfg, match in [
        (cosine.model_copy(update={"iterations": 6}), "cosine learning rate depends on them"),
        (four.model_copy(update={"iterations": 3}), "iterations must be larger"),
        (four, "is at iteration 4; iterations must be larger to resume, got 4"),
        (six.model_copy(update={"batch_size": 8}), "another configuration"),
    ]:
        kept_dir = tmp_path / f"kept-{cfg.lr_schedule}"
        base = cosine if cfg.lr_schedule == "cosine" else four
        if not (kept_dir / CHECKPOINT_FILE).is_file():
            train_bc(short, base, kept_dir, progress=False, keep_checkpoint=True)
        with pytest.raises(ValueError, match=match):
            train_bc(short, cfg, kept_dir, progress=False, resume=True)


def test_behaviour_cloning_keeps_the_best_validated_checkpoint(tmp_path: Path) -> None:
    """With validation episodes the policy is the candidate that did best on them (recorded in
    summary.json): its weights are those of a run stopped at that iteration, since validating
    draws no random numbers; without validation the policy is the last iteration's."""
    import dataclasses

    short = dataclasses.replace(
        _expert_demo("softrod/FlipSwitch-v0"), env_kwargs={"episode_steps": 6}
    )
    cfg = BCConfig(iterations=4, hidden=16, layers=1, chunk=3, batch_size=16)
    res = train_bc(
        short,
        cfg,
        tmp_path / "val",
        progress=False,
        val_episodes=2,
        val_every=2,
        keep_candidates=True,
    )
    summary = json.loads((res.run_dir / "summary.json").read_text())
    val = summary["validation"]
    assert val["seed"] == 20_000 and val["episodes"] == 2
    rows = val["candidates"]
    assert [r["iteration"] for r in rows] == [2, 4]
    # Each row keeps its episodes' outcomes (reset seeds 20000, 20001), which make its rates.
    for r in rows:
        assert len(r["success"]) == len(r["final_distance"]) == 2
        assert np.mean(r["success"]) == r["success_rate"]
        assert np.mean(r["final_distance"]) == pytest.approx(r["final_distance_mean"], abs=0)
    best = max(
        reversed(rows), key=lambda r: (r["success_rate"], -r["final_distance_mean"])
    )  # later wins a tie
    assert res.selected_iteration == summary["selected_iteration"] == best["iteration"]
    stopped = cfg.model_copy(update={"iterations": res.selected_iteration})
    ref = train_bc(short, stopped, tmp_path / "ref", progress=False)
    assert ref.selected_iteration == res.selected_iteration and ref.policy_path.is_file()
    chosen = load_bc_policy(res.policy_path).net.state_dict()
    for key, value in load_bc_policy(ref.policy_path).net.state_dict().items():
        torch.testing.assert_close(chosen[key], value, rtol=0, atol=0)
    # `keep_candidates`: every candidate is a policy file, the selected one with these weights,
    # the other with different ones.
    kept = sorted(p.name for p in (res.run_dir / "candidates").iterdir())
    assert kept == ["policy_000002.pt", "policy_000004.pt"]
    for it in (2, 4):
        weights = load_bc_policy(
            res.run_dir / "candidates" / f"policy_{it:06d}.pt"
        ).net.state_dict()
        same = all(torch.equal(weights[k], v) for k, v in chosen.items())
        assert same == (it == res.selected_iteration)
    assert json.loads((ref.run_dir / "summary.json").read_text())["validation"] is None
    with pytest.raises(ValueError, match="val_episodes"):
        train_bc(short, cfg, tmp_path / "bad", progress=False, val_episodes=-1)


def _scripted_validation(monkeypatch: pytest.MonkeyPatch, rates: list[float]) -> list[float]:
    """Replace the validation episodes by scripted success rates, one per call in call order;
    returns the ways (`temporal_ensemble`) the policies were run with, in call order."""
    from types import SimpleNamespace

    import softrod.learn._eval as eval_module

    ways: list[float] = []

    def fake(policy: BCPolicy, *args: Any, **kwargs: Any) -> Any:
        ways.append(policy.cfg.temporal_ensemble)
        rate = rates[len(ways) - 1]
        # (the per-episode flags are only recorded; the selection reads the rate)
        return SimpleNamespace(
            success_rate=rate, success=np.zeros(2, bool), final_distance=np.full(2, 1.0 - rate)
        )

    monkeypatch.setattr(eval_module, "evaluate", fake)
    return ways


@pytest.mark.parametrize(
    "rates, chosen",
    [
        # (iteration 2: open loop, ensembled; iteration 4: open loop, ensembled)
        ([0.5, 0.5, 0.9, 0.6], (4, -1.0)),  # the best pair is open loop at 4
        ([0.9, 0.9, 0.1, 0.1], (2, 0.05)),  # a tie at one iteration keeps the ensembled way
        ([0.2, 0.7, 0.7, 0.5], (4, -1.0)),  # a tie across iterations keeps the later one
    ],
)
def test_behaviour_cloning_selects_the_way_its_chunks_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rates: list[float], chosen: tuple
) -> None:
    """With `select_execution` every candidate is validated open loop, then ensembled, and the
    policy is the better (iteration, way): its file runs the chosen way."""
    import dataclasses

    short = dataclasses.replace(
        _expert_demo("softrod/FlipSwitch-v0"), env_kwargs={"episode_steps": 6}
    )
    cfg = BCConfig(
        iterations=4, hidden=16, layers=1, chunk=3, batch_size=16, temporal_ensemble=0.05,
        select_execution=True,
    )  # fmt: skip
    ways = _scripted_validation(monkeypatch, rates)
    res = train_bc(short, cfg, tmp_path / "auto", progress=False, val_episodes=2, val_every=2)
    assert ways == [-1.0, 0.05, -1.0, 0.05]
    summary = json.loads((res.run_dir / "summary.json").read_text())
    rows = summary["validation"]["candidates"]
    assert [(r["iteration"], r["temporal_ensemble"], r["success_rate"]) for r in rows] == [
        (2, -1.0, rates[0]),
        (2, 0.05, rates[1]),
        (4, -1.0, rates[2]),
        (4, 0.05, rates[3]),
    ]
    assert (res.selected_iteration, res.temporal_ensemble) == chosen
    assert (summary["selected_iteration"], summary["selected_temporal_ensemble"]) == chosen
    assert load_bc_policy(res.policy_path).cfg.temporal_ensemble == chosen[1]
    # The run's configuration keeps the choice to make, not the choice made.
    assert load_config(res.run_dir / "config.yaml").select_execution  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="select_execution needs validation episodes"):
        train_bc(short, cfg, tmp_path / "bad", progress=False, val_episodes=0)
    for bad in ({"chunk": 1}, {"temporal_ensemble": -1.0}):
        with pytest.raises(ValueError, match="select_execution needs chunk > 1"):
            BCConfig(select_execution=True, **bad)


def test_teleop_script_records_raw_frames_with_duplicates() -> None:
    # Bend segment 1, then idle long enough for the robot to come to rest: the idle frames
    # repeat the same state and the filter removes them.
    demos = record_teleop(
        "softrod/PlanarReach-v0",
        script_keys("1ii" + "." * 120 + "n"),
        episodes=1,
        seed=0,
        env_kwargs={"episode_steps": 200},
    )
    assert demos.n_episodes == 1 and demos.source == "teleop"
    assert demos.n_frames == 123
    clean = demos.remove_duplicates(DEDUP_TOL)
    assert clean.n_frames < demos.n_frames
    assert demos.success[0]  # the operator kept it with `n`


def test_cli_demos_bc_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    demos = tmp_path / "grasp.npz"
    assert (
        main(
            [
                "demos",
                "WholeBodyGrasp-v0",
                "-n",
                "1",
                "-o",
                str(demos),
                "--seed",
                "3",
                "--no-progress",
            ]
        )
        == 0
    )
    assert DemoSet.load(demos).n_episodes == 1
    run = tmp_path / "bc"
    assert (
        main(
            [
                "bc",
                str(demos),
                "-o",
                str(run),
                "--policy",
                "mlp",
                "--iterations",
                "5",
                "--hidden",
                "16",
                "--chunk",
                "3",
                "--val-episodes",
                "0",
                "--dropout",
                "0.25",
                "--lr-schedule",
                "cosine",
                "--no-progress",
            ]
        )
        == 0
    )
    capsys.readouterr()
    # --dropout reaches the run's config (the MLP ignores it; ACT's transformer uses it).
    assert load_config(run / "config.yaml").dropout == 0.25  # type: ignore[union-attr]
    assert load_config(run / "config.yaml").lr_schedule == "cosine"  # type: ignore[union-attr]
    assert main(["eval", str(run), "--episodes", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["env_id"] == "softrod/WholeBodyGrasp-v0"
    # --temporal-ensemble: 'off' trains a policy that runs its chunks open loop; eval can
    # override the way a BC policy runs its chunks without retraining.
    open_run = tmp_path / "bc-open"
    argv = ["bc", str(demos), "-o", str(open_run), "--iterations", "2", "--hidden", "16"]
    assert main([*argv, "--val-episodes", "0", "--temporal-ensemble", "off", "--no-progress"]) == 0
    assert load_config(open_run / "config.yaml").temporal_ensemble == -1.0  # type: ignore[union-attr]
    capsys.readouterr()
    ran_with: list[float] = []
    act = BCPolicy.act
    monkeypatch.setattr(
        BCPolicy,
        "act",
        lambda self, obs: ran_with.append(self.cfg.temporal_ensemble) or act(self, obs),
    )
    assert main(["eval", str(run), "--episodes", "1", "--temporal-ensemble", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["episodes"] == 1
    assert ran_with and set(ran_with) == {0.5}  # trained with 0.01, run with 0.5
    monkeypatch.undo()
    # --temporal-ensemble auto: validated both ways (scripted here: open loop better).
    auto_run = tmp_path / "bc-auto"
    _scripted_validation(monkeypatch, [0.0, 0.0, 1.0, 0.5])
    auto_argv = ["bc", str(demos), "-o", str(auto_run), "--iterations", "2", "--hidden", "16"]
    auto_argv += ["--val-episodes", "1", "--val-every", "1", "--temporal-ensemble", "auto"]
    assert main([*auto_argv, "--no-progress", "--keep-checkpoint", "--keep-candidates"]) == 0
    assert "selected_temporal_ensemble: off" in capsys.readouterr().out
    assert load_bc_policy(auto_run).cfg.temporal_ensemble == -1.0
    # --keep-candidates: both candidates kept, each as trained (ensembled, the choice not made).
    for it in (1, 2):
        kept = load_bc_policy(auto_run / "candidates" / f"policy_{it:06d}.pt").cfg
        assert kept.temporal_ensemble == 0.01 and not kept.select_execution
    # --keep-checkpoint, then --resume with more iterations: the run goes on to iteration 3.
    assert (auto_run / "checkpoint.pt").is_file()
    monkeypatch.undo()
    _scripted_validation(monkeypatch, [0.0, 1.0])  # iteration 3: ensembled, and best
    assert main([*auto_argv, "--iterations", "3", "--resume", "--no-progress"]) == 0
    assert "selected_iteration: 3" in capsys.readouterr().out
    assert json.loads((auto_run / "summary.json").read_text())["resumed_from_iteration"] == 2
    monkeypatch.undo()
    # --decoder-layers reaches the ACT's transformer (and its policy file).
    act_run = tmp_path / "bc-act"
    act_argv = ["bc", str(demos), "-o", str(act_run), "--policy", "act", "--iterations", "2"]
    act_argv += ["--hidden", "16", "--heads", "2", "--layers", "1", "--decoder-layers", "2"]
    assert main([*act_argv, "--chunk", "3", "--val-episodes", "0", "--no-progress"]) == 0
    act = load_bc_policy(act_run)
    assert act.cfg.decoder_layers == 2 and len(act.net.transformer.decoder.layers) == 2
    for argv, needle in [
        (
            ["bc", str(demos), "-o", str(run), "--decoder-layers", "0"],
            "decoder_layers must be >= 1",
        ),
        (["demos", "Reach-v0", "-o", str(demos)], "no scripted expert"),
        (["bc", str(tmp_path / "none.npz"), "-o", str(run)], "no demonstrations"),
        (["bc", str(demos), "-o", str(run), "--policy", "rnn"], "--policy"),
        (["bc", str(demos), "-o", str(run), "--val-episodes", "-1"], "--val-episodes"),
        (["bc", str(demos), "-o", str(run), "--dropout", "1.5"], "dropout must be in [0, 1)"),
        (["bc", str(demos), "-o", str(run), "--lr-schedule", "step"], "--lr-schedule"),
        (["bc", str(demos), "-o", str(run), "--temporal-ensemble", "-1"], "'-1'"),
        (["eval", str(run), "--temporal-ensemble", "fast"], "number >= 0 or off, got 'fast'"),
        (["eval", str(run), "--temporal-ensemble", "auto"], "number >= 0 or off, got 'auto'"),
        (
            [
                "bc",
                str(demos),
                "-o",
                str(run),
                "--temporal-ensemble",
                "auto",
                "--val-episodes",
                "0",
            ],
            "--temporal-ensemble auto chooses on validation: needs --val-episodes > 0",
        ),
        (
            ["bc", str(demos), "-o", str(run), "--temporal-ensemble", "auto", "--chunk", "1"],
            "--temporal-ensemble auto needs --chunk > 1, got 1",
        ),
        (
            ["bc", str(demos), "-o", str(run), "--keep-candidates", "--val-episodes", "0"],
            "--keep-candidates keeps the validated candidates: needs --val-episodes > 0",
        ),
        (["teleop", "Reach-v0", "-o", str(demos), "--backend", "script"], "--keys"),
    ]:
        assert main(argv) == 2
        assert needle in capsys.readouterr().err


def test_cli_bench_warp_reach_errors(capsys: pytest.CaptureFixture) -> None:
    """Bad --worlds and a missing MuJoCo Warp are one-line errors (exit 2), not tracebacks."""
    import importlib.util

    assert main(["bench", "warp-reach", "--worlds", "1024,x"]) == 2
    assert "--worlds" in capsys.readouterr().err
    assert main(["bench", "warp-reach", "--worlds", "0"]) == 2
    if importlib.util.find_spec("mujoco_warp") is None:
        assert main(["bench", "warp-reach", "--worlds", "8", "--steps", "2"]) == 2
        assert "softrod[warp]" in capsys.readouterr().err


def test_average_policies_example_averages_actor_weights(tmp_path: Path, learning_example) -> None:
    """examples/learning/average_policies.py: the written actor is the element-wise mean."""
    from stable_baselines3 import SAC

    mod = learning_example("average_policies")
    cfg = SACConfig(
        env_id="softrod/PlanarReach-v0", steps=160, learning_starts=40, checkpoint_every=80
    )
    run = train_sac(cfg, tmp_path / "run", progress=False)
    cks = sorted(str(p) for p in (run.run_dir / "checkpoints").glob("*.zip"))
    assert len(cks) == 2
    mod.average(cks, str(tmp_path / "avg.zip"))
    a, b, avg = (
        SAC.load(p, device="cpu").policy.actor.state_dict() for p in (*cks, tmp_path / "avg.zip")
    )
    for k in avg:
        np.testing.assert_allclose(avg[k].numpy(), 0.5 * (a[k] + b[k]).numpy(), rtol=1e-6)
    assert any(not np.allclose(a[k].numpy(), b[k].numpy()) for k in a)  # training moved them
    with pytest.raises(ValueError, match="two checkpoints"):
        mod.average(cks[:1], str(tmp_path / "x.zip"))


def test_a_training_script_without_a_main_guard_gets_one_clear_error(tmp_path: Path, run_script):
    # Subprocess envs start by importing the main script; one that trains at import time would
    # train again in every worker. The user gets the cause, not a broken pipe.
    script = tmp_path / "train_script.py"
    script.write_text(
        "from softrod.learn import SACConfig, train_sac\n"
        "cfg = SACConfig(env_id='Reach-v0', steps=100, n_envs=2, vec_env='subproc')\n"
        "train_sac(cfg, 'run', progress=False)\n"
    )
    proc = run_script([script], tmp_path)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: train: the worker processes ended while starting")
    assert 'if __name__ == "__main__":' in last
    assert proc.stderr.count("Traceback") == 1  # the workers ended quietly
