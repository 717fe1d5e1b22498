"""Planar pneumatic arms (ALGORITHMS.md D): no-load PCC model, its inverse and Jacobian, and a
ground-truth simulator with the loads, friction and rate effects that model leaves out, and
the arm as a mechanics description (McKibben pairs as pulling chambers, `chamber_description`)."""

from softrod.pneumatic._chambers import chamber_description, chamber_pressures
from softrod.pneumatic._data import (
    DEFAULT_HOLD_FRAMES,
    DEFAULT_PRESSURE_RATE,
    Recording,
    eulerian_transition_order,
    extreme_configurations,
    ramp_frames,
    record_test_set,
    record_transitions,
)
from softrod.pneumatic._model import BEND_SIGN, PneumaticArm, compile_pneumatic
from softrod.pneumatic._pcc import IKResult, NoLoadModel
from softrod.pneumatic._truth import GroundTruthArm, GroundTruthConfig, GroundTruthState

__all__ = [
    "DEFAULT_HOLD_FRAMES",
    "DEFAULT_PRESSURE_RATE",
    "BEND_SIGN",
    "GroundTruthArm",
    "GroundTruthConfig",
    "GroundTruthState",
    "IKResult",
    "NoLoadModel",
    "PneumaticArm",
    "Recording",
    "compile_pneumatic",
    "eulerian_transition_order",
    "extreme_configurations",
    "chamber_description",
    "chamber_pressures",
    "ramp_frames",
    "record_test_set",
    "record_transitions",
]
