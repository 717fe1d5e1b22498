"""Validation against the outside world: SoRoSim reference solutions, hardware recordings."""

from softrod.validate._sorosim import StaticStudy, sorosim_robot, static_solver_study

__all__ = ["StaticStudy", "sorosim_robot", "static_solver_study"]
