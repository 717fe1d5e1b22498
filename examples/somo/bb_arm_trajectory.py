"""SoMo's IROS 2021 ball-playing arm follows its `trajectory.yaml` on the MuJoCo chain.

python examples/somo/bb_arm_trajectory.py [--out docs/media/somo_bb_arm_trajectory.mp4]

The arm is imported with `softrod.somo.import_somo` (each bending axis a chamber whose
"pressure" is SoMo's torque input); the trajectory's columns (act0_ax0, act0_ax1, act1_ax0, ...)
are those pressures, interpolated linearly between the setpoints as SoMo's "interp" does.
No gravity, no ball: the clip shows the actuation alone, sped up `--speed` times.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import yaml  # noqa: E402

from softrod.mujoco import Renderer, build_spec  # noqa: E402
from softrod.somo import import_somo  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "somo"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="docs/media/somo_bb_arm_trajectory.mp4")
    parser.add_argument("--speed", type=float, default=5.0, help="playback speed-up")
    parser.add_argument("--fps", type=int, default=20)
    parser.add_argument("--links", type=int, default=50)
    parser.add_argument("--timestep", type=float, default=5e-4, help="[s]; 2e-3 diverges")
    args = parser.parse_args()

    res = import_somo(DATA / "bb_arm.yaml")
    traj = yaml.safe_load((DATA / "bb_arm_trajectory.yaml").read_text())
    points = np.array(traj["config"]["setpoints"]["prefix"] + traj["config"]["setpoints"]["main"])
    t_set, u_set = points[:, 0], points[:, 1:]
    spec = build_spec(res.robot, links=args.links, gravity=(0.0, 0.0, 0.0), timestep=args.timestep)
    model = spec.compile()
    data = mujoco.MjData(model)
    first = min(model.actuator(f"pressure_{k}").id for k in range(res.robot.n_pressures))
    renderer = Renderer(model, 480, 352, camera="side")

    import imageio.v2 as imageio

    writer = imageio.get_writer(
        args.out, fps=args.fps, codec="libx264", quality=6, macro_block_size=16,
        ffmpeg_log_level="error",
    )  # fmt: skip
    frame_dt = args.speed / args.fps
    try:
        t_next = 0.0
        while data.time < t_set[-1]:
            u = [np.interp(data.time, t_set, u_set[:, k]) for k in range(u_set.shape[1])]
            data.ctrl[first : first + len(u)] = u
            mujoco.mj_step(model, data)
            if data.time >= t_next:
                writer.append_data(renderer.frame(data))
                t_next += frame_dt
    finally:
        writer.close()
        renderer.close()
    print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
