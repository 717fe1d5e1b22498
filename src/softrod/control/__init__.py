"""Control: Jacobian resolved-rate tracking and SoftManiSim's reference trajectories."""

from softrod.control._jacobian import (
    ResolvedRateController,
    TendonRobotPlant,
    TrackingResult,
    track,
)
from softrod.control._trajectories import TRAJECTORIES, make_trajectory

__all__ = [
    "TRAJECTORIES",
    "ResolvedRateController",
    "TendonRobotPlant",
    "TrackingResult",
    "make_trajectory",
    "track",
]
