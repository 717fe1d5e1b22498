"""`softrod/SnakeLocomotion-v1`: a soft snake crawls forward on passive wheels (SoMo's snake)."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from softrod.control import bending_tensions
from softrod.envs._base import MujocoEnv, obs_box
from softrod.envs._scene import shipped_robot
from softrod.mujoco import MujocoOptions
from softrod.rods.so3 import quat_from_axis_angle
from softrod.scene import (
    CONTYPE_RIGID,
    RIGID_AFFINITY,
    add_camera,
    add_floor,
    add_lights,
    add_robot,
    new_spec,
)

__all__ = ["SnakeLocomotionEnv", "serpentine_gait"]

#: Wheel sphere radius [m] and lateral offset of the two wheels of a link from the axis [m].
WHEEL_RADIUS = 0.012
WHEEL_TRACK = 0.02
#: Wheel mass [kg] (each).
WHEEL_MASS = 0.005
#: Viscous damping of a wheel's axle [N m s/rad] (keeps free wheels from spinning forever).
WHEEL_DAMPING = 1e-5
#: Forward progress of the body's centre of mass [m] that counts as success (v1): 2 m in the
#: 10 s episode, about 60 % of the scripted serpentine gait's 3.3 m (v0 took 0.15 m, which a
#: random policy reached in 1 of 20 episodes).
SUCCESS_PROGRESS = 2.0


def serpentine_gait(
    t: float,
    n_segments: int,
    wavelength: float = 1.0,
    frequency: float = 0.5,
    amplitude: float = 1.0,
) -> np.ndarray:
    """SoMo's travelling-wave command A(t) sin(k x - w t) per segment (ALGORITHMS.md B.5).

    x is the segment's index / n_segments (body lengths), k = 2 pi / wavelength, w = 2 pi f;
    A ramps linearly from 0 at t = 0 to `amplitude` at t = 1 s. Returns (n_segments,) in
    [-1, 1] (the environment's action).
    """
    x = np.arange(n_segments) / n_segments
    ramp = min(t, 1.0) * amplitude
    return ramp * np.sin(2.0 * math.pi * x / wavelength - 2.0 * math.pi * frequency * t)


class SnakeLocomotionEnv(MujocoEnv):
    """A soft, tendon-driven snake (`somo_snake`, 8 segments, 0.96 m) crawls along world +x.

    The body is the continuum-informed chain (8 links, one per segment, for speed) on a free
    base, lying on the ground on
    two passive wheels per link. A wheel spins freely about the link's lateral axis, so the
    ground resists sliding *across* the body (Coulomb friction `friction`) but hardly along it:
    the anisotropic friction of snake scales, produced by contact (SoMo used Bullet's
    anisotropic friction coefficients instead). With `anisotropic=False` the wheels are locked
    and the friction is isotropic; a travelling wave then makes little or no forward progress
    (SoMo's observation), see `tests/test_envs_tasks.py`.

    Each segment is bent sideways by an antagonistic tendon pair (force control); the action
    sets the bending moment of every segment, b_j M_max with M_max = EI `kappa_max`, and the
    tendon tensions follow from `bending_tensions`. Steps are 0.05 s (5 substeps of 10 ms);
    episodes last `episode_steps` steps (10 s by default) and start straight with a random
    heading in [-0.1, 0.1] rad.

    Observation, shape (28,), float32:

    | index | component | unit |
    |---|---|---|
    | 0-15 | distal end of segments 1..8 (x, y) relative to the head, world frame | m |
    | 16-17 | velocity of the centre of mass (x, y), world frame | m/s |
    | 18-19 | heading of the head (cos yaw, sin yaw) | 1 |
    | 20-27 | commanded bending moment of segments 1..8 / M_max | 1 |

    Action, shape (8,), in [-1, 1]: bending moment of each segment toward the snake's left
    (world +y at the start), in units of M_max [N m].

    Reward terms: `forward` = 10 v_x (centre-of-mass velocity along +x [m/s]), `effort` =
    -0.05 mean(a^2). `info`: `success` (the centre of mass advanced >= 2 m), `progress`
    [m], `com` [m].
    """

    control_period = 0.05
    camera = "main"

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        anisotropic: bool = True,
        friction: float = 0.8,
        episode_steps: int = 200,
        links: int = 8,
        kappa_max: float = 6.0,
        width: int = 320,
        height: int = 240,
    ) -> None:
        if not friction > 0 or not kappa_max > 0:
            raise ValueError(f"friction and kappa_max must be > 0, got {friction}, {kappa_max}")
        self.anisotropic = bool(anisotropic)
        self.friction = float(friction)
        self.robot = shipped_robot("somo_snake")
        self.n_seg = self.robot.n_segments
        ei = self.robot.segment_backbone(0).youngs_modulus * self.robot.segment_backbone(0).I
        self.moment_max = float(ei * kappa_max)
        self.options = MujocoOptions(
            links=links,
            timestep=0.01,
            damping_ratio=0.2,
            tendon_control="force",
            max_tension=4.0 * self.moment_max / 0.012,
            contact=False,
        )
        self.command = np.zeros(self.n_seg)
        super().__init__(
            episode_steps=episode_steps, render_mode=render_mode, width=width, height=height
        )
        self.action_space = gym.spaces.Box(-1.0, 1.0, (self.n_seg,), dtype=np.float32)
        self.observation_space = obs_box(2 * self.n_seg + 4 + self.n_seg)
        self._com0 = np.zeros(3)
        self._com_prev = np.zeros(3)

    def _build_spec(self) -> mujoco.MjSpec:
        spec = new_spec("SnakeLocomotion", self.options)
        add_lights(spec, "task")
        add_floor(spec, size=4.0, friction=self.friction)
        r_b = self.robot.segment_backbone(0).outer_radius
        height = WHEEL_RADIUS + r_b * 0.8 + 0.002
        root = spec.worldbody.add_body(name="snake", pos=[0.0, 0.0, height])
        root.add_freejoint(name="snake_free")
        root.add_geom(
            name="head",
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[r_b * 1.2, 0, 0],
            mass=0.02,
            rgba=[0.3, 0.5, 0.3, 1.0],
            contype=0,
            conaffinity=0,
        )
        # Body z along world -x (head at the base, moving toward +x), body x up.
        quat = quat_from_axis_angle([0.0, 1.0, 0.0], -math.pi / 2)
        self.chain = add_robot(
            spec,
            root,
            self.robot,
            self.options,
            pos=(0.0, 0.0, 0.0),
            quat=(quat[0], quat[1], quat[2], quat[3]),
        )
        lay = self.chain.layout
        holders = [(self.chain.base_body, float(lay.joint_s[0]) / 2)] + [
            (name, float(lay.link_length[k]) / 2) for k, name in enumerate(self.chain.link_bodies)
        ]
        for name, z in holders:
            body = spec.body(name)
            for side, y in (("l", WHEEL_TRACK), ("r", -WHEEL_TRACK)):
                wheel = body.add_body(name=f"{name}_wheel{side}", pos=[-(r_b * 0.8), y, z])
                if self.anisotropic:
                    wheel.add_joint(
                        name=f"{name}_axle{side}",
                        type=mujoco.mjtJoint.mjJNT_HINGE,
                        axis=[0.0, 1.0, 0.0],
                        damping=WHEEL_DAMPING,
                    )
                wheel.add_geom(
                    name=f"{name}_tyre{side}",
                    type=mujoco.mjtGeom.mjGEOM_SPHERE,
                    size=[WHEEL_RADIUS, 0, 0],
                    mass=WHEEL_MASS,
                    rgba=[0.15, 0.15, 0.15, 1.0],
                    contype=CONTYPE_RIGID,
                    conaffinity=RIGID_AFFINITY,
                    condim=3,
                    friction=[self.friction, 0.005, 0.0001],
                )
        add_camera(spec, "main", pos=[0.2, -1.6, 1.2], target=[0.1, 0.0, 0.0])
        return spec

    def _bind(self) -> None:
        m = self.model
        self._root = m.body("snake").id
        self._head = m.body(self.chain.base_body).id
        self._act_ids = np.array([m.actuator(a).id for a in self.chain.actuators])
        ends = np.cumsum([s.length for s in self.robot.segments])
        pts = [self.chain.body_point(m, float(s)) for s in ends]
        self._end_body = np.array([b for b, _ in pts], dtype=np.int64)
        self._end_local = np.array([p for _, p in pts])

    def _com(self) -> np.ndarray:
        return self.data.subtree_com[self._root].copy()

    def _reset_task(self) -> None:
        self.command = np.zeros(self.n_seg)
        self.data.ctrl[:] = 0.0
        # Start pose: straight along +x, with a small random heading and offset.
        q = self.model.jnt_qposadr[self.model.joint("snake_free").id]
        yaw = float(self.np_random.uniform(-0.1, 0.1))
        self.data.qpos[q : q + 2] = self.np_random.uniform(-0.01, 0.01, 2)
        self.data.qpos[q + 3 : q + 7] = quat_from_axis_angle([0.0, 0.0, 1.0], yaw)
        mujoco.mj_forward(self.model, self.data)
        self._com0 = self._com()
        self._com_prev = self._com0.copy()

    def _apply_action(self, action: np.ndarray) -> None:
        self._com_prev = self._com()
        self.command = action.astype(float).copy()
        # Bending toward the snake's left = body +y.
        moments = np.column_stack([np.zeros(self.n_seg), self.command * self.moment_max])
        self.data.ctrl[self._act_ids] = bending_tensions(self.robot, moments)

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        d = self.data
        com = self._com()
        vel = (com - self._com_prev) / self.dt if self._step_count else np.zeros(3)
        head = d.xpos[self._head]
        ends = d.xpos[self._end_body] + np.einsum(
            "nij,nj->ni", d.xmat[self._end_body].reshape(-1, 3, 3), self._end_local
        )
        fwd = -d.xmat[self._head].reshape(3, 3)[:, 2]
        yaw = math.atan2(fwd[1], fwd[0])
        obs = np.concatenate(
            [
                (ends - head)[:, :2].ravel(),
                vel[:2],
                [math.cos(yaw), math.sin(yaw)],
                self.command,
            ]
        ).astype(np.float32)
        progress = float(com[0] - self._com0[0])
        terms = {
            "forward": 10.0 * float(vel[0]),
            "effort": -0.05 * float(np.mean(self.command**2)),
        }
        info = {"success": bool(progress >= SUCCESS_PROGRESS), "progress": progress, "com": com}
        return obs, terms, False, info
