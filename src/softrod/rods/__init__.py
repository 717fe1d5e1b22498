"""Numerical rod models on arrays: static Kirchhoff/Cosserat shooting and constant curvature."""

from softrod.rods._model import RodModel, compile_model
from softrod.rods._static import METHODS, StaticResult, solve_static

__all__ = ["METHODS", "RodModel", "StaticResult", "compile_model", "solve_static"]
