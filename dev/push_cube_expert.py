"""Success rate of `PushExpert` on PushCube-v1 (and on v0's cube box and episode length).

    PYTHONPATH=src python dev/push_cube_expert.py --episodes 100 --seed 0 [--v0] \
        [--cube-x LOW HIGH] [--steps N]

Prints the successes, the final cube-to-target distances, the largest forward push of the cube
[m] and the CPU time. `--v0` puts the cube in v0's start box (x in [0.40, 0.46] m) with v0's
120-step episodes (why v1 exists: push_cube_v1's docstring); `--cube-x` and `--steps` set
either change alone. `--scan` instead settles the neck (no cube) at every in-plane curvature
triple (-10..10 1/m in steps of 2.5, 1.25 s each) and prints the nearest ground points its tip
reaches pointing forward.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import softrod.envs.push_cube_v1 as push_cube
from softrod.learn import PushExpert


def scan() -> None:
    """Nearest x [m] at which the settled tip touches the ground pointing forward."""
    import itertools

    env = push_cube.PushCubeEnv()
    rows = []
    values = np.arange(-10.0, 10.1, 2.5)
    for k1, k2, k3 in itertools.product(values, values, values):
        env.reset(seed=0)
        env.data.qpos[env._cube_q : env._cube_q + 3] = [3.0, 3.0, push_cube.CUBE_HALF]
        env.kappa = np.array([k1, 0.0, k2, 0.0, k3, 0.0])
        env.data.ctrl[env._act_ids] = env.rest_lengths + env.length_map @ env.kappa
        for _ in range(25):
            env.step(np.zeros(6))
        ends = env.segment_ends()
        # On the ground (tip radius 12 mm + 18 mm) and pointing forward (beyond segment 2's end).
        if ends[2, 2] < 0.03 and ends[2, 0] > ends[1, 0]:
            rows.append((ends[2, 0], k1, k2, k3, ends[1, 2], abs(ends[1, 1])))
    rows.sort()
    print("tip x [m], kappa 1..3 [1/m], segment-2 end height [m], |y| [m]")
    for r in rows[:8]:
        print(" ".join(f"{v:7.3f}" for v in r))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="reset seed of the first episode")
    parser.add_argument("--v0", action="store_true", help="v0's cube box and 6 s episodes")
    parser.add_argument("--cube-x", type=float, nargs=2, help="cube start box x range [m]")
    parser.add_argument("--steps", type=int, help="episode steps [120]")
    parser.add_argument("--scan", action="store_true", help="the reach scan instead")
    args = parser.parse_args()
    if args.scan:
        scan()
        return
    cube_x = (0.40, 0.46) if args.v0 else args.cube_x
    if cube_x is not None:
        push_cube.CUBE_LOW = (cube_x[0], push_cube.CUBE_LOW[1])
        push_cube.CUBE_HIGH = (cube_x[1], push_cube.CUBE_HIGH[1])
    steps = args.steps or 120
    env = push_cube.PushCubeEnv(episode_steps=steps)
    expert = PushExpert(env)
    t0 = time.process_time()
    wins, dists, pushes, starts, wins_at = 0, [], [], [], []
    for k in range(args.episodes):
        obs, _ = env.reset(seed=args.seed + k)
        expert.reset()
        start = env.data.xpos[env._cube].copy()
        info: dict = {}
        for _ in range(env.episode_steps):
            obs, _, _, _, info = env.step(expert.act(obs))
        wins += bool(info["success"])
        starts.append(float(start[0]))
        wins_at.append(bool(info["success"]))
        dists.append(info["distance"])
        pushes.append(float(info["cube"][0] - start[0]))
    cpu = time.process_time() - t0
    print(f"cube x {push_cube.CUBE_LOW[0]}-{push_cube.CUBE_HIGH[0]} m, {steps} steps")
    print(f"episodes {args.episodes} (seeds {args.seed}-{args.seed + args.episodes - 1})")
    print(f"success {wins}/{args.episodes} = {100 * wins / args.episodes:.0f} %")
    print(f"distance median {np.median(dists):.3f} m, max {np.max(dists):.3f} m")
    print(f"largest forward push {np.max(pushes):.3f} m")
    # Success by the cube's start x (three equal bins of the start box).
    edges = np.linspace(push_cube.CUBE_LOW[0], push_cube.CUBE_HIGH[0], 4)
    bins = np.clip(np.digitize(starts, edges) - 1, 0, 2)
    won = np.array(wins_at)
    for b in range(3):
        sel = bins == b
        print(f"cube start x {edges[b]:.3f}-{edges[b + 1]:.3f} m: {won[sel].sum()}/{sel.sum()}")
    print(f"cpu {cpu:.1f} s")


if __name__ == "__main__":
    main()
