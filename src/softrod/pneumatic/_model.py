"""Compile a RobotSpec with pneumatic segments into the arrays of the planar arm models.

The planar pneumatic arm of ALGORITHMS.md D lives in its own plane: the base sits at the origin
with its tangent along +x, y is to the left of the base tangent and angles are counter-clockwise.
Pressurising a segment's right side makes its actuators contract and bends it clockwise
(negative curvature); the left side bends it counter-clockwise. A configuration is the signed
pressure of every segment, q = (p_1, ..., p_n) [Pa]: p > 0 pressurises the right side, p < 0
the left side (only one side at a time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from softrod.description import RobotSpec, load_robot

__all__ = ["PneumaticArm", "compile_pneumatic", "BEND_SIGN", "MAX_POLY_TERMS"]

#: Frame convention sigma of D.1: right-side pressure (p > 0) bends clockwise (kappa < 0).
BEND_SIGN = -1.0
#: Strain polynomials are stored padded to fourth order (five coefficients).
MAX_POLY_TERMS = 5


@dataclass(frozen=True, eq=False)
class PneumaticArm:
    """Numeric description of a planar pneumatic arm (arrays only; SI units).

    Attributes
    ----------
    spec : the RobotSpec it was compiled from.
    rest_length : (n_seg,) unpressurised segment length l_0 [m].
    width : (n_seg,) side-to-side actuator distance t [m].
    pressure_lower, pressure_upper : (n_seg,) bounds of the signed pressure [Pa]
        (-p_max where the segment has a left side, else 0; +p_max where it has a right side).
    pressure_max : (n_seg,) largest gauge pressure of a chamber [Pa].
    strain_coeffs : (n_seg, 5) ascending coefficients of eps(|p|), |p| in Pa.
    strain_min : (n_seg,) strain at pressure_max (the largest contraction, < 0).
    curvature_max : (n_seg,) |kappa| at pressure_max [1/m].
    plate_seg : (n_plates,) segment of each support plate (the base plate counts as segment 0).
    plate_frac : (n_plates,) arc-length fraction of each plate within its segment.
    plate_mass : (n_plates,) [kg]; bending_stiffness : (n_seg,) EI [N m^2];
    mass_per_length : (n_seg,) backbone mass per unit length [kg/m].
    half_width : (n_seg,) half the segment width, the collision radius of its backbone [m].
    """

    spec: RobotSpec
    rest_length: np.ndarray
    width: np.ndarray
    pressure_lower: np.ndarray
    pressure_upper: np.ndarray
    pressure_max: np.ndarray
    strain_coeffs: np.ndarray
    strain_min: np.ndarray
    curvature_max: np.ndarray
    plate_seg: np.ndarray
    plate_frac: np.ndarray
    plate_mass: np.ndarray
    bending_stiffness: np.ndarray
    mass_per_length: np.ndarray
    half_width: np.ndarray

    @property
    def n_segments(self) -> int:
        return int(self.rest_length.shape[0])

    @property
    def n_plates(self) -> int:
        """Points of the backbone B (support plates, base plate included)."""
        return int(self.plate_seg.shape[0])

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def total_rest_length(self) -> float:
        return float(self.rest_length.sum())

    def check_pressures(self, q: np.ndarray, name: str = "q") -> np.ndarray:
        """`q` as a float array (..., n_seg) within the pressure box, else a ValueError."""
        arr = np.asarray(q, dtype=float)
        if arr.ndim == 0 or arr.shape[-1] != self.n_segments:
            raise ValueError(
                f"{name} must have {self.n_segments} pressures per configuration (one per "
                f"segment), got shape {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite, got {arr.tolist()}")
        # Round-off from ramps and IK is allowed; anything more is a bad input.
        slack = 1e-9 * self.pressure_max
        if np.any(arr < self.pressure_lower - slack) or np.any(arr > self.pressure_upper + slack):
            raise ValueError(
                f"{name} must lie within [{self.pressure_lower.tolist()}, "
                f"{self.pressure_upper.tolist()}] Pa, got {arr.tolist()}"
            )
        return np.clip(arr, self.pressure_lower, self.pressure_upper)


def _strain_at(coeffs: np.ndarray, p: float) -> float:
    return float(sum(c * p**k for k, c in enumerate(coeffs)))


def compile_pneumatic(robot: RobotSpec | dict | str) -> PneumaticArm:
    """Compile a robot whose segments are all pneumatic into a `PneumaticArm`.

    Raises ValueError naming the field when a segment lacks `actuator`, has no support plates
    (`disks`) or has a pressure range that does not start at 0 Pa.
    """
    spec = robot if isinstance(robot, RobotSpec) else load_robot(robot)
    n_seg = spec.n_segments
    rest_length = np.empty(n_seg)
    width = np.empty(n_seg)
    lower = np.empty(n_seg)
    upper = np.empty(n_seg)
    pmax = np.empty(n_seg)
    coeffs = np.zeros((n_seg, MAX_POLY_TERMS))
    stiffness = np.empty(n_seg)
    rho_a = np.empty(n_seg)
    plate_seg = [0]
    plate_frac = [0.0]
    plate_mass = [0.0]
    for j, seg in enumerate(spec.segments):
        act = seg.actuator
        if act is None:
            raise ValueError(
                f"segments[{j}].actuator is required: the planar pneumatic model needs every "
                "segment to be pneumatic"
            )
        if seg.disks < 1:
            raise ValueError(
                f"segments[{j}].disks must be >= 1 (the support plates that sample the backbone), "
                f"got {seg.disks}"
            )
        lo, hi = act.pressure_range
        if lo != 0.0:
            raise ValueError(
                f"segments[{j}].actuator.pressure_range must start at 0 Pa for the planar model "
                f"(pressures pass through 0 when switching sides), got {list(act.pressure_range)}"
            )
        sides = {c.side for c in act.chambers}
        rest_length[j] = seg.length
        width[j] = act.width
        pmax[j] = hi
        lower[j] = -hi if "left" in sides else 0.0
        upper[j] = hi if "right" in sides else 0.0
        coeffs[j, : len(act.strain_polynomial)] = act.strain_polynomial
        bb = spec.segment_backbone(j)
        stiffness[j] = bb.youngs_modulus * bb.I
        rho_a[j] = bb.density * bb.A
        for i in range(seg.disks):
            plate_seg.append(j)
            plate_frac.append((i + 1) / seg.disks)
            plate_mass.append(seg.disk_mass)
    # The base plate is clamped: give it the first segment's plate mass for drawing only.
    plate_mass[0] = spec.segments[0].disk_mass
    strain_min = np.array([_strain_at(coeffs[j], pmax[j]) for j in range(n_seg)])
    # |kappa| = -2 eps / (t (2 + eps)) grows as eps falls, so it is largest at p_max.
    curvature_max = -2.0 * strain_min / (width * (2.0 + strain_min))
    return PneumaticArm(
        spec=spec,
        rest_length=rest_length,
        width=width,
        pressure_lower=lower,
        pressure_upper=upper,
        pressure_max=pmax,
        strain_coeffs=coeffs,
        strain_min=strain_min,
        curvature_max=curvature_max,
        plate_seg=np.asarray(plate_seg, dtype=np.int64),
        plate_frac=np.asarray(plate_frac, dtype=float),
        plate_mass=np.asarray(plate_mass, dtype=float),
        bending_stiffness=stiffness,
        mass_per_length=rho_a,
        half_width=0.5 * width,
    )
