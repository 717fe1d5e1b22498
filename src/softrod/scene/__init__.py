"""Scenes: soft robots, rigid robots (Panda-, UR5- and quadruped-class), objects and cameras in
one MuJoCo model, from YAML or Python (issue 3). See `softrod.scene._spec` for the format."""

# softrod.mujoco first: it picks the headless OpenGL backend before mujoco is imported.
import softrod.mujoco  # noqa: F401  isort: skip

from softrod.scene._build import Scene, build_scene, load_scene, load_scene_or_robot, look_at_xyaxes
from softrod.scene._rigid import RIGID_MODELS, RigidInfo, add_rigid
from softrod.scene._spec import (
    BinObject,
    BoxObject,
    CameraEntry,
    CylinderObject,
    Keyframe,
    RigidRobotEntry,
    SceneError,
    SceneSpec,
    SoftRobotEntry,
    SphereObject,
    SwitchObject,
    load_scene_spec,
)

__all__ = [
    "RIGID_MODELS",
    "BinObject",
    "BoxObject",
    "CameraEntry",
    "CylinderObject",
    "Keyframe",
    "RigidInfo",
    "RigidRobotEntry",
    "Scene",
    "SceneError",
    "SceneSpec",
    "SoftRobotEntry",
    "SphereObject",
    "SwitchObject",
    "add_rigid",
    "build_scene",
    "load_scene",
    "load_scene_or_robot",
    "load_scene_spec",
    "look_at_xyaxes",
]
