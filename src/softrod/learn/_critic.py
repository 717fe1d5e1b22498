"""SAC with a layer-normalised critic (`SACConfig.critic_layer_norm`).

RLPD (Ball, Smith, Kostrikov & Levine 2023, "Efficient Online Reinforcement Learning with
Offline Data", ICML) finds that with demonstrations in the buffer the critic's values
extrapolate without bound on actions the data does not cover, and that a LayerNorm after every
hidden linear layer of the critic bounds them: the last hidden activation relu(gamma z + beta)
has sum(z^2) = width, so |Q| <= |b| + ||w|| (max|gamma| sqrt(width) + ||beta||) for any input
(w, b: the output layer's; tests/test_learn.py checks this bound). SB3's `ContinuousCritic`
builds plain MLPs; these two classes add the LayerNorm and change nothing else (the actor, the
twin minimum, the targets).

The classes are importable under this path, so a saved model (`SAC.save`) loads back with
`SAC.load` (SB3 pickles the policy class by reference).
"""

from __future__ import annotations

from typing import Any

from stable_baselines3.common.policies import ContinuousCritic
from stable_baselines3.common.preprocessing import get_action_dim
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, create_mlp
from stable_baselines3.sac.policies import SACPolicy
from torch import nn

__all__ = ["LayerNormCritic", "LayerNormSACPolicy"]


class LayerNormCritic(ContinuousCritic):
    """SB3's `ContinuousCritic` (n Q networks) with LayerNorm after every hidden linear layer."""

    def __init__(self, **kwargs: Any) -> None:
        # Keyword arguments only, as `SACPolicy.make_critic` passes them.
        super().__init__(**kwargs)
        activation_fn = kwargs.get("activation_fn", nn.ReLU)
        in_dim = int(kwargs["features_dim"]) + get_action_dim(self.action_space)
        net_arch = list(kwargs["net_arch"])
        # Replace the plain Q networks by layer-normalised ones (same names, same count; the
        # plain ones built above are dropped before SB3 makes the optimiser, so they never train).
        self.q_networks = []
        for idx in range(self.n_critics):
            layers = create_mlp(
                in_dim, 1, net_arch, activation_fn, post_linear_modules=[nn.LayerNorm]
            )
            q_net = nn.Sequential(*layers)
            self.add_module(f"qf{idx}", q_net)
            self.q_networks.append(q_net)


class LayerNormSACPolicy(SACPolicy):
    """SB3's `SACPolicy` ("MlpPolicy") whose critic and target critic are `LayerNormCritic`s."""

    def make_critic(
        self, features_extractor: BaseFeaturesExtractor | None = None
    ) -> ContinuousCritic:
        critic_kwargs = self._update_features_extractor(self.critic_kwargs, features_extractor)
        return LayerNormCritic(**critic_kwargs).to(self.device)
