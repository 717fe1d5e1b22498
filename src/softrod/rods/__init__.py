"""Numerical rod models on arrays: static Kirchhoff/Cosserat shooting and constant curvature.

The contract: a `RodModel` (compiled from a `RobotSpec`) and checked `StaticLoads` go into a
method of `METHODS`; out comes a frozen `StaticResult` that carries its `inputs` and the typed
`warm` state that `guess=`, `tip_jacobian` and the observer read. Rotations: `so3`.
"""

from softrod.rods import so3
from softrod.rods._batch import StaticBatchResult, solve_static_batch
from softrod.rods._budget import DEFAULT_TIME_LIMIT, solve_time_limit
from softrod.rods._friction import (
    FrictionState,
    SequenceResult,
    capstan_update,
    solve_sequence,
    tendon_wrap,
)
from softrod.rods._inputs import StaticLoads, check_inputs
from softrod.rods._methods import METHODS
from softrod.rods._model import RodModel, as_model, compile_model, with_pose_and_lengths
from softrod.rods._observer import ObserverGains, ObserverState, observer_update
from softrod.rods._observer_fast import ObserverLoop
from softrod.rods._properties import (
    RobotProperties,
    SegmentProperties,
    TendonProperties,
    robot_properties,
)
from softrod.rods._result import StaticResult, WarmStart
from softrod.rods._sensitivity import ShootingEval, shooting_eval, tip_jacobian
from softrod.rods._static import DEFAULT_MAX_ITER, DEFAULT_RTOL, solve_static

__all__ = [
    "DEFAULT_MAX_ITER",
    "DEFAULT_RTOL",
    "DEFAULT_TIME_LIMIT",
    "FrictionState",
    "METHODS",
    "ObserverGains",
    "ObserverLoop",
    "ObserverState",
    "RobotProperties",
    "RodModel",
    "SegmentProperties",
    "SequenceResult",
    "ShootingEval",
    "StaticBatchResult",
    "StaticLoads",
    "StaticResult",
    "TendonProperties",
    "WarmStart",
    "as_model",
    "check_inputs",
    "compile_model",
    "observer_update",
    "robot_properties",
    "shooting_eval",
    "so3",
    "solve_static",
    "capstan_update",
    "solve_sequence",
    "solve_static_batch",
    "solve_time_limit",
    "tendon_wrap",
    "tip_jacobian",
    "with_pose_and_lengths",
]
