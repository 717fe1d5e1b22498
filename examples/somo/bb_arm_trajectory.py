"""SoMo's IROS 2021 ball-playing arm follows its `trajectory.yaml` on the MuJoCo chain.

python examples/somo/bb_arm_trajectory.py [--out docs/media/somo_bb_arm_trajectory.mp4]
python examples/somo/bb_arm_trajectory.py --no-video --json      # the tracking numbers only

The arm is imported with `softrod.somo.import_somo` (each bending axis a moment actuator whose
input is SoMo's torque, uniform at any bend); the trajectory's columns (act0_ax0, act0_ax1,
act1_ax0, ...) are those `moments` inputs (`SomoImport.moment_of_axis`), interpolated linearly
between the setpoints as SoMo's "interp" does.
No gravity, no ball: the clip shows the actuation alone, sped up `--speed` times.
`softrod.somo.follow_trajectory` runs the chain and compares its tip every `--sample` seconds
with the exact static solve of the same import at the same inputs (docs/actuators.md, "The
ball-playing arm").
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

from softrod.somo import follow_trajectory, import_somo, read_somo_trajectory  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "somo"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="docs/media/somo_bb_arm_trajectory.mp4")
    parser.add_argument("--no-video", action="store_true", help="numbers only, no rendering")
    parser.add_argument("--speed", type=float, default=5.0, help="playback speed-up")
    parser.add_argument("--fps", type=int, default=20)
    parser.add_argument("--links", type=int, default=50)
    parser.add_argument("--timestep", type=float, default=2e-3, help="[s]")
    parser.add_argument("--damping-ratio", type=float, default=0.05,
                        help="first-mode damping ratio (the chain's default 0.005 diverges "
                             "at 2e-3 s at t = 20 s)")  # fmt: skip
    parser.add_argument("--hold", type=float, default=0.0, help="[s] held after the end")
    parser.add_argument("--sample", type=float, default=0.5, help="[s] between samples")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()

    res = import_somo(DATA / "bb_arm.yaml")
    traj = read_somo_trajectory(DATA / "bb_arm_trajectory.yaml")
    writer = renderer = on_step = None
    if not args.no_video:
        import imageio.v2 as imageio

        from softrod.mujoco import Renderer

        writer = imageio.get_writer(
            args.out, fps=args.fps, codec="libx264", quality=6, macro_block_size=16,
            ffmpeg_log_level="error",
        )  # fmt: skip
        frame_dt = args.speed / args.fps
        t_next = [0.0]

        def on_step(model, data) -> None:  # type: ignore[no-untyped-def]
            nonlocal renderer
            if renderer is None:
                renderer = Renderer(model, 480, 352, camera="side")
            if data.time >= t_next[0]:
                writer.append_data(renderer.frame(data))
                t_next[0] += frame_dt

    try:
        run = follow_trajectory(
            res, traj, t_end=traj.duration + args.hold, timestep=args.timestep,
            links=args.links, sample_dt=args.sample,
            options={"damping_ratio": args.damping_ratio}, on_step=on_step,
        )  # fmt: skip
    finally:
        if writer is not None:
            writer.close()
        if renderer is not None:
            renderer.close()
    summary = run.summary()
    # The trajectory itself, and the second half of the hold (settled at the last input).
    end = traj.duration
    parts = {"trajectory": run.t <= end + 1e-9}
    if args.hold > 0:
        parts["held"] = run.t >= end + 0.5 * args.hold - 1e-9
    for name, sel in parts.items():
        err, ang = run.tip_error[sel] / run.length, run.angle_error[sel]
        summary[name] = {"samples": int(sel.sum()), "tip_error_mean_rel": float(err.mean()),
                         "tip_error_max_rel": float(err.max()),
                         "angle_error_mean_rad": float(ang.mean()),
                         "angle_error_max_rad": float(ang.max())}  # fmt: skip
    if args.json:
        print(json.dumps(summary))
    else:
        for key, value in summary.items():
            print(f"{key}: {value}")
    if writer is not None:
        print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
