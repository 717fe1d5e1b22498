"""Numerical rod models on arrays: static Kirchhoff/Cosserat shooting and constant curvature."""

from softrod.rods._model import RodModel, compile_model
from softrod.rods._observer import ObserverGains, ObserverState, observer_update
from softrod.rods._properties import (
    RobotProperties,
    SegmentProperties,
    TendonProperties,
    robot_properties,
)
from softrod.rods._static import (
    METHODS,
    ShootingEval,
    StaticResult,
    shooting_eval,
    solve_static,
    tip_jacobian,
)

__all__ = [
    "METHODS",
    "ObserverGains",
    "ObserverState",
    "RobotProperties",
    "RodModel",
    "SegmentProperties",
    "ShootingEval",
    "StaticResult",
    "TendonProperties",
    "compile_model",
    "robot_properties",
    "shooting_eval",
    "solve_static",
    "observer_update",
    "tip_jacobian",
]
