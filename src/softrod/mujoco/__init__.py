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

from softrod.mujoco._builder import (  # noqa: E402
    ChainInfo,
    add_robot,
    build_spec,
    chain_info,
    configure_spec,
    resolve_options,
)
from softrod.mujoco._collision import (  # noqa: E402
    CONTYPE_OBJECT,
    CONTYPE_RIGID,
    MAX_SOFT_ROBOTS,
    OBJECT_AFFINITY,
    RIGID_AFFINITY,
    soft_collision_bits,
)
from softrod.mujoco._equilibrium import (  # noqa: E402
    EquilibriumResult,
    PointLoad,
    apply_loads,
    settle,
    static_equilibrium,
)
from softrod.mujoco._kinematic_body import KinematicRod  # noqa: E402
from softrod.mujoco._layout import ChainLayout, chain_layout, first_mode_frequency, split_links  # noqa: E402
from softrod.mujoco._magnetic import FieldSource, MagneticField, point_dipole_field  # noqa: E402
from softrod.mujoco._options import MAX_LINKS, MujocoOptions  # noqa: E402
from softrod.mujoco._render import Renderer, render_image, render_video  # noqa: E402
from softrod.mujoco._tendon_friction import TendonFriction, friction_sequence  # noqa: E402

__all__ = [
    "CONTYPE_OBJECT",
    "CONTYPE_RIGID",
    "MAX_SOFT_ROBOTS",
    "OBJECT_AFFINITY",
    "RIGID_AFFINITY",
    "ChainInfo",
    "ChainLayout",
    "EquilibriumResult",
    "FieldSource",
    "KinematicRod",
    "MagneticField",
    "MujocoOptions",
    "MAX_LINKS",
    "PointLoad",
    "Renderer",
    "TendonFriction",
    "add_robot",
    "apply_loads",
    "build_spec",
    "chain_info",
    "chain_layout",
    "configure_spec",
    "first_mode_frequency",
    "friction_sequence",
    "point_dipole_field",
    "render_image",
    "render_video",
    "resolve_options",
    "settle",
    "soft_collision_bits",
    "split_links",
    "static_equilibrium",
]
