"""Core of the reaching family: a hanging tendon-driven robot driven by curvature-rate commands.

The robot (a `RobotSpec`) becomes the continuum-informed MuJoCo chain of `softrod.mujoco` with
pull-only, length-controlled tendons (position actuators whose gain is the tendon's axial
stiffness). The policy commands the *rate* of each segment's bending curvature; the commanded
curvatures kappa (clipped to +-kappa_max) set the tendon lengths through the constant-curvature
map `pcc_length_matrix`, ell = ell_0 + C kappa. This is SoftManiSim's "two bending actions per
segment" (ALGORITHMS.md A.4) made incremental so that an episode is a closed-loop, multi-step
control problem: the tip settles under gravity, tendon stiffness and any contact, and the policy
observes where it went.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from softrod.control import pcc_length_matrix
from softrod.description import RobotSpec
from softrod.envs._base import MujocoEnv
from softrod.mujoco import MujocoOptions
from softrod.scene import add_camera, add_floor, add_lights, add_marker, add_robot, new_spec

__all__ = ["HangingRobotEnv"]


class HangingRobotEnv(MujocoEnv):
    """Shared machinery of Reach, ReachObstacle, TrackTrajectory and PlanarReach (see module).

    Subclasses set the robot, add scene objects in `_add_objects`, sample targets in
    `_reset_task` and compute rewards in `_evaluate` with the helpers below.
    """

    control_period = 0.05
    camera = "main"

    def __init__(
        self,
        robot: RobotSpec,
        *,
        links: int,
        timestep: float,
        damping_ratio: float,
        kappa_max: float,
        kappa_rate: float,
        planar: bool,
        episode_steps: int,
        render_mode: str | None,
        width: int,
        height: int,
        floor_z: float,
        max_tension: float = 200.0,
    ) -> None:
        if not kappa_max > 0 or not kappa_rate > 0:
            raise ValueError(f"kappa_max and kappa_rate must be > 0, got {kappa_max}, {kappa_rate}")
        self.robot = robot
        self.planar = bool(planar)
        self.kappa_max = float(kappa_max)
        self.kappa_rate = float(kappa_rate)
        self.floor_z = float(floor_z)
        self.options = MujocoOptions(
            links=links,
            timestep=timestep,
            damping_ratio=damping_ratio,
            tendon_control="length",
            max_tension=max_tension,
        )
        self.length_map = pcc_length_matrix(robot, planar=self.planar)
        self.n_commands = self.length_map.shape[1]
        self.kappa = np.zeros(self.n_commands)
        self.target = np.zeros(3)
        super().__init__(
            episode_steps=episode_steps, render_mode=render_mode, width=width, height=height
        )
        self.action_space = gym.spaces.Box(-1.0, 1.0, (self.n_commands,), dtype=np.float32)

    # -- scene --------------------------------------------------------------------------------

    def _add_objects(self, spec: mujoco.MjSpec) -> None:
        """Obstacles and other scene objects (override)."""

    def _mount(self, spec: mujoco.MjSpec) -> tuple[mujoco.MjsBody, Any, Any]:
        """(parent body, base position, base quaternion) of the robot; default: the world at
        the robot's `base` pose (override to mount it on a rigid robot)."""
        return spec.worldbody, None, None

    def _camera_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(position, look-at point) of the `main` camera [m]."""
        base = np.asarray(self.robot.base.position)
        reach = self.robot.total_length
        return (
            base + np.array([0.9, -1.1, 0.3]) * reach * 1.6,
            base - np.array([0.0, 0.0, 0.55 * reach]),
        )

    def _build_spec(self) -> mujoco.MjSpec:
        spec = new_spec(type(self).__name__, self.options)
        add_lights(spec, "task")
        add_floor(spec, size=2.0, z=self.floor_z, friction=0.8)
        parent, pos, quat = self._mount(spec)
        self.chain = add_robot(spec, parent, self.robot, self.options, pos=pos, quat=quat)
        add_marker(spec, "target", radius=0.012)
        cam_pos, cam_at = self._camera_pose()
        add_camera(spec, "main", pos=cam_pos, target=cam_at)
        self._add_objects(spec)
        return spec

    def _bind(self) -> None:
        m = self.model
        self._tip_site = m.site(self.chain.tip_site).id
        self._target_mocap = m.body("target").mocapid[0]
        # Segment ends as (body id, local point) on the chain.
        ends = np.cumsum([s.length for s in self.robot.segments])
        pts = [self.chain.body_point(m, float(s)) for s in ends]
        self._end_body = np.array([b for b, _ in pts], dtype=np.int64)
        self._end_local = np.array([p for _, p in pts])
        self._robot_bodies = {m.body(n).id for n in (self.chain.base_body, *self.chain.link_bodies)}
        self._tip_body = m.body(self.chain.link_bodies[-1]).id
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        self.rest_lengths = d.ten_length[[m.tendon(t).id for t in self.chain.tendons]].copy()
        self._act_ids = np.array([m.actuator(a).id for a in self.chain.actuators])
        self._vel = np.zeros(6)

    # -- control ------------------------------------------------------------------------------

    def _apply_action(self, action: np.ndarray) -> None:
        self.kappa = np.clip(self.kappa + self.kappa_rate * action, -self.kappa_max, self.kappa_max)
        self.data.ctrl[self._act_ids] = self.rest_lengths + self.length_map @ self.kappa

    def _reset_robot(self) -> None:
        self.kappa = np.zeros(self.n_commands)
        self.data.ctrl[self._act_ids] = self.rest_lengths

    def _set_target(self, target: np.ndarray) -> None:
        self.target = np.asarray(target, dtype=float).copy()
        self.data.mocap_pos[self._target_mocap] = self.target

    # -- measurements -------------------------------------------------------------------------

    def tip_position(self) -> np.ndarray:
        """Tip position in the world (3,) [m]."""
        return self.data.site_xpos[self._tip_site].copy()

    def tip_velocity(self) -> np.ndarray:
        """Tip linear velocity in the world (3,) [m/s]."""
        mujoco.mj_objectVelocity(
            self.model, self.data, mujoco.mjtObj.mjOBJ_SITE, self._tip_site, self._vel, 0
        )
        return self._vel[3:].copy()

    def segment_ends(self) -> np.ndarray:
        """Distal end of every segment in the world (n_segments, 3) [m]."""
        xpos = self.data.xpos[self._end_body]
        xmat = self.data.xmat[self._end_body].reshape(-1, 3, 3)
        return xpos + np.einsum("nij,nj->ni", xmat, self._end_local)

    def robot_contacts(self, geom_ids: set[int]) -> int:
        """Number of active contacts between the robot and any geom in `geom_ids`."""
        n = self.data.ncon
        if n == 0:
            return 0
        g = self.data.contact.geom[:n]
        bodies = self.model.geom_bodyid[g]
        hit = 0
        for (g1, g2), (b1, b2) in zip(g, bodies, strict=True):
            if (g1 in geom_ids and b2 in self._robot_bodies) or (
                g2 in geom_ids and b1 in self._robot_bodies
            ):
                hit += 1
        return hit

    def tip_contacts(self, geom_ids: set[int]) -> int:
        """Number of active contacts between the distal link and any geom in `geom_ids`."""
        n = self.data.ncon
        if n == 0:
            return 0
        g = self.data.contact.geom[:n]
        bodies = self.model.geom_bodyid[g]
        hit = 0
        for (g1, g2), (b1, b2) in zip(g, bodies, strict=True):
            if (g1 in geom_ids and b2 == self._tip_body) or (
                g2 in geom_ids and b1 == self._tip_body
            ):
                hit += 1
        return hit

    def _base_info(self, tip: np.ndarray) -> dict[str, Any]:
        return {
            "distance": float(np.linalg.norm(tip - self.target)),
            "tip": tip,
            "target": self.target.copy(),
        }
