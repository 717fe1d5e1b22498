"""Checking actuation inputs against a description: pressures, moment-actuator inputs, a uniform
field and its gradient.

Every model (static solver, MuJoCo chain, dynamics) calls `check_actuation` at its boundary so
that a wrong input gets the same error everywhere, naming the input, the index and the value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from softrod.description._io import DescriptionError
from softrod.description._spec import RobotSpec

__all__ = ["Actuation", "check_actuation"]


@dataclass(frozen=True, eq=False)
class Actuation:
    """Checked actuation inputs (SI).

    pressures : (n_pressures,) chamber gauge pressures [Pa], segment by segment.
    field : (3,) uniform world-frame magnetic field B [T].
    field_gradient : (3, 3) world-frame gradient, field_gradient[i, j] = dB_i / dx_j [T/m].
    moments : (n_moments,) moment-actuator inputs [-] (`RobotSpec.moment_actuator_list()`
        order); actuator k applies moments[k] times its body-frame `moment` [N m].
    """

    pressures: np.ndarray
    field: np.ndarray
    field_gradient: np.ndarray
    moments: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))


def _finite_array(name: str, value: object, shape: tuple[int, ...]) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise DescriptionError(f"{name} must be numbers of shape {shape}, got {value!r}") from None
    if arr.shape != shape:
        what = f"{shape[0]} values" if len(shape) == 1 else f"shape {shape}"
        raise DescriptionError(
            f"{name} must have {what}, got {arr.size if arr.ndim == 1 else arr.shape}"
            f" ({np.asarray(value).tolist()!r})"
        )
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        idx = "".join(f"[{int(i)}]" for i in bad[0])
        raise DescriptionError(f"{name}{idx} must be finite, got {float(arr[tuple(bad[0])])!r}")
    return arr


def check_actuation(
    robot: RobotSpec,
    pressures: Sequence[float] | np.ndarray | None = None,
    field: Sequence[float] | np.ndarray | None = None,
    field_gradient: Sequence[Sequence[float]] | np.ndarray | None = None,
    moments: Sequence[float] | np.ndarray | None = None,
) -> Actuation:
    """Validate the actuation inputs of `robot`; None means zero.

    Parameters
    ----------
    pressures : (robot.n_pressures,) [Pa], one per chamber in `robot.chamber_list()` order;
        each within its chamber's `pressure_range` when one is given.
    field : (3,) uniform field B [T]; field_gradient : (3, 3) dB_i/dx_j [T/m].
    moments : (robot.n_moments,) [-], one per moment actuator in
        `robot.moment_actuator_list()` order.

    Returns
    -------
    Actuation with float arrays. Raises DescriptionError (a ValueError) naming the input, the
    index and the value: a wrong length, a non-finite value, a pressure out of range.
    """
    n = robot.n_pressures
    if pressures is None:
        p = np.zeros(n)
    else:
        if n == 0 and np.size(pressures) > 0:
            raise DescriptionError(
                "pressures must have 0 values (the robot has no chambers), got "
                f"{np.size(pressures)}"
            )
        p = _finite_array("pressures", pressures, (n,))
    for k, (j, chamber) in enumerate(robot.chamber_list()):
        if chamber.pressure_range is not None:
            lo, hi = chamber.pressure_range
            if not lo <= p[k] <= hi:
                c = robot.segments[j].chambers.index(chamber)
                raise DescriptionError(
                    f"pressures[{k}] must be within segments[{j}].chambers[{c}].pressure_range "
                    f"[{lo:g}, {hi:g}] Pa, got {p[k]:g}"
                )
    b = np.zeros(3) if field is None else _finite_array("field", field, (3,))
    g = (
        np.zeros((3, 3))
        if field_gradient is None
        else _finite_array("field_gradient", field_gradient, (3, 3))
    )
    return Actuation(pressures=p, field=b, field_gradient=g, moments=_moments(robot, moments))


def _moments(robot: RobotSpec, moments: Sequence[float] | np.ndarray | None) -> np.ndarray:
    """The checked moment-actuator inputs (n_moments,); None is zero."""
    n = robot.n_moments
    if moments is None:
        return np.zeros(n)
    if n == 0 and np.size(moments) > 0:
        raise DescriptionError(
            f"moments must have 0 values (the robot has no moment_actuators), got "
            f"{np.size(moments)}"
        )
    return _finite_array("moments", moments, (n,))
