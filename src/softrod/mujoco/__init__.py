"""MuJoCo layer: described robots as continuum-informed rigid-link chains (issue 3).

>>> from softrod.mujoco import build_spec  # doctest: +SKIP
>>> model = build_spec("examples/robots/tdcr3.yaml", links=30).compile()  # doctest: +SKIP
>>> # site "tip", actuators "tension_0".."tension_8" (ctrl = tension [N], >= 0 pulls)

See docs/mujoco.md for the discretization, the measured choices and the validation.
"""

import os as _os
import sys as _sys

# Headless by default: MuJoCo picks its OpenGL backend when it is first imported, so choose EGL
# here unless the user chose one or a display exists.
if (
    "MUJOCO_GL" not in _os.environ
    and _sys.platform.startswith("linux")
    and not _os.environ.get("DISPLAY")
    and not _os.environ.get("WAYLAND_DISPLAY")
):
    _os.environ["MUJOCO_GL"] = "egl"

from softrod.mujoco._builder import (
    ChainInfo,
    add_robot,
    build_spec,
    chain_info,
    configure_spec,
    resolve_options,
)
from softrod.mujoco._collision import (
    CONTYPE_OBJECT,
    CONTYPE_RIGID,
    MAX_SOFT_ROBOTS,
    OBJECT_AFFINITY,
    RIGID_AFFINITY,
    soft_collision_bits,
)
from softrod.mujoco._equilibrium import (
    EquilibriumResult,
    PointLoad,
    apply_loads,
    settle,
    static_equilibrium,
)
from softrod.mujoco._kinematic_body import KinematicRod
from softrod.mujoco._layout import ChainLayout, chain_layout, first_mode_frequency, split_links
from softrod.mujoco._options import MAX_LINKS, MujocoOptions
from softrod.mujoco._render import Renderer, render_image, render_video

__all__ = [
    "CONTYPE_OBJECT",
    "CONTYPE_RIGID",
    "MAX_SOFT_ROBOTS",
    "OBJECT_AFFINITY",
    "RIGID_AFFINITY",
    "ChainInfo",
    "ChainLayout",
    "EquilibriumResult",
    "KinematicRod",
    "MujocoOptions",
    "MAX_LINKS",
    "PointLoad",
    "Renderer",
    "add_robot",
    "apply_loads",
    "build_spec",
    "chain_info",
    "chain_layout",
    "configure_spec",
    "first_mode_frequency",
    "render_image",
    "render_video",
    "resolve_options",
    "settle",
    "soft_collision_bits",
    "split_links",
    "static_equilibrium",
]
