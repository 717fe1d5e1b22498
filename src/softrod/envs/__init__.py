"""Gymnasium environments, registered as `softrod/<Name>-v<N>` on `import softrod.envs`.

| id | task | source |
|---|---|---|
| `softrod/Reach-v0` | five-segment robot reaches random targets | SoftManiSim App. F |
| `softrod/ReachObstacle-v0` | the same with a bar obstacle and its contact penalty | App. F |
| `softrod/TrackTrajectory-v1` | follow a target moving along the A.3 trajectories | App. E/H |
| `softrod/PlanarReach-v0` | planar two-segment arm reaches targets in its plane | SomoGym |
| `softrod/SnakeLocomotion-v1` | soft snake crawls forward (wheels: anisotropic friction) | SoMo |
| `softrod/InHandRotate-v1` | four soft fingers rotate a cube on a palm | SoMo |
| `softrod/PushCube-v1` | soft neck on a quadruped pushes a cube to a target | App. G |
| `softrod/WholeBodyGrasp-v0` | TDCR on a Panda wraps a cylinder, bins it | seed 002 task 1 |
| `softrod/FlipSwitch-v0` | TDCR on a Panda flips a wall switch from behind | seed 002 task 2 |
| `softrod/MagneticNavigate-v0` | steer a magnetic catheter tip to a target by field | #20 |

Every environment is MuJoCo-based (`softrod.mujoco` chains, contact by MuJoCo), multi-step,
reports per-term rewards in `info["reward_terms"]` and a `success` flag in `info`, and renders
with `render_mode="rgb_array"` (set `MUJOCO_GL=egl` before importing mujoco when headless).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from softrod._gl import choose_gl_backend

# Headless Linux: render offscreen with EGL unless the user chose a backend (MuJoCo reads this
# when it is first imported).
choose_gl_backend()

from gymnasium.envs.registration import register, registry  # noqa: E402

if TYPE_CHECKING:
    from softrod.envs._batched import (
        BATCHED_ENV_IDS,
        UNBATCHED_ENV_IDS,
        BatchedEnv,
        compare_with_cpu,
        import_warp,
        make_batched,
    )
    from softrod.envs.batched_reach import BatchedReach

__all__ = [
    "ENV_IDS",
    "BATCHED_ENV_IDS",
    "UNBATCHED_ENV_IDS",
    "BatchedEnv",
    "BatchedReach",
    "compare_with_cpu",
    "import_warp",
    "make_batched",
]

_ENTRIES = {
    "Reach-v0": "softrod.envs.reach_v0:ReachEnv",
    "ReachObstacle-v0": "softrod.envs.reach_obstacle_v0:ReachObstacleEnv",
    "TrackTrajectory-v1": "softrod.envs.track_trajectory_v1:TrackTrajectoryEnv",
    "PlanarReach-v0": "softrod.envs.planar_reach_v0:PlanarReachEnv",
    "SnakeLocomotion-v1": "softrod.envs.snake_locomotion_v1:SnakeLocomotionEnv",
    "InHandRotate-v1": "softrod.envs.in_hand_rotate_v1:InHandRotateEnv",
    "PushCube-v1": "softrod.envs.push_cube_v1:PushCubeEnv",
    "WholeBodyGrasp-v0": "softrod.envs.whole_body_grasp_v0:WholeBodyGraspEnv",
    "FlipSwitch-v0": "softrod.envs.flip_switch_v0:FlipSwitchEnv",
    "MagneticNavigate-v0": "softrod.envs.magnetic_navigate_v0:MagneticNavigateEnv",
}

#: Registered ids, in the order of the table above.
ENV_IDS = tuple(f"softrod/{name}" for name in _ENTRIES)

for _name, _entry in _ENTRIES.items():
    if f"softrod/{_name}" not in registry:
        register(id=f"softrod/{_name}", entry_point=_entry, disable_env_checker=True)


#: Names of the batched layer (`softrod.envs._batched`, MuJoCo Warp, optional; `BatchedReach`
#: from `softrod.envs.batched_reach`), imported on first use.
_BATCHED_NAMES = (
    "BATCHED_ENV_IDS",
    "UNBATCHED_ENV_IDS",
    "BatchedEnv",
    "BatchedReach",
    "compare_with_cpu",
    "import_warp",
    "make_batched",
)


def __getattr__(name: str) -> Any:
    if name == "BatchedReach":
        from softrod.envs.batched_reach import BatchedReach

        return BatchedReach
    if name in _BATCHED_NAMES:
        from softrod.envs import _batched

        return getattr(_batched, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
