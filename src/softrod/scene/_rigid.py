"""Simplified rigid robots built with MjSpec (no meshes, no downloads).

Why not MuJoCo Menagerie: the `mujoco-menagerie` PyPI package (2026.10.4) ships only a registry;
it downloads every model from GitHub on first use, so it cannot load offline. These models keep
the published kinematics (joint axes, link offsets, joint limits) and approximate link masses of
the real arms, with capsule geometry; they are adequate for mounting a continuum robot, for
reaching and for contact with the scene, not for identifying the arm's own dynamics. A user with
a Menagerie checkout can load it instead through a scene's `mjcf:` entry.

* `panda`: Franka Emika Panda, Craig's modified DH (Franka docs), flange 0.107 m past joint 7;
  published link masses (Gaz et al. 2019).
* `ur5`: Universal Robots UR5 standard DH (UR docs); datasheet link masses.
* `quadruped`: Unitree-Go1-class: 0.38 m trunk, hips at (+-0.188, +-0.047) m, 0.213 m thigh
  and calf; about 12 kg.

Every arm joint has a position actuator (ctrl = joint target [rad]); arm bodies are gravity
compensated (as the real controllers do), the quadruped is not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

# Rigid robot geoms collide with objects (bit 0) only, never with themselves or soft robots.
from softrod.mujoco import CONTYPE_RIGID, RIGID_AFFINITY
from softrod.rods.so3 import quat_from_axis_angle

__all__ = ["PANDA_HOME", "RigidInfo", "RIGID_MODELS", "add_rigid", "add_rigid_mjcf"]

_RGBA_ARM = (0.92, 0.92, 0.94, 1.0)
_RGBA_JOINT = (0.25, 0.25, 0.28, 1.0)


@dataclass(frozen=True)
class RigidInfo:
    """Names of one rigid robot in a MjSpec (all behind its prefix).

    flange : body the tool mounts on (its +z points out of the flange).
    joints, actuators : in kinematic order; home : (n_joints,) default joint targets [rad].
    """

    prefix: str
    model: str
    base_body: str
    flange: str
    joints: tuple[str, ...]
    actuators: tuple[str, ...]
    home: tuple[float, ...]
    free_base: bool = False


def _capsule(body: mujoco.MjsBody, name: str, p0, p1, radius: float, rgba=_RGBA_ARM) -> None:
    if np.linalg.norm(np.subtract(p1, p0)) < 1e-6:
        return
    body.add_geom(
        name=name,
        type=mujoco.mjtGeom.mjGEOM_CAPSULE,
        fromto=[*map(float, p0), *map(float, p1)],
        size=[radius, 0, 0],
        rgba=list(rgba),
        contype=CONTYPE_RIGID,
        conaffinity=RIGID_AFFINITY,
        mass=0.0,
    )


def _housing(body: mujoco.MjsBody, name: str, radius: float) -> None:
    body.add_geom(
        name=name,
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[radius, radius, 0],
        rgba=list(_RGBA_JOINT),
        contype=CONTYPE_RIGID,
        conaffinity=RIGID_AFFINITY,
        mass=0.0,
    )


def _inertial(body: mujoco.MjsBody, mass: float, com, length: float, radius: float) -> None:
    """Explicit mass at `com` with the inertia of a solid rod of this length and radius."""
    body.explicitinertial = True
    body.mass = mass
    body.ipos = [float(c) for c in com]
    across = mass * (3 * radius**2 + length**2) / 12
    body.inertia = [across, across, max(mass * radius**2 / 2, 1e-6)]


def _arm_joint(spec, body, prefix, i, limits, kp, damping) -> tuple[str, str]:
    jname = f"{prefix}joint{i + 1}"
    body.add_joint(
        name=jname,
        type=mujoco.mjtJoint.mjJNT_HINGE,
        axis=[0, 0, 1],
        range=list(limits),
        damping=[damping, 0, 0],
        armature=0.1,
    )
    act = spec.add_actuator(name=f"{prefix}actuator{i + 1}", target=jname)
    act.trntype = mujoco.mjtTrn.mjTRN_JOINT
    act.set_to_position(kp=kp, kv=0.1 * kp)
    act.ctrllimited = True
    act.ctrlrange = list(limits)
    return jname, act.name


# Franka Panda, modified DH (a_{i-1}, d_i, alpha_{i-1}) and limits [rad].
_PANDA_MDH = (
    (0.0, 0.333, 0.0),
    (0.0, 0.0, -math.pi / 2),
    (0.0, 0.316, math.pi / 2),
    (0.0825, 0.0, math.pi / 2),
    (-0.0825, 0.384, -math.pi / 2),
    (0.0, 0.0, math.pi / 2),
    (0.088, 0.0, math.pi / 2),
)
_PANDA_FLANGE_D = 0.107
_PANDA_LIMITS = (
    (-2.8973, 2.8973),
    (-1.7628, 1.7628),
    (-2.8973, 2.8973),
    (-3.0718, -0.0698),
    (-2.8973, 2.8973),
    (-0.0175, 3.7525),
    (-2.8973, 2.8973),
)
_PANDA_MASS = (4.970684, 0.646926, 3.228604, 3.587895, 1.225946, 1.666555, 0.735522)
_PANDA_KP = (4500.0, 4500.0, 3500.0, 3500.0, 2000.0, 2000.0, 2000.0)
#: Seed-002 home pose (ALGORITHMS.md §C.4; joint 7 = pi/4).
PANDA_HOME = (0.0, -math.pi / 4, 0.0, -3 * math.pi / 4, 0.0, math.pi / 2, math.pi / 4)


def _add_panda(spec, parent, prefix, pos, quat) -> RigidInfo:
    base = parent.add_body(name=f"{prefix}link0", pos=list(pos), quat=list(quat))
    _capsule(base, f"{prefix}g_link0", (0, 0, 0), (0, 0, _PANDA_MDH[0][1]), 0.07)
    body = base
    joints, acts = [], []
    # Offset of the next joint in the current body's frame (drawn as the link).
    for i, (a, d, alpha) in enumerate(_PANDA_MDH):
        child_pos = [a, -math.sin(alpha) * d, math.cos(alpha) * d]
        body = body.add_body(
            name=f"{prefix}link{i + 1}",
            pos=child_pos,
            quat=quat_from_axis_angle([1.0, 0.0, 0.0], alpha),
        )
        body.gravcomp = 1.0
        j, act = _arm_joint(spec, body, prefix, i, _PANDA_LIMITS[i], _PANDA_KP[i], 10.0)
        joints.append(j)
        acts.append(act)
        _housing(body, f"{prefix}g_joint{i + 1}", 0.06 if i < 4 else 0.045)
    # Links drawn between consecutive joint origins (in the proximal body's frame).
    names = [f"{prefix}link{i}" for i in range(8)]
    offsets = [[a, -math.sin(al) * d, math.cos(al) * d] for a, d, al in _PANDA_MDH[1:]]
    offsets.append([0.0, 0.0, _PANDA_FLANGE_D])
    for i, off in enumerate(offsets):
        b = spec.body(names[i + 1])
        radius = 0.06 if i < 4 else 0.045
        _capsule(b, f"{prefix}g_link{i + 1}", (0, 0, 0), off, radius)
        length = float(np.linalg.norm(off)) or 0.1
        _inertial(b, _PANDA_MASS[i], np.array(off) / 2, length, radius)
    flange = body.add_body(name=f"{prefix}flange", pos=[0, 0, _PANDA_FLANGE_D])
    flange.add_geom(
        name=f"{prefix}g_flange",
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[0.03, 0.005, 0],
        rgba=list(_RGBA_JOINT),
        contype=CONTYPE_RIGID,
        conaffinity=RIGID_AFFINITY,
        mass=0.0,
    )
    return RigidInfo(
        prefix, "panda", base.name, flange.name, tuple(joints), tuple(acts), PANDA_HOME
    )


# UR5, standard DH (d_i, a_i, alpha_i).
_UR5_DH = (
    (0.089159, 0.0, math.pi / 2),
    (0.0, -0.425, 0.0),
    (0.0, -0.39225, 0.0),
    (0.10915, 0.0, math.pi / 2),
    (0.09465, 0.0, -math.pi / 2),
    (0.0823, 0.0, 0.0),
)
_UR5_MASS = (3.7, 8.393, 2.275, 1.219, 1.219, 0.1879)
_UR5_KP = (3000.0, 3000.0, 3000.0, 1000.0, 1000.0, 1000.0)
UR5_HOME = (0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0)


def _add_ur5(spec, parent, prefix, pos, quat) -> RigidInfo:
    base = parent.add_body(name=f"{prefix}base_link", pos=list(pos), quat=list(quat))
    _capsule(base, f"{prefix}g_base", (0, 0, 0), (0, 0, 0.05), 0.075)
    body = base
    joints, acts = [], []
    for i, (d, a, _alpha) in enumerate(_UR5_DH):
        if i == 0:
            body = body.add_body(name=f"{prefix}link1")
        else:
            d0, a0, al0 = _UR5_DH[i - 1]
            body = body.add_body(
                name=f"{prefix}link{i + 1}",
                pos=[a0, 0, d0],
                quat=quat_from_axis_angle([1.0, 0.0, 0.0], al0),
            )
        body.gravcomp = 1.0
        j, act = _arm_joint(spec, body, prefix, i, (-2 * math.pi, 2 * math.pi), _UR5_KP[i], 5.0)
        joints.append(j)
        acts.append(act)
        radius = 0.06 if i < 3 else 0.045
        _housing(body, f"{prefix}g_joint{i + 1}", radius)
        _capsule(body, f"{prefix}g_link{i + 1}", (0, 0, 0), (a, 0, d), radius)
        _inertial(body, _UR5_MASS[i], (a / 2, 0, d / 2), max(abs(a), abs(d), 0.05), radius)
    d6, a6, al6 = _UR5_DH[-1]
    flange = body.add_body(
        name=f"{prefix}flange", pos=[a6, 0, d6], quat=quat_from_axis_angle([1.0, 0.0, 0.0], al6)
    )
    flange.add_geom(
        name=f"{prefix}g_flange",
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[0.03, 0.005, 0],
        rgba=list(_RGBA_JOINT),
        contype=CONTYPE_RIGID,
        conaffinity=RIGID_AFFINITY,
        mass=0.0,
    )
    return RigidInfo(prefix, "ur5", base.name, flange.name, tuple(joints), tuple(acts), UR5_HOME)


# Quadruped (Go1-class): hip positions, leg lengths, masses, standing pose.
_QUAD_HIPS = {
    "FR": (0.1881, -0.04675),
    "FL": (0.1881, 0.04675),
    "RR": (-0.1881, -0.04675),
    "RL": (-0.1881, 0.04675),
}
_QUAD_THIGH, _QUAD_CALF, _QUAD_HIP_Y = 0.213, 0.213, 0.08
_QUAD_STAND = (0.0, 0.9, -1.8)
_QUAD_KP = 80.0


def _add_quadruped(spec, parent, prefix, pos, quat) -> RigidInfo:
    trunk = parent.add_body(name=f"{prefix}trunk", pos=list(pos), quat=list(quat))
    trunk.add_freejoint(name=f"{prefix}root")
    trunk.add_geom(
        name=f"{prefix}g_trunk",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[0.19, 0.047, 0.057],
        rgba=list(_RGBA_ARM),
        contype=CONTYPE_RIGID,
        conaffinity=RIGID_AFFINITY,
        mass=5.2,
    )
    joints, acts, home = [], [], []
    for leg, (x, y) in _QUAD_HIPS.items():
        side = 1.0 if y > 0 else -1.0
        hip = trunk.add_body(name=f"{prefix}{leg}_hip", pos=[x, y, 0])
        thigh = hip.add_body(name=f"{prefix}{leg}_thigh", pos=[0, side * _QUAD_HIP_Y, 0])
        calf = thigh.add_body(name=f"{prefix}{leg}_calf", pos=[0, 0, -_QUAD_THIGH])
        for body, axis, name, rng, mass, geom in (
            (hip, (1, 0, 0), "hip", (-0.86, 0.86), 0.68, None),
            (thigh, (0, 1, 0), "thigh", (-0.69, 4.5), 1.0, (0, 0, -_QUAD_THIGH, 0.022)),
            (calf, (0, 1, 0), "calf", (-2.8, -0.9), 0.2, (0, 0, -_QUAD_CALF, 0.013)),
        ):
            jname = f"{prefix}{leg}_{name}_joint"
            body.add_joint(
                name=jname,
                type=mujoco.mjtJoint.mjJNT_HINGE,
                axis=list(axis),
                range=list(rng),
                damping=[1.0, 0, 0],
                armature=0.01,
            )
            if geom is None:
                body.add_geom(
                    type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                    size=[0.046, 0.02, 0],
                    quat=[0.7071068, 0, 0.7071068, 0],
                    rgba=list(_RGBA_JOINT),
                    contype=CONTYPE_RIGID,
                    conaffinity=RIGID_AFFINITY,
                    mass=mass,
                )
            else:
                body.add_geom(
                    type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                    fromto=[0, 0, 0, *geom[:3]],
                    size=[geom[3], 0, 0],
                    rgba=list(_RGBA_ARM),
                    contype=CONTYPE_RIGID,
                    conaffinity=RIGID_AFFINITY,
                    mass=mass,
                )
            act = spec.add_actuator(name=f"{prefix}{leg}_{name}", target=jname)
            act.trntype = mujoco.mjtTrn.mjTRN_JOINT
            act.set_to_position(kp=_QUAD_KP, kv=2.0)
            act.forcelimited = True
            act.forcerange = [-33.5, 33.5]
            joints.append(jname)
            acts.append(act.name)
        calf.add_geom(
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            pos=[0, 0, -_QUAD_CALF],
            size=[0.02, 0, 0],
            rgba=list(_RGBA_JOINT),
            friction=[1.0, 0.005, 0.0001],
            contype=CONTYPE_RIGID,
            conaffinity=RIGID_AFFINITY,
            mass=0.05,
        )
        home += list(_QUAD_STAND)
    # The soft robot mounts on the front face of the trunk, pointing forward (+x).
    mount = trunk.add_body(
        name=f"{prefix}flange",
        pos=[0.19, 0, 0],
        quat=[math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0],
    )
    return RigidInfo(
        prefix,
        "quadruped",
        trunk.name,
        mount.name,
        tuple(joints),
        tuple(acts),
        tuple(home),
        free_base=True,
    )


RIGID_MODELS = {"panda": _add_panda, "ur5": _add_ur5, "quadruped": _add_quadruped}


def add_rigid(
    spec: mujoco.MjSpec,
    parent: mujoco.MjsBody,
    model: str,
    prefix: str,
    pos=(0.0, 0.0, 0.0),
    quat=(1.0, 0.0, 0.0, 0.0),
) -> RigidInfo:
    """Add the simplified rigid robot `model` ('panda', 'ur5', 'quadruped') under `parent`."""
    if model not in RIGID_MODELS:
        raise ValueError(f"rigid model must be one of {sorted(RIGID_MODELS)}, got {model!r}")
    return RIGID_MODELS[model](spec, parent, prefix, pos, quat)


def add_rigid_mjcf(
    spec: mujoco.MjSpec,
    parent: mujoco.MjsBody,
    path: str,
    prefix: str,
    flange: str,
    pos=(0.0, 0.0, 0.0),
    quat=(1.0, 0.0, 0.0, 0.0),
) -> RigidInfo:
    """Attach a robot from an MJCF file (e.g. a MuJoCo Menagerie checkout) under `parent`.

    `flange` names the body (in that file) the soft robot mounts on. Its first body tree is
    attached; joints and actuators keep their order, with `prefix`.
    """
    child = mujoco.MjSpec.from_file(path)
    frame = parent.add_frame(pos=list(pos), quat=list(quat))
    root = child.worldbody.first_body()
    if root is None:
        raise ValueError(f"{path}: the MJCF has no body to attach")
    if child.body(flange) is None:
        raise ValueError(f"{path}: flange body {flange!r} not found")
    frame.attach_body(root, prefix, "")
    joints = tuple(prefix + j.name for j in child.joints if j.name)
    acts = tuple(prefix + a.name for a in child.actuators if a.name)
    home = tuple(0.0 for _ in acts)
    return RigidInfo(prefix, path, prefix + root.name, prefix + flange, joints, acts, home)
