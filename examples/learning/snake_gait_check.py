"""Is a learned snake gait physical? Body height, speed and action rates beside the scripted gait.

    python examples/learning/snake_gait_check.py runs/snake-s0 [--episodes 2] [--seed 10000]

For each episode (reset seeds seed, seed + 1, ...) of the run's final SAC model and of SoMo's
scripted serpentine gait (`serpentine_gait`, 0.5 Hz, one body length wavelength): the centre of
mass's progress [m], the highest point any body reached [mm] (the links ride on 12 mm wheels, so
a body that leaves the ground shows here), the largest base speed [m/s], and the mean |action|
and mean |action change| per 0.05 s step (amplitude and, roughly, frequency of the wave).
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import softrod.envs  # noqa: F401
from softrod.envs.snake_locomotion_v1 import serpentine_gait
from softrod.learn import load_sb3_policy


def _roll(env, act, seed: int) -> dict[str, float]:
    """One episode: progress [m], highest body [m], top base speed [m/s], action statistics."""
    u = env.unwrapped
    obs, info = env.reset(seed=seed)
    zmax = vmax = t = 0.0
    acts, done = [], False
    while not done:
        a = np.asarray(act(obs, t), dtype=np.float32)
        acts.append(a)
        obs, _, term, trunc, info = env.step(a)
        t += u.control_period
        # Body 0 is the world; qvel[:3] the free base's linear velocity.
        zmax = max(zmax, float(u.data.xpos[1:, 2].max()))
        vmax = max(vmax, float(np.abs(u.data.qvel[:3]).max()))
        done = term or trunc
    a = np.array(acts)
    return {
        "progress": float(info["progress"]),
        "max_height": zmax,
        "max_speed": vmax,
        "mean_abs_action": float(np.abs(a).mean()),
        "mean_abs_action_change": float(np.abs(np.diff(a, axis=0)).mean()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", help="A SAC run (directory or .zip) on SnakeLocomotion-v1.")
    ap.add_argument("--episodes", type=int, default=2)
    ap.add_argument("--seed", type=int, default=10_000)
    args = ap.parse_args()
    pol = load_sb3_policy(args.run)
    env = gym.make("softrod/SnakeLocomotion-v1")
    n_seg = env.action_space.shape[0]
    gaits = {"learned": lambda o, t: pol(o), "scripted": lambda o, t: serpentine_gait(t, n_seg)}
    for name, act in gaits.items():
        for i in range(args.episodes):
            r = _roll(env, act, args.seed + i)
            print(
                f"{name} seed {args.seed + i}: progress {r['progress']:.2f} m, highest body "
                f"{1e3 * r['max_height']:.1f} mm, top base speed {r['max_speed']:.2f} m/s, "
                f"mean |a| {r['mean_abs_action']:.2f}, mean |change of a| per step "
                f"{r['mean_abs_action_change']:.2f}"
            )
    env.close()


if __name__ == "__main__":
    main()
