"""Environment options of issue 17: pixel observations (items 5) on Reach and FlipSwitch."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import softrod.envs  # noqa: F401  (registers the environments)

#: A rendered scene is far from a constant image: its pixels spread over many grey levels.
MIN_PIXEL_STD = 5.0


@pytest.mark.parametrize("env_id", ["softrod/Reach-v0", "softrod/FlipSwitch-v0"])
def test_rgb_observations(env_id: str) -> None:
    env = gym.make(env_id, obs_mode="rgb", obs_camera="main")
    try:
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        assert obs.shape == (84, 84, 3) and obs.dtype == np.uint8
        assert obs.std() > MIN_PIXEL_STD
        # The robot moves: so does the picture.
        moved = obs
        for _ in range(5):
            moved, *_ = env.step(_away(env))
        assert np.abs(moved.astype(int) - obs.astype(int)).sum() > 0
        # The state vector's space is kept, and a pickled copy renders the same picture.
        assert env.unwrapped.state_space.shape[0] > 3
        copy = pickle.loads(pickle.dumps(env.unwrapped))
        np.testing.assert_array_equal(copy._observe(np.zeros(1)), moved)
        copy.close()
    finally:
        env.close()


def test_bad_pixel_options_are_refused() -> None:
    with pytest.raises(ValueError, match="obs_camera"):
        gym.make("softrod/Reach-v0", obs_mode="rgb", obs_camera="nope")
    with pytest.raises(ValueError, match="obs_mode"):
        gym.make("softrod/Reach-v0", obs_mode="depth")


def _away(env: gym.Env) -> np.ndarray:
    """An action that moves the robot well away from its start (upper bound of every
    component)."""
    return np.asarray(env.action_space.high, dtype=np.float32)
