"""Validation against the outside world: SoRoSim reference solutions, hardware recordings."""

from softrod.validate._dynamics import release_study
from softrod.validate._hardware import (
    ROBOTS,
    HardwareFit,
    HardwareParams,
    calibrate_hardware,
    hardware_robot,
    mujoco_predict_marker,
    predict_marker,
    tip_errors_mm,
)
from softrod.validate._mujoco_sweep import LINKS, mujoco_static_study, mujoco_sweep
from softrod.validate._sorosim import StaticStudy, sorosim_robot, static_solver_study
from softrod.validate._studies import hardware_study, sorosim_study

__all__ = [
    "LINKS",
    "ROBOTS",
    "HardwareFit",
    "HardwareParams",
    "StaticStudy",
    "calibrate_hardware",
    "hardware_robot",
    "hardware_study",
    "mujoco_predict_marker",
    "mujoco_static_study",
    "mujoco_sweep",
    "predict_marker",
    "release_study",
    "sorosim_robot",
    "sorosim_study",
    "static_solver_study",
    "tip_errors_mm",
]
