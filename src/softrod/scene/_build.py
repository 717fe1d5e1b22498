"""SceneSpec -> one MjSpec with soft robots, rigid robots, objects and cameras; a `Scene`.

Built from the composition kit (`softrod.scene._kit`). Collision groups (`softrod.scene`'s
convention): objects and the floor collide with everything; each soft robot collides with
objects and other soft robots but not with itself or any rigid robot (so it never fights its own
mount); rigid robots collide with objects only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import yaml

from softrod.description import (
    MAX_FILE_BYTES,
    ROBOT_SUFFIXES,
    DescriptionError,
    RobotSpec,
    load_robot,
    shipped_robot_path,
)
from softrod.mujoco import (
    CONTYPE_OBJECT,
    OBJECT_AFFINITY,
    ChainInfo,
    FieldSource,
    MagneticField,
    add_robot,
    resolve_options,
)
from softrod.scene._kit import (
    add_camera,
    add_floor,
    add_lights,
    add_tip_camera,
    new_spec,
)
from softrod.scene._rigid import RigidInfo, add_rigid, add_rigid_mjcf
from softrod.scene._spec import (
    BinObject,
    BoxObject,
    CameraEntry,
    CylinderObject,
    SceneError,
    SceneSpec,
    SoftRobotEntry,
    SphereObject,
    SwitchObject,
    load_scene_spec,
)

__all__ = ["Scene", "build_scene", "load_scene", "load_scene_or_robot"]

#: Toggle mass [kg] and rotor inertia [kg m^2] (keeps the light hinge well conditioned).
_TOGGLE_MASS = 0.002
_TOGGLE_ARMATURE = 1e-5


@dataclass
class Scene:
    """A compiled scene: MjSpec, MjModel, MjData and the names of what is in it.

    robots : soft robots by name (ChainInfo); rigid : rigid robots by name (RigidInfo).
    ctrl_index : actuator indices into data.ctrl per robot name (soft robots: tendons, then
    chamber pressures).
    magnetic : the scene's MagneticField (None without `magnetic_field` and `field_sources`,
    or without soft robots); `apply_keyframes` sets and applies it, so everything that steps a
    scene (`step`, `softrod render`, `view`) puts the magnetic loads on.
    """

    spec_source: SceneSpec
    spec: mujoco.MjSpec
    model: mujoco.MjModel
    data: mujoco.MjData
    robots: dict[str, ChainInfo]
    rigid: dict[str, RigidInfo]
    ctrl_index: dict[str, np.ndarray]
    cameras: list[str] = field(default_factory=list)
    magnetic: MagneticField | None = None

    @property
    def default_camera(self) -> str | None:
        return self.cameras[0] if self.cameras else None

    def set_controls(self, name: str, values) -> None:
        """Set the actuator controls of robot `name` (tensions [N] / joint targets [rad])."""
        if name not in self.ctrl_index:
            raise ValueError(f"unknown robot {name!r}; robots: {sorted(self.ctrl_index)}")
        idx = self.ctrl_index[name]
        values = np.asarray(values, dtype=float)
        if values.shape != idx.shape:
            raise ValueError(f"robot {name!r} has {idx.size} actuators, got {values.size} controls")
        self.data.ctrl[idx] = values

    def field_at(self, t: float) -> np.ndarray:
        """The scene's uniform field B (3,) [T] at time t [s] (zero without one)."""
        entry = self.spec_source.magnetic_field
        if entry is None:
            return np.zeros(3)
        pts = [(k.time, k.field) for k in self.spec_source.keyframes if k.field is not None]
        if pts:
            times = np.array([p[0] for p in pts])
            vals = np.array([p[1] for p in pts], dtype=float)
            b0 = np.array([np.interp(t, times, vals[:, i]) for i in range(3)])
        else:
            b0 = np.asarray(entry.field, dtype=float)
        # Rodrigues' rotation of B0 about the axis by rate x t.
        axis = np.asarray(entry.rotation_axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        angle = entry.rotation_rate * t
        c, s = np.cos(angle), np.sin(angle)
        return c * b0 + s * np.cross(axis, b0) + (1 - c) * axis * (axis @ b0)

    def apply_keyframes(self, t: float) -> None:
        """Set data.ctrl from the keyframes, linearly interpolated at time t [s], and put the
        magnetic field of time t on (`MagneticField.apply`, the per-step hook)."""
        if self.magnetic is not None:
            entry = self.spec_source.magnetic_field
            grad = None if entry is None else entry.field_gradient
            self.magnetic.set(self.field_at(t), grad)
            self.magnetic.apply(self.model, self.data)
        frames = self.spec_source.keyframes
        if not frames:
            return
        names = {n for k in frames for n in k.controls}
        for name in names:
            pts = [(k.time, k.controls[name]) for k in frames if name in k.controls]
            times = np.array([p[0] for p in pts])
            vals = np.array([p[1] for p in pts], dtype=float)
            if t <= times[0]:
                v = vals[0]
            elif t >= times[-1]:
                v = vals[-1]
            else:
                i = int(np.searchsorted(times, t) - 1)
                w = (t - times[i]) / (times[i + 1] - times[i])
                v = (1 - w) * vals[i] + w * vals[i + 1]
            self.set_controls(name, v)

    def step(self, n: int = 1) -> None:
        """Advance n timesteps, applying the keyframes before each."""
        for _ in range(n):
            self.apply_keyframes(self.data.time)
            mujoco.mj_step(self.model, self.data)


def _shipped_robot(name: str) -> Path | None:
    """Path of a robot shipped in softrod/data/robots by bare name (`tdcr3`), if any."""
    return shipped_robot_path(name)


def _resolve_robot(entry: SoftRobotEntry, base_dir: Path, where: str) -> RobotSpec:
    try:
        if isinstance(entry.robot, dict):
            return load_robot(entry.robot)
        path = Path(entry.robot).expanduser()
        if not path.is_absolute() and (base_dir / path).is_file():
            return load_robot(base_dir / path)
        if path.is_file():
            return load_robot(path)
        shipped = _shipped_robot(entry.robot)
        if shipped is not None:
            return load_robot(shipped)
    except DescriptionError as exc:
        raise SceneError(f"{where}.robot: {exc}") from None
    raise SceneError(
        f"{where}.robot: {entry.robot!r} is neither a file (relative to {base_dir}) nor a "
        "shipped robot name"
    )


def _add_object(spec: mujoco.MjSpec, obj: Any) -> None:
    world = spec.worldbody
    body = world.add_body(name=obj.name, pos=list(obj.pos), quat=list(obj.quat))
    geom_kw = dict(
        contype=CONTYPE_OBJECT,
        conaffinity=OBJECT_AFFINITY,
        friction=[obj.friction, 0.005, 0.0001],
        rgba=list(obj.rgba),
    )
    dynamic = obj.mass > 0
    if isinstance(obj, SwitchObject):
        px, py, pz = obj.plate
        body.add_geom(
            name=f"{obj.name}/plate", type=mujoco.mjtGeom.mjGEOM_BOX, size=[px, py, pz], **geom_kw
        )
        toggle = body.add_body(name=f"{obj.name}/toggle", pos=[px, 0, 0])
        toggle.add_joint(
            name=f"{obj.name}/hinge",
            type=mujoco.mjtJoint.mjJNT_HINGE,
            axis=[0, 1, 0],
            range=[-obj.angle, obj.angle],
            frictionloss=obj.force * obj.lever,
            damping=[1e-4, 0, 0],
            armature=_TOGGLE_ARMATURE,
            ref=0.0,
        )
        # Stiff dry friction: the default soft constraint lets a light toggle creep under any
        # load; with impedance ~1 it holds below the threshold (tests/test_scene.py).
        joint = spec.joint(f"{obj.name}/hinge")
        joint.solimp_friction = [0.9999, 0.9999, 0.001, 0.5, 2.0]
        # The lever's root swings through the plate's face: no contact between the two.
        spec.add_exclude(bodyname1=obj.name, bodyname2=f"{obj.name}/toggle")
        toggle.add_geom(
            name=f"{obj.name}/lever",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[obj.lever / 2, obj.width / 2, obj.thickness / 2],
            pos=[obj.lever / 2, 0, 0],
            mass=_TOGGLE_MASS,
            **{**geom_kw, "rgba": [0.95, 0.95, 0.9, 1.0]},
        )
        return
    if dynamic:
        body.add_freejoint(name=f"{obj.name}/free")
    mass_kw = {"mass": obj.mass} if dynamic else {}
    if isinstance(obj, BoxObject):
        body.add_geom(
            name=f"{obj.name}/geom",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=list(obj.size),
            **geom_kw,
            **mass_kw,
        )
    elif isinstance(obj, CylinderObject):
        body.add_geom(
            name=f"{obj.name}/geom",
            type=mujoco.mjtGeom.mjGEOM_CYLINDER,
            size=[obj.radius, obj.half_height, 0],
            **geom_kw,
            **mass_kw,
        )
    elif isinstance(obj, SphereObject):
        body.add_geom(
            name=f"{obj.name}/geom",
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[obj.radius, 0, 0],
            **geom_kw,
            **mass_kw,
        )
    elif isinstance(obj, BinObject):
        hx, hy = obj.size
        w, h = obj.wall, obj.height
        parts = [
            ("floor", [hx + w, hy + w, w / 2], [0, 0, w / 2]),
            ("wall_xp", [w / 2, hy + w, h / 2], [hx + w / 2, 0, h / 2]),
            ("wall_xn", [w / 2, hy + w, h / 2], [-hx - w / 2, 0, h / 2]),
            ("wall_yp", [hx, w / 2, h / 2], [0, hy + w / 2, h / 2]),
            ("wall_yn", [hx, w / 2, h / 2], [0, -hy - w / 2, h / 2]),
        ]
        each = obj.mass / len(parts) if dynamic else None
        for tag, size, pos in parts:
            body.add_geom(
                name=f"{obj.name}/{tag}",
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=size,
                pos=pos,
                **geom_kw,
                **({"mass": each} if dynamic else {}),
            )


def _add_camera(spec: mujoco.MjSpec, cam: CameraEntry, robots: dict[str, ChainInfo]) -> None:
    if cam.attach is not None:
        add_tip_camera(spec, robots[cam.attach], cam.name, fovy=cam.fovy)
        return
    assert cam.pos is not None and cam.target is not None  # checked by CameraEntry
    add_camera(spec, cam.name, cam.pos, cam.target, fovy=cam.fovy)


#: Colour of a field source's sphere (a magnet's red).
_SOURCE_RGBA = (0.85, 0.15, 0.12, 1.0)


def _field_sources(
    spec: mujoco.MjSpec, spec_src: SceneSpec, rigid: dict[str, RigidInfo]
) -> list[FieldSource]:
    """The scene's field sources on their bodies (a rigid robot's name is its flange), each
    drawn as a sphere site `field_source_<i>` of its radius; SceneError naming
    `field_sources[i].body` for a body the scene does not have."""
    out: list[FieldSource] = []
    for i, src in enumerate(spec_src.field_sources):
        name = rigid[src.body].flange if src.body in rigid else src.body
        body = spec.worldbody if name == "world" else spec.body(name)
        if body is None:
            raise SceneError(
                f"field_sources[{i}].body {src.body!r} is not a body of this scene (a rigid "
                "robot's bodies are named '<robot>/<body>')"
            )
        # A site: drawn, massless, no contact.
        body.add_site(
            name=f"field_source_{i}",
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[max(src.radius, 1e-3), 0, 0],
            pos=list(src.position),
            rgba=list(_SOURCE_RGBA),
        )
        out.append(FieldSource(name, src.position, src.moment, src.radius))
    return out


def build_scene(
    source: str | Path | dict[str, Any] | SceneSpec, base_dir: str | Path | None = None
) -> Scene:
    """Build and compile a scene (see `softrod.scene._spec` for the format).

    Parameters
    ----------
    source : scene YAML path, dict or SceneSpec.
    base_dir : folder that relative robot/MJCF paths refer to (default: the scene file's).
    """
    spec_src = load_scene_spec(source)
    if base_dir is None:
        base_dir = Path(source).parent if isinstance(source, str | Path) else Path.cwd()
    base_dir = Path(base_dir)
    try:
        scene_opts = resolve_options(spec_src.options)
    except ValueError as exc:
        raise SceneError(f"options: {' '.join(str(exc).split())}") from None
    spec = new_spec(spec_src.name, scene_opts)
    add_lights(spec, "studio", shadows=spec_src.shadows)
    if spec_src.floor:
        add_floor(spec, grid="dark", conaffinity=OBJECT_AFFINITY)

    rigid: dict[str, RigidInfo] = {}
    for i, entry in enumerate(spec_src.rigid_robots):
        prefix = f"{entry.name}/"
        try:
            if entry.model == "mjcf":
                path = Path(entry.file or "")
                path = path if path.is_absolute() else base_dir / path
                if not path.is_file():
                    raise SceneError(f"rigid_robots[{i}].file not found: {path}")
                rigid[entry.name] = add_rigid_mjcf(
                    spec,
                    spec.worldbody,
                    str(path),
                    prefix,
                    entry.flange or "",
                    entry.pos,
                    entry.quat,
                )
            else:
                rigid[entry.name] = add_rigid(
                    spec, spec.worldbody, entry.model, prefix, entry.pos, entry.quat
                )
        except ValueError as exc:
            raise SceneError(f"rigid_robots[{i}]: {exc}") from None
        n_home = len(rigid[entry.name].home)
        if entry.qpos is not None and len(entry.qpos) != n_home:
            raise SceneError(
                f"rigid_robots[{i}].qpos needs {n_home} values for {entry.model}, "
                f"got {len(entry.qpos)}"
            )

    robots: dict[str, ChainInfo] = {}
    for i, soft in enumerate(spec_src.robots):
        where = f"robots[{i}]"
        robot = _resolve_robot(soft, base_dir, where)
        opts = {
            **soft.options,
            "links": soft.links,
            **{
                k: v
                for k, v in scene_opts.model_dump().items()
                if k in ("timestep", "integrator", "gravity")
            },
        }
        parent = spec.worldbody if soft.mount is None else spec.body(rigid[soft.mount].flange)
        pos, quat = soft.pos, soft.quat
        if soft.mount is not None:
            pos = pos or (0.0, 0.0, 0.0)
            quat = quat or (1.0, 0.0, 0.0, 0.0)
        try:
            robots[soft.name] = add_robot(
                spec, parent, robot, opts, prefix=f"{soft.name}/", soft_index=i, pos=pos, quat=quat
            )
        except ValueError as exc:
            raise SceneError(f"{where}: {' '.join(str(exc).split())}") from None

    for obj in spec_src.objects:
        _add_object(spec, obj)
    sources = _field_sources(spec, spec_src, rigid)
    cameras = []
    for cam in spec_src.cameras:
        _add_camera(spec, cam, robots)
        cameras.append(cam.name)

    try:
        model = spec.compile()
    except ValueError as exc:
        raise SceneError(f"scene {spec_src.name!r} does not compile: {exc}") from None
    data = mujoco.MjData(model)

    ctrl_index: dict[str, np.ndarray] = {}
    for name, info in robots.items():
        names = (*info.actuators, *info.pressure_actuators, *info.moment_actuators)
        ctrl_index[name] = np.array([model.actuator(a).id for a in names], dtype=int)
    for name, rinfo in rigid.items():
        ctrl_index[name] = np.array([model.actuator(a).id for a in rinfo.actuators], dtype=int)
    scene = Scene(spec_src, spec, model, data, robots, rigid, ctrl_index, cameras)
    if (spec_src.magnetic_field is not None or sources) and robots:
        try:
            scene.magnetic = MagneticField(model, list(robots.values()), field_sources=sources)
        except ValueError as exc:
            raise SceneError(_magnetic_error(exc)) from None

    # Initial state: rigid robots at home (or qpos), soft robots at their tensions.
    for entry in spec_src.rigid_robots:
        rinfo = rigid[entry.name]
        q = entry.qpos if entry.qpos is not None else list(rinfo.home)
        for jname, value in zip(rinfo.joints, q, strict=False):
            data.qpos[model.joint(jname).qposadr[0]] = value
        if len(rinfo.actuators) == len(q):
            scene.set_controls(entry.name, q)
    for i, soft in enumerate(spec_src.robots):
        if soft.tensions is not None:
            try:
                scene.set_controls(soft.name, soft.tensions)
            except ValueError as exc:
                raise SceneError(f"robots[{i}].tensions: {exc}") from None
    try:
        scene.apply_keyframes(0.0)
    except ValueError as exc:
        # A robot magnet inside a field source at the start is a scene error.
        if not str(exc).startswith("field_sources"):
            raise
        raise SceneError(str(exc)) from None
    mujoco.mj_forward(model, data)
    return scene


def _magnetic_error(exc: ValueError) -> str:
    """A MagneticField error as a scene error: a source's names its entry already."""
    msg = str(exc)
    return msg if msg.startswith("field_sources") else f"magnetic_field: {msg}"


def load_scene(path: str | Path) -> Scene:
    """Build the scene described in a YAML file."""
    return build_scene(path)


def load_scene_or_robot(path: str | Path, links: int | None = None) -> Scene:
    """A scene from a scene file, or a one-robot scene from a robot description/shipped name."""
    p = Path(path)
    data = None
    if p.is_file() and p.suffix.lower() in ROBOT_SUFFIXES:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise SceneError(f"scene file too large: {p} has more than {MAX_FILE_BYTES} bytes")
        try:
            data = yaml.safe_load(p.read_text())
        except yaml.YAMLError as exc:
            raise SceneError(f"cannot parse {p}: {str(exc).strip().splitlines()[0]}") from None
    if data is not None and not (isinstance(data, dict) and "segments" in data):
        if links is not None:
            raise SceneError("--links applies to a robot given alone; set links in the scene")
        return build_scene(p)
    if p.is_file():
        robot = load_robot(p)
    else:
        shipped = _shipped_robot(str(path))
        if shipped is None:
            raise SceneError(
                f"scene or robot not found: {str(path)!r} is neither a file nor a shipped "
                "robot name"
            )
        robot = load_robot(shipped)
    L = robot.total_length
    base = np.array(robot.base.position, dtype=float)
    lift = max(0.0, 0.2 * L - base[2])
    scene_dict = {
        "name": robot.name,
        "floor": False,
        "robots": [
            {
                "name": "robot",
                "robot": robot.to_dict(),
                "links": links or 30,
                "pos": list(base + [0, 0, lift]),
                "quat": list(robot.base.quaternion),
            }
        ],
        "cameras": [
            {
                "name": "side",
                "pos": [
                    float(base[0] + 1.6 * L),
                    float(base[1] - 1.6 * L),
                    float(base[2] + lift + 1.0 * L),
                ],
                "target": [float(base[0]), float(base[1]), float(base[2] + lift + 0.5 * L)],
            }
        ],
    }
    return build_scene(scene_dict)
