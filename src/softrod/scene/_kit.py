"""The MjSpec composition kit: every scene, environment and SoMo assembly is built from these.

| piece | function | names it adds |
|---|---|---|
| empty model with solver options | `new_spec(name, options)` | (compiler, option, visual) |
| lights (and sky) | `add_lights(spec, style)` | `key`, `fill` (studio), `key` (task) |
| ground plane | `add_floor(spec, size, ...)` | geom `floor`, texture/material `grid` |
| fixed camera | `add_camera(spec, name, pos, target)` | camera `name` |
| camera on a soft robot's tip | `add_tip_camera(spec, chain, name)` | camera `name` |
| target marker (mocap, no contact) | `add_marker(spec, name, radius)` | body, geom `<name>_geom` |
| soft robot (rigid-link chain) | `add_robot` (`softrod.mujoco`) | see `softrod.mujoco` |
| rigid robot | `add_rigid`, `add_rigid_mjcf` | see `softrod.scene._rigid` |

Collision bits follow one convention (`CONTYPE_OBJECT`, `CONTYPE_RIGID`, `OBJECT_AFFINITY`,
`RIGID_AFFINITY`, `soft_collision_bits`; table in `softrod.mujoco._collision`). Lengths [m],
angles [rad], colours RGBA in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import mujoco
import numpy as np
from numpy.typing import ArrayLike

from softrod.mujoco import CONTYPE_OBJECT, ChainInfo, MujocoOptions, configure_spec, resolve_options
from softrod.scene._spec import SceneError

__all__ = [
    "add_camera",
    "add_floor",
    "add_lights",
    "add_marker",
    "add_tip_camera",
    "look_at_xyaxes",
    "new_spec",
]

#: Checker palettes of the floor: (rgb1, rgb2, reflectance). `dark` for scene files and the
#: viewer, `light` for the environments' videos.
_FLOOR_GRIDS = {
    "dark": ((0.32, 0.34, 0.38), (0.26, 0.28, 0.31), 0.0),
    "light": ((0.82, 0.84, 0.86), (0.68, 0.70, 0.73), 0.05),
}
#: Key light above the workspace, shared by the studio and task styles: (pos, dir) [m].
_KEY_LIGHT = ((0.5, -0.5, 2.0), (-0.2, 0.2, -1.0))


def new_spec(
    name: str, options: MujocoOptions | dict[str, Any] | None = None, **overrides: Any
) -> mujoco.MjSpec:
    """An empty MjSpec called `name` with the compiler and solver settings of `options`
    (MujocoOptions or dict; keyword `overrides` replace its fields)."""
    spec = mujoco.MjSpec()
    spec.modelname = name
    configure_spec(spec, resolve_options(options, **overrides))
    return spec


def add_lights(
    spec: mujoco.MjSpec,
    style: Literal["studio", "task", "overhead"],
    *,
    shadows: bool = True,
    height: float = 1.5,
) -> None:
    """Light a scene in one of three styles.

    studio : gradient sky, a `key` light (casts shadows if `shadows`) and a soft `fill` light
        (scene files and the viewer).
    task : brighter headlight and one `key` light (the environments).
    overhead : one light at (0, 0, height) [m] pointing down (SoMo assemblies, grasp trials).
    """
    world = spec.worldbody
    key_pos, key_dir = _KEY_LIGHT
    if style == "studio":
        spec.add_texture(
            name="sky",
            type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
            rgb1=[0.55, 0.65, 0.8],
            rgb2=[0.1, 0.12, 0.15],
            width=256,
            height=256,
        )
        world.add_light(
            name="key",
            pos=list(key_pos),
            dir=list(key_dir),
            diffuse=[0.7, 0.7, 0.7],
            castshadow=shadows,
        )
        world.add_light(
            name="fill",
            pos=[-1.0, 1.0, 1.5],
            dir=[0.5, -0.5, -0.6],
            diffuse=[0.3, 0.3, 0.3],
            castshadow=False,
        )
    elif style == "task":
        spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
        spec.visual.headlight.diffuse = [0.5, 0.5, 0.5]
        world.add_light(name="key", pos=list(key_pos), dir=list(key_dir), diffuse=[0.6, 0.6, 0.6])
    elif style == "overhead":
        world.add_light(pos=[0, 0, height], dir=[0, 0, -1])
    else:
        raise ValueError(f"style must be 'studio', 'task' or 'overhead', got {style!r}")


def add_floor(
    spec: mujoco.MjSpec,
    size: float = 0.0,
    *,
    z: float = 0.0,
    friction: float = 1.0,
    grid: Literal["light", "dark"] | None = "light",
    spacing: float = 0.05,
    contype: int = CONTYPE_OBJECT,
    conaffinity: int = CONTYPE_OBJECT,
) -> None:
    """A ground plane `floor` at height z [m].

    size : half extent [m] (0: infinite); friction : sliding coefficient (torsional 0.005,
    rolling 1e-4); grid : checker palette, or None for a plain plane; spacing : drawing grid
    spacing [m]; contype, conaffinity : collision bits (objects' convention by default).
    """
    # Checker texture and material first: the floor geom refers to them by name.
    material = ""
    if grid is not None:
        rgb1, rgb2, reflectance = _FLOOR_GRIDS[grid]
        spec.add_texture(
            name="grid",
            type=mujoco.mjtTexture.mjTEXTURE_2D,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
            rgb1=list(rgb1),
            rgb2=list(rgb2),
            width=256,
            height=256,
        )
        mat = spec.add_material(name="grid", texrepeat=[8, 8], reflectance=reflectance)
        mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
        material = "grid"
    spec.worldbody.add_geom(
        name="floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[size, size, spacing],
        pos=[0, 0, z],
        material=material,
        friction=[friction, 0.005, 0.0001],
        contype=contype,
        conaffinity=conaffinity,
        condim=3,
    )


def look_at_xyaxes(
    pos: ArrayLike, target: ArrayLike, up: Sequence[float] = (0.0, 0.0, 1.0)
) -> list[float]:
    """MuJoCo camera `xyaxes` (6,) for a camera at `pos` looking at `target` (world [m]; a
    MuJoCo camera looks along its -z), with `up` drawn upward in the image."""
    forward = np.subtract(target, pos).astype(float)
    norm = np.linalg.norm(forward)
    if norm < 1e-9:
        where = list(pos) if isinstance(pos, Sequence) else np.asarray(pos).tolist()
        raise SceneError(f"camera pos and target coincide: {where}")
    forward /= norm
    x = np.cross(forward, up)
    if np.linalg.norm(x) < 1e-6:  # looking straight up or down
        x = np.cross(forward, (0.0, 1.0, 0.0))
    x /= np.linalg.norm(x)
    y = np.cross(x, forward)
    return [*map(float, x), *map(float, y)]


def add_camera(
    spec: mujoco.MjSpec,
    name: str,
    pos: ArrayLike,
    target: ArrayLike,
    *,
    fovy: float | None = None,
) -> None:
    """A fixed world camera `name` at `pos` looking at `target` [m], world z up in the image;
    fovy : vertical field of view [deg] (None: MuJoCo's 45)."""
    fov = {} if fovy is None else {"fovy": fovy}
    spec.worldbody.add_camera(
        name=name,
        pos=np.asarray(pos, dtype=float).tolist(),
        xyaxes=look_at_xyaxes(pos, target),
        **fov,
    )


def add_tip_camera(
    spec: mujoco.MjSpec, chain: ChainInfo, name: str, fovy: float | None = None
) -> None:
    """A camera `name` on a soft robot's last link, 1 mm past the tip, looking along the
    backbone; fovy : vertical field of view [deg] (None: MuJoCo's 45)."""
    fov = {} if fovy is None else {"fovy": fovy}
    tip_body = spec.body(chain.link_bodies[-1])
    # MuJoCo cameras look along their -z: turn 180 deg about x to look along the backbone.
    tip_body.add_camera(
        name=name,
        pos=[0.0, 0.0, float(chain.layout.link_length[-1]) + 1e-3],
        quat=[0.0, 1.0, 0.0, 0.0],
        **fov,
    )


def add_marker(
    spec: mujoco.MjSpec,
    name: str,
    radius: float,
    rgba: tuple[float, float, float, float] = (0.9, 0.1, 0.1, 0.6),
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> None:
    """A mocap body `name` with a visual-only sphere of `radius` [m] (targets; move it through
    `data.mocap_pos`)."""
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
