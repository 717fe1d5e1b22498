"""Render one frame of every softrod environment into one PNG, three to a row (MUJOCO_GL=egl).

MUJOCO_GL=egl python examples/learning/env_gallery.py [-o env_gallery.png] [--steps 20]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym  # noqa: E402
import imageio  # noqa: E402
import numpy as np  # noqa: E402

import softrod.envs  # noqa: E402

#: Frames per row of the gallery.
COLUMNS = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", default="env_gallery.png", help="output PNG")
    parser.add_argument("--steps", type=int, default=20, help="random steps before the frame")
    args = parser.parse_args()
    frames = []
    for env_id in softrod.envs.ENV_IDS:
        env = gym.make(env_id, render_mode="rgb_array", width=320, height=240)
        env.reset(seed=0)
        env.action_space.seed(0)
        for _ in range(args.steps):
            env.step(env.action_space.sample())
        frames.append(env.render())
        env.close()
    # A last row with fewer environments is filled with white frames.
    frames += [np.full_like(frames[0], 255)] * (-len(frames) % COLUMNS)
    rows = [np.concatenate(frames[i : i + COLUMNS], axis=1) for i in range(0, len(frames), COLUMNS)]
    imageio.imwrite(args.out, np.concatenate(rows, axis=0))
    print(f"wrote {args.out} ({len(softrod.envs.ENV_IDS)} environments)")


if __name__ == "__main__":
    main()
