"""Planning with learned residual models (ALGORITHMS.md D): the compensation network, forward
models for planners, environments and pressure-space RRT*."""

from softrod.planning._benchmark import (
    PSI,
    BenchmarkConfig,
    execute_plan_closed_loop,
    plan_environment,
    prepare_models,
    run_benchmark,
    write_report,
)
from softrod.planning._closed_loop import (
    ClosedLoopConfig,
    ClosedLoopExecution,
    execute_closed_loop,
)
from softrod.planning._env import (
    BoxObstacle,
    CircleObstacle,
    EnvironmentSpec,
    GoalRegion,
    Obstacles,
    PolygonObstacle,
    load_environment,
)
from softrod.planning._forward import (
    EdgeBatch,
    ForwardModel,
    NetworkForward,
    NoLoadForward,
    edge_commands,
)
from softrod.planning._network import (
    CompensationNetwork,
    TrainConfig,
    rollout_error,
    train_compensation,
)
from softrod.planning._rrtstar import PlanResult, PressureRRTStar, RRTStarConfig, plan_commands

__all__ = [
    "PSI",
    "plan_environment",
    "prepare_models",
    "write_report",
    "BenchmarkConfig",
    "BoxObstacle",
    "CircleObstacle",
    "ClosedLoopConfig",
    "ClosedLoopExecution",
    "CompensationNetwork",
    "EdgeBatch",
    "EnvironmentSpec",
    "ForwardModel",
    "GoalRegion",
    "NetworkForward",
    "NoLoadForward",
    "Obstacles",
    "PlanResult",
    "PolygonObstacle",
    "PressureRRTStar",
    "RRTStarConfig",
    "TrainConfig",
    "edge_commands",
    "execute_closed_loop",
    "execute_plan_closed_loop",
    "load_environment",
    "plan_commands",
    "rollout_error",
    "run_benchmark",
    "train_compensation",
]
