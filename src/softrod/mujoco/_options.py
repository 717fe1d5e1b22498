"""Typed options of the MuJoCo rigid-link model (pydantic; round-trips through YAML).

Defaults were chosen by measurement (`softrod bench mujoco`, docs/mujoco.md):

* `integrator="discrete"`: MuJoCo 4's position-implicit integrator. Joint stiffness EI/h of a
  fine chain puts the highest link modes far above 1/timestep (about 5e4 rad/s for the seed-002
  steel rod at N = 50); explicit-in-position integrators need damping of at least timestep/2
  times the stiffness to stay stable, `discrete` is stable for any stiffness and costs the same.
* `timestep=0.002` s (500 Hz), the top of the seed-002 practical range.
* `damping_ratio=0.005`: the upper end of the 0.002-0.005 the seed-002 paper quotes, applied as
  stiffness-proportional joint damping c = beta k with beta = 2 zeta / omega_1.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from softrod.description import Spec

__all__ = ["MujocoOptions", "INTEGRATORS", "MAX_LINKS"]

INTEGRATORS = ("discrete", "implicitfast", "implicit", "euler", "rk4")

#: Most links a chain may have. Building grows faster than linearly in N (measured here with
#: `softrod mjcf tdcr3`: 300 links 10 s / 0.2 GB, 1000 links over 120 s; 3000 used 3.6 GB);
#: the O(1/N^2) chain error is far below 1e-4 of the length from N = 50 on, so 300 is ample.
MAX_LINKS = 300


class MujocoOptions(Spec):
    """How a described robot becomes a MuJoCo rigid-link chain, and the solver options."""

    links: int = Field(
        default=30, description="Number of rigid links N (= 3-DOF elastic joints), >= segments."
    )
    damping_ratio: float = Field(
        default=0.005,
        description="First-mode damping ratio zeta; joint damping = 2 zeta / omega_1 x stiffness.",
    )
    damping_time: float | None = Field(
        default=None,
        description="Stiffness-proportional damping factor beta [s]; overrides damping_ratio.",
    )
    hinge_order: Literal["alternating", "xyz"] = Field(
        default="alternating",
        description=(
            "Order of the three hinges per joint. 'alternating' flips x-y-z / z-y-x on every "
            "other joint so the second-order Euler-sequence error cancels pairwise (measured: "
            "docs/mujoco.md); 'xyz' is the plain sequence."
        ),
    )
    axial: bool = Field(
        default=False,
        description="Add an axial slide joint (stiffness EA/h) per element; cosserat models only.",
    )
    shear: bool = Field(
        default=False,
        description="Add two shear slide joints (stiffness GA/h) per element; cosserat only.",
    )
    tendon_routing: Literal["links", "disks"] = Field(
        default="links",
        description=(
            "'links': a routing site at every joint (each link acts as a spacer disk), which "
            "converges to DESIGN.md's parallel routing as N grows; 'disks': sites only at the "
            "described spacer disks (the hardware's discrete routing)."
        ),
    )
    tendon_control: Literal["force", "length"] = Field(
        default="force",
        description=(
            "'force': motor actuators tension_<k>, ctrl = tension [N] (>= 0 pulls). 'length': "
            "pull-only position actuators length_<k>, ctrl = commanded tendon length [m], gain = "
            "the tendon's stiffness [N/m]."
        ),
    )
    max_tension: float = Field(default=100.0, description="Upper ctrl/force limit [N].")
    contact: bool = Field(
        default=True, description="Backbone and disks collide with scene objects (never self)."
    )
    friction: float = Field(default=0.5, description="Sliding friction of backbone and disks.")
    contact_solref: tuple[float, float] = Field(
        default=(0.01, 1.0), description="Contact (timeconst [s], dampratio) of robot geoms."
    )
    contact_solimp: tuple[float, float, float] = Field(
        default=(0.95, 0.99, 0.001), description="Contact impedance (dmin, dmax, width [m])."
    )
    disk_thickness: float | None = Field(
        default=None,
        description="Disk collision thickness [m]; default 0.6 x disk spacing, at most 5 mm.",
    )
    timestep: float = Field(default=0.002, description="Simulation timestep [s].")
    integrator: Literal["discrete", "implicitfast", "implicit", "euler", "rk4"] = Field(
        default="discrete", description="MuJoCo integrator (see the module docstring)."
    )
    gravity: tuple[float, float, float] = Field(
        default=(0.0, 0.0, -9.81), description="World gravity [m/s^2]."
    )

    @model_validator(mode="after")
    def _check(self) -> MujocoOptions:
        if self.links < 1:
            raise ValueError(f"links must be >= 1, got {self.links}")
        if self.links > MAX_LINKS:
            raise ValueError(f"links must be <= {MAX_LINKS}, got {self.links}")
        if self.damping_ratio < 0:
            raise ValueError(f"damping_ratio must be >= 0, got {self.damping_ratio}")
        if self.damping_time is not None and self.damping_time < 0:
            raise ValueError(f"damping_time must be >= 0, got {self.damping_time}")
        for name in ("max_tension", "timestep"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.friction < 0:
            raise ValueError(f"friction must be >= 0, got {self.friction}")
        if self.disk_thickness is not None and not self.disk_thickness > 0:
            raise ValueError(f"disk_thickness must be > 0, got {self.disk_thickness}")
        return self
