"""Give a trained SAC policy extra observation inputs without changing what it does.

The new inputs are appended to the observation; their first-layer weights start at zero in the
actor and in both critics (and their targets), so the widened policy acts exactly as the old one
until training teaches it to use them. Used to fine-tune the 600k Reach-v0 policy with the
fine-error observation (`error_gain`, docs/learning.md):

    python examples/learning/widen_policy.py runs/reach-sac-600k/model.zip \
        --env-kwargs '{"error_gain": 100}' -o runs/reach-widened.zip
    softrod train Reach-v0 --resume runs/reach-widened.zip --env-kwargs '{"error_gain": 100}' ...
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import SAC

import softrod.envs  # noqa: F401  (registers the environments)


def _widen_first_layer(layer: torch.nn.Linear, at: int, extra: int) -> None:
    """Insert `extra` zero input columns at column `at` of a Linear layer, in place."""
    w = layer.weight.data
    zeros = torch.zeros(w.shape[0], extra, dtype=w.dtype)
    layer.weight = torch.nn.Parameter(torch.cat([w[:, :at], zeros, w[:, at:]], dim=1))
    layer.in_features += extra


def widen(src: str, env_id: str, env_kwargs: dict, out: str) -> None:
    old = SAC.load(src, device="cpu")
    env = gym.make(env_id, **env_kwargs)
    n_old = int(np.prod(old.observation_space.shape))
    n_new = int(np.prod(env.observation_space.shape))
    if n_new <= n_old:
        raise ValueError(f"the new observation must be wider: {n_new} <= {n_old}")
    extra = n_new - n_old
    obs, _ = env.reset(seed=0)
    a_old = old.predict(obs[:n_old], deterministic=True)[0]
    policy = old.policy
    # Actor: obs -> latent; critics: cat(obs, action) -> Q, so the new columns go after obs.
    _widen_first_layer(policy.actor.latent_pi[0], n_old, extra)
    for critic in (policy.critic, policy.critic_target):
        for q in critic.q_networks:
            _widen_first_layer(q[0], n_old, extra)
    new = SAC(
        "MlpPolicy",
        env,
        learning_rate=old.learning_rate,
        buffer_size=1,
        batch_size=old.batch_size,
        gamma=old.gamma,
        tau=old.tau,
        policy_kwargs=old.policy_kwargs,
        device="cpu",
    )
    new.policy.load_state_dict(policy.state_dict())
    new.log_ent_coef = old.log_ent_coef.detach().clone().requires_grad_(True)
    new.ent_coef_optimizer = torch.optim.Adam([new.log_ent_coef], lr=new.lr_schedule(1))
    new.num_timesteps = old.num_timesteps
    new.save(out)
    # Check: on the widened observation the new policy acts as the old one did.
    a_new = new.predict(obs, deterministic=True)[0]
    change = float(np.abs(a_new - a_old).max())
    print(f"wrote {out}: {n_old} -> {n_new} inputs, max action change {change:.2e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--env", default="softrod/Reach-v0")
    ap.add_argument("--env-kwargs", default="{}")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    widen(args.model, args.env, json.loads(args.env_kwargs), args.out)


if __name__ == "__main__":
    main()
