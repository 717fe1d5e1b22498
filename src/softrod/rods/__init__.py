"""Numerical rod models on arrays: static Kirchhoff/Cosserat shooting and constant curvature."""

from softrod.rods._model import RodModel, compile_model
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
    "RodModel",
    "ShootingEval",
    "StaticResult",
    "compile_model",
    "shooting_eval",
    "solve_static",
    "tip_jacobian",
]
