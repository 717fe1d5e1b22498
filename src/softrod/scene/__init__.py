"""Scenes: soft robots, rigid robots (Panda-, UR5- and quadruped-class), objects and cameras in
one MuJoCo model, from YAML or Python (issue 3). See `softrod.scene._spec` for the format.

`softrod.scene` is also the one MjSpec composition kit that scene files, the environments, SoMo
assemblies and the demo build with (`softrod.scene._kit`): `new_spec`, `add_lights`,
`add_floor`, `add_camera`, `add_tip_camera`, `add_marker`, `add_robot` (soft, from
`softrod.mujoco`), `add_rigid`, and one collision-bit convention (`CONTYPE_OBJECT`,
`CONTYPE_RIGID`, `OBJECT_AFFINITY`, `RIGID_AFFINITY`, `soft_collision_bits`).
"""

# softrod.mujoco first: it picks the headless OpenGL backend before mujoco is imported.
import softrod.mujoco  # noqa: F401  isort: skip

from softrod.mujoco import (
    CONTYPE_OBJECT,
    CONTYPE_RIGID,
    OBJECT_AFFINITY,
    RIGID_AFFINITY,
    ChainInfo,
    add_robot,
    soft_collision_bits,
)
from softrod.scene._build import Scene, build_scene, load_scene, load_scene_or_robot
from softrod.scene._kit import (
    add_camera,
    add_floor,
    add_lights,
    add_marker,
    add_tip_camera,
    look_at_xyaxes,
    new_spec,
)
from softrod.scene._rigid import PANDA_HOME, RIGID_MODELS, RigidInfo, add_rigid, add_rigid_mjcf
from softrod.scene._spec import (
    BinObject,
    BoxObject,
    CameraEntry,
    CylinderObject,
    FieldSourceEntry,
    Keyframe,
    MagneticFieldEntry,
    RigidRobotEntry,
    SceneError,
    SceneSpec,
    SoftRobotEntry,
    SphereObject,
    SwitchObject,
    load_scene_spec,
)

__all__ = [
    "CONTYPE_OBJECT",
    "CONTYPE_RIGID",
    "OBJECT_AFFINITY",
    "PANDA_HOME",
    "RIGID_AFFINITY",
    "RIGID_MODELS",
    "BinObject",
    "BoxObject",
    "CameraEntry",
    "ChainInfo",
    "CylinderObject",
    "FieldSourceEntry",
    "Keyframe",
    "MagneticFieldEntry",
    "RigidInfo",
    "RigidRobotEntry",
    "Scene",
    "SceneError",
    "SceneSpec",
    "SoftRobotEntry",
    "SphereObject",
    "SwitchObject",
    "add_camera",
    "add_floor",
    "add_lights",
    "add_marker",
    "add_rigid",
    "add_rigid_mjcf",
    "add_robot",
    "add_tip_camera",
    "build_scene",
    "load_scene",
    "load_scene_or_robot",
    "load_scene_spec",
    "look_at_xyaxes",
    "new_spec",
    "soft_collision_bits",
]
