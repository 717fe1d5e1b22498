"""Control: Jacobian resolved-rate tracking, SoftManiSim's reference trajectories and the PCC
maps from segment bending to tendon inputs."""

from softrod.control._jacobian import (
    ResolvedRateController,
    TendonRobotPlant,
    TrackingResult,
    track,
)
from softrod.control._tendon_maps import bending_tensions, pcc_length_matrix
from softrod.control._trajectories import TRAJECTORIES, make_trajectory

__all__ = [
    "TRAJECTORIES",
    "ResolvedRateController",
    "TendonRobotPlant",
    "TrackingResult",
    "bending_tensions",
    "make_trajectory",
    "pcc_length_matrix",
    "track",
]
