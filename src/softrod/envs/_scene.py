"""Scene pieces shared by the environments, built with `mujoco.MjSpec` (no XML templates).
The PCC bending maps (`pcc_length_matrix`, `bending_tensions`) are `softrod.control`'s.

Collision bits follow `softrod.mujoco` (bit 0: objects and the floor; bit 1: rigid robots;
bits 2+: soft robots), so soft robots touch objects but never their own links or mounts.
"""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np

from softrod.description import RobotSpec, find_robot, load_robot
from softrod.mujoco import MujocoOptions
from softrod.mujoco._builder import CONTYPE_OBJECT, CONTYPE_RIGID, configure_spec

__all__ = [
    "CONTYPE_OBJECT",
    "CONTYPE_RIGID",
    "add_marker",
    "add_floor",
    "shipped_robot",
    "new_scene",
    "with_tendon_stiffness",
    "quat_from_axis_angle",
]


def shipped_robot(name: str) -> RobotSpec:
    """A robot description shipped in `softrod/data/robots` by file stem."""
    return load_robot(find_robot(name))


def with_tendon_stiffness(robot: RobotSpec, stiffness: float) -> RobotSpec:
    """A copy of `robot` whose tendons all have axial stiffness `stiffness` [N/m].

    Length (position) control of the tendons needs a stiffness; descriptions made for the
    static solver (SoftManiSim's robots) have none.
    """
    data = robot.to_dict()
    for seg in data["segments"]:
        for tendon in seg.get("tendons", []):
            tendon["stiffness"] = float(stiffness)
    return load_robot(data)


def new_scene(options: MujocoOptions, name: str) -> mujoco.MjSpec:
    """An empty MjSpec with the solver options, a skybox-like background and two lights."""
    spec = mujoco.MjSpec()
    spec.modelname = name
    configure_spec(spec, options)
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.5, 0.5, 0.5]
    spec.worldbody.add_light(
        name="key", pos=[0.5, -0.5, 2.0], dir=[-0.2, 0.2, -1.0], diffuse=[0.6, 0.6, 0.6]
    )
    return spec


def add_floor(
    spec: mujoco.MjSpec,
    size: float = 2.0,
    friction: float = 0.8,
    z: float = 0.0,
    contype: int = CONTYPE_OBJECT,
    conaffinity: int = CONTYPE_OBJECT,
) -> None:
    """A checkered ground plane at height z [m] (collision bits as given)."""
    tex = spec.add_texture(
        name="grid",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        rgb1=[0.82, 0.84, 0.86],
        rgb2=[0.68, 0.70, 0.73],
        width=256,
        height=256,
    )
    mat = spec.add_material(name="grid", texrepeat=[8, 8], reflectance=0.05)
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex.name
    spec.worldbody.add_geom(
        name="floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[size, size, 0.05],
        pos=[0, 0, z],
        material="grid",
        friction=[friction, 0.005, 0.0001],
        contype=contype,
        conaffinity=conaffinity,
        condim=3,
    )


def add_marker(
    spec: mujoco.MjSpec,
    name: str,
    radius: float,
    rgba: tuple[float, float, float, float] = (0.9, 0.1, 0.1, 0.6),
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> None:
    """A mocap body `name` with a visual-only sphere (targets; moved via `data.mocap_pos`)."""
    body = spec.worldbody.add_body(name=name, mocap=True, pos=list(pos))
    body.add_geom(
        name=f"{name}_geom",
        type=mujoco.mjtGeom.mjGEOM_SPHERE,
        size=[radius, 0, 0],
        rgba=list(rgba),
        contype=0,
        conaffinity=0,
        group=2,
    )


def add_camera(spec: mujoco.MjSpec, name: str, pos: Any, lookat: Any) -> None:
    """A fixed camera at `pos` looking at `lookat` (world, [m]), with world z up in the image."""
    p = np.asarray(pos, dtype=float)
    fwd = np.asarray(lookat, dtype=float) - p
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, [0.0, 0.0, 1.0])
    if np.linalg.norm(right) < 1e-9:
        right = np.array([1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    spec.worldbody.add_camera(name=name, pos=p.tolist(), xyaxes=[*right.tolist(), *up.tolist()])


def quat_from_axis_angle(axis: Any, angle: float) -> list[float]:
    """Unit quaternion (w, x, y, z) of a rotation by `angle` [rad] about `axis`."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    s = math.sin(angle / 2.0)
    return [math.cos(angle / 2.0), *(s * a).tolist()]
