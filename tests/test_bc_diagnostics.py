"""examples/learning/bc_diagnostics.py: the teacher-forced fit compares each frame's predicted
chunk with the actions that follow it (held past the episode's end), and the closed loop reports
each episode's closest distance and the range of the task's other numbers."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from softrod.learn import DemoSet  # noqa: E402


class _Oracle:
    """A chunk 'policy' that reads the frame index from the time input and returns the
    demonstrated actions from that frame on (the last one held), plus `bias`."""

    def __init__(self, actions: np.ndarray, period: float, chunk: int, bias: np.ndarray) -> None:
        self.actions, self.period, self.chunk, self.bias = actions, period, chunk, bias

    def __call__(self, x):
        t = np.rint(x[:, -1].numpy() / self.period).astype(int)
        idx = np.minimum(t[:, None] + np.arange(self.chunk)[None, :], len(self.actions) - 1)
        return torch.as_tensor(self.actions[idx] + self.bias), None, None


def test_fit_error_is_the_offset_of_the_predicted_chunks(learning_example) -> None:
    diag = learning_example("bc_diagnostics")
    rng = np.random.default_rng(0)
    period, chunk, t_len = 0.05, 4, 7
    obs, act = rng.normal(size=(t_len, 3)), rng.normal(size=(t_len, 5))
    demos = DemoSet(
        "softrod/FlipSwitch-v0",
        [obs],
        [act],
        np.array([True]),
        np.array([3]),
        control_period=period,
    )
    stats = {
        "obs_mean": np.zeros(4),
        "obs_std": np.ones(4),
        "act_mean": np.zeros(5),
        "act_std": np.ones(5),
    }
    cfg = SimpleNamespace(chunk=chunk, time_input=True, policy="mlp")
    exact = SimpleNamespace(net=_Oracle(act, period, chunk, np.zeros(5)), stats=stats, cfg=cfg)
    out = diag.fit(exact, demos, horizon=10, split=2)
    assert out["horizon"] == chunk and out["frames"] == t_len
    assert out["mae_before_split"] < 1e-6 and out["mae_from_split"] < 1e-6
    # An offset of 0.1 on the first two components and 0.3 on the rest is what the fit reports.
    bias = np.array([0.1, -0.1, 0.3, 0.3, -0.3])
    off = SimpleNamespace(net=_Oracle(act, period, chunk, bias), stats=stats, cfg=cfg)
    out = diag.fit(off, demos, horizon=2, split=2)
    assert out["horizon"] == 2
    assert out["mae_before_split"] == pytest.approx(0.1, abs=1e-6)
    assert out["mae_from_split"] == pytest.approx(0.3, abs=1e-6)
    assert out["first_action_mae_before_split"] == pytest.approx(0.1, abs=1e-6)
    # Every position of the chunk is reported, whatever the horizon; an MLP has no latent.
    assert out["position_mae_before_split"] == pytest.approx([0.1] * chunk, abs=1e-6)
    assert out["latent_kl_mean"] is None


def test_latent_kl_is_the_posteriors_divergence_from_the_prior(learning_example) -> None:
    """An ACT whose CVAE encoder outputs mu = c, log var = 0 for every chunk has
    KL = latent c^2 / 2; mu = 0 gives 0 (the decoder ignores z)."""
    from softrod.learn import BCConfig, BCPolicy
    from softrod.learn._bc import _build_net

    diag = learning_example("bc_diagnostics")
    rng = np.random.default_rng(1)
    demos = DemoSet(
        "softrod/FlipSwitch-v0",
        [rng.normal(size=(6, 3))],
        [rng.normal(size=(6, 2))],
        np.array([True]),
        np.array([3]),
        control_period=0.05,
    )
    cfg = BCConfig(policy="act", chunk=4, hidden=8, layers=1, heads=2, feedforward=8, latent=5)
    stats = {"obs_mean": np.zeros(3), "obs_std": np.ones(3)}
    stats |= {"act_mean": np.zeros(2), "act_std": np.ones(2)}
    net = _build_net(cfg, 3, 2)
    pol = BCPolicy(net, cfg, stats, "softrod/FlipSwitch-v0", {})
    for c, want in ((0.0, 0.0), (1.5, 5 * 1.5**2 / 2)):
        with torch.no_grad():
            net.to_latent.weight.zero_()
            net.to_latent.bias.copy_(torch.tensor([c] * 5 + [0.0] * 5))
        out = diag.fit(pol, demos, horizon=2, split=1)
        assert out["latent_kl_mean"] == pytest.approx(want, rel=1e-6)
        assert len(out["position_mae_before_split"]) == 4


def test_rollouts_report_closest_distance_and_ranges(learning_example) -> None:
    diag = learning_example("bc_diagnostics")
    import gymnasium as gym

    import softrod.envs  # noqa: F401

    env = gym.make("softrod/PlanarReach-v0")
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    env.close()
    policy = SimpleNamespace(reset=lambda: None, act=lambda obs: zero)
    out = diag.rollouts(policy, "softrod/PlanarReach-v0", {"episode_steps": 5}, [7])
    (row,) = out["episodes"]
    assert row["seed"] == 7 and out["success_rate"] == float(row["success"])
    assert row["min_distance"] > 0
    # Every other number of the task's info comes as [min, max] over the episode.
    assert all(lo <= hi for lo, hi in row["range"].values())
    assert "distance" not in row["range"]
    assert row["ensemble_spread"] is None  # the policy does not ensemble chunks


def test_ensemble_spread_is_the_disagreement_of_the_averaged_chunks(learning_example) -> None:
    """At step t an ensembling policy averages entry t - q of the chunks queried at q in
    (t - k, t]; the spread is their std (mean over the components before split)."""
    from softrod.learn import BCConfig, BCPolicy

    diag = learning_example("bc_diagnostics")
    k, steps = 5, 9
    stats = {n: np.zeros(1) for n in ("obs_mean", "act_mean")}
    stats |= {n: np.ones(1) for n in ("obs_std", "act_std")}
    cfg = BCConfig(chunk=k, hidden=8, layers=1)
    pol = BCPolicy(torch.nn.Linear(1, 1), cfg, stats, "softrod/FlipSwitch-v0", {})
    # Chunk queried at q: entry j is (100 q + j, 7) -- the second component agrees always.
    pol._predict = lambda obs: np.column_stack(  # type: ignore[method-assign]
        [100.0 * pol._t + np.arange(k), np.full(k, 7.0)]
    )
    for t in range(steps):
        pol.act(np.zeros(1))
        # The averaged entries are 100 q + t - q = 99 q + t over the queries q still open.
        want = 99.0 * np.arange(max(0, t - k + 1), t + 1).std()
        assert diag._spread(pol, 1) == pytest.approx(want, rel=1e-9), t
        assert diag._spread(pol, 2) == pytest.approx(want / 2, rel=1e-9), t
    pol.set_temporal_ensemble(-1.0)
    pol.act(np.zeros(1))
    assert diag._spread(pol, 1) is None  # open-loop chunks average nothing
