"""Build a SoMo-style assembly (hand.yaml, arm_gripper.yaml), close its fingers, print what moved.

python examples/somo/run_scene.py examples/somo/hand.yaml [--render out.png]
"""

from __future__ import annotations

import argparse
import math

import mujoco
import numpy as np

from softrod.somo._scenes import build_assembly, load_assembly


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("assembly")
    parser.add_argument("--pressure", type=float, default=60e3, help="finger pressure [Pa]")
    parser.add_argument("--time", type=float, default=1.5, help="simulated time [s]")
    parser.add_argument("--render", default=None, help="write a PNG of the final state")
    args = parser.parse_args()

    asm = load_assembly(args.assembly)
    spec, info = build_assembly(args.assembly)
    model = spec.compile()
    data = mujoco.MjData(model)
    if asm.arm is not None:
        home = [math.radians(a) for a in asm.arm.home_deg]
        for name, angle in zip(info.arm_actuators, home, strict=True):
            data.qpos[model.jnt_qposadr[model.joint(name).id]] = angle
            data.ctrl[model.actuator(name).id] = angle
    mujoco.mj_forward(model, data)
    tips0 = {n: data.site(c.tip_site).xpos.copy() for n, c in info.fingers.items()}
    torques = {}
    for chain in info.fingers.values():
        for act_name, a in zip(chain.actuators, chain.actuated, strict=True):
            torques[act_name] = chain.manipulator.actuators[a].torque(args.pressure)
    while data.time < args.time:
        ramp = min(data.time / (0.5 * args.time), 1.0)
        for act_name, tau in torques.items():
            data.ctrl[model.actuator(act_name).id] = ramp * tau
        mujoco.mj_step(model, data)
    print(
        f"{asm.name}: {model.nv} dofs, {model.nu} actuators, {data.ncon} contacts at t = "
        f"{data.time:.2f} s"
    )
    for name, chain in info.fingers.items():
        tip = data.site(chain.tip_site).xpos
        print(f"  finger {name}: tip moved {np.linalg.norm(tip - tips0[name]) * 1e3:.1f} mm")
    for obj in info.objects:
        print(f"  object {obj}: position {np.round(data.body(obj).xpos, 4).tolist()} m")
    if args.render:
        import imageio

        renderer = mujoco.Renderer(model, 480, 640)
        renderer.update_scene(data)
        imageio.imwrite(args.render, renderer.render())
        print(f"wrote {args.render}")


if __name__ == "__main__":
    main()
