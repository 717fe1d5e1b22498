"""`softrod/Reach-v0`: SoftManiSim's five-segment reacher (seed 000, App. F; ALGORITHMS.md A.4)."""

from __future__ import annotations

from typing import Any

import numpy as np

from softrod.envs._base import Randomization, obs_box
from softrod.envs._reach_core import HangingRobotEnv
from softrod.envs._scene import shipped_robot, with_tendon_stiffness

__all__ = ["ReachEnv"]

#: Target box of SoftManiSim's reacher [m] (REPO): x, y in [-0.2, 0.2], z in [0.1, 0.25].
TARGET_LOW = (-0.2, -0.2, 0.10)
TARGET_HIGH = (0.2, 0.2, 0.25)
#: SoftManiSim's height band for the tip [m]; outside it the `bounds` term is -0.5.
Z_BAND = (0.07, 0.28)


class ReachEnv(HangingRobotEnv):
    """The five-segment soft robot (`softmanisim_5seg`) hanging from (0, 0, 0.5) m reaches a
    random target in SoftManiSim's box.

    The robot is the continuum-informed MuJoCo chain (10 links) with pull-only, length-controlled
    tendons of axial stiffness `tendon_stiffness`; gravity acts. Each step (0.05 s, 5 substeps
    of 10 ms) the action changes the commanded bending curvature of every segment, which sets
    the four tendon lengths of each segment through the constant-curvature map (module
    `softrod.envs._reach_core`). An episode lasts `episode_steps` steps (2.5 s by default); it is
    truncated, never terminated, so the final distance is that after the last step.

    Observation, shape (34,), float32:

    | index | component | unit |
    |---|---|---|
    | 0-14 | distal end of segments 1..5 (x, y, z each), world frame | m |
    | 15-17 | tip velocity, world frame | m/s |
    | 18-20 | target position, world frame | m |
    | 21-23 | target - tip | m |
    | 24-33 | commanded curvature of segments 1..5 (toward body x, y) / kappa_max | 1 |
    | 34-36 | clip(`error_gain` (target - tip), -1, 1), only when `error_gain` > 0 | 1 |

    The optional fine-error components (shape (37,) then) put millimetre errors on the scale of
    the other inputs: with `error_gain` = 100 a 1 cm error reads 1. The default (0) keeps the
    (34,) observation of SoftManiSim's task.

    With `obs_mode="rgb"` the observation is instead an (84, 84, 3) uint8 RGB image from the
    scene camera `obs_camera` (default: the render camera "main"); rewards, `info` and the
    dynamics do not change (MUJOCO_GL=egl renders headless).

    `randomize` (a dict of the fields of `Randomization` in envs/_base.py; default off)
    perturbs the robot at every reset from the episode's seed: backbone modulus and tendon
    stiffness factors, link mass, damping, joint friction, observation noise, action delay.

    Action, shape (10,), in [-1, 1]: change of the commanded curvature of segments 1..5
    (toward body x, body y), in units of `kappa_rate` [1/m per step]; the command saturates at
    +-`kappa_max` [1/m].

    Reward = sum of `info["reward_terms"]`:

    * `reach` = exp(-50 d^2), d = |tip - target| [m] (App. F);
    * `bounds` = -0.5 when the tip height leaves [0.07, 0.28] m (App. F);
    * `distance` = -`distance_weight` d: a linear pull toward the target, whose slope does not
      vanish near it (App. F's exp(-50 d^2) is flat below a centimetre); 0 gives App. F exactly;
    * `action` = -`action_weight` mean(a^2), only when `action_weight` > 0 (default 0): a cost
      on the commanded curvature rate, which rewards holding still at the target;
    * `precision` = `precision_weight` exp(-d / `precision_scale`), only when `precision_weight`
      > 0 (default 0): a bonus that is steep within a few millimetres of the target, where the
      other terms differ by little from one millimetre to the next.

    `info`: `success` (d <= `success_radius`), `distance` [m], `tip`, `target` [m],
    `reward_terms`.

    Differences from SoftManiSim (documented choices): multi-step closed-loop episodes instead
    of a one-step bandit; tendon-length control through curvature rates instead of absolute
    wire lengths; the fifth segment's extension is not modelled (Kirchhoff chain).
    """

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        episode_steps: int = 50,
        links: int = 10,
        tendon_stiffness: float = 2.0e4,
        kappa_max: float = 12.0,
        kappa_rate: float = 1.5,
        distance_weight: float = 10.0,
        action_weight: float = 0.0,
        error_gain: float = 0.0,
        precision_weight: float = 0.0,
        precision_scale: float = 0.005,
        success_radius: float = 0.01,
        width: int = 320,
        height: int = 240,
        obs_mode: str = "state",
        obs_camera: str | None = None,
        randomize: Randomization | dict[str, Any] | None = None,
    ) -> None:
        if distance_weight < 0 or action_weight < 0 or error_gain < 0 or not success_radius > 0:
            raise ValueError(
                "distance_weight, action_weight and error_gain must be >= 0 and success_radius "
                f"> 0, got {distance_weight}, {action_weight}, {error_gain}, {success_radius}"
            )
        if precision_weight < 0 or not precision_scale > 0:
            raise ValueError(
                "precision_weight must be >= 0 and precision_scale > 0, got "
                f"{precision_weight}, {precision_scale}"
            )
        self.precision_weight = float(precision_weight)
        self.precision_scale = float(precision_scale)
        self.error_gain = float(error_gain)
        self.distance_weight = float(distance_weight)
        self.action_weight = float(action_weight)
        self._last_action: np.ndarray | None = None
        self.success_radius = float(success_radius)
        robot = with_tendon_stiffness(shipped_robot("softmanisim_5seg"), tendon_stiffness)
        super().__init__(
            robot,
            links=links,
            timestep=0.01,
            damping_ratio=0.5,
            kappa_max=kappa_max,
            kappa_rate=kappa_rate,
            planar=False,
            episode_steps=episode_steps,
            render_mode=render_mode,
            width=width,
            height=height,
            floor_z=-0.1,
        )
        n_seg = self.robot.n_segments
        n_obs = 3 * n_seg + 9 + self.n_commands + (3 if self.error_gain > 0 else 0)
        self.observation_space = obs_box(n_obs)
        self._set_obs_mode(obs_mode, obs_camera)
        self._set_randomization(randomize)

    # -- episode ------------------------------------------------------------------------------

    def _sample_target(self) -> np.ndarray:
        return self.np_random.uniform(TARGET_LOW, TARGET_HIGH)

    def _reset_task(self) -> None:
        self._reset_robot()
        self._set_target(self._sample_target())

    def _observation(self, tip: np.ndarray) -> np.ndarray:
        parts = [
            self.segment_ends().ravel(),
            self.tip_velocity(),
            self.target,
            self.target - tip,
            self.kappa / self.kappa_max,
        ]
        if self.error_gain > 0:
            parts.append(np.clip(self.error_gain * (self.target - tip), -1.0, 1.0))
        return np.concatenate(parts).astype(np.float32)

    def _apply_action(self, action: np.ndarray) -> None:
        self._last_action = action
        super()._apply_action(action)

    def _reset_robot(self) -> None:
        self._last_action = None
        super()._reset_robot()

    def _reach_terms(self, tip: np.ndarray) -> dict[str, float]:
        d = float(np.linalg.norm(tip - self.target))
        terms = {
            "reach": float(np.exp(-50.0 * d * d)),
            "bounds": -0.5 if not Z_BAND[0] <= tip[2] <= Z_BAND[1] else 0.0,
            "distance": -self.distance_weight * d,
        }
        if self.action_weight > 0:
            a = self._last_action
            terms["action"] = 0.0 if a is None else -self.action_weight * float(np.mean(a * a))
        if self.precision_weight > 0:
            terms["precision"] = self.precision_weight * float(np.exp(-d / self.precision_scale))
        return terms

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        tip = self.tip_position()
        info = self._base_info(tip)
        info["success"] = bool(info["distance"] <= self.success_radius)
        return self._observation(tip), self._reach_terms(tip), False, info
