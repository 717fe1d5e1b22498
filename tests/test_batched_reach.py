"""`BatchedReach` (MuJoCo Warp) against `Reach-v0` (MuJoCo C): a cross-model oracle.

Needs the optional `warp` extra; skipped without it (CI does not install it). Runs on Warp's
CPU device unless SOFTROD_WARP_DEVICE names another (e.g. cuda:0 on a GPU machine).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("mujoco_warp")

import mujoco  # noqa: E402

from softrod.envs.batched_reach import BatchedReach  # noqa: E402
from softrod.envs.reach_v0 import ReachEnv  # noqa: E402

DEVICE = os.environ.get("SOFTROD_WARP_DEVICE", "cpu")
#: Tip agreement after 20 control steps (1 s) [m]: MuJoCo Warp computes in float32, MuJoCo C
#: in float64; measured 1.2e-5 m on Warp's CPU device, so 1e-4 m leaves room for GPU reduction
#: order while still catching any wrong index, sign or unit (those move the tip by centimetres).
TIP_TOL = 1e-4
#: Reward agreement [1]: the distance term alone changes by 10 x TIP_TOL.
REWARD_TOL = 1e-3


def test_batched_reach_matches_reach_v0() -> None:
    """Three worlds with different targets and random actions follow Reach-v0 step for step."""
    n = 3
    batch = BatchedReach(n, device=DEVICE)
    obs0 = batch.reset(np.random.default_rng(5)).numpy()
    targets = batch.target.numpy().astype(float)
    envs = []
    for i in range(n):
        env = ReachEnv()
        env.reset(seed=0)
        env._set_target(targets[i])
        mujoco.mj_forward(env.model, env.data)
        np.testing.assert_allclose(env._observation(env.tip_position()), obs0[i], atol=1e-6)
        envs.append(env)
    actions = np.random.default_rng(1).uniform(-1, 1, (20, n, 10)).astype(np.float32)
    for k in range(20):
        obs, reward, _, trunc = batch.step(actions[k])
        obs, reward = obs.numpy(), reward.numpy()
        for i, env in enumerate(envs):
            o, r, _, _, _ = env.step(actions[k, i])
            np.testing.assert_allclose(obs[i, 21:24], o[21:24], atol=TIP_TOL)
            assert abs(reward[i] - r) < REWARD_TOL
    assert not trunc and not batch.overflow()


def test_batched_reach_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="n_worlds"):
        BatchedReach(0, device=DEVICE)
    batch = BatchedReach(2, device=DEVICE)
    batch.reset(np.random.default_rng(0))
    with pytest.raises(ValueError, match="action must have shape"):
        batch.step(np.zeros((3, 10)))
