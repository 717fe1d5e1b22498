"""Rod dynamics: the Lie-group variational integrator of seed 004 (ALGORITHMS.md E).

>>> import softrod
>>> robot = softrod.load_robot("examples/robots/tpu_rod.yaml")  # doctest: +SKIP
>>> res = softrod.simulate_dynamic(robot, 1.0, gravity=[0, 0, -9.81])  # doctest: +SKIP
>>> res.tip_position[-1]  # doctest: +SKIP

The same with the model built once and the loads as one object:

>>> from softrod.dynamics import DynamicLoads, build_lgvi_model, simulate_dynamic
>>> model = build_lgvi_model(robot, elements=20)  # doctest: +SKIP
>>> res = simulate_dynamic(model, 1.0, loads=DynamicLoads(gravity=[0, 0, -9.81]))  # doctest: +SKIP
"""

from softrod.dynamics._analysis import euler_bernoulli_f1, oscillation
from softrod.dynamics._filter import DEFAULT_VELOCITY_FLOOR, DampingEstimate, estimate_damping
from softrod.dynamics._inputs import DynamicLoads
from softrod.dynamics._integrate import IMPLICIT_DAMPING, INTEGRATORS
from softrod.dynamics._loads import MU0, Magnet, MagneticField
from softrod.dynamics._model import DEFAULT_ELEMENTS, LGVIModel, build_lgvi_model
from softrod.dynamics._modes import (
    DEFAULT_DT_SAFETY,
    implicit_time_step,
    linear_modes,
    stable_time_step,
)
from softrod.dynamics._result import DynamicResult, DynamicState
from softrod.dynamics._simulate import simulate_dynamic
from softrod.dynamics._tendon_friction import (
    FRICTION_METHODS,
    FrictionSettleResult,
    friction_settle_sequence,
    piece_wrap,
    piecewise_tendon_model,
)

__all__ = [
    "FRICTION_METHODS",
    "IMPLICIT_DAMPING",
    "INTEGRATORS",
    "DEFAULT_VELOCITY_FLOOR",
    "DampingEstimate",
    "estimate_damping",
    "euler_bernoulli_f1",
    "friction_settle_sequence",
    "oscillation",
    "DEFAULT_DT_SAFETY",
    "DEFAULT_ELEMENTS",
    "MU0",
    "DynamicLoads",
    "DynamicResult",
    "DynamicState",
    "FrictionSettleResult",
    "LGVIModel",
    "Magnet",
    "MagneticField",
    "build_lgvi_model",
    "implicit_time_step",
    "linear_modes",
    "piece_wrap",
    "piecewise_tendon_model",
    "simulate_dynamic",
    "stable_time_step",
]
