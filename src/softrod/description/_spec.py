"""Robot description: pydantic models for the format in DESIGN.md (SI units throughout).

A `RobotSpec` is the editable, serializable description of a continuum robot. It holds no
numerics; `softrod.rods.compile_model` turns it into arrays for the solvers.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError, model_validator

from softrod.description._base import Spec
from softrod.description._calibration import CalibrationSpec
from softrod.description._io import DescriptionError

__all__ = [
    "BackboneSpec",
    "BackboneOverride",
    "BaseSpec",
    "TendonSpec",
    "TendonFrictionSpec",
    "ChamberSpec",
    "MagnetSpec",
    "MomentActuatorSpec",
    "PneumaticChamberSpec",
    "PneumaticActuatorSpec",
    "SegmentSpec",
    "RobotSpec",
    "DescriptionError",
    "load_robot",
    "robot_json_schema",
]


def _check_positive(name: str, value: float | None) -> None:
    if value is not None and not value > 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")


class BackboneSpec(Spec):
    """Backbone material and cross-section.

    Give exactly one of `poisson_ratio` and `shear_modulus`, and either `radius` (solid circular
    section) or all of `second_moment`, `polar_moment` and `area`.
    """

    youngs_modulus: float = Field(description="Young's modulus E [Pa].")
    poisson_ratio: float | None = Field(
        default=None, description="Poisson ratio nu; G = E / (2 (1 + nu))."
    )
    shear_modulus: float | None = Field(default=None, description="Shear modulus G [Pa].")
    density: float = Field(default=0.0, description="Mass density rho [kg/m^3].")
    radius: float | None = Field(
        default=None, description="Radius of a solid circular section [m]."
    )
    second_moment: float | None = Field(
        default=None, description="Second moment of area I about a bending axis [m^4]."
    )
    polar_moment: float | None = Field(default=None, description="Polar moment J [m^4].")
    area: float | None = Field(default=None, description="Cross-section area A [m^2].")
    precurvature: tuple[float, float, float] = Field(
        default=(0.0, 0.0, 0.0),
        description="Stress-free body-frame curvature u* = (u_x, u_y, u_z) [1/m].",
    )

    @model_validator(mode="after")
    def _check(self) -> BackboneSpec:
        _check_positive("youngs_modulus", self.youngs_modulus)
        if self.density < 0:
            raise ValueError(f"density must be >= 0, got {self.density!r}")
        if (self.poisson_ratio is None) == (self.shear_modulus is None):
            raise ValueError(
                "give exactly one of poisson_ratio and shear_modulus, got "
                f"poisson_ratio={self.poisson_ratio!r}, shear_modulus={self.shear_modulus!r}"
            )
        if self.poisson_ratio is not None and not -1.0 < self.poisson_ratio <= 0.5:
            raise ValueError(f"poisson_ratio must be in (-1, 0.5], got {self.poisson_ratio!r}")
        _check_positive("shear_modulus", self.shear_modulus)
        explicit = (self.second_moment, self.polar_moment, self.area)
        if self.radius is not None:
            if any(x is not None for x in explicit):
                raise ValueError(
                    "give either radius or (second_moment, polar_moment, area), not both"
                )
            _check_positive("radius", self.radius)
        else:
            if any(x is None for x in explicit):
                raise ValueError(
                    "give radius, or all of second_moment, polar_moment and area; got "
                    f"second_moment={self.second_moment!r}, polar_moment={self.polar_moment!r}, "
                    f"area={self.area!r}"
                )
            _check_positive("second_moment", self.second_moment)
            _check_positive("polar_moment", self.polar_moment)
            _check_positive("area", self.area)
        return self

    # Derived section properties (SI); kept as properties so the spec stays the single source.
    @property
    def G(self) -> float:
        """Shear modulus [Pa]."""
        if self.shear_modulus is not None:
            return self.shear_modulus
        assert self.poisson_ratio is not None
        return self.youngs_modulus / (2.0 * (1.0 + self.poisson_ratio))

    @property
    def I(self) -> float:  # noqa: E743
        """Second moment of area [m^4]."""
        if self.radius is not None:
            return math.pi * self.radius**4 / 4.0
        assert self.second_moment is not None
        return self.second_moment

    @property
    def J(self) -> float:
        """Polar moment [m^4]."""
        if self.radius is not None:
            return math.pi * self.radius**4 / 2.0
        assert self.polar_moment is not None
        return self.polar_moment

    @property
    def A(self) -> float:
        """Cross-section area [m^2]."""
        if self.radius is not None:
            return math.pi * self.radius**2
        assert self.area is not None
        return self.area

    @property
    def outer_radius(self) -> float:
        """Radius used for drawing and contact [m] (equivalent circle when not given)."""
        return self.radius if self.radius is not None else math.sqrt(self.A / math.pi)


class BackboneOverride(Spec):
    """Per-segment backbone fields; any field given replaces the robot's backbone field."""

    youngs_modulus: float | None = None
    poisson_ratio: float | None = None
    shear_modulus: float | None = None
    density: float | None = None
    radius: float | None = None
    second_moment: float | None = None
    polar_moment: float | None = None
    area: float | None = None
    precurvature: tuple[float, float, float] | None = None


class BaseSpec(Spec):
    """Pose of the robot's base frame in the world; the backbone leaves along base +z."""

    position: tuple[float, float, float] = Field(default=(0.0, 0.0, 0.0), description="[m]")
    quaternion: tuple[float, float, float, float] = Field(
        default=(1.0, 0.0, 0.0, 0.0), description="Orientation (w, x, y, z), normalized on use."
    )

    @model_validator(mode="after")
    def _check(self) -> BaseSpec:
        norm = math.sqrt(sum(q * q for q in self.quaternion))
        if norm < 1e-9:
            raise ValueError(f"quaternion must be non-zero, got {list(self.quaternion)}")
        return self


class TendonFrictionSpec(Spec):
    """Capstan friction of a tendon at the holes it passes (docs/friction.md): the tension drops
    by exp(-mu theta) over a wrap angle theta while the tendon is pulled in and rises by
    exp(+mu theta) while it is let out; the static solver sees it in
    `softrod.rods.solve_sequence`, which carries the tension profile from one step to the next.
    """

    mu: float = Field(default=0.0, description="Coulomb friction coefficient, tendon on hole [-].")
    stick_band: float = Field(
        default=0.0,
        description="Reversal of the tension command [N] smaller than this keeps the tendon "
        "stuck (its tension profile unchanged); 0 for none.",
    )
    hole_wrap: float = Field(
        default=0.0,
        description="Wrap angle [rad] every hole adds to the tendon's path even where the robot "
        "is straight (hole clearance and misalignment); 0 for none.",
    )

    @model_validator(mode="after")
    def _check(self) -> TendonFrictionSpec:
        for name in ("mu", "stick_band", "hole_wrap"):
            value = getattr(self, name)
            if not value >= 0.0:
                raise ValueError(f"{name} must be >= 0, got {value!r}")
        return self


class TendonSpec(Spec):
    """A tendon through the disks, anchored at the distal end of the segment that lists it.

    Without a routing field it runs straight, parallel to the backbone, at body-frame
    r = offset (cos a, sin a, 0). At most one routing field (docs/routing.md) makes it follow a
    general path that starts at the base at that same r (the hole in the base):
    `pitch` a helix r(s) = offset (cos(a + 2 pi s / pitch), sin(...), 0); `holes`, `angles_deg`
    or `offsets` one entry per disk it passes (segments 0..its own, base to anchor), with
    straight pieces (in the body frame) between consecutive holes.
    """

    offset: float = Field(description="Distance from the backbone centreline [m].")
    angle_deg: float = Field(description="Angular position a about body z [deg].")
    stiffness: float | None = Field(
        default=None, description="Axial stiffness [N/m]; needed for length (position) control."
    )
    friction: TendonFrictionSpec | None = Field(
        default=None,
        description="Friction at the holes; overrides the robot's `tendon_friction`.",
    )
    pitch: float | None = Field(
        default=None,
        description="Helical routing: arc length per turn about the backbone [m] (signed: "
        "> 0 turns toward +angle).",
    )
    holes: list[tuple[float, float]] | None = Field(
        default=None, description="Routing: body-frame hole (x, y) in each disk passed [m]."
    )
    angles_deg: list[float] | None = Field(
        default=None, description="Routing: hole angle in each disk passed at `offset` [deg]."
    )
    offsets: list[float] | None = Field(
        default=None, description="Routing: hole offset in each disk passed at `angle_deg` [m]."
    )

    #: The routing fields; at most one per tendon.
    ROUTING_FIELDS: ClassVar[tuple[str, ...]] = ("pitch", "holes", "angles_deg", "offsets")

    @model_validator(mode="after")
    def _check(self) -> TendonSpec:
        _check_positive("offset", self.offset)
        _check_positive("stiffness", self.stiffness)
        given = [name for name in self.ROUTING_FIELDS if getattr(self, name) is not None]
        if len(given) > 1:
            raise ValueError(
                f"a tendon takes one routing form, got {' and '.join(given)} (docs/routing.md)"
            )
        if self.pitch is not None and self.pitch == 0.0:
            raise ValueError("pitch must be non-zero (a helix's arc length per turn), got 0.0")
        for off in self.offsets or ():
            _check_positive("offsets[]", off)
        return self

    @property
    def routing(self) -> str:
        """'straight' or the routing field in use ('pitch', 'holes', 'angles_deg', 'offsets')."""
        for name in self.ROUTING_FIELDS:
            if getattr(self, name) is not None:
                return name
        return "straight"

    def hole_positions(self) -> list[tuple[float, float]] | None:
        """Body-frame (x, y) of the hole in each disk passed [m] for the per-disk forms; None
        for straight and helical routing."""
        if self.holes is not None:
            return [(float(x), float(y)) for x, y in self.holes]
        a = math.radians(self.angle_deg)
        if self.angles_deg is not None:
            return [
                (self.offset * math.cos(math.radians(b)), self.offset * math.sin(math.radians(b)))
                for b in self.angles_deg
            ]
        if self.offsets is not None:
            return [(d * math.cos(a), d * math.sin(a)) for d in self.offsets]
        return None


#: Most calibration coefficients of a chamber's effective area (fourth order, like seed 003).
_MAX_AREA_COEFFS = 4
#: Points at which a chamber's effective area is checked over its pressure range.
_AREA_CHECK_POINTS = 101


class ChamberSpec(Spec):
    """A pressurised chamber (or bellows) along a segment, a force actuator (docs/actuators.md).

    Gauge pressure p [Pa] gives the force p A_eff(p) [N] along the chamber line at body-frame
    r = offset (cos a, sin a, 0): a bending moment r x (p A_eff e_z) about the backbone (a chamber
    at +x bends the segment toward -x) and an axial force p A_eff (extensible models), uniform
    over the segment. A_eff(p) = area (1 + sum_k area_polynomial[k] p^(k+1)) maps a real
    actuator's measured force onto this model; without it A_eff = area.
    """

    area: float = Field(description="Effective pressurised area A [m^2].")
    offset: float = Field(description="Distance of the chamber line from the backbone [m].")
    angle_deg: float = Field(default=0.0, description="Angular position a about body z [deg].")
    pressure_range: tuple[float, float] | None = Field(
        default=None, description="Gauge pressures (min, max) the chamber may take [Pa]."
    )
    area_polynomial: list[float] = Field(
        default_factory=list,
        description="Calibration: coefficients c_1..c_4 [1/Pa^k] of the relative area change, "
        "A_eff(p) = area (1 + c_1 p + ... + c_4 p^4); empty: constant area.",
    )

    @model_validator(mode="after")
    def _check(self) -> ChamberSpec:
        _check_positive("area", self.area)
        if self.offset < 0:
            raise ValueError(f"offset must be >= 0, got {self.offset!r}")
        if len(self.area_polynomial) > _MAX_AREA_COEFFS:
            raise ValueError(
                f"area_polynomial must have at most {_MAX_AREA_COEFFS} coefficients, got "
                f"{len(self.area_polynomial)}"
            )
        if self.pressure_range is not None:
            lo, hi = self.pressure_range
            if not lo < hi:
                raise ValueError(
                    f"pressure_range must satisfy min < max [Pa], got {list(self.pressure_range)}"
                )
            # The calibrated area must stay positive where the chamber is used.
            for i in range(_AREA_CHECK_POINTS):
                p = lo + (hi - lo) * i / (_AREA_CHECK_POINTS - 1)
                if not self.effective_area(p) > 0:
                    raise ValueError(
                        f"area_polynomial must keep the effective area > 0 over pressure_range, "
                        f"got {self.effective_area(p):.4g} m^2 at {p:.6g} Pa"
                    )
        return self

    @property
    def body_position(self) -> tuple[float, float, float]:
        """Chamber line's body-frame position r (3,) [m]."""
        a = math.radians(self.angle_deg)
        return (self.offset * math.cos(a), self.offset * math.sin(a), 0.0)

    @property
    def moment_arm(self) -> tuple[float, float, float]:
        """r x e_z (3,) [m]: the body-frame bending moment per unit force p A_eff [N m / N]."""
        rx, ry, _ = self.body_position
        return (ry, -rx, 0.0)

    def effective_area(self, pressure: float) -> float:
        """A_eff(p) [m^2] at gauge pressure p [Pa]."""
        corr = sum(c * pressure ** (k + 1) for k, c in enumerate(self.area_polynomial))
        return float(self.area * (1.0 + corr))

    def force(self, pressure: float) -> float:
        """Axial chamber force p A_eff(p) [N] at gauge pressure p [Pa]."""
        return float(pressure * self.effective_area(pressure))

    def equivalent_pressure(self, pressure: float) -> float:
        """The pressure that gives force(p) with the constant `area` [Pa] (linear models' input)."""
        return self.force(pressure) / self.area


class MagnetSpec(Spec):
    """A permanent dipole fixed in the body frame at arc length s within its segment.

    In a field B [T] it feels the torque m x B [N m] and, in a field gradient, the force
    (grad B)^T m [N] (grad B[i, j] = dB_i / dx_j), both with m rotated into the world frame.
    """

    s: float = Field(description="Arc length from the segment's start [m], 0 <= s <= length.")
    moment: tuple[float, float, float] = Field(
        description="Dipole moment m in the body frame [A m^2]."
    )


class MomentActuatorSpec(Spec):
    """A moment actuator along a segment: a uniform internal body-frame moment (docs/actuators.md).

    Input tau [-] gives the internal actuation moment tau m [N m] in the body frame, uniform over
    the segment (SoMo's equal torque on every joint of an axis; a torsion axis is m along e_z).
    It shifts the section balance, K_bt (u - u*) - tau m = R^T M, so on its own it bends (or
    twists) a uniform segment to the constant strain u - u* = tau K_bt^-1 m.
    """

    moment: tuple[float, float, float] = Field(
        description="Body-frame moment m per unit input [N m]; the input tau gives tau m."
    )


#: Points at which a pneumatic strain polynomial is checked over its pressure range.
_STRAIN_CHECK_POINTS = 201
#: Slack on the strain checks: a least-squares fit may put eps(0) a hair above zero and wiggle
#: by round-off; anything larger is a real expansion or a non-monotone (non-invertible) fit.
_STRAIN_CHECK_SLACK = 1e-9


class PneumaticChamberSpec(Spec):
    """McKibben (contracting) actuators on one side of a planar pneumatic segment."""

    side: Literal["left", "right"] = Field(
        description="Side of the backbone, looking from the base toward the tip; pressurising "
        "the right side bends the segment clockwise in the arm's plane (ALGORITHMS.md D.1)."
    )
    count: int = Field(
        default=1, description="Actuators on this side, pressurised together (one supply)."
    )

    @model_validator(mode="after")
    def _check(self) -> PneumaticChamberSpec:
        if self.count < 1:
            raise ValueError(f"count must be >= 1, got {self.count!r}")
        return self


class PneumaticActuatorSpec(Spec):
    """Antagonistic pneumatic actuation of a planar segment (ALGORITHMS.md D.1).

    One side is pressurised at a time; its actuators contract by the strain
    eps(|p|) = sum_k strain_polynomial[k] |p|^k (|p| in Pa, eps < 0 is contraction) while the
    other side keeps the rest length, which bends the segment with curvature
    kappa = -2 eps / (width (2 + eps)) and shortens its backbone to (1 + eps / 2) length.
    """

    type: Literal["pneumatic"] = Field(default="pneumatic", description="Actuator type.")
    width: float = Field(
        description="Side-to-side distance t between the left and right actuators [m]."
    )
    chambers: list[PneumaticChamberSpec] = Field(
        default_factory=lambda: [
            PneumaticChamberSpec(side="left"),
            PneumaticChamberSpec(side="right"),
        ],
        description="Actuated sides (at most one entry per side).",
    )
    pressure_range: tuple[float, float] = Field(
        description="Gauge pressure (min, max) a chamber can hold [Pa]; 0 <= min < max."
    )
    strain_polynomial: list[float] = Field(
        description="Coefficients c_0..c_4 (ascending powers, at most fourth order) of the "
        "actuator strain eps(|p|) with |p| in Pa; contraction (eps <= 0, eps > -1), not "
        "increasing with pressure over pressure_range."
    )

    @model_validator(mode="after")
    def _check(self) -> PneumaticActuatorSpec:
        _check_positive("width", self.width)
        if not self.chambers:
            raise ValueError("chambers must list at least one side, got []")
        sides = [c.side for c in self.chambers]
        if len(set(sides)) != len(sides):
            raise ValueError(f"chambers must name each side at most once, got {sides}")
        lo, hi = self.pressure_range
        if not 0.0 <= lo < hi:
            raise ValueError(
                f"pressure_range must satisfy 0 <= min < max [Pa], got {list(self.pressure_range)}"
            )
        if not 1 <= len(self.strain_polynomial) <= 5:
            raise ValueError(
                "strain_polynomial must have 1 to 5 coefficients (at most fourth order), "
                f"got {len(self.strain_polynomial)}"
            )
        # Sample eps over the range: contraction only, and monotone so that it inverts uniquely.
        eps = [
            self.strain(hi * i / (_STRAIN_CHECK_POINTS - 1)) for i in range(_STRAIN_CHECK_POINTS)
        ]
        worst = max(eps)
        if worst > _STRAIN_CHECK_SLACK or min(eps) <= -1.0:
            raise ValueError(
                "strain_polynomial must give a contraction strain in (-1, 0] over "
                f"pressure_range, got values in [{min(eps):.4g}, {worst:.4g}]"
            )
        for i in range(1, len(eps)):
            if eps[i] > eps[i - 1] + _STRAIN_CHECK_SLACK:
                p = hi * i / (_STRAIN_CHECK_POINTS - 1)
                raise ValueError(
                    "strain_polynomial must not increase with pressure (the model inverts it), "
                    f"got a rise at {p:.6g} Pa"
                )
        return self

    def strain(self, pressure: float) -> float:
        """Actuator strain eps at gauge pressure |pressure| [Pa] (dimensionless)."""
        p = abs(pressure)
        return float(sum(c * p**k for k, c in enumerate(self.strain_polynomial)))


class SegmentSpec(Spec):
    """One segment of the backbone with its spacer disks and the tendons anchored at its end."""

    length: float = Field(description="Arc length of the segment [m].")
    disks: int = Field(
        default=0, description="Spacer disks, evenly spaced; the last one at the segment's end."
    )
    disk_radius: float | None = Field(default=None, description="Spacer disk radius [m].")
    disk_mass: float = Field(default=0.0, description="Mass of one disk [kg].")
    tendons: list[TendonSpec] = Field(default_factory=list)
    backbone: BackboneOverride | None = Field(
        default=None, description="Fields that override the robot's backbone in this segment."
    )
    extension_range: tuple[float, float] | None = Field(
        default=None,
        description="For extensible segments: allowed change of length (min, max) [m].",
    )
    actuator: PneumaticActuatorSpec | None = Field(
        default=None,
        description="Pneumatic actuation of a planar segment (type: pneumatic); its support "
        "plates are the segment's disks. A kinematic (strain) model used by the PCC planner; "
        "`chambers` is the force model every mechanics model takes.",
    )
    chambers: list[ChamberSpec] = Field(
        default_factory=list,
        description="Pressurised chambers along the segment; one pressure input each.",
    )
    magnets: list[MagnetSpec] = Field(
        default_factory=list, description="Permanent dipoles fixed in the segment's body frame."
    )
    magnetization: tuple[float, float, float] | None = Field(
        default=None,
        description="Body-frame magnetization M [A/m] of the backbone; dipole density M A "
        "[A m] per unit length.",
    )
    moment_actuators: list[MomentActuatorSpec] = Field(
        default_factory=list,
        description="Uniform internal body-frame moments over the segment; one `moments` input "
        "each.",
    )

    @model_validator(mode="after")
    def _check(self) -> SegmentSpec:
        _check_positive("length", self.length)
        if self.extension_range is not None:
            lo, hi = self.extension_range
            if not lo <= 0.0 <= hi or self.length + lo <= 0.0:
                raise ValueError(
                    "extension_range must satisfy min <= 0 <= max and length + min > 0, "
                    f"got {list(self.extension_range)}"
                )
        if self.disks < 0:
            raise ValueError(f"disks must be >= 0, got {self.disks!r}")
        _check_positive("disk_radius", self.disk_radius)
        if self.disk_mass < 0:
            raise ValueError(f"disk_mass must be >= 0, got {self.disk_mass!r}")
        for m, magnet in enumerate(self.magnets):
            if not 0.0 <= magnet.s <= self.length:
                raise ValueError(
                    f"magnets[{m}].s must be within the segment, 0 <= s <= length "
                    f"({self.length}), got {magnet.s}"
                )
        return self


class RobotSpec(Spec):
    """A continuum robot: one backbone (possibly varied per segment), segments, tendons, base."""

    spec_what: ClassVar[str] = "robot description"

    name: str = Field(default="robot", description="Free-form name.")
    model: Literal["kirchhoff", "cosserat"] = Field(
        default="kirchhoff",
        description="kirchhoff: inextensible and unshearable; cosserat: shear and extension.",
    )
    backbone: BackboneSpec
    base: BaseSpec = Field(default_factory=BaseSpec)
    segments: list[SegmentSpec] = Field(min_length=1)
    calibration: CalibrationSpec | None = Field(
        default=None, description="Mapping onto a recording (`softrod hardware fit`); no mechanics."
    )
    tendon_friction: TendonFrictionSpec | None = Field(
        default=None,
        description="Friction of every tendon at its holes unless the tendon sets `friction`.",
    )

    @model_validator(mode="after")
    def _check(self) -> RobotSpec:
        # Per-segment overrides must produce a valid backbone.
        for j in range(len(self.segments)):
            try:
                self.segment_backbone(j)
            except ValidationError as err:
                first = err.errors()[0]
                field = ".".join(str(x) for x in first["loc"])
                where = f"segments[{j}].backbone" + (f".{field}" if field else "")
                raise ValueError(f"{where}: {_clean_msg(first['msg'])}") from None
        # A tendon of segment k runs through segments 0..k: each needs disks that hold it.
        for k, seg in enumerate(self.segments):
            for t, tendon in enumerate(seg.tendons):
                for j in range(k + 1):
                    holder = self.segments[j]
                    if holder.disks < 1:
                        raise ValueError(
                            f"segments[{j}].disks must be >= 1 to guide tendon "
                            f"segments[{k}].tendons[{t}], got {holder.disks}"
                        )
                    if holder.disk_radius is None:
                        raise ValueError(
                            f"segments[{j}].disk_radius is required to guide tendon "
                            f"segments[{k}].tendons[{t}]"
                        )
                    if tendon.offset > holder.disk_radius:
                        raise ValueError(
                            f"segments[{k}].tendons[{t}].offset must be <= "
                            f"segments[{j}].disk_radius ({holder.disk_radius}), "
                            f"got {tendon.offset}"
                        )
        self._check_routing()
        # A chamber lies within its segment's disks (or, without disks, its backbone section).
        for j, seg in enumerate(self.segments):
            if seg.disk_radius is not None:
                limit, what = seg.disk_radius, f"segments[{j}].disk_radius"
            else:
                limit = self.segment_backbone(j).outer_radius
                what = f"the backbone radius of segments[{j}] (no disk_radius)"
            for c, chamber in enumerate(seg.chambers):
                if chamber.offset > limit * (1.0 + 1e-12):
                    raise ValueError(
                        f"segments[{j}].chambers[{c}].offset must be <= {what} "
                        f"({limit:.6g}), got {chamber.offset}"
                    )
        return self

    def _check_routing(self) -> None:
        """Per-disk routing: one hole per disk passed, each within its disk's radius."""
        for k, seg in enumerate(self.segments):
            for t, tendon in enumerate(seg.tendons):
                holes = tendon.hole_positions()
                if holes is None:
                    continue
                name = f"segments[{k}].tendons[{t}].{tendon.routing}"
                radii = [self.segments[j].disk_radius or 0.0 for j in range(k + 1)]
                per_disk = [r for j in range(k + 1) for r in [radii[j]] * self.segments[j].disks]
                if len(holes) != len(per_disk):
                    raise ValueError(
                        f"{name} must have one entry per disk the tendon passes "
                        f"({len(per_disk)}: the disks of segments 0..{k}), got {len(holes)}"
                    )
                for i, ((x, y), limit) in enumerate(zip(holes, per_disk, strict=True)):
                    if math.hypot(x, y) > limit * (1.0 + 1e-12):
                        raise ValueError(
                            f"{name}[{i}] lies {math.hypot(x, y):.6g} m from the backbone, "
                            f"outside its disk (disk_radius {limit})"
                        )

    def segment_backbone(self, j: int) -> BackboneSpec:
        """The backbone of segment `j` after applying its override (a validated BackboneSpec)."""
        over = self.segments[j].backbone
        if over is None:
            return self.backbone
        fields = self.backbone.model_dump()
        given = over.model_dump(exclude_none=True)
        # A new section or shear law replaces the old one instead of conflicting with it.
        if "radius" in given:
            fields.update(second_moment=None, polar_moment=None, area=None)
        if {"second_moment", "polar_moment", "area"} & given.keys():
            fields["radius"] = None
        if "shear_modulus" in given:
            fields["poisson_ratio"] = None
        if "poisson_ratio" in given:
            fields["shear_modulus"] = None
        fields.update(given)
        return BackboneSpec.model_validate(fields)

    # Convenience counts and layouts used across layers.
    @property
    def n_segments(self) -> int:
        return len(self.segments)

    @property
    def n_tendons(self) -> int:
        return sum(len(s.tendons) for s in self.segments)

    @property
    def n_chambers(self) -> int:
        """Number of chambers, all segments."""
        return sum(len(s.chambers) for s in self.segments)

    @property
    def n_pressures(self) -> int:
        """Length of the `pressures` input (one per chamber, segment by segment)."""
        return self.n_chambers

    @property
    def n_moments(self) -> int:
        """Length of the `moments` input (one per moment actuator, segment by segment)."""
        return sum(len(s.moment_actuators) for s in self.segments)

    def moment_actuator_list(self) -> list[tuple[int, MomentActuatorSpec]]:
        """Moment actuators in input (`moments`) order as (segment index, spec)."""
        return [(j, a) for j, s in enumerate(self.segments) for a in s.moment_actuators]

    @property
    def n_magnets(self) -> int:
        """Number of point dipoles, all segments."""
        return sum(len(s.magnets) for s in self.segments)

    @property
    def is_magnetic(self) -> bool:
        """True when a field acts on the robot (point dipoles or a magnetized segment)."""
        return self.n_magnets > 0 or any(
            s.magnetization is not None and any(s.magnetization) for s in self.segments
        )

    @property
    def total_length(self) -> float:
        return float(sum(s.length for s in self.segments))

    def tendon_list(self) -> list[tuple[int, TendonSpec]]:
        """Tendons in input order as (segment index, spec)."""
        return [(j, t) for j, s in enumerate(self.segments) for t in s.tendons]

    def tendon_path_xy(self, index: int, s: float) -> tuple[float, float]:
        """Body-frame (x, y) [m] of tendon `index` (input order) at arc length s [m] from the
        base: its routing (docs/routing.md), linear in s between the base hole and the holes of
        consecutive disks for the per-disk forms (held at the last hole past the anchor)."""
        j, tendon = self.tendon_list()[index]
        a = math.radians(tendon.angle_deg)
        if tendon.pitch is not None:
            b = a + 2.0 * math.pi * s / tendon.pitch
            return tendon.offset * math.cos(b), tendon.offset * math.sin(b)
        holes = tendon.hole_positions()
        if holes is None:
            return tendon.offset * math.cos(a), tendon.offset * math.sin(a)
        knots = [(0.0, (tendon.offset * math.cos(a), tendon.offset * math.sin(a)))]
        start = 0.0
        for seg in self.segments[: j + 1]:
            knots += [
                (start + seg.length * i / seg.disks, (0.0, 0.0)) for i in range(1, seg.disks + 1)
            ]
            start += seg.length
        knots = [knots[0]] + [(sk, xy) for (sk, _), xy in zip(knots[1:], holes, strict=True)]
        if s >= knots[-1][0]:
            return knots[-1][1]
        for (s0, (x0, y0)), (s1, (x1, y1)) in zip(knots[:-1], knots[1:], strict=True):
            if s <= s1:
                f = (max(s, s0) - s0) / (s1 - s0)
                return x0 + f * (x1 - x0), y0 + f * (y1 - y0)
        return knots[-1][1]

    def chamber_list(self) -> list[tuple[int, ChamberSpec]]:
        """Chambers in input (pressure) order as (segment index, spec)."""
        return [(j, c) for j, s in enumerate(self.segments) for c in s.chambers]

    def magnet_list(self) -> list[tuple[int, float, MagnetSpec]]:
        """Point dipoles as (segment index, arc length from the robot's base [m], spec)."""
        out: list[tuple[int, float, MagnetSpec]] = []
        start = 0.0
        for j, seg in enumerate(self.segments):
            out.extend((j, start + m.s, m) for m in seg.magnets)
            start += seg.length
        return out


def _clean_msg(msg: str) -> str:
    return msg.removeprefix("Value error, ")


def load_robot(source: str | Path | dict[str, Any] | RobotSpec) -> RobotSpec:
    """Load and validate a robot description.

    Parameters
    ----------
    source : path to a YAML (.yaml/.yml) or JSON (.json) file, a dict, or a RobotSpec.

    Raises
    ------
    DescriptionError (a ValueError) naming the field path, the value and what was expected.
    """
    return RobotSpec.load(source)


def robot_json_schema() -> dict[str, Any]:
    """JSON Schema of the robot description format."""
    return RobotSpec.model_json_schema()
