"""`softrod/MagneticNavigate-v0`: steer a magnetic catheter's tip to a target by the field."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from softrod.description import find_robot, load_robot
from softrod.envs._base import MujocoEnv, obs_box
from softrod.mujoco import MagneticField, MujocoOptions, add_robot
from softrod.scene import add_camera, add_lights, add_marker, new_spec

__all__ = ["MagneticNavigateEnv", "steering_direction"]

#: Base of the catheter [m]; it leaves along world +z.
BASE = (0.0, 0.0, 0.02)
#: Tip bend angles the targets are drawn from [rad]: from nearly straight to where the field
#: needed stays within 80 deg of the base axis (the closed-form map below stays well posed).
THETA_RANGE = (0.15, 0.9)


def _catheter() -> Any:
    return load_robot(find_robot("magnetic_catheter"))


def steering_direction(theta: float, azimuth: float, bend_number: float) -> np.ndarray:
    """Field direction (3,) that holds a tip-dipole rod at tip angle theta [rad] in the plane at
    `azimuth` [rad] about world z, for `bend_number` = L m B / EI (no contact).

    A tip couple m B sin(phi - theta) bends the rod to constant curvature with
    theta = bend_number sin(phi - theta), so the field is at phi = theta + asin(theta / n) from z.
    """
    phi = theta + math.asin(min(1.0, theta / bend_number))
    return np.array(
        [math.sin(phi) * math.cos(azimuth), math.sin(phi) * math.sin(azimuth), math.cos(phi)]
    )


class MagneticNavigateEnv(MujocoEnv):
    """A magnetic catheter (`magnetic_catheter`: a 0.1 m soft rod with a tip magnet of
    5e-3 A m^2 along its backbone) stands on a fixed base at (0, 0, 0.02) m, no gravity. A uniform
    field of fixed strength `field_strength` [T] acts on the magnet (`softrod.mujoco.MagneticField`,
    applied before every substep); the action sets its direction. A random target is drawn on the
    rod's reachable surface (tip angle in [0.15, 0.9] rad, any azimuth); the task is to bring the
    tip there by steering the field. Each step lasts 0.05 s (25 substeps of 2 ms). Episodes are
    truncated after `episode_steps` steps, never terminated.

    Observation, shape (15,), float32:

    | index | component | unit |
    |---|---|---|
    | 0-2 | tip position, world frame | m |
    | 3-5 | tip tangent (body z at the tip), world frame | 1 |
    | 6-8 | target position, world frame | m |
    | 9-11 | target - tip | m |
    | 12-14 | field direction applied (B / `field_strength`) | 1 |

    Action, shape (3,), in [-1, 1]: the field direction (normalised; a zero vector switches the
    field off).

    Reward = sum of `info["reward_terms"]`:

    * `distance` = -`distance_weight` d, d = |tip - target| [m];
    * `reach` = exp(-d / 0.01).

    `info`: `success` (d <= `success_radius`), `distance` [m], `tip`, `target` [m], `field` [T],
    `reward_terms`.
    """

    control_period = 0.05
    camera = "main"

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        episode_steps: int = 60,
        links: int = 20,
        field_strength: float = 0.02,
        distance_weight: float = 10.0,
        success_radius: float = 0.005,
        width: int = 320,
        height: int = 240,
    ) -> None:
        if not field_strength > 0 or distance_weight < 0 or not success_radius > 0:
            raise ValueError(
                "field_strength and success_radius must be > 0 and distance_weight >= 0, got "
                f"{field_strength}, {success_radius}, {distance_weight}"
            )
        self.robot = _catheter()
        self.links = int(links)
        self.field_strength = float(field_strength)
        self.distance_weight = float(distance_weight)
        self.success_radius = float(success_radius)
        self.options = MujocoOptions(
            links=self.links, gravity=(0.0, 0.0, 0.0), damping_ratio=0.5, timestep=0.002
        )
        bb = self.robot.backbone
        moment = float(np.linalg.norm(self.robot.segments[-1].magnets[-1].moment))
        #: L m B / EI of the rod at `field_strength` (the steering map's only parameter).
        self.bend_number = (
            self.robot.total_length * moment * self.field_strength / (bb.youngs_modulus * bb.I)
        )
        self.target = np.zeros(3)
        self.field = np.zeros(3)
        super().__init__(
            episode_steps=episode_steps, render_mode=render_mode, width=width, height=height
        )
        self.observation_space = obs_box(15)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (3,), dtype=np.float32)

    # -- model --------------------------------------------------------------------------------

    def _build_spec(self) -> mujoco.MjSpec:
        spec = new_spec(type(self).__name__, self.options)
        add_lights(spec, "task")
        self.chain = add_robot(spec, spec.worldbody, self.robot, self.options, pos=BASE)
        add_marker(spec, "target", radius=0.004)
        add_camera(spec, "main", pos=(0.18, -0.22, 0.16), target=(0.0, 0.0, 0.08))
        return spec

    def _bind(self) -> None:
        m = self.model
        self._tip_site = m.site(self.chain.tip_site).id
        self._target_mocap = m.body("target").mocapid[0]
        self.magnetic = MagneticField(m, self.chain, field=self.field)

    # -- episode ------------------------------------------------------------------------------

    def _reset_task(self) -> None:
        rng = self.np_random
        theta = float(rng.uniform(*THETA_RANGE))
        azimuth = float(rng.uniform(0.0, 2.0 * math.pi))
        # The rod bends with constant curvature under a tip couple: the target is on that arc.
        L = self.robot.total_length
        r = L / theta
        radial = np.array([math.cos(azimuth), math.sin(azimuth), 0.0])
        self.target = (
            np.asarray(BASE)
            + r * (1.0 - math.cos(theta)) * radial
            + r * math.sin(theta) * np.eye(3)[2]
        )
        self.data.mocap_pos[self._target_mocap] = self.target
        self.field = np.zeros(3)
        # mj_resetData cleared qfrc_applied, the field's previous loads with it.
        self.magnetic.reset()
        self.magnetic.set(self.field)

    def _apply_action(self, action: np.ndarray) -> None:
        norm = float(np.linalg.norm(action))
        self.field = self.field_strength * action / norm if norm > 1e-9 else np.zeros(3)
        self.magnetic.set(self.field)

    def _before_substep(self) -> None:
        # The field is the only user of qfrc_applied here: start from zero each substep, which
        # also holds after unpickling (the restored state carries the last loads).
        self.magnetic.reset()
        self.data.qfrc_applied[:] = 0.0
        self.magnetic.apply(self.model, self.data)

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        tip = self.data.site_xpos[self._tip_site].copy()
        tangent = self.data.site_xmat[self._tip_site].reshape(3, 3)[:, 2].copy()
        d = float(np.linalg.norm(tip - self.target))
        obs = np.concatenate(
            [tip, tangent, self.target, self.target - tip, self.field / self.field_strength]
        ).astype(np.float32)
        terms = {"distance": -self.distance_weight * d, "reach": float(math.exp(-d / 0.01))}
        info = {
            "success": bool(d <= self.success_radius),
            "distance": d,
            "tip": tip,
            "target": self.target.copy(),
            "field": self.field.copy(),
        }
        return obs, terms, False, info

    def scripted_action(self) -> np.ndarray:
        """The closed-form steering field for the current target (`steering_direction`)."""
        rel = self.target - np.asarray(BASE)
        azimuth = math.atan2(rel[1], rel[0])
        # Tip angle of the constant-curvature arc through the target: rho / z = tan(theta / 2).
        theta = 2.0 * math.atan2(math.hypot(rel[0], rel[1]), rel[2])
        return steering_direction(theta, azimuth, self.bend_number).astype(np.float32)
