"""Learning on softrod environments: SAC training, evaluation, demonstrations, behaviour cloning.

Heavy dependencies (torch, stable-baselines3) are imported inside the functions that need them.
"""

from softrod.learn._config import BCConfig, SACConfig, load_config, save_config
from softrod.learn._eval import EvalResult, evaluate, load_sb3_policy
from softrod.learn._plots import plot_learning_curve, read_episodes
from softrod.learn._sac import TrainResult, make_env_fn, set_torch_threads, train_sac

__all__ = [
    "BCConfig",
    "EvalResult",
    "SACConfig",
    "TrainResult",
    "evaluate",
    "load_config",
    "load_sb3_policy",
    "make_env_fn",
    "plot_learning_curve",
    "read_episodes",
    "save_config",
    "set_torch_threads",
    "train_sac",
]
