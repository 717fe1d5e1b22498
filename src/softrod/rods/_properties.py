"""Derived physical properties of a compiled robot: stiffnesses, masses, buckling, tendon pulls.

What `softrod info` prints, as a library function: `robot_properties(model)` reads the arrays of
a `RodModel` (and the description it came from) and returns a frozen `RobotProperties`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from softrod.rods._model import RodModel

__all__ = ["RobotProperties", "SegmentProperties", "TendonProperties", "robot_properties"]


@dataclass(frozen=True)
class SegmentProperties:
    """One segment: lengths [m], stiffnesses EI, GJ [N m^2] and EA, GA [N], masses [kg]."""

    index: int
    length: float
    s_start: float
    s_end: float
    EI: float
    GJ: float
    EA: float
    GA: float
    mass_per_length: float
    backbone_mass: float
    disks: int
    disk_radius: float | None
    disk_mass: float
    disks_mass: float
    n_tendons: int


@dataclass(frozen=True)
class TendonProperties:
    """One tendon in input order: routing [m, deg], stiffness [N/m] (None when not given),
    straight rest length [m], and `tension_90deg` [N], the tension of this tendon alone that
    turns the tip by 90 degrees under constant curvature."""

    index: int
    segment: int
    offset: float
    angle_deg: float
    stiffness: float | None
    rest_length: float
    tension_90deg: float


@dataclass(frozen=True)
class RobotProperties:
    """Derived properties of a robot (SI units); `to_dict` is the `softrod info --json` record.

    `buckling_load` [N] is Euler's fixed-free column, P_cr = pi^2 EI / (4 L^2), with the
    softest segment's EI and the total length L.
    """

    BUCKLING_FORMULA: ClassVar[str] = (
        "pi^2 EI / (4 L^2): fixed-free column, softest EI, total length"
    )

    robot: str
    model: str
    n_segments: int
    n_tendons: int
    total_length: float
    base_position: tuple[float, float, float]
    base_quaternion: tuple[float, float, float, float]
    segments: tuple[SegmentProperties, ...]
    tendons: tuple[TendonProperties, ...]
    backbone_mass: float
    disks_mass: float
    buckling_load: float

    @property
    def total_mass(self) -> float:
        """Backbone and disks [kg]."""
        return self.backbone_mass + self.disks_mass

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (keys in the order `softrod info --json` prints them)."""
        return {
            "robot": self.robot,
            "model": self.model,
            "n_segments": self.n_segments,
            "n_tendons": self.n_tendons,
            "total_length": self.total_length,
            "base": {
                "position": list(self.base_position),
                "quaternion": list(self.base_quaternion),
            },
            "segments": [vars(s).copy() for s in self.segments],
            "mass": {
                "backbone": self.backbone_mass,
                "disks": self.disks_mass,
                "total": self.total_mass,
            },
            "tendons": [vars(t).copy() for t in self.tendons],
            "buckling_load": self.buckling_load,
            "buckling_formula": self.BUCKLING_FORMULA,
        }


def robot_properties(model: RodModel) -> RobotProperties:
    """Stiffnesses, masses, lengths, tendon layout and buckling load of a compiled robot.

    Parameters
    ----------
    model : a `RodModel` (`softrod.compile_model(robot)`).
    """
    spec = model.spec
    # Per segment: section stiffnesses from the model, disks from the description.
    segments = []
    for j, seg in enumerate(spec.segments):
        segments.append(
            SegmentProperties(
                index=j,
                length=float(model.seg_length[j]),
                s_start=float(model.seg_start[j]),
                s_end=float(model.seg_start[j] + model.seg_length[j]),
                EI=float(model.K_bt[j, 0]),
                GJ=float(model.K_bt[j, 2]),
                EA=float(model.K_se[j, 2]),
                GA=float(model.K_se[j, 0]),
                mass_per_length=float(model.rho_A[j]),
                backbone_mass=float(model.rho_A[j] * model.seg_length[j]),
                disks=seg.disks,
                disk_radius=seg.disk_radius,
                disk_mass=seg.disk_mass,
                disks_mass=seg.disks * seg.disk_mass,
                n_tendons=len(seg.tendons),
            )
        )
    # Per tendon: tip rotation per newton is d / EI_k summed over each segment k it passes.
    tendons = []
    for i, (j, tendon) in enumerate(spec.tendon_list()):
        compliance = sum(
            tendon.offset * model.seg_length[k] / model.K_bt[k, 0] for k in range(j + 1)
        )
        tendons.append(
            TendonProperties(
                index=i,
                segment=j,
                offset=tendon.offset,
                angle_deg=tendon.angle_deg,
                stiffness=tendon.stiffness,
                rest_length=float(model.tendon_rest_length[i]),
                tension_90deg=float((math.pi / 2) / compliance),
            )
        )
    # Buckling: the softest segment's EI over the whole length (a conservative column).
    length = model.total_length
    EI_min = float(model.K_bt[:, 0].min())
    return RobotProperties(
        robot=spec.name,
        model=spec.model,
        n_segments=spec.n_segments,
        n_tendons=spec.n_tendons,
        total_length=length,
        base_position=spec.base.position,
        base_quaternion=spec.base.quaternion,
        segments=tuple(segments),
        tendons=tuple(tendons),
        backbone_mass=float((model.rho_A * model.seg_length).sum()),
        disks_mass=float(model.node_point_mass.sum()),
        buckling_load=math.pi**2 * EI_min / (4.0 * length**2),
    )
