"""`softrod.envs.make_batched` (MuJoCo Warp) against the CPU envs, PPO on it, its benchmark.

Needs the optional `warp` extra (and skrl for PPO); skipped without them (CI installs none).
Runs on Warp's CPU device unless SOFTROD_WARP_DEVICE names another (e.g. cuda:0).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco_warp")
torch = pytest.importorskip("torch")

from softrod.envs import (  # noqa: E402
    BATCHED_ENV_IDS,
    ENV_IDS,
    UNBATCHED_ENV_IDS,
    compare_with_cpu,
    make_batched,
)

DEVICE = os.environ.get("SOFTROD_WARP_DEVICE", "cpu")
#: Distance agreement over 12 control steps [m]: float32 (Warp) against float64 (MuJoCo C), as
#: tests/test_batched_reach.py's 0.1 mm; a wrong index, sign or unit moves the tip by cm.
TIP_TOL = 1e-4
#: Observation agreement (positions [m], velocities [m/s], normalised commands): velocities
#: carry the float32 differences amplified by 1/dt.
OBS_TOL = 5e-3
#: Reward agreement [1]: the distance term alone changes by 10 x TIP_TOL.
REWARD_TOL = 2e-3
#: Horizons short enough that the 12 compared steps reach an auto-reset (TrackTrajectory: a
#: 0.5 s loop after 2 held steps, so the target moves and success is judged at step 12).
SHORT = {
    "softrod/Reach-v0": {"episode_steps": 10},
    "softrod/PlanarReach-v0": {"episode_steps": 10},
    "softrod/MagneticNavigate-v0": {"episode_steps": 10},
    "softrod/TrackTrajectory-v1": {"hold_steps": 2, "period": 0.5},
}
#: `direct_solve=True` against the default, any observation component and the reward: the
#: same float32 linear system solved directly (Cholesky) or by PCG to a 1e-5 relative
#: residual, velocities dividing the difference by the step (measured 6.0e-5 over 25 steps).
LEAN_TOL = 5e-4


def test_every_registered_env_is_listed() -> None:
    assert set(BATCHED_ENV_IDS) | set(UNBATCHED_ENV_IDS) == set(ENV_IDS)
    assert not set(BATCHED_ENV_IDS) & set(UNBATCHED_ENV_IDS)
    with pytest.raises(ValueError, match="not batched"):
        make_batched("SnakeLocomotion-v1", 2, DEVICE)
    # Per-episode robot perturbations would be dropped by the one shared model: refused.
    with pytest.raises(ValueError, match="randomize is not batched"):
        make_batched("Reach-v0", 2, DEVICE, randomize={"tendon_friction": 0.1})


@pytest.mark.parametrize("env_id", BATCHED_ENV_IDS)
def test_batched_env_matches_cpu_env(env_id: str) -> None:
    """Two worlds with different tasks and random actions follow the CPU env step for step,
    through an auto-reset."""
    err = compare_with_cpu(env_id, 2, steps=12, device=DEVICE, seed=3, **SHORT.get(env_id, {}))
    assert err["reset_obs_error"] <= 1e-5
    assert err["tip_error_m"] <= TIP_TOL
    assert err["obs_error"] <= OBS_TOL
    assert err["reward_error"] <= REWARD_TOL
    assert err["success_mismatch"] == 0 and err["truncated_mismatch"] == 0
    assert not err["overflow"]


def test_contact_free_proof() -> None:
    """`lean` switches contacts off only where no pair can touch for any joint angles: the
    hanging robot clears the floor by 9.0 cm however it bends, not ReachObstacle's bar, and not
    a floor raised into its reach (host models only, no device)."""
    import gymnasium as gym
    import mujoco

    from softrod.envs._batched import _contacts_impossible, _no_constraint_rows

    def host(env_id: str) -> object:
        env = gym.make(env_id, disable_env_checker=True).unwrapped
        env.reset(seed=0)
        return env

    reach = host("softrod/Reach-v0")
    m, d = reach.model, reach.data  # type: ignore[attr-defined]
    assert _contacts_impossible(m, d) and _no_constraint_rows(m)
    obstacle = host("softrod/ReachObstacle-v0")
    assert not _contacts_impossible(obstacle.model, obstacle.data)  # type: ignore[attr-defined]
    m.geom_pos[0, 2] = 0.0  # the floor plane raised to the hanging robot's tip
    mujoco.mj_forward(m, d)
    assert not _contacts_impossible(m, d)
    m.jnt_limited[0] = 1
    assert not _no_constraint_rows(m)


def test_lean_matches_mujoco_defaults() -> None:
    """Reach with `lean` (no contacts, 1-row buffers, a light observe pass) is bit-for-bit
    MuJoCo Warp's default configuration, step for step through an auto-reset; `direct_solve`
    stays within LEAN_TOL of it."""
    import mujoco_warp as mjw

    lean, full, direct = (
        make_batched("Reach-v0", 2, DEVICE, episode_steps=4, lean=flag, direct_solve=solve)
        for flag, solve in ((True, False), (False, False), (True, True))
    )
    assert lean.contact_free and lean.constraint_free and lean.data.njmax == 1
    assert lean.model.opt.disableflags & int(mjw.DisableBit.CONTACT)
    assert lean.model.opt.run_qacc_smooth and not direct.model.opt.run_qacc_smooth
    assert not full.contact_free and full.data.njmax > 1
    actions = np.random.default_rng(5).uniform(-1, 1, (6, 2, 10)).astype(np.float32)
    for env in (lean, full, direct):
        env.reset(seed=2)
    for k in range(6):
        o_lean, r_lean, *_, info = lean.step(actions[k])
        o_full, r_full, *_, info_full = full.step(actions[k])
        o_direct, r_direct, *_ = direct.step(actions[k])
        assert torch.equal(o_lean, o_full) and torch.equal(r_lean, r_full)
        assert torch.equal(info["distance"], info_full["distance"])
        assert float((o_direct - o_lean).abs().max()) <= LEAN_TOL
        assert float((r_direct - r_lean).abs().max()) <= LEAN_TOL


def test_lean_magnetic_is_bit_for_bit() -> None:
    """MagneticNavigate with `lean` (the torques between `mjw.step1` and `mjw.step2`, no
    separate kinematics pass per substep) is bit-for-bit MuJoCo Warp's default configuration."""
    import warp as wp

    lean, full = (
        make_batched("MagneticNavigate-v0", 2, DEVICE, lean=flag) for flag in (True, False)
    )
    actions = np.random.default_rng(7).uniform(-1, 1, (3, 2, 3)).astype(np.float32)
    lean.reset(seed=4)
    full.reset(seed=4)
    for k in range(3):
        o_lean, r_lean, *_ = lean.step(actions[k])
        o_full, r_full, *_ = full.step(actions[k])
        assert torch.equal(o_lean, o_full) and torch.equal(r_lean, r_full)
    assert torch.equal(wp.to_torch(lean.data.qvel), wp.to_torch(full.data.qvel))


def test_obstacle_contacts_match() -> None:
    """World 0 curls into the bar (contacts from step 3 on): the batch counts the same contacts
    (the `obstacle` term and success agree). Over 8 steps the float32 contact dynamics stay
    within 0.2 mm of MuJoCo C's; later, slammed into the bar, they part (by 5 mm at step 9)."""
    actions = np.random.default_rng(4).uniform(-1, 1, (8, 2, 10))
    actions[:, 0] = [1, 0] * 5
    err = compare_with_cpu("ReachObstacle-v0", 2, steps=8, device=DEVICE, seed=3, actions=actions)
    assert err["cpu_contact_steps"] >= 5
    assert err["tip_error_m"] <= 2e-4
    assert err["reward_error"] <= 2e-3
    assert err["success_mismatch"] == 0 and not err["overflow"]


def test_obstacle_overflow_is_flagged_and_reset() -> None:
    """World 0 curls into the bar. With the default capacity (`_capacity`: 58 pairs, 232
    rows) no world overflows; with a 4-row njmax its contact rows overflow: that world alone
    is flagged (`info["overflow"]`), terminated with reward -1 and started over."""
    actions = np.random.default_rng(4).uniform(-1, 1, (6, 2, 10)).astype(np.float32)
    actions[:, 0] = [1, 0] * 5
    env = make_batched("ReachObstacle-v0", 2, DEVICE)
    assert (env.nconmax, env.njmax) == (58, 232)
    env.reset(seed=3)
    rows = 0
    for a in actions:
        _, _, term, _, info = env.step(a)
        rows = max(rows, int(env.data.nefc.numpy().max()))
        assert not info["overflow"].any() and not term.any()
    assert rows > 4 and not env.overflow() and env.overflow_steps() == 0
    # The forced overflow runs in a child process: MuJoCo Warp's kernels crashed one CI run
    # (segfault in `regularize_constraint` on Warp's CPU device, 2026-11-27, 1 of 4 runs) while a
    # world's rows overflowed, and a crash must not take the test worker (and the suite) down.
    # A crash is reported as a skip naming it; any failed assertion fails the test.
    child = subprocess.run(
        [sys.executable, "-c", _OVERFLOW_CHILD, DEVICE],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if child.returncode < 0:
        pytest.skip(f"MuJoCo Warp crashed (signal {-child.returncode}) in the forced overflow")
    assert child.returncode == 0, child.stdout[-2000:] + child.stderr[-2000:]


#: The forced-overflow half of the test above, run in a child process (argument: the device).
_OVERFLOW_CHILD = """
import sys
import numpy as np
import torch
from softrod.envs import make_batched

actions = np.random.default_rng(4).uniform(-1, 1, (6, 2, 10)).astype(np.float32)
actions[:, 0] = [1, 0] * 5
tiny = make_batched("ReachObstacle-v0", 2, sys.argv[1], njmax=4)
tiny.reset(seed=3)
flagged = 0
for a in actions:
    obs, reward, term, _, info = tiny.step(a)
    assert torch.equal(term, info["overflow"]) and not info["overflow"][1]
    if info["overflow"][0]:
        flagged += 1
        assert float(reward[0]) == -1.0 and not info["success"][0]
        assert not info["final_info"]["success"][0]
        assert torch.all(obs[0, 24:34] == 0)  # started over
assert flagged >= 1 and tiny.overflow() and tiny.overflow_steps() == flagged
"""


def test_auto_reset_same_step() -> None:
    """At the shared horizon every world truncates and starts its next episode in that step."""
    env = make_batched("Reach-v0", 3, DEVICE, episode_steps=2)
    obs, info = env.reset(seed=1)
    assert obs.shape == (3, 34) and obs.dtype == torch.float32
    assert str(obs.device).startswith(env.torch_device.split(":")[0])
    targets = obs[:, 18:21].clone()
    _, _, term, trunc, info = env.step(np.ones((3, 10), dtype=np.float32))
    assert not trunc.any() and not term.any() and "final_obs" not in info
    obs, reward, term, trunc, info = env.step(torch.ones(3, 10))
    assert trunc.all() and not term.any() and reward.shape == (3,)
    # The final observation keeps the commanded curvature; the new episode starts from zero.
    assert torch.all(info["final_obs"][:, 24:34] > 0) and torch.all(obs[:, 24:34] == 0)
    assert torch.allclose(info["final_obs"][:, 18:21], targets)
    assert not torch.allclose(obs[:, 18:21], targets)
    assert info["final_info"]["success"].dtype == torch.bool
    with pytest.raises(ValueError, match="action must have shape"):
        env.step(np.zeros((2, 10), dtype=np.float32))


def test_unstable_world_terminates_and_resets_alone() -> None:
    """A NaN injected into one world's state: that world alone terminates (reward -1,
    info["unstable"]) and starts over; the others step exactly as an untouched batch."""
    import warp as wp

    env, ref = (make_batched("Reach-v0", 3, DEVICE, episode_steps=8) for _ in range(2))
    env.reset(seed=1)
    ref.reset(seed=1)
    actions = np.random.default_rng(0).uniform(-1, 1, (5, 3, 10)).astype(np.float32)
    for k in range(2):
        env.step(actions[k])
        ref.step(actions[k])
    wp.to_torch(env.data.qvel)[1, 0] = float("nan")
    obs, reward, term, trunc, info = env.step(actions[2])
    obs_ref, *_ = ref.step(actions[2])
    assert term.tolist() == [False, True, False] and not trunc.any()
    assert info["unstable"].tolist() == [False, True, False] and float(reward[1]) == -1.0
    assert torch.isfinite(obs).all() and torch.isfinite(info["final_obs"]).all()
    # World 1 starts over (zero curvature commands, a finite state); 0 and 2 continue.
    assert torch.all(obs[1, 24:34] == 0) and torch.isfinite(wp.to_torch(env.data.qpos)).all()
    assert torch.equal(obs[[0, 2]], obs_ref[[0, 2]])
    for k in range(3, 5):
        obs, reward, term, _, info = env.step(actions[k])
        obs_ref, reward_ref, *_ = ref.step(actions[k])
        assert not term.any() and torch.isfinite(reward).all()
        assert torch.equal(obs[[0, 2]], obs_ref[[0, 2]])


def test_state_dict_continues_bit_for_bit() -> None:
    """`state_dict` mid-episode, `load_state_dict` into another batch (reset with other
    tasks): the same actions give the same observations, rewards and flags, bit for bit,
    through an auto-reset (the next tasks come from the restored Generator). MagneticNavigate:
    its field is task state the step reads (Reach's is covered by tests/test_device_ppo.py)."""
    env, other = (make_batched("MagneticNavigate-v0", 2, DEVICE, episode_steps=3) for _ in "ab")
    env.reset(seed=1)
    other.reset(seed=2)
    actions = np.random.default_rng(0).uniform(-1, 1, (5, 2, 3)).astype(np.float32)
    env.step(actions[0])
    state = env.state_dict()
    other.load_state_dict(state)
    truncated = []
    for a in actions[1:]:
        out, out_other = env.step(a), other.step(a)
        for x, y in zip(out[:4], out_other[:4], strict=True):
            assert torch.equal(x, y)
        truncated.append(bool(out[3].all()))
    # Steps 2, 3 (the horizon: new tasks), 1, 2 of an episode.
    assert truncated == [False, True, False, False]
    # A checkpoint from before the overflow flag loads (no world flagged).
    old = {k: v for k, v in state["arrays"].items() if k != "overflowed"}
    other.load_state_dict({**state, "arrays": old})
    assert not other.overflowed.numpy().any()
    with pytest.raises(ValueError, match=r"state\['num_envs'\] must be 2, got 3"):
        other.load_state_dict({**state, "num_envs": 3})
    with pytest.raises(ValueError, match=r"state\['arrays'\]\['obs'\] must have shape"):
        other.load_state_dict({**state, "arrays": {**state["arrays"], "obs": torch.zeros(3)}})


def test_train_ppo_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A few worlds, a few hundred transitions of PPO on the device, saved and evaluated."""
    pytest.importorskip("skrl")
    from softrod.cli import main

    torch.set_num_threads(1)
    run = tmp_path / "ppo"
    args = ["train", "Reach-v0", "--algo", "ppo", "--num-envs", "4", "--device", DEVICE]
    args += ["--timesteps", "48", "--eval-episodes", "2", "-o", str(run)]
    args += ["--env-kwargs", '{"episode_steps": 12}']
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "transitions: 192" in out and "final_distance_mean:" in out
    assert (run / "policy.pt").is_file() and (run / "eval.json").is_file()
    from softrod.learn.device_ppo import load_ppo_policy

    policy = load_ppo_policy(run)
    action = policy(np.zeros(34, dtype=np.float32))
    assert action.shape == (10,) and np.all(np.abs(action) <= 1.0)
    assert policy.env_kwargs == {"episode_steps": 12}  # type: ignore[attr-defined]
    # `softrod eval` reads the run (its env and kwargs recorded with the policy).
    assert main(["eval", str(run), "--episodes", "1", "--json"]) == 0
    assert '"episodes": 1' in capsys.readouterr().out


def test_bench_batched_envs(capsys: pytest.CaptureFixture[str]) -> None:
    from softrod.cli import main

    args = ["bench", "batched-envs", "--envs", "PlanarReach-v0", "--worlds", "2"]
    assert main([*args, "--steps", "3", "--device", DEVICE]) == 0
    out = capsys.readouterr().out
    assert "batched_envs.PlanarReach-v0.worlds_2.steps_per_s:" in out
    assert "batched_envs.PlanarReach-v0.worlds_2.data_kib_per_world:" in out
    assert main([*args, "--configs", "lean,fast"]) != 0
    assert main(["bench", "batched-envs", "--envs", "PushCube-v1"]) != 0
