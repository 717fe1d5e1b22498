"""Physics of the contact tasks: the snake needs anisotropic friction, the finger gait turns
the cube, the neck moves the cube only by touching it (no scripted forces)."""

from __future__ import annotations

import math
import os

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")

from softrod.envs.in_hand_rotate_v1 import InHandRotateEnv, rotation_gait  # noqa: E402
from softrod.envs.push_cube_v1 import SUCCESS_RADIUS, PushCubeEnv  # noqa: E402
from softrod.envs.snake_locomotion_v1 import SnakeLocomotionEnv, serpentine_gait  # noqa: E402
from softrod.learn import PushExpert, record_demos  # noqa: E402

#: SoMo (B.5): with anisotropic friction the travelling wave moves the snake forward; with
#: isotropic friction it makes no net progress. Thresholds in metres of centre-of-mass travel
#: over the 10 s episode (measured: about 3.3 m and -0.02 m).
SNAKE_MIN_PROGRESS = 0.5
SNAKE_MAX_ISOTROPIC = 0.1
#: The gait turns the cube by about 800 deg in 10 s (SoMo hardware: 582 deg in 10 cycles);
#: require half a turn. Without actions the cube must not turn by more than this [deg].
HAND_MIN_ROTATION_DEG = 180.0
HAND_IDLE_ROTATION_DEG = 1.0
#: PushCube-v1's expert: seeded episodes and the fewest it must solve (it solves 93 of seeds
#: 0-99 and 86 of seeds 10000-10099; one miss in five is allowed).
PUSH_EXPERT_SEEDS = range(5)
PUSH_EXPERT_MIN_WINS = 4


def _run_snake(anisotropic: bool) -> float:
    env = SnakeLocomotionEnv(anisotropic=anisotropic)
    env.reset(seed=0)
    for k in range(env.episode_steps):
        _, _, term, _, info = env.step(serpentine_gait(k * env.dt, env.n_seg))
        assert not term
    return info["progress"]


def test_snake_advances_only_with_anisotropic_friction() -> None:
    forward = _run_snake(anisotropic=True)
    isotropic = _run_snake(anisotropic=False)
    assert forward > SNAKE_MIN_PROGRESS
    assert abs(isotropic) < SNAKE_MAX_ISOTROPIC


def test_finger_gait_rotates_the_cube_and_idle_fingers_do_not() -> None:
    env = InHandRotateEnv()
    env.reset(seed=0)
    for k in range(env.episode_steps):
        _, _, term, _, info = env.step(rotation_gait(k * env.dt))
        assert not term, "the gait must not drop the cube"
    assert math.degrees(info["rotation"]) > HAND_MIN_ROTATION_DEG
    assert info["success"]

    env.reset(seed=0)
    for _ in range(40):
        _, _, _, _, info = env.step(np.zeros(8))
    assert abs(math.degrees(info["rotation"])) < HAND_IDLE_ROTATION_DEG
    assert not info["success"]


def test_push_cube_moves_only_by_contact_and_the_expert_solves_it() -> None:
    env = PushCubeEnv()
    env.reset(seed=0)
    start = env.data.xpos[env._cube].copy()
    for _ in range(30):
        _, _, _, _, info = env.step(np.zeros(6))
    assert np.linalg.norm(info["cube"] - start) < 1e-3, "no action, no contact: the cube rests"

    # The scripted expert pushes it into the target radius (issue 17 item 1: >= 80 % over 100
    # episodes, docs/learning.md); it steers the neck only, so the cube moved by contact.
    expert = PushExpert(env)
    wins = 0
    for seed in PUSH_EXPERT_SEEDS:
        obs, _ = env.reset(seed=seed)
        expert.reset()
        start = env.data.xpos[env._cube][:2].copy()
        assert np.linalg.norm(start - env.cube_target) > SUCCESS_RADIUS, "starts unsolved"
        for _ in range(env.episode_steps):
            obs, _, _, _, info = env.step(expert.act(obs))
        wins += info["success"]
    assert wins >= PUSH_EXPERT_MIN_WINS, f"expert solved {wins}/{len(PUSH_EXPERT_SEEDS)}"

    # `softrod demos PushCube-v1` finds it by the registered id (one recorded, successful demo).
    demos = record_demos("softrod/PushCube-v1", 1, seed=0, max_attempts=1)
    assert demos.n_episodes == 1 and demos.success.all()
    assert demos.observations[0].shape == (120, 31) and demos.actions[0].shape == (120, 6)


# ---------------------------------------------------------------------------------------------
# Every task is sound: doing nothing or acting at random does not solve it (issue 17, item 1).

#: Seeded episodes per policy, and the most of them that may succeed (5 %).
SOUND_EPISODES = 50
SOUND_MAX_SUCCESS = int(0.05 * SOUND_EPISODES)


def _success_count(env_id: str, policy: str) -> int:
    import gymnasium as gym

    env = gym.make(env_id)
    wins = 0
    for ep in range(SOUND_EPISODES):
        env.reset(seed=5000 + ep)
        env.action_space.seed(ep)
        zero = np.zeros(env.action_space.shape, dtype=env.action_space.dtype)
        done, info = False, {}
        while not done:
            action = env.action_space.sample() if policy == "random" else zero
            _, _, term, trunc, info = env.step(action)
            done = term or trunc
        wins += bool(info.get("success", False))
    env.close()
    return wins


def _all_env_ids() -> tuple[str, ...]:
    from softrod.envs import ENV_IDS

    return ENV_IDS


@pytest.mark.parametrize("env_id", _all_env_ids())
def test_random_and_zero_policies_do_not_solve_the_task(env_id: str) -> None:
    for policy in ("random", "zero"):
        wins = _success_count(env_id, policy)
        assert wins <= SOUND_MAX_SUCCESS, f"{env_id}: {policy} policy won {wins}/{SOUND_EPISODES}"


def test_in_hand_rotation_counts_only_an_upright_held_cube() -> None:
    """A cube knocked off the palm while tumbling is neither rotated nor a success (v0 counted
    its tumbling yaw)."""
    env = InHandRotateEnv()
    env.reset(seed=0)
    qadr = env.model.jnt_qposadr[env.model.joint("cube_free").id]
    # Tip the cube onto an edge (45 deg about x) and spin it about z: no rotation is credited.
    import mujoco

    from softrod.rods.so3 import quat_from_axis_angle

    env.data.qpos[qadr + 3 : qadr + 7] = quat_from_axis_angle([1, 0, 0], math.radians(45))
    env.data.qvel[env._cube_qvel + 3 : env._cube_qvel + 6] = [0.0, 0.0, 20.0]
    mujoco.mj_forward(env.model, env.data)
    _, _, _, _, info = env.step(np.zeros(8))
    assert info["tilt"] > math.radians(20) and info["rotation"] == 0.0 and not info["success"]


def test_in_hand_tilt_weight_is_opt_in_shaping() -> None:
    """`tilt_weight` adds -w x tilt to the reward and nothing else: the default reward terms are
    unchanged, and a tipped cube costs w x its tilt per step; a bad weight is one ValueError."""
    import mujoco

    from softrod.rods.so3 import quat_from_axis_angle

    plain, shaped = InHandRotateEnv(), InHandRotateEnv(tilt_weight=2.0)
    for env in (plain, shaped):
        env.reset(seed=3)
        qadr = env.model.jnt_qposadr[env.model.joint("cube_free").id]
        env.data.qpos[qadr + 3 : qadr + 7] = quat_from_axis_angle([1, 0, 0], math.radians(45))
        mujoco.mj_forward(env.model, env.data)
    _, r0, _, _, i0 = plain.step(np.zeros(8))
    _, r1, _, _, i1 = shaped.step(np.zeros(8))
    assert "tilt" not in i0["reward_terms"]
    assert i1["reward_terms"]["tilt"] == pytest.approx(-2.0 * i1["tilt"])
    assert i1["tilt"] == pytest.approx(i0["tilt"]) and i1["tilt"] > math.radians(20)
    assert r1 - r0 == pytest.approx(-2.0 * i1["tilt"])
    with pytest.raises(ValueError, match="tilt_weight"):
        InHandRotateEnv(tilt_weight=-1.0)


#: Gait steps of the rotation-cap test (3 s: the gait turns the cube past 1 rad by then) and the
#: cap [rad], below what the gait reaches so that the cap binds.
CAP_STEPS = 60
CAP_RAD = 0.5


def test_in_hand_rotation_cap_pays_rotation_up_to_the_cap() -> None:
    """`rotation_cap` changes only the `rotation` term: summed over an episode it pays 10 x
    min(rotation, cap) (it telescopes), while the plain reward pays 10 x rotation; the motion is
    the same; a cap <= 0 is one ValueError."""
    plain, capped = InHandRotateEnv(), InHandRotateEnv(rotation_cap=CAP_RAD)
    paid = {}
    for name, env in (("plain", plain), ("capped", capped)):
        env.reset(seed=1)
        total = 0.0
        for k in range(CAP_STEPS):
            _, _, term, _, info = env.step(rotation_gait(k * env.dt))
            total += info["reward_terms"]["rotation"]
            assert not term
        paid[name] = (total, info["rotation"])
    (total_plain, rot_plain), (total_capped, rot_capped) = paid["plain"], paid["capped"]
    assert rot_capped == rot_plain and rot_plain > 2 * CAP_RAD
    assert total_plain == pytest.approx(10.0 * rot_plain)
    assert total_capped == pytest.approx(10.0 * CAP_RAD)
    with pytest.raises(ValueError, match="rotation_cap"):
        InHandRotateEnv(rotation_cap=0.0)
