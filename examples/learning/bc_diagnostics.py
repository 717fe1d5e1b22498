"""Why a cloned policy fails (issue 17 item 4): its fit to the demonstrations, and its closed loop
on the demonstrations' own reset seeds beside unseen (validation) seeds.

For each BC/ACT policy file:

* **fit**: the policy queried on every demonstrated frame (teacher forcing: the demonstrated
  observation, the time since reset where the policy reads it, z = 0 for ACT, eval mode), its
  first `--horizon` predicted actions against the demonstrated ones: mean absolute error in env
  units, for the action components before `--split` and from it on (FlipSwitch-v0: 7 arm joint
  targets [rad], 9 tendon displacements [m]), and for the first predicted action alone.
* **closed loop**: `--episodes` episodes reset with the demonstrations' own seeds (the states the
  policy was trained from; the demonstrations were recorded with the expert's action noise, these
  run without) and as many validation episodes (reset seeds 20000+, never trained on): success,
  the smallest `info["distance"]` over the episode, and the range (min, max) over the episode of
  every other number the task's `info` reports (FlipSwitch-v0: `toggle`, the lever angle, whose
  max says how far a failed press got; off is >= 0.2 rad).

`--temporal-ensemble` runs the closed-loop episodes with another way of executing the chunks
than the policy was trained with (a weight k >= 0, or `off`: each chunk open loop; the fit is
the same either way).

A policy that fails as often on its own training seeds as on unseen ones does not fail for lack
of generalisation; one whose fit error is larger than another's fits its own data worse.

    python examples/learning/bc_diagnostics.py runs/switch.npz runs/switch-act/policy.pt \
        src/softrod/learn/shipped/FlipSwitch-v0/policy.pt --episodes 20 -o diag.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from softrod.learn import DemoSet, load_bc_policy
from softrod.learn._bc import kl_to_prior

#: First validation reset seed (the test episodes use 10000-10099).
VALIDATION_SEED = 20_000


def fit(policy, demos: DemoSet, horizon: int, split: int) -> dict:
    """Teacher-forced error of the policy's predicted actions on the demonstrated frames."""
    import torch

    s, chunk = policy.stats, policy.cfg.chunk
    k = min(horizon, chunk)
    errs, kls = [], []
    for obs, act in zip(demos.observations, demos.actions, strict=True):
        t_len = len(obs)
        x = obs
        if policy.cfg.time_input:
            x = np.column_stack([obs, np.arange(t_len) * demos.control_period])
        x = torch.as_tensor((x - s["obs_mean"]) / s["obs_std"], dtype=torch.float32)
        # Steps past the episode's end hold its last action, as in training (pad="hold").
        raw = np.arange(t_len)[:, None] + np.arange(chunk)[None, :]
        idx = np.minimum(raw, t_len - 1)
        with torch.no_grad():
            out = policy.net(x)[0].numpy()
            if policy.cfg.policy == "act":
                # The CVAE encoder's posterior on the demonstrated chunks: its KL to the
                # prior says how much z carries (0: the decoder ignores z; z = 0 loses nothing).
                a = torch.as_tensor((act[idx] - s["act_mean"]) / s["act_std"], dtype=torch.float32)
                _, mu, logvar = policy.net(x, a, torch.as_tensor(raw >= t_len))
                kls.append(kl_to_prior(mu, logvar).numpy())
        pred = out * s["act_std"] + s["act_mean"]
        errs.append(np.abs(pred - act[idx]))
    e = np.concatenate(errs)  # (frames, chunk, action dim)
    return {
        "horizon": k,
        "split": split,
        "mae_before_split": float(e[:, :k, :split].mean()),
        "mae_from_split": float(e[:, :k, split:].mean()) if split < e.shape[-1] else None,
        "first_action_mae_before_split": float(e[:, 0, :split].mean()),
        # Every position of the chunk (not only the first `horizon`): where in its chunk a
        # policy is least precise.
        "position_mae_before_split": [float(v) for v in e[..., :split].mean(axis=(0, 2))],
        "latent_kl_mean": float(np.concatenate(kls).mean()) if kls else None,
        "frames": int(e.shape[0]),
    }


def _spread(policy, split: int) -> float | None:
    """Std over the overlapping chunk predictions of the step just acted, mean over the action
    components before `split`; None when the policy does not ensemble its chunks."""
    preds = getattr(policy, "_preds", None)
    if not preds or policy.cfg.temporal_ensemble < 0:
        return None
    t = policy._t - 1
    return float(np.array([p[t - q, :split] for q, p in preds]).std(axis=0).mean())


def rollouts(policy, env_id: str, env_kwargs: dict, seeds: list[int], split: int = 7) -> dict:
    """Closed-loop episodes from the given reset seeds: success, the closest distance, the
    range of each numeric info entry over each episode and, for a policy that ensembles its
    chunks, how much the chunks it averages disagree (`ensemble_spread`: the std over them of
    each action component before `split`, averaged over the components; its mean and max over
    the episode's steps, env units)."""
    import gymnasium as gym

    import softrod.envs  # noqa: F401

    env = gym.make(env_id, **env_kwargs)
    rows = []
    try:
        for seed in seeds:
            obs, info = env.reset(seed=seed)
            policy.reset()
            lo: dict[str, float] = {}
            hi: dict[str, float] = {}
            spreads: list[float] = []
            done = False
            while not done:
                action = policy.act(obs)
                if (sp := _spread(policy, split)) is not None:
                    spreads.append(sp)
                obs, _, term, trunc, info = env.step(action)
                done = term or trunc
                for key, v in info.items():
                    if isinstance(v, bool | int | float | np.number) and not isinstance(v, bool):
                        lo[key] = min(lo.get(key, np.inf), float(v))
                        hi[key] = max(hi.get(key, -np.inf), float(v))
            rows.append(
                {
                    "seed": seed,
                    "success": bool(info.get("success", False)),
                    "min_distance": lo.get("distance"),
                    "range": {k: [lo[k], hi[k]] for k in sorted(lo) if k != "distance"},
                    "ensemble_spread": (
                        {"mean": float(np.mean(spreads)), "max": float(np.max(spreads))}
                        if spreads
                        else None
                    ),
                }
            )
    finally:
        env.close()
    return {"success_rate": float(np.mean([r["success"] for r in rows])), "episodes": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("demos", type=Path, help="The demonstrations the policies were trained on.")
    ap.add_argument("policies", type=Path, nargs="+", help="BC/ACT policy.pt files.")
    ap.add_argument(
        "--episodes", type=int, default=20, help="Closed-loop episodes per seed set (0: fit only)."
    )
    ap.add_argument("--horizon", type=int, default=10, help="Predicted actions compared per frame.")
    ap.add_argument("--split", type=int, default=7, help="Action components reported apart.")
    ap.add_argument(
        "--temporal-ensemble",
        default=None,
        help="Closed loop: ensembling weight k >= 0, or off (open-loop chunks) [as trained].",
    )
    ap.add_argument("-o", "--out", type=Path, required=True, help="JSON with every number.")
    args = ap.parse_args()
    te = args.temporal_ensemble
    if te == "off":
        te = -1.0
    elif te is not None and not float(te) >= 0:
        raise SystemExit(f"--temporal-ensemble must be >= 0 or off, got {te}")
    import torch

    torch.set_num_threads(1)
    demos = DemoSet.load(args.demos)
    own = [int(s) for s in demos.seeds[: args.episodes]]
    if own and min(own) < 0:
        # Teleoperated demonstrations may not know their reset seeds (-1): no own-seed episodes.
        raise SystemExit(f"{args.demos}: some demonstrations have no reset seed (-1)")
    unseen = list(range(VALIDATION_SEED, VALIDATION_SEED + args.episodes))
    out = {"demos": str(args.demos), "policies": {}}
    for path in args.policies:
        pol = load_bc_policy(path)
        if te is not None:
            pol.set_temporal_ensemble(float(te))
        closed = args.episodes > 0
        row = {
            "temporal_ensemble": pol.cfg.temporal_ensemble,
            "fit": fit(pol, demos, args.horizon, args.split),
            "own_seeds": rollouts(pol, pol.env_id, pol.env_kwargs, own, args.split)
            if closed
            else None,
            "validation_seeds": rollouts(pol, pol.env_id, pol.env_kwargs, unseen, args.split)
            if closed
            else None,
        }
        out["policies"][str(path)] = row
        f = row["fit"]
        line = (
            f"{path}: fit error {f['mae_before_split']:.4g} (components < {args.split}), "
            f"{f['mae_from_split'] or np.nan:.4g} (from {args.split}), env units"
        )
        if f["latent_kl_mean"] is not None:
            line += f"; latent KL {f['latent_kl_mean']:.3g}"
        if closed:
            line += (
                f"; success on its demonstrations' seeds "
                f"{100 * row['own_seeds']['success_rate']:.0f} %, "
                f"on validation seeds {100 * row['validation_seeds']['success_rate']:.0f} %"
            )
        print(line, flush=True)
        # Written after every policy, so a later failure loses nothing done.
        args.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
