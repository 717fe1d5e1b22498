"""Time simulation on the rod models (quasi-static sequences of equilibria)."""

from typing import Any

from softrod.sim._quasistatic import QuasiStaticHistory, QuasiStaticSim, with_pose_and_lengths

__all__ = ["KinematicRod", "QuasiStaticHistory", "QuasiStaticSim", "with_pose_and_lengths"]


def __getattr__(name: str) -> Any:
    # `KinematicRod` lives beside the chain in `softrod.mujoco`; resolved on first use so that
    # importing `softrod.sim` does not import MuJoCo (sim sits below the mujoco layer).
    if name == "KinematicRod":
        from softrod.mujoco import KinematicRod

        return KinematicRod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
