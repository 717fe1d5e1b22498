"""`softrod/TrackTrajectory-v1`: follow a moving target along SoftManiSim's trajectories (A.3).

v1 (task meaning changed from v0): success is judged on the tracking error over the whole loop
(its mean, as A.3/A.4 report tracking), not on the distance at the last step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from softrod.control import TRAJECTORIES, make_trajectory
from softrod.envs._base import obs_box
from softrod.envs.reach_v0 import ReachEnv

__all__ = ["TrackTrajectoryEnv", "TRAJECTORY_NAMES"]

TRAJECTORY_NAMES = tuple(sorted(TRAJECTORIES))
#: Box of trajectory start points [m] (inside the Reach workspace, leaving room for the shape).
CENTER_LOW = (-0.06, -0.06, 0.13)
CENTER_HIGH = (0.06, 0.06, 0.19)


class TrackTrajectoryEnv(ReachEnv):
    """The `Reach-v0` robot follows a target moving along one of ALGORITHMS.md A.3's paths.

    Each episode picks a trajectory (`trajectory`, or uniformly among square, circle,
    figure8, helix, square_helix when None) and a start point in a box, scales it by `scale`
    (1 = the paper's 0.2 m radius / 0.4 m square; the default 0.25 fits this robot's workspace)
    and runs one loop of `period` seconds after `hold_steps` steps with the target at rest, so
    that the robot first converges to the start.

    Observation, shape (37,), float32:

    | index | component | unit |
    |---|---|---|
    | 0-14 | distal end of segments 1..5, world frame | m |
    | 15-17 | tip velocity, world frame | m/s |
    | 18-20 | target position, world frame | m |
    | 21-23 | target - tip | m |
    | 24-33 | commanded curvature of segments 1..5 / kappa_max | 1 |
    | 34-36 | target velocity, world frame | m/s |

    Action, shape (10,), in [-1, 1]: as `Reach-v0` (curvature rates, kappa_rate [1/m per step]).

    Reward terms: `track` = exp(-500 d^2) (SoftManiSim's tracking reward, App. H), `distance` =
    -`distance_weight` d. `info`: `tracking_error` (mean d over the steps since the target
    started moving) [m], `success` (at the episode's last step: `tracking_error` <=
    `success_radius`; False before), `distance` [m], `tip`, `target`, `trajectory` (name),
    `phase` (fraction of the loop done).
    """

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        trajectory: str | None = None,
        scale: float = 0.25,
        period: float = 6.0,
        hold_steps: int = 20,
        links: int = 10,
        tendon_stiffness: float = 2.0e4,
        kappa_max: float = 12.0,
        kappa_rate: float = 1.5,
        distance_weight: float = 10.0,
        success_radius: float = 0.02,
        width: int = 320,
        height: int = 240,
    ) -> None:
        if trajectory is not None and trajectory not in TRAJECTORY_NAMES:
            raise ValueError(
                f"trajectory must be one of {TRAJECTORY_NAMES} or None, got {trajectory!r}"
            )
        if not scale > 0 or not period > 0 or hold_steps < 0:
            raise ValueError(
                f"scale and period must be > 0 and hold_steps >= 0, got {scale}, "
                f"{period}, {hold_steps}"
            )
        self.trajectory = trajectory
        self.scale = float(scale)
        self.period = float(period)
        self.hold_steps = int(hold_steps)
        loop_steps = int(math.ceil(period / self.control_period))
        super().__init__(
            render_mode,
            episode_steps=self.hold_steps + loop_steps,
            links=links,
            tendon_stiffness=tendon_stiffness,
            kappa_max=kappa_max,
            kappa_rate=kappa_rate,
            distance_weight=distance_weight,
            success_radius=success_radius,
            width=width,
            height=height,
        )
        n_obs = int(np.prod(self.observation_space.shape or (0,))) + 3
        self.observation_space = obs_box(n_obs)
        self._path = np.zeros((1, 3))
        self._path_vel = np.zeros((1, 3))
        self._name = TRAJECTORY_NAMES[0]
        self._error_sum, self._error_steps = 0.0, 0

    def _reset_task(self) -> None:
        self._reset_robot()
        if self.trajectory is None:
            self._name = TRAJECTORY_NAMES[int(self.np_random.integers(len(TRAJECTORY_NAMES)))]
        else:
            self._name = self.trajectory
        center = self.np_random.uniform(CENTER_LOW, CENTER_HIGH)
        _, self._path, self._path_vel = make_trajectory(
            self._name, center, dt=self.dt, loops=1.0, scale=self.scale, period=self.period
        )
        self._move_target()
        self._error_sum, self._error_steps = 0.0, 0

    def _path_index(self) -> int:
        return int(min(max(self._step_count - self.hold_steps, 0), len(self._path) - 1))

    def _move_target(self) -> None:
        self._set_target(self._path[self._path_index()])

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        # `_step_count` is already incremented when called from `step`.
        self._move_target()
        tip = self.tip_position()
        info = self._base_info(tip)
        d = info["distance"]
        moving = self._step_count >= self.hold_steps
        vel = self._path_vel[self._path_index()] if moving else np.zeros(3)
        if moving:
            self._error_sum += d
            self._error_steps += 1
        mean_error = self._error_sum / max(self._error_steps, 1)
        info["tracking_error"] = mean_error
        done = self._step_count >= self.episode_steps
        info["success"] = bool(done and mean_error <= self.success_radius)
        info["trajectory"] = self._name
        info["phase"] = self._path_index() / max(len(self._path) - 1, 1)
        terms = {"track": float(np.exp(-500.0 * d * d)), "distance": -self.distance_weight * d}
        obs = np.concatenate([self._observation(tip), vel]).astype(np.float32)
        return obs, terms, False, info
