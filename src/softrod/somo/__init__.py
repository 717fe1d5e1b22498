"""SoMo compatibility: import SoMo manipulator definitions, SoMo's two-measurement calibration
(with the tip-compliance fix), an empirical rigid-link mode in MuJoCo, assemblies (a hand, an
arm with a soft gripper), the pinch-grasp trial of SoMo's design study, and SoMo's actuation
trajectories on the MuJoCo chain (`follow_trajectory`).

The MuJoCo parts (`add_empirical_chain`, scenes, grasp trials) import mujoco when called.
"""

from softrod.somo._calibration import (
    STIFFNESS_RULES,
    actuation_torque,
    bending_stiffness_from_joint,
    chain_compliance_ratio,
    chain_joint_positions,
    chain_tip_compliance,
    joint_stiffness,
    pressure_torques,
    torsion_stiffness,
    world_scale_factors,
)
from softrod.somo._empirical import (
    EmpiricalActuator,
    EmpiricalChain,
    EmpiricalManipulator,
    add_empirical_chain,
    teeple_finger,
)
from softrod.somo._grasp import GraspOutcome, GraspTrialConfig, grasp_trial, run_grasp_trial
from softrod.somo._import import ACTUATIONS, IMPORT_RULES, SomoImport, import_somo, read_somo
from softrod.somo._trajectory import (
    ChainTracking,
    SomoTrajectory,
    follow_trajectory,
    read_somo_trajectory,
    uniform_moment_twin,
)

__all__ = [
    "ACTUATIONS",
    "IMPORT_RULES",
    "STIFFNESS_RULES",
    "ChainTracking",
    "EmpiricalActuator",
    "EmpiricalChain",
    "EmpiricalManipulator",
    "GraspOutcome",
    "GraspTrialConfig",
    "SomoImport",
    "SomoTrajectory",
    "actuation_torque",
    "add_empirical_chain",
    "bending_stiffness_from_joint",
    "chain_compliance_ratio",
    "chain_joint_positions",
    "chain_tip_compliance",
    "follow_trajectory",
    "grasp_trial",
    "import_somo",
    "joint_stiffness",
    "pressure_torques",
    "read_somo",
    "read_somo_trajectory",
    "run_grasp_trial",
    "teeple_finger",
    "torsion_stiffness",
    "uniform_moment_twin",
    "world_scale_factors",
]
