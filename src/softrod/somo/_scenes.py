"""Assemblies (SoMo §III-A): soft fingers on a palm, optionally carried by a rigid arm, and objects.

An `AssemblySpec` (typed, YAML round trip) lists fingers, each either an empirical SoMo-style
manipulator (`softrod.somo.EmpiricalManipulator`: torque-driven, calibrated from K_b and F_b) or
a softrod robot description (tendon-driven, built by `softrod.mujoco.add_robot`), mounted on
a palm at a pose. With `arm`, the palm is the flange of a rigid serial arm (base yaw, shoulder
and elbow pitch, wrist pitch; position servos `arm_<k>`). `build_assembly` returns the MjSpec
and the names of fingers and actuators. Examples: examples/somo/hand.yaml (four fingers on a
palm with a cube) and examples/somo/arm_gripper.yaml (an arm with a two-finger soft gripper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from softrod.description import Spec
from softrod.rods.so3 import quat_from_axis_angle, quat_multiply
from softrod.somo._empirical import EmpiricalChain, EmpiricalManipulator, add_empirical_chain

__all__ = [
    "ArmSpec",
    "AssemblySpec",
    "AssemblyInfo",
    "FingerMount",
    "ObjectSpec",
    "PalmSpec",
    "build_assembly",
    "load_assembly",
]

#: Rigid-arm servo stiffness [N m/rad] and damping [N m s/rad]: stiff enough that a few
#: newtons at a 0.5 m reach move the joints by < 0.01 rad.
ARM_KP = 300.0
ARM_KV = 30.0


def euler_quat(euler_deg: tuple[float, float, float]) -> list[float]:
    """Quaternion (w, x, y, z) of extrinsic x-y-z rotations by `euler_deg` [deg]."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for axis, angle in zip(np.eye(3), euler_deg, strict=True):
        # Extrinsic: later rotations act from the left.
        q = quat_multiply(quat_from_axis_angle(axis, math.radians(angle)), q)
    return q.tolist()


class ObjectSpec(Spec):
    """A free rigid object (box, sphere or cylinder) in the world frame."""

    name: str = "object"
    shape: Literal["box", "sphere", "cylinder"] = "box"
    size: list[float] = Field(
        description="Half sizes (box: 3), radius (sphere), radius+half height."
    )
    mass: float = 0.02
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    friction: float = 1.0


class PalmSpec(Spec):
    """The rigid palm the fingers are mounted on (a box of half sizes `size`)."""

    size: tuple[float, float, float] = (0.04, 0.04, 0.01)
    position: tuple[float, float, float] = (0.0, 0.0, 0.1)
    euler_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)


class FingerMount(Spec):
    """A finger on the palm: an empirical manipulator or a softrod robot file, at a palm pose."""

    name: str
    manipulator: EmpiricalManipulator | None = None
    robot: str | None = Field(default=None, description="softrod description file or dict path.")
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    euler_deg: tuple[float, float, float] = Field(
        default=(0.0, 0.0, 0.0), description="Finger base orientation in the palm frame [deg]."
    )

    @model_validator(mode="after")
    def _check(self) -> FingerMount:
        if (self.manipulator is None) == (self.robot is None):
            raise ValueError("give exactly one of manipulator and robot")
        return self


class ArmSpec(Spec):
    """A rigid arm: base yaw, shoulder pitch, elbow pitch, wrist pitch; the palm at its flange."""

    base: tuple[float, float, float] = (0.0, 0.0, 0.0)
    base_height: float = 0.15
    upper_arm: float = 0.3
    forearm: float = 0.25
    radius: float = 0.025
    link_density: float = 1000.0
    home_deg: tuple[float, float, float, float] = (0.0, 30.0, 90.0, 60.0)


class AssemblySpec(Spec):
    """Fingers on a palm (optionally on an arm) and objects; see the module docstring."""

    spec_what: ClassVar[str] = "assembly"

    name: str = "assembly"
    palm: PalmSpec = Field(default_factory=PalmSpec)
    arm: ArmSpec | None = None
    fingers: list[FingerMount] = Field(min_length=1)
    objects: list[ObjectSpec] = Field(default_factory=list)
    floor: bool = True
    timestep: float = 0.002


def load_assembly(source: str | Path | dict[str, Any] | AssemblySpec) -> AssemblySpec:
    """Read and validate an assembly (YAML file or dict); errors name the field."""
    return AssemblySpec.load(source)


@dataclass(frozen=True)
class AssemblyInfo:
    """Names in a built assembly: finger chains (empirical) or ChainInfo (softrod robots),
    all actuators by finger, arm servos, object bodies."""

    fingers: dict[str, Any]
    finger_actuators: dict[str, tuple[str, ...]]
    arm_actuators: tuple[str, ...]
    objects: tuple[str, ...]
    palm_body: str


def _add_arm(spec: Any, arm: ArmSpec) -> tuple[Any, tuple[str, ...]]:
    """The rigid arm; returns (flange body, servo names)."""
    import mujoco

    from softrod.scene import CONTYPE_RIGID, RIGID_AFFINITY

    def link(body: Any, length: float, name: str) -> None:
        body.add_geom(
            name=name,
            type=mujoco.mjtGeom.mjGEOM_CAPSULE,
            fromto=[0, 0, 0, 0, 0, length],
            size=[arm.radius, 0, 0],
            density=arm.link_density,
            rgba=[0.6, 0.6, 0.65, 1],
            contype=CONTYPE_RIGID,
            conaffinity=RIGID_AFFINITY,
        )

    base = spec.worldbody.add_body(name="arm_base", pos=list(arm.base))
    base.add_geom(
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[0.06, arm.base_height / 2, 0],
        pos=[0, 0, arm.base_height / 2],
        rgba=[0.3, 0.3, 0.35, 1],
        contype=CONTYPE_RIGID,
        conaffinity=RIGID_AFFINITY,
    )
    names = []

    def hub(body: Any) -> None:  # a joint housing, so that every moving body has mass
        body.add_geom(
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[arm.radius * 1.2, 0, 0],
            density=arm.link_density,
            rgba=[0.4, 0.4, 0.45, 1],
            contype=0,
            conaffinity=0,
        )

    b = base.add_body(name="arm_yaw", pos=[0, 0, arm.base_height])
    b.add_joint(name="arm_0", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1], armature=0.01)
    hub(b)
    names.append("arm_0")
    b = b.add_body(name="arm_upper")
    b.add_joint(name="arm_1", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0], armature=0.01)
    link(b, arm.upper_arm, "arm_upper_geom")
    names.append("arm_1")
    b = b.add_body(name="arm_fore", pos=[0, 0, arm.upper_arm])
    b.add_joint(name="arm_2", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0], armature=0.01)
    link(b, arm.forearm, "arm_fore_geom")
    names.append("arm_2")
    b = b.add_body(name="arm_wrist", pos=[0, 0, arm.forearm])
    b.add_joint(name="arm_3", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0], armature=0.01)
    hub(b)
    names.append("arm_3")
    for name in names:
        servo = spec.add_actuator(name=name, target=name)
        servo.trntype = mujoco.mjtTrn.mjTRN_JOINT
        servo.set_to_position(kp=ARM_KP, kv=ARM_KV)
    return b, tuple(names)


def build_assembly(source: str | Path | dict[str, Any] | AssemblySpec) -> tuple[Any, AssemblyInfo]:
    """(MjSpec, AssemblyInfo) of an assembly. Relative robot paths are relative to the file."""
    import mujoco

    from softrod.mujoco import MujocoOptions
    from softrod.scene import (
        CONTYPE_OBJECT,
        CONTYPE_RIGID,
        RIGID_AFFINITY,
        add_floor,
        add_lights,
        add_robot,
        new_spec,
        soft_collision_bits,
    )

    base_dir = Path(source).parent if isinstance(source, str | Path) else Path.cwd()
    asm = load_assembly(source)
    spec = new_spec(asm.name, timestep=asm.timestep, integrator="discrete")
    add_lights(spec, "overhead", height=1.5)
    world = spec.worldbody
    if asm.floor:
        add_floor(spec, size=2.0, grid=None, spacing=0.01)
    arm_names: tuple[str, ...] = ()
    if asm.arm is not None:
        parent, arm_names = _add_arm(spec, asm.arm)
    else:
        parent = world
    palm = parent.add_body(
        name="palm", pos=list(asm.palm.position), quat=euler_quat(asm.palm.euler_deg)
    )
    palm.add_geom(
        name="palm_geom",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=list(asm.palm.size),
        rgba=[0.25, 0.25, 0.3, 1],
        contype=CONTYPE_RIGID,
        conaffinity=RIGID_AFFINITY,
        density=500.0,
    )
    fingers: dict[str, Any] = {}
    acts: dict[str, tuple[str, ...]] = {}
    for i, f in enumerate(asm.fingers):
        contype, conaffinity = soft_collision_bits(i)
        q = euler_quat(f.euler_deg)
        quat = (q[0], q[1], q[2], q[3])
        if f.manipulator is not None:
            chain: EmpiricalChain = add_empirical_chain(
                spec,
                palm,
                f.manipulator,
                prefix=f"{f.name}_",
                pos=f.position,
                quat=quat,
                contype=contype,
                conaffinity=conaffinity,
            )
            fingers[f.name] = chain
            acts[f.name] = chain.actuators
        else:
            assert f.robot is not None
            path = Path(f.robot)
            robot_path = path if path.is_absolute() else base_dir / path
            info = add_robot(
                spec,
                palm,
                str(robot_path),
                MujocoOptions(links=20),
                prefix=f"{f.name}_",
                soft_index=i,
                pos=f.position,
                quat=quat,
            )
            fingers[f.name] = info
            acts[f.name] = info.actuators
    objects = []
    for obj in asm.objects:
        body = world.add_body(name=obj.name, pos=list(obj.position))
        body.add_freejoint()
        gtype = {
            "box": mujoco.mjtGeom.mjGEOM_BOX,
            "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
            "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
        }[obj.shape]
        size = list(obj.size) + [0.0] * (3 - len(obj.size))
        body.add_geom(
            name=f"{obj.name}_geom",
            type=gtype,
            size=size,
            mass=obj.mass,
            friction=[obj.friction, 0.005, 0.0001],
            contype=CONTYPE_OBJECT,
            conaffinity=CONTYPE_OBJECT,
            rgba=[0.9, 0.55, 0.2, 1],
        )
        objects.append(obj.name)
    return spec, AssemblyInfo(fingers, acts, arm_names, tuple(objects), "palm")
