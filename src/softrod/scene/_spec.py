"""Scene description: soft robots, rigid robots, objects, cameras, keyframes (pydantic, SI).

```yaml
name: tdcr_on_panda
options: {timestep: 0.002}            # solver options (softrod.mujoco.MujocoOptions fields)
floor: true
rigid_robots:
  - {name: panda, model: panda, pos: [0, 0, 0]}
robots:
  - name: tdcr
    robot: tdcr3                      # file (relative to this scene), shipped name, or a dict
    links: 30
    mount: panda                      # a rigid robot's flange, or omitted for the world
objects:
  - {name: post, type: cylinder, radius: 0.015, half_height: 0.15, pos: [0.5, 0.03, 0.15]}
cameras:
  - {name: front, pos: [1.2, -0.8, 0.7], target: [0.4, 0, 0.3]}
  - {name: tipcam, attach: tdcr}      # looks along the backbone from the tip
magnetic_field:                       # optional: a uniform field on the robots' magnets
  {field: [0.02, 0, 0], rotation_axis: [0, 1, 0], rotation_rate: 0.5}
field_sources:                        # optional: point-dipole magnets / coils on rigid bodies
  - {body: panda, position: [0, 0, 0.03], moment: [20, 0, 0]}   # panda: its flange
keyframes:                            # controls, linearly interpolated in time
  - {time: 0.0, controls: {tdcr: [0, 0, 0, 0, 0, 0, 0, 0, 0]}}
  - {time: 2.0, controls: {tdcr: [2, 0, 0, 1.5, 0, 0, 1, 0, 0]}}
```
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from softrod.description import DescriptionError, Spec

__all__ = [
    "SceneError",
    "SceneSpec",
    "SoftRobotEntry",
    "RigidRobotEntry",
    "BoxObject",
    "CylinderObject",
    "SphereObject",
    "BinObject",
    "SwitchObject",
    "CameraEntry",
    "Keyframe",
    "MagneticFieldEntry",
    "FieldSourceEntry",
    "load_scene_spec",
]


class SceneError(DescriptionError):
    """A scene description is invalid; the message names the field path and the value."""


Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


class _Entry(Spec):
    name: str = Field(description="Unique name; prefixes every MuJoCo name of the entry.")

    @model_validator(mode="after")
    def _check_name(self) -> _Entry:
        if not _NAME.match(self.name):
            raise ValueError(
                f"name must start with a letter or _ and hold only letters, digits, _ or -, "
                f"got {self.name!r}"
            )
        return self


class _Posed(_Entry):
    pos: Vec3 = Field(default=(0.0, 0.0, 0.0), description="Position [m].")
    quat: Quat = Field(default=(1.0, 0.0, 0.0, 0.0), description="Orientation (w, x, y, z).")

    @model_validator(mode="after")
    def _check_quat(self) -> _Posed:
        if math.sqrt(sum(q * q for q in self.quat)) < 1e-9:
            raise ValueError(f"quat must be non-zero, got {list(self.quat)}")
        return self


class SoftRobotEntry(_Entry):
    """A described continuum robot, on the world or on a rigid robot's flange."""

    robot: str | dict[str, Any] = Field(
        description="Robot description: file (relative to the scene), shipped name, or mapping."
    )
    links: int = Field(default=30, description="Rigid links N.")
    mount: str | None = Field(
        default=None, description="Name of a rigid robot whose flange carries the base."
    )
    pos: Vec3 | None = Field(
        default=None,
        description="Base position in the mount frame [m]; default the robot's `base` "
        "(world) or the flange origin.",
    )
    quat: Quat | None = Field(default=None, description="Base orientation in the mount frame.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Chain options (softrod.mujoco.MujocoOptions fields)."
    )
    tensions: list[float] | None = Field(
        default=None, description="Initial tendon controls (tension [N] or length [m])."
    )


class RigidRobotEntry(_Posed):
    """A rigid robot: a built-in simplified model or an MJCF file."""

    model: Literal["panda", "ur5", "quadruped", "mjcf"] = Field(
        description="panda (7-DoF), ur5 (6-DoF), quadruped (12-DoF, free base) or mjcf."
    )
    file: str | None = Field(default=None, description="MJCF file for model: mjcf.")
    flange: str | None = Field(default=None, description="Mount body in the MJCF file.")
    qpos: list[float] | None = Field(
        default=None, description="Initial joint targets [rad] (default: the model's home)."
    )

    @model_validator(mode="after")
    def _check_file(self) -> RigidRobotEntry:
        if self.model == "mjcf" and (self.file is None or self.flange is None):
            raise ValueError("model: mjcf needs file and flange")
        if self.model != "mjcf" and (self.file is not None or self.flange is not None):
            raise ValueError(f"file and flange are only for model: mjcf, got model: {self.model}")
        return self


class _Object(_Posed):
    mass: float = Field(default=0.0, description="Mass [kg]; 0 fixes the object to the world.")
    friction: float = Field(default=0.8, description="Sliding friction.")
    rgba: tuple[float, float, float, float] = Field(default=(0.55, 0.6, 0.7, 1.0))

    @model_validator(mode="after")
    def _check_object(self) -> _Object:
        if self.mass < 0:
            raise ValueError(f"mass must be >= 0, got {self.mass}")
        if self.friction < 0:
            raise ValueError(f"friction must be >= 0, got {self.friction}")
        for key, value in self.model_dump().items():
            if key in ("size", "radius", "half_height", "height", "wall") and value is not None:
                values = value if isinstance(value, list | tuple) else [value]
                if any(not v > 0 for v in values):
                    raise ValueError(f"{key} must be > 0, got {value}")
        return self


class BoxObject(_Object):
    type: Literal["box"]
    size: Vec3 = Field(description="Half extents (x, y, z) [m].")


class CylinderObject(_Object):
    type: Literal["cylinder"]
    radius: float = Field(description="[m]")
    half_height: float = Field(description="[m]")


class SphereObject(_Object):
    type: Literal["sphere"]
    radius: float = Field(description="[m]")


class BinObject(_Object):
    """An open box: floor and four walls, its floor's underside at `pos`."""

    type: Literal["bin"]
    size: tuple[float, float] = Field(description="Inner half extents (x, y) [m].")
    height: float = Field(default=0.08, description="Wall height [m].")
    wall: float = Field(default=0.005, description="Wall thickness [m].")


class SwitchObject(_Object):
    """A wall plate with a hinged toggle (seed-002 task 2).

    The plate's face normal is its local +x; the toggle's hinge axis is local y. The toggle
    holds its position by friction and flips when the force at its tip exceeds `force` [N]
    (joint frictionloss = force x lever). It starts at +angle (up), pressing down flips it.
    """

    type: Literal["switch"]
    plate: Vec3 = Field(default=(0.004, 0.035, 0.057), description="Plate half extents [m].")
    lever: float = Field(default=0.02, description="Toggle length [m].")
    width: float = Field(default=0.007, description="Toggle width [m] (7 x 10 mm contact).")
    thickness: float = Field(default=0.01, description="Toggle thickness [m].")
    angle: float = Field(default=0.35, description="Toggle end stops +-angle [rad].")
    force: float = Field(default=0.9, description="Force that flips the toggle [N].")


ObjectEntry = Annotated[
    BoxObject | CylinderObject | SphereObject | BinObject | SwitchObject,
    Field(discriminator="type"),
]


class CameraEntry(_Entry):
    """A fixed camera looking at `target`, or a tip camera riding on a soft robot (`attach`)."""

    pos: Vec3 | None = Field(default=None, description="Position [m] (fixed cameras).")
    target: Vec3 | None = Field(default=None, description="Point looked at [m].")
    attach: str | None = Field(default=None, description="Soft robot whose tip carries it.")
    fovy: float = Field(default=45.0, description="Vertical field of view [deg].")

    @model_validator(mode="after")
    def _check_camera(self) -> CameraEntry:
        if (self.attach is None) == (self.pos is None or self.target is None):
            raise ValueError("give either attach (tip camera) or both pos and target")
        if not 0 < self.fovy < 180:
            raise ValueError(f"fovy must be in (0, 180) deg, got {self.fovy}")
        return self


class Keyframe(Spec):
    """Controls at `time`: {robot name: ctrl vector} (soft robots: tendons, then pressures;
    rigid: joints), and optionally the magnetic field [T]."""

    time: float = Field(description="[s], >= 0, increasing.")
    controls: dict[str, list[float]] = Field(default_factory=dict)
    field: Vec3 | None = Field(
        default=None,
        description="Uniform field B [T] at this time (before the rotation of magnetic_field); "
        "interpolated linearly between the keyframes that give one.",
    )


class MagneticFieldEntry(Spec):
    """A uniform magnetic field (and constant gradient) acting on the soft robots' dipoles.

    B(t) = Rot(rotation_axis, rotation_rate t) B0(t), with B0 the keyframes' `field` when any
    gives one, else `field`; applied by `softrod.mujoco.MagneticField` before every step.
    """

    field: Vec3 = Field(default=(0.0, 0.0, 0.0), description="Field B at t = 0 [T].")
    field_gradient: tuple[Vec3, Vec3, Vec3] | None = Field(
        default=None, description="dB_i/dx_j [T/m], constant in time."
    )
    rotation_axis: Vec3 = Field(default=(0.0, 0.0, 1.0), description="World axis of rotation.")
    rotation_rate: float = Field(default=0.0, description="Rotation rate of the field [rad/s].")

    @model_validator(mode="after")
    def _check_axis(self) -> MagneticFieldEntry:
        if math.sqrt(sum(a * a for a in self.rotation_axis)) < 1e-12:
            raise ValueError(f"rotation_axis must be non-zero, got {list(self.rotation_axis)}")
        return self


class FieldSourceEntry(Spec):
    """A permanent magnet (or a coil) on a rigid body or the world, as a point dipole.

    Its field B(x) = mu0 / (4 pi) (3 rhat (rhat . m) - m) / |r|^3 and exact gradient are
    evaluated at each robot dipole's current position from the body's current pose, added to
    `magnetic_field`, and give the torque m x B and force (grad B)^T m on the robots' magnets
    (the reaction goes on the body). A coil: moment = N I A n (turns, current [A], area
    [m^2], axis), valid in its far field. The point-dipole model holds at distances beyond
    about 2x the magnet's size.
    """

    body: str = Field(
        default="world",
        description="'world', a rigid robot's name (its flange), an object's name, or a body "
        "of a rigid robot by its MuJoCo name (e.g. 'arm/link5').",
    )
    position: Vec3 = Field(default=(0.0, 0.0, 0.0), description="Centre in the body frame [m].")
    moment: Vec3 = Field(description="Dipole moment in the body frame [A m^2].")
    radius: float = Field(
        default=0.005,
        description="Magnet (or coil) radius [m]: drawn as a sphere; a robot magnet within "
        "it is an error (it would sit inside the source).",
    )

    @model_validator(mode="after")
    def _check_source(self) -> FieldSourceEntry:
        for key in ("position", "moment"):
            value = getattr(self, key)
            if not all(math.isfinite(v) for v in value):
                raise ValueError(f"{key} must be finite, got {list(value)}")
        if not (math.isfinite(self.radius) and self.radius >= 0):
            raise ValueError(f"radius must be >= 0 [m], got {self.radius}")
        return self


class SceneSpec(Spec):
    """Everything in one MuJoCo scene."""

    spec_what: ClassVar[str] = "scene"
    spec_error: ClassVar[type[ValueError]] = SceneError

    name: str = Field(default="scene")
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Scene-wide solver options: timestep, integrator, gravity.",
    )
    floor: bool = Field(default=True, description="A ground plane at z = 0.")
    shadows: bool = Field(
        default=False,
        description="Shadows from the key light (about 2.5x slower software rendering).",
    )
    robots: list[SoftRobotEntry] = Field(default_factory=list)
    rigid_robots: list[RigidRobotEntry] = Field(default_factory=list)
    objects: list[ObjectEntry] = Field(default_factory=list)
    cameras: list[CameraEntry] = Field(default_factory=list)
    keyframes: list[Keyframe] = Field(default_factory=list)
    magnetic_field: MagneticFieldEntry | None = Field(
        default=None, description="A uniform field on every soft robot's magnets."
    )
    field_sources: list[FieldSourceEntry] = Field(
        default_factory=list,
        description="Point-dipole magnets or coils on rigid bodies (or the world) acting on "
        "every soft robot's magnets, with the uniform field.",
    )

    @model_validator(mode="after")
    def _check_scene(self) -> SceneSpec:
        allowed = {"timestep", "integrator", "gravity"}
        extra = set(self.options) - allowed
        if extra:
            raise ValueError(
                f"options may only set {sorted(allowed)} (chain options go in "
                f"robots[i].options), got {sorted(extra)}"
            )
        seen: dict[str, str] = {}
        for kind in ("robots", "rigid_robots", "objects", "cameras"):
            for i, entry in enumerate(getattr(self, kind)):
                if entry.name in seen:
                    raise ValueError(
                        f"{kind}[{i}].name {entry.name!r} is already used by {seen[entry.name]}"
                    )
                seen[entry.name] = f"{kind}[{i}]"
        rigid = {r.name for r in self.rigid_robots}
        soft = {r.name for r in self.robots}
        for i, r in enumerate(self.robots):
            if r.mount is not None and r.mount not in rigid:
                raise ValueError(
                    f"robots[{i}].mount {r.mount!r} is not a rigid robot of this scene "
                    f"(rigid robots: {sorted(rigid) or 'none'})"
                )
        for i, c in enumerate(self.cameras):
            if c.attach is not None and c.attach not in soft:
                raise ValueError(
                    f"cameras[{i}].attach {c.attach!r} is not a soft robot of this scene "
                    f"(soft robots: {sorted(soft) or 'none'})"
                )
        times = [k.time for k in self.keyframes]
        if any(t < 0 for t in times) or any(b <= a for a, b in zip(times, times[1:], strict=False)):
            raise ValueError(f"keyframes[].time must be >= 0 and increasing, got {times}")
        names = soft | rigid
        for i, k in enumerate(self.keyframes):
            for key in k.controls:
                if key not in names:
                    raise ValueError(
                        f"keyframes[{i}].controls: {key!r} is not a robot of this scene "
                        f"(robots: {sorted(names)})"
                    )
        objects = {o.name for o in self.objects}
        for i, src in enumerate(self.field_sources):
            owner = src.body.split("/", 1)[0]
            if owner in soft:
                raise ValueError(
                    f"field_sources[{i}].body {src.body!r} is a soft robot's body; a field "
                    "source rides on the world, a rigid robot or an object"
                )
            if src.body != "world" and owner not in rigid | objects:
                raise ValueError(
                    f"field_sources[{i}].body {src.body!r} is not a rigid body of this scene "
                    f"('world', rigid robots: {sorted(rigid) or 'none'}, objects: "
                    f"{sorted(objects) or 'none'}, or a rigid robot's body as 'arm/link5')"
                )
        return self


def load_scene_spec(source: str | Path | dict[str, Any] | SceneSpec) -> SceneSpec:
    """Validate a scene from a YAML file, a dict or a SceneSpec; SceneError on bad input."""
    return SceneSpec.load(source)
