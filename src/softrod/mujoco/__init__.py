"""MuJoCo layer: described robots as continuum-informed rigid-link chains (issue 3).

>>> from softrod.mujoco import build_spec  # doctest: +SKIP
>>> model = build_spec("examples/robots/tdcr3.yaml", links=30).compile()  # doctest: +SKIP
>>> # site "tip", actuators "tension_0".."tension_8" (ctrl = tension [N], >= 0 pulls)

See docs/mujoco.md for the discretization, the measured choices and the validation.
"""

from softrod._gl import choose_gl_backend

# Headless by default: MuJoCo picks its OpenGL backend when it is first imported, so choose EGL
# here unless the user chose one or a display exists.
choose_gl_backend()

from softrod.mujoco._builder import ChainInfo, add_robot, build_spec, chain_info  # noqa: E402
from softrod.mujoco._equilibrium import (  # noqa: E402
    EquilibriumResult,
    PointLoad,
    apply_loads,
    settle,
    static_equilibrium,
)
from softrod.mujoco._layout import ChainLayout, chain_layout, first_mode_frequency, split_links  # noqa: E402
from softrod.mujoco._options import MujocoOptions  # noqa: E402
from softrod.mujoco._render import Renderer, render_image, render_video  # noqa: E402

__all__ = [
    "ChainInfo",
    "ChainLayout",
    "EquilibriumResult",
    "MujocoOptions",
    "PointLoad",
    "Renderer",
    "add_robot",
    "apply_loads",
    "build_spec",
    "chain_info",
    "chain_layout",
    "first_mode_frequency",
    "render_image",
    "render_video",
    "settle",
    "split_links",
    "static_equilibrium",
]
