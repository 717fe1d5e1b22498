"""`softrod/ReachObstacle-v0`: the five-segment reacher with SoftManiSim's bar obstacle."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from softrod.envs.reach_v0 import ReachEnv
from softrod.scene import CONTYPE_OBJECT

__all__ = ["ReachObstacleEnv"]

#: The bar [CHOICE: the paper shows a horizontal yellow bar but gives no pose]: a capsule of
#: radius 1.5 cm along world y at x = 0.12 m, z = 0.33 m, 0.5 m long. It crosses the space the
#: body sweeps through when the robot curls toward +x, so reaching targets at x > 0 without
#: touching it needs a different shape (e.g. a lower bend), while every target stays reachable.
BAR_CENTER = (0.12, 0.0, 0.33)
BAR_HALF_LENGTH = 0.25
BAR_RADIUS = 0.015
#: Reward term while the robot touches the bar (App. F).
OBSTACLE_PENALTY = -1.0


class ReachObstacleEnv(ReachEnv):
    """`Reach-v0` with a rigid bar obstacle that the robot must not touch (App. F).

    The bar collides with the robot (MuJoCo contact; the robot is pushed away by it, no forces
    are scripted). Observation, action and the `reach`, `bounds`, `distance` terms are those
    of `ReachEnv` (same table: shape (34,) observation, (10,) action); the bar is fixed, so it
    needs no observation.

    | index | component | unit |
    |---|---|---|
    | 0-14 | distal end of segments 1..5, world frame | m |
    | 15-17 | tip velocity, world frame | m/s |
    | 18-20 | target position, world frame | m |
    | 21-23 | target - tip | m |
    | 24-33 | commanded curvature of segments 1..5 / kappa_max | 1 |

    Extra reward term: `obstacle` = -1 while any robot geom touches the bar (App. F).
    `info` adds `contacts` (robot-bar contact count). `success` additionally requires no
    contact at that step.
    """

    def _add_objects(self, spec: mujoco.MjSpec) -> None:
        cx, cy, cz = BAR_CENTER
        spec.worldbody.add_geom(
            name="bar",
            type=mujoco.mjtGeom.mjGEOM_CAPSULE,
            fromto=[cx, cy - BAR_HALF_LENGTH, cz, cx, cy + BAR_HALF_LENGTH, cz],
            size=[BAR_RADIUS, 0, 0],
            rgba=[0.95, 0.8, 0.1, 1.0],
            contype=CONTYPE_OBJECT,
            conaffinity=CONTYPE_OBJECT,
            friction=[0.5, 0.005, 0.0001],
        )

    def _bind(self) -> None:
        super()._bind()
        self._bar = {self.model.geom("bar").id}

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        obs, terms, terminated, info = super()._evaluate()
        n = self.robot_contacts(self._bar)
        terms["obstacle"] = OBSTACLE_PENALTY if n > 0 else 0.0
        info["contacts"] = n
        info["success"] = bool(info["success"] and n == 0)
        return obs, terms, terminated, info
