"""Core of the seed-002 tasks: the 3-segment, 9-tendon TDCR on a 7-DoF Panda arm.

Scene: `softrod.scene`'s simplified Panda (published kinematics and limits, position servos,
gravity compensated) at the world origin, the `tdcr3` robot (continuum-informed chain, length
controlled pull-only tendons) on its flange, a floor, and the task's objects.

Policy I/O (seed 002 Sec. 4.3, ALGORITHMS.md C.4): the observation is the arm's 7 joint
positions, the TDCR's 9 tendon displacements and the 3-D position of the task target; the action
is the absolute command: 7 joint targets and 9 tendon displacements. A tendon displacement is
how far its motor has pulled the tendon in from the rest length [m] (positive pulls; negative
pays tendon out, which only slackens it). The motors are ideal position servos, so the observed
displacement is the commanded one, as read from the motor encoders on hardware.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from softrod.envs._base import MujocoEnv, obs_box
from softrod.envs._scene import shipped_robot
from softrod.mujoco import MujocoOptions
from softrod.scene import add_camera, add_floor, add_lights, add_rigid, add_robot, new_spec

__all__ = ["TDCRArmEnv", "TENDON_RANGE", "OBS_NOISE", "DEMO_ACTION_NOISE"]

#: Tendon displacement range [m] (pull in / pay out); 3 cm exceeds a 180 deg bend of a segment.
TENDON_RANGE = 0.03
#: Observation noise std of seed 002's Table 4, per component: 0.01 rad (arm joints), tendons
#: 0.0005 rad of a 5 mm drum = 2.5e-6 m (the table's unit is ambiguous, C.4 ambiguity 4), object
#: 0.002 m. Used by the behaviour-cloning trainer, not by the environment.
OBS_NOISE = np.array([0.01] * 7 + [0.0005 * 0.005] * 9 + [0.002] * 3)
#: Noise injected into the executed actions while recording scripted demonstrations (std:
#: joint targets [rad], tendon displacements [m]); see `softrod.learn._demos.record_episode`.
#: Chosen so that the experts still succeed (measured: 0.01 rad or 0.5 mm made them fail).
DEMO_ACTION_NOISE = np.array([0.003] * 7 + [0.0001] * 9)
#: Fastest command change [rad/s, m/s]: the Panda's joint speed limits (Franka datasheet) and a
#: Dynamixel XL430 (57 rpm no-load) on seed 002's 10 mm drum, 0.03 m/s. A target farther away
#: is approached at this speed (random targets otherwise whip the TDCR into instability).
COMMAND_SPEED = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61] + [0.03] * 9)


class TDCRArmEnv(MujocoEnv):
    """Shared machinery of WholeBodyGrasp-v0 and FlipSwitch-v0 (see the module docstring)."""

    control_period = 0.05
    camera = "main"
    observation_noise = OBS_NOISE
    demo_action_noise = DEMO_ACTION_NOISE
    command_speed = COMMAND_SPEED

    def __init__(
        self,
        *,
        episode_steps: int,
        links: int,
        render_mode: str | None,
        width: int,
        height: int,
    ) -> None:
        self.tdcr = shipped_robot("tdcr3")
        self.options = MujocoOptions(
            links=links,
            timestep=0.005,
            damping_ratio=0.5,
            tendon_control="length",
            max_tension=100.0,
            friction=0.8,
        )
        self.target_position = np.zeros(3)
        super().__init__(
            episode_steps=episode_steps, render_mode=render_mode, width=width, height=height
        )
        low = np.concatenate([self.joint_range[:, 0], np.full(9, -TENDON_RANGE)])
        high = np.concatenate([self.joint_range[:, 1], np.full(9, TENDON_RANGE)])
        self.action_space = gym.spaces.Box(low.astype(np.float32), high.astype(np.float32))
        self.observation_space = obs_box(19)
        self.command = self.home_action()

    # -- scene --------------------------------------------------------------------------------

    def _add_task(self, spec: mujoco.MjSpec) -> None:
        """Task objects (override)."""

    def _camera_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([1.45, -0.95, 0.95]), np.array([0.45, 0.0, 0.3])

    def _build_spec(self) -> mujoco.MjSpec:
        spec = new_spec(type(self).__name__, self.options)
        add_lights(spec, "task")
        add_floor(spec, size=2.0, friction=0.8)
        self.arm = add_rigid(spec, spec.worldbody, "panda", "panda/")
        # The simplified arm draws link 7 as a capsule whose round cap reaches 4.5 cm past the
        # flange face, where the real arm ends flat; the TDCR works right below the flange, so
        # make that link a flat-ended cylinder.
        link7 = spec.geom("panda/g_link7")
        if link7 is not None:
            link7.type = mujoco.mjtGeom.mjGEOM_CYLINDER
        self.chain = add_robot(
            spec,
            spec.body(self.arm.flange),
            self.tdcr,
            self.options,
            prefix="tdcr/",
            pos=(0.0, 0.0, 0.0),
            quat=(1.0, 0.0, 0.0, 0.0),
        )
        self._add_task(spec)
        cam_pos, cam_at = self._camera_pose()
        add_camera(spec, "main", pos=cam_pos, target=cam_at)
        return spec

    def _bind(self) -> None:
        m = self.model
        self._arm_q = np.array([m.joint(j).qposadr[0] for j in self.arm.joints])
        self._arm_v = np.array([m.joint(j).dofadr[0] for j in self.arm.joints])
        self._arm_act = np.array([m.actuator(a).id for a in self.arm.actuators])
        self._ten_act = np.array([m.actuator(a).id for a in self.chain.actuators])
        self.joint_range = m.actuator_ctrlrange[self._arm_act].copy()
        self._flange = m.body(self.arm.flange).id
        self._tip = m.site(self.chain.tip_site).id
        self._tdcr_bodies = {m.body(n).id for n in (self.chain.base_body, *self.chain.link_bodies)}
        d = mujoco.MjData(m)
        d.qpos[self._arm_q] = self.arm.home
        mujoco.mj_forward(m, d)
        self.rest_lengths = d.ten_length[[m.tendon(t).id for t in self.chain.tendons]].copy()

    # -- control ------------------------------------------------------------------------------

    def home_action(self) -> np.ndarray:
        """The home command: seed 002's Panda home pose and zero tendon displacement (16,)."""
        return np.concatenate([np.asarray(self.arm.home), np.zeros(9)]).astype(np.float32)

    def _reset_arm(self) -> None:
        self.data.qpos[self._arm_q] = self.arm.home
        self.command = self.home_action().astype(float)
        self._write_command()

    def _write_command(self) -> None:
        self.data.ctrl[self._arm_act] = self.command[:7]
        self.data.ctrl[self._ten_act] = self.rest_lengths - self.command[7:]

    def _apply_action(self, action: np.ndarray) -> None:
        # The command moves toward the action at most as fast as the drives can follow.
        step = self.command_speed * self.dt
        self.command = self.command + np.clip(action - self.command, -step, step)
        self._write_command()

    # -- measurements -------------------------------------------------------------------------

    def joint_positions(self) -> np.ndarray:
        """Arm joint positions (7,) [rad]."""
        return self.data.qpos[self._arm_q].copy()

    def tip_position(self) -> np.ndarray:
        """TDCR tip position in the world (3,) [m]."""
        return self.data.site_xpos[self._tip].copy()

    def flange_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Flange position (3,) [m] and rotation (3, 3) in the world."""
        return self.data.xpos[self._flange].copy(), self.data.xmat[self._flange].reshape(3, 3)

    def tdcr_contacts(self, geom_ids: set[int]) -> int:
        """Active contacts between the TDCR and any geom in `geom_ids`."""
        n = self.data.ncon
        if n == 0:
            return 0
        g = self.data.contact.geom[:n]
        b = self.model.geom_bodyid[g]
        return int(
            sum(
                (g1 in geom_ids and b2 in self._tdcr_bodies)
                or (g2 in geom_ids and b1 in self._tdcr_bodies)
                for (g1, g2), (b1, b2) in zip(g, b, strict=True)
            )
        )

    def _observation(self) -> np.ndarray:
        return np.concatenate(
            [self.joint_positions(), self.command[7:], self.target_position]
        ).astype(np.float32)

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        raise NotImplementedError
