"""The `calibration:` block of a robot description: how a calibrated robot's tendon inputs and
tip output map onto a recording (written by `softrod hardware fit`, read by `hardware replay`).

The mechanics models (static solver, MuJoCo chain, LGVI) ignore the block; it holds only the
mapping between the recording's columns and the robot:

* input: a recording row's servo displacements d_i [recording units, positive = pulled in], in
  the order of `servo_columns` = tendon order, become commanded tendon lengths
  L_cmd,i = L_rest,i - d_i - pretension_i / k_i (L_rest: the straight-pose path length, k_i the
  tendon's stiffness), after the backlash (play) operator of width `backlash` on each tendon
  (plus `backlash_per_tension` times the tendon's tension [N] of the previous solved row:
  friction proportional to the tension, behind a compliance, docs/friction.md); before the
  play, an optional first-order lag (creep): d_eff = d + lag_fraction (lowpass(d) - d), the
  lowpass of time constant `lag_time_constant` [s] over the recording's timestamps;
* output: the tracked marker sits `marker_offset` [m] beyond the tip along the tip tangent; the
  tracker frame is the robot's base frame turned by R = R_y(tilt_y) R_x(tilt_x) R_z(yaw) and
  moved by `tracker_translation`: p_tracker = R p_base + translation.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from softrod.description._base import Spec

__all__ = ["CalibrationSpec"]

#: Recording units -> metres.
_UNIT_SCALE = {"mm": 1e-3, "m": 1.0}


class CalibrationSpec(Spec):
    """Input/output mapping of a calibrated robot onto a recording (see the module docstring)."""

    servo_columns: list[str] = Field(
        description="Recording columns of the tendon displacements, in tendon order."
    )
    units: Literal["mm", "m"] = Field(
        default="mm", description="Units of the recording's servo and tip columns."
    )
    pretension: list[float] = Field(
        description="Tension of each tendon at zero displacement in the straight pose [N]."
    )
    backlash: float = Field(default=0.0, description="Play on each tendon's displacement [m].")
    backlash_per_tension: float = Field(
        default=0.0,
        description="Play added per newton of the tendon's tension [m/N] (friction "
        "proportional to the tension); 0 for none.",
    )
    lag_time_constant: float = Field(
        default=0.0,
        description="Time constant of the first-order lag (creep) of each displacement [s]; "
        "0 for none.",
    )
    lag_fraction: float = Field(
        default=0.0,
        description="Fraction of each displacement that lags (0: none, 1: a pure first-order "
        "lag) [-].",
    )
    marker_offset: float = Field(
        default=0.0, description="Marker distance beyond the tip along the tip tangent [m]."
    )
    tracker_translation: tuple[float, float, float] = Field(
        default=(0.0, 0.0, 0.0), description="Base origin in the tracker frame [m]."
    )
    tracker_tilt_deg: tuple[float, float] = Field(
        default=(0.0, 0.0), description="Tracker tilt about x, then y [deg]."
    )
    tracker_yaw_deg: float = Field(
        default=0.0, description="Tracker rotation about the base z axis, applied first [deg]."
    )
    fitted_on: str | None = Field(default=None, description="The recording it was fitted on.")

    @model_validator(mode="after")
    def _check(self) -> CalibrationSpec:
        if len(self.pretension) != len(self.servo_columns):
            raise ValueError(
                f"pretension must have one entry per servo column ({len(self.servo_columns)}), "
                f"got {len(self.pretension)}"
            )
        if len(set(self.servo_columns)) != len(self.servo_columns):
            raise ValueError(f"servo_columns must be distinct, got {self.servo_columns}")
        if self.backlash < 0:
            raise ValueError(f"backlash must be >= 0, got {self.backlash!r}")
        if not self.backlash_per_tension >= 0:
            raise ValueError(
                f"backlash_per_tension must be >= 0 [m/N], got {self.backlash_per_tension!r}"
            )
        if not self.lag_time_constant >= 0:
            raise ValueError(f"lag_time_constant must be >= 0 [s], got {self.lag_time_constant!r}")
        if not 0.0 <= self.lag_fraction <= 1.0:
            raise ValueError(f"lag_fraction must be in [0, 1], got {self.lag_fraction!r}")
        if min(self.pretension, default=0.0) < 0:
            raise ValueError(f"pretension must be >= 0 [N], got {self.pretension}")
        return self

    @property
    def has_lag(self) -> bool:
        """Whether the displacements run through the lag (both lag fields > 0)."""
        return self.lag_time_constant > 0.0 and self.lag_fraction > 0.0

    @property
    def unit_scale(self) -> float:
        """Recording units -> metres."""
        return _UNIT_SCALE[self.units]
