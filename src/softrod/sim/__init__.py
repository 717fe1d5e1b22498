"""Time simulation on the rod models (quasi-static sequences of equilibria)."""

from softrod.sim._kinematic_body import KinematicRod
from softrod.sim._quasistatic import QuasiStaticHistory, QuasiStaticSim, with_pose_and_lengths

__all__ = ["KinematicRod", "QuasiStaticHistory", "QuasiStaticSim", "with_pose_and_lengths"]
