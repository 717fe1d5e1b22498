"""Learning on softrod environments: SAC training, evaluation, demonstrations, behaviour cloning.

Heavy dependencies (torch, stable-baselines3) are imported inside the functions that need them.
"""

from softrod.learn._bc import BCPolicy, BCResult, is_bc_policy, load_bc_policy, train_bc
from softrod.learn._config import BCConfig, SACConfig, load_config, save_config
from softrod.learn._demos import DemoSet, duplicate_mask, record_demos
from softrod.learn._eval import EvalResult, evaluate, load_sb3_policy
from softrod.learn._experts import EXPERTS, GraspExpert, PushExpert, SwitchExpert, make_expert
from softrod.learn._plots import plot_learning_curve, read_episodes
from softrod.learn._sac import TrainResult, make_env_fn, set_torch_threads, train_sac
from softrod.learn._shipped import (
    SACActor,
    export_sac_actor,
    load_shipped,
    shipped_policies,
    shipped_provenance,
)
from softrod.learn._teleop import (
    KEY_HELP,
    KeyboardTeleop,
    record_teleop,
    script_keys,
    terminal_keys,
    viewer_keys,
)

__all__ = [
    "EXPERTS",
    "KEY_HELP",
    "terminal_keys",
    "viewer_keys",
    "BCConfig",
    "BCPolicy",
    "BCResult",
    "DemoSet",
    "EvalResult",
    "GraspExpert",
    "KeyboardTeleop",
    "PushExpert",
    "SACActor",
    "SACConfig",
    "SwitchExpert",
    "TrainResult",
    "duplicate_mask",
    "evaluate",
    "export_sac_actor",
    "is_bc_policy",
    "load_bc_policy",
    "load_config",
    "load_sb3_policy",
    "load_shipped",
    "make_env_fn",
    "make_expert",
    "plot_learning_curve",
    "read_episodes",
    "record_demos",
    "record_teleop",
    "save_config",
    "script_keys",
    "set_torch_threads",
    "shipped_policies",
    "shipped_provenance",
    "train_bc",
    "train_sac",
]
