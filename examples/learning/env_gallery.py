"""Render one frame of every softrod environment into env_gallery.png (MUJOCO_GL=egl).

MUJOCO_GL=egl python examples/learning/env_gallery.py
"""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym  # noqa: E402
import imageio  # noqa: E402
import numpy as np  # noqa: E402

import softrod.envs  # noqa: E402


def main() -> None:
    frames = []
    for env_id in softrod.envs.ENV_IDS:
        env = gym.make(env_id, render_mode="rgb_array", width=320, height=240)
        env.reset(seed=0)
        env.action_space.seed(0)
        for _ in range(20):
            env.step(env.action_space.sample())
        frames.append(env.render())
        env.close()
    rows = [np.concatenate(frames[i : i + 3], axis=1) for i in range(0, len(frames), 3)]
    imageio.imwrite("env_gallery.png", np.concatenate(rows, axis=0))
    print("wrote env_gallery.png")


if __name__ == "__main__":
    main()
