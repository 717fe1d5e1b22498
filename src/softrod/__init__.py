"""softrod: describe, simulate, control, plan for and learn with continuum manipulators.

>>> import softrod
>>> robot = softrod.load_robot("examples/robots/tdcr3.yaml")  # doctest: +SKIP
>>> sol = softrod.solve_static(robot, tensions=[1, 0, 0, 0, 0, 0, 0, 0, 0])  # doctest: +SKIP
>>> sol.tip_position  # doctest: +SKIP
"""

from softrod._version import __version__
from softrod.description import DescriptionError, RobotSpec, load_robot
from softrod.dynamics import DynamicResult, simulate_dynamic
from softrod.rods import RodModel, StaticResult, compile_model, solve_static

__all__ = [
    "DescriptionError",
    "DynamicResult",
    "RobotSpec",
    "RodModel",
    "StaticResult",
    "compile_model",
    "load_robot",
    "simulate_dynamic",
    "solve_static",
    "__version__",
]
