"""softrod: describe, simulate, control, plan for and learn with continuum manipulators.

>>> import softrod
>>> robot = softrod.load_robot("examples/robots/tdcr3.yaml")  # doctest: +SKIP
>>> sol = softrod.solve_static(robot, tensions=[1, 0, 0, 0, 0, 0, 0, 0, 0])  # doctest: +SKIP
>>> sol.tip_position  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from softrod import rods as _rods
from softrod._version import __version__
from softrod.description import DescriptionError, RobotSpec, load_robot
from softrod.dynamics import DynamicResult, simulate_dynamic
from softrod.rods import RodModel, StaticResult, compile_model

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


def solve_static(
    robot: RodModel | RobotSpec | dict | str | Path, *args: Any, **kwargs: Any
) -> StaticResult:
    # The loose robot union lives here, at the top level: a dict or a path is loaded once and
    # the typed `softrod.rods.solve_static` takes over (same arguments, same result).
    if not isinstance(robot, RodModel | RobotSpec):
        robot = load_robot(robot)
    return _rods.solve_static(robot, *args, **kwargs)


# help() and inspect show the solver's own parameters, with the loose robot union.
_signature = inspect.signature(_rods.solve_static)
solve_static.__doc__ = _rods.solve_static.__doc__
setattr(  # noqa: B010 - mypy does not know function.__signature__
    solve_static,
    "__signature__",
    _signature.replace(
        parameters=[
            _signature.parameters["robot"].replace(
                annotation="RodModel | RobotSpec | dict | str | Path"
            ),
            *list(_signature.parameters.values())[1:],
        ]
    ),
)
