"""Contract checks of every softrod environment, plus a physics check per task.

Contract (STYLE.md 8, 11): `gymnasium.utils.env_checker.check_env`, determinism under a seed,
pickling mid-episode, `AsyncVectorEnv` with 2 workers, per-term rewards that sum to the reward,
a `success` flag, and `render_mode="rgb_array"`.
"""

from __future__ import annotations

import math
import os
import pickle

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")

from softrod.envs import ENV_IDS  # noqa: E402

#: Steps compared in the determinism and pickling checks.
N_CHECK_STEPS = 6


def _actions(env_id: str, n: int, seed: int = 3) -> list[np.ndarray]:
    space = gym.make(env_id).action_space
    space.seed(seed)
    return [space.sample() for _ in range(n)]


def _rollout(env, actions) -> list[np.ndarray]:  # noqa: ANN001
    return [env.step(a)[0] for a in actions]


# Seed 002's tasks act in absolute joint/tendon units on purpose (the paper's policy I/O).
@pytest.mark.filterwarnings("ignore:.*symmetric and normalized")
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env(env_id: str) -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_deterministic_under_seed_and_pickles(env_id: str) -> None:
    actions = _actions(env_id, 2 * N_CHECK_STEPS)
    runs = []
    for _ in range(2):
        env = gym.make(env_id)
        obs0, _ = env.reset(seed=11)
        runs.append([obs0, *_rollout(env, actions)])
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)

    # Pickle mid-episode: the copy continues exactly like the original.
    env = gym.make(env_id).unwrapped
    env.reset(seed=11)
    _rollout(env, actions[:N_CHECK_STEPS])
    clone = pickle.loads(pickle.dumps(env))
    rest = actions[N_CHECK_STEPS:]
    for a, b in zip(_rollout(env, rest), _rollout(clone, rest), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_info_terms_success_and_truncation(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    space = env.action_space
    space.seed(0)
    steps = 0
    while True:
        _, reward, term, trunc, info = env.step(space.sample())
        steps += 1
        assert isinstance(info["success"], bool)
        assert set(info["reward_terms"]) and all(
            isinstance(v, float) for v in info["reward_terms"].values()
        )
        assert reward == pytest.approx(sum(info["reward_terms"].values()))
        if term or trunc:
            break
    assert steps > 1, "episodes must be multi-step"
    if not term:
        assert trunc and steps == env.unwrapped.episode_steps


def test_async_vector_env_two_workers() -> None:
    from softrod.learn import make_env_fn

    for env_id in ENV_IDS:
        venv = gym.vector.AsyncVectorEnv([make_env_fn(env_id) for _ in range(2)])
        try:
            obs, _ = venv.reset(seed=[1, 2])
            assert obs.shape[0] == 2
            assert not np.array_equal(obs[0], obs[1]), "workers must get their own seeds"
            for _ in range(3):
                obs, rew, term, trunc, info = venv.step(venv.action_space.sample())
            assert np.all(np.isfinite(obs)) and rew.shape == (2,)
        finally:
            venv.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_render_rgb_array(env_id: str) -> None:
    env = gym.make(env_id, render_mode="rgb_array", width=96, height=64)
    env.reset(seed=0)
    try:
        img = env.render()
    except Exception as exc:  # no OpenGL on this machine
        pytest.skip(f"offscreen rendering unavailable: {exc}")
    finally:
        env.close()
    assert img.shape == (64, 96, 3) and img.dtype == np.uint8
    assert img.std() > 1.0, "the image must show something"


@pytest.mark.filterwarnings("ignore:.*not in the possible render_modes")
def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        gym.make("softrod/Reach-v0", render_mode="depth_array")
    with pytest.raises(ValueError, match="trajectory"):
        gym.make("softrod/TrackTrajectory-v1", trajectory="zigzag")
    env = gym.make("softrod/Reach-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="finite"):
        env.step(np.full(env.action_space.shape, np.nan))


def test_reach_action_cost_is_opt_in() -> None:
    """`action_weight` adds -w mean(a^2) to the reward; the default leaves App. F's terms."""
    a = np.full(10, 0.5)
    plain = gym.make("softrod/Reach-v0")
    plain.reset(seed=0)
    assert "action" not in plain.step(a)[4]["reward_terms"]
    costly = gym.make("softrod/Reach-v0", action_weight=0.2)
    costly.reset(seed=0)
    _, reward, _, _, info = costly.step(a)
    assert info["reward_terms"]["action"] == pytest.approx(-0.2 * 0.25)
    assert reward == pytest.approx(sum(info["reward_terms"].values()))
    with pytest.raises(ValueError, match="action_weight"):
        gym.make("softrod/Reach-v0", action_weight=-1.0)


def test_reach_precision_bonus_is_opt_in() -> None:
    """`precision_weight` adds w exp(-d / scale); the default leaves App. F's terms."""
    a = np.zeros(10)
    plain = gym.make("softrod/Reach-v0")
    plain.reset(seed=0)
    assert "precision" not in plain.step(a)[4]["reward_terms"]
    env = gym.make("softrod/Reach-v0", precision_weight=2.0, precision_scale=0.004)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(a)
    d = info["distance"]
    assert info["reward_terms"]["precision"] == pytest.approx(2.0 * np.exp(-d / 0.004))
    assert reward == pytest.approx(sum(info["reward_terms"].values()))
    with pytest.raises(ValueError, match="precision_scale"):
        gym.make("softrod/Reach-v0", precision_weight=1.0, precision_scale=0.0)


def test_reach_fine_error_observation_is_opt_in() -> None:
    """`error_gain` appends clip(gain (target - tip), -1, 1); the default keeps shape (34,)."""
    assert gym.make("softrod/Reach-v0").observation_space.shape == (34,)
    env = gym.make("softrod/Reach-v0", error_gain=100.0)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.shape == obs.shape == (37,)
    np.testing.assert_allclose(obs[34:], np.clip(100.0 * obs[21:24], -1, 1), atol=1e-6)


# -- physics ----------------------------------------------------------------------------------


def test_reach_bending_follows_the_routing_convention() -> None:
    """Commanding +x curvature bends the hanging robot toward world +x, and the tip rises."""
    env = gym.make("softrod/Reach-v0").unwrapped
    env.reset(seed=0)
    a = np.zeros(env.action_space.shape)
    a[0::2] = 1.0  # body +x of every segment; the base is flipped about x, so body x = world x
    for _ in range(4):
        env.step(a)
    for _ in range(25):
        _, _, _, _, info = env.step(np.zeros_like(a))
    tip = info["tip"]
    assert tip[0] > 0.2 and abs(tip[1]) < 1e-3 and tip[2] > 0.05


def test_reach_obstacle_is_a_contact_not_a_scripted_force() -> None:
    """Curling toward +x hits the bar: contacts appear, the obstacle term is -1, and the bar
    holds the body back (the tip ends lower than without the bar)."""
    tips = {}
    for env_id in ("softrod/Reach-v0", "softrod/ReachObstacle-v0"):
        env = gym.make(env_id).unwrapped
        env.reset(seed=0)
        a = np.zeros(env.action_space.shape)
        a[0:6:2] = 1.0  # bend the three proximal segments toward +x
        hit = False
        for _ in range(40):
            _, _, _, _, info = env.step(a if env._step_count < 6 else 0 * a)
            if env_id.endswith("Obstacle-v0") and info["contacts"] > 0:
                hit = True
                assert info["reward_terms"]["obstacle"] == -1.0
                assert not info["success"]
        tips[env_id] = info["tip"]
        if env_id.endswith("Obstacle-v0"):
            assert hit
    assert np.linalg.norm(tips["softrod/Reach-v0"] - tips["softrod/ReachObstacle-v0"]) > 0.02


def test_track_target_follows_the_reference_trajectory() -> None:
    from softrod.control import make_trajectory

    env = gym.make("softrod/TrackTrajectory-v1", trajectory="circle", hold_steps=2).unwrapped
    env.reset(seed=5)
    start = env.target.copy()
    _, ref, _ = make_trajectory("circle", start, dt=env.dt, scale=env.scale, period=env.period)
    for k in range(12):
        _, _, _, _, info = env.step(np.zeros(env.action_space.shape))
        np.testing.assert_allclose(info["target"], ref[max(k + 1 - 2, 0)], atol=1e-12)
    assert info["trajectory"] == "circle"


def test_planar_reach_stays_in_its_plane() -> None:
    env = gym.make("softrod/PlanarReach-v0").unwrapped
    env.reset(seed=0)
    for k in range(30):
        _, _, _, _, info = env.step(np.array([1.0, -1.0]) if k < 5 else np.zeros(2))
    assert abs(info["tip"][1]) < 1e-6
    assert abs(info["tip"][0]) > 0.05


def test_pcc_length_matrix_closed_form() -> None:
    """One segment of length L, tendon at offset d and angle a: bending toward body +x by
    kappa shortens it by d cos(a) L kappa (and toward +y by d sin(a) L kappa); a distal tendon
    also runs through every proximal segment."""
    from softrod.control import pcc_length_matrix
    from softrod.description import load_robot

    d, a = 0.004, math.radians(30.0)
    robot = load_robot(
        {
            "name": "two",
            "backbone": {"youngs_modulus": 60e9, "poisson_ratio": 0.33, "radius": 5e-4},
            "segments": [
                {
                    "length": 0.1,
                    "disks": 4,
                    "disk_radius": 0.005,
                    "tendons": [{"offset": d, "angle_deg": 30.0}],
                },
                {
                    "length": 0.05,
                    "disks": 2,
                    "disk_radius": 0.005,
                    "tendons": [{"offset": d, "angle_deg": 30.0}],
                },
            ],
        }
    )
    c = pcc_length_matrix(robot)
    row = [-d * math.cos(a), -d * math.sin(a)]
    np.testing.assert_allclose(c[0], [row[0] * 0.1, row[1] * 0.1, 0.0, 0.0])
    np.testing.assert_allclose(c[1], [row[0] * 0.1, row[1] * 0.1, row[0] * 0.05, row[1] * 0.05])
    np.testing.assert_allclose(pcc_length_matrix(robot, planar=True), c[:, ::2])
