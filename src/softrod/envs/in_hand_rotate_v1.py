"""`softrod/InHandRotate-v1`: four soft fingers rotate a cube on a palm (SoMo's in-hand task).

v1 (task meaning changed from v0): the rotation counts only while the cube stands upright on
the palm, and success needs the cube still held (not dropped, upright) — v0 credited the yaw of
a cube tumbling off the palm, so a random policy "succeeded" in about a third of episodes.
"""

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
    CONTYPE_OBJECT,
    add_camera,
    add_floor,
    add_lights,
    add_robot,
    new_spec,
)

__all__ = ["InHandRotateEnv", "rotation_gait"]

#: Palm: a 0.2 m square plate whose top is at PALM_TOP [m].
PALM_TOP = 0.02
PALM_HALF = 0.1
#: Cube: SoMo's 60 mm, 20 g cube.
CUBE_HALF = 0.03
CUBE_MASS = 0.02
#: Finger bases on the diagonals at this distance from the palm centre [m].
FINGER_RADIUS = 0.06
#: The cube counts as dropped beyond this horizontal distance from the centre [m].
DROP_RADIUS = 0.07
#: Rotation about +z [rad] that counts as success.
SUCCESS_ROTATION = math.pi / 2
#: The cube is upright while its own z axis is within this angle of the palm normal [rad]: a
#: cube resting on a face tilts by a few degrees at most under the fingers; 20 deg separates
#: that from a cube rolling over an edge.
UPRIGHT_TILT = math.radians(20.0)


def rotation_gait(
    t: float, period: float = 1.0, press: float = 1.0, sweep: float = 1.0
) -> np.ndarray:
    """A four-phase finger gait turning the cube counter-clockwise (a simplification of the
    Abondance et al. gait SoMo replays): press in, sweep ccw, lift off, sweep back.

    Returns the (8,) action at time t [s]: per finger (radial inward, tangential ccw).
    """
    ph = (t % period) / period
    if ph < 0.25:  # press down/in while sweeping clockwise-end
        radial, tangential = press * ph / 0.25, -sweep
    elif ph < 0.5:  # sweep counter-clockwise while pressing
        radial, tangential = press, -sweep + 2 * sweep * (ph - 0.25) / 0.25
    elif ph < 0.75:  # lift off
        radial, tangential = press * (1 - (ph - 0.5) / 0.25) - 0.3 * (ph - 0.5) / 0.25, sweep
    else:  # sweep back, fingers away from the cube
        radial, tangential = -0.3, sweep - 2 * sweep * (ph - 0.75) / 0.25
    return np.tile([radial, tangential], 4)


class InHandRotateEnv(MujocoEnv):
    """Four soft two-DOF fingers (`somo_finger`) standing on a palm rotate a 60 mm, 20 g cube
    about the vertical axis (SoMo's in-hand rotation task; the SomoGym in-hand family).

    Each finger is the continuum-informed chain (5 links) with four force-controlled tendons;
    the action sets its bending moment toward the cube (radial) and counter-clockwise
    (tangential), in units of M_max = EI `kappa_max`. The cube rests on the palm and is moved
    only by contact with the fingers (friction `friction`). Steps are 0.05 s (10 substeps of
    5 ms); episodes last `episode_steps` steps (10 s). The episode terminates if the cube leaves
    the palm (horizontal offset > 7 cm).

    Observation, shape (35,), float32:

    | index | component | unit |
    |---|---|---|
    | 0-2 | cube position relative to the palm centre (x, y, z) | m |
    | 3-11 | cube orientation (rotation matrix, row-major) | 1 |
    | 12-14 | cube angular velocity, world frame | rad/s |
    | 15-26 | fingertip positions relative to the palm centre (4 x (x, y, z)) | m |
    | 27-34 | commanded moment of fingers 1..4 (radial, tangential) / M_max | 1 |

    Action, shape (8,), in [-1, 1]: per finger, bending moment toward the cube (radial) and
    counter-clockwise about the palm normal (tangential), in units of M_max [N m].

    Reward terms: `rotation` = 10 x the cube's yaw change this step [rad] (counter-clockwise
    positive, counted only while the cube is upright), `center` = -5 x horizontal offset of the
    cube [m], `drop` = -10 when the cube leaves the palm, and with `tilt_weight` > 0 (opt-in,
    default 0: the task's reward unchanged) `tilt` = -tilt_weight x the cube's tilt [rad].
    With a finite `rotation_cap` [rad] (opt-in, default inf: unchanged) `rotation` pays only
    the part of the accumulated rotation below the cap (turning back below it costs), so a
    policy is not paid to keep spinning once the target is passed.
    `info`: `success` (upright, on the palm and turned by >= 90 deg about the palm normal while
    upright), `rotation` [rad], `tilt` [rad] (the cube's z axis from the palm normal), `offset`
    [m], `dropped`.
    """

    control_period = 0.05
    camera = "main"

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        episode_steps: int = 200,
        links: int = 5,
        kappa_max: float = 15.0,
        friction: float = 0.8,
        width: int = 320,
        height: int = 240,
        tilt_weight: float = 0.0,
        rotation_cap: float = math.inf,
    ) -> None:
        if not kappa_max > 0 or not friction > 0:
            raise ValueError(f"kappa_max and friction must be > 0, got {kappa_max}, {friction}")
        if not (math.isfinite(tilt_weight) and tilt_weight >= 0):
            raise ValueError(f"tilt_weight must be finite and >= 0, got {tilt_weight}")
        self.tilt_weight = float(tilt_weight)
        if not rotation_cap > 0:
            raise ValueError(f"rotation_cap must be > 0 [rad], got {rotation_cap}")
        self.rotation_cap = float(rotation_cap)
        self.finger = shipped_robot("somo_finger")
        self.friction = float(friction)
        bb = self.finger.segment_backbone(0)
        self.moment_max = float(bb.youngs_modulus * bb.I * kappa_max)
        self.options = MujocoOptions(
            links=links,
            timestep=0.005,
            damping_ratio=0.3,
            tendon_control="force",
            max_tension=2.0 * self.moment_max / 0.006,
            friction=friction,
        )
        self.command = np.zeros(8)
        super().__init__(
            episode_steps=episode_steps, render_mode=render_mode, width=width, height=height
        )
        self.action_space = gym.spaces.Box(-1.0, 1.0, (8,), dtype=np.float32)
        self.observation_space = obs_box(35)
        self._yaw_prev = 0.0
        self.rotation = 0.0

    def _build_spec(self) -> mujoco.MjSpec:
        spec = new_spec("InHandRotate", self.options)
        add_lights(spec, "task")
        add_floor(spec, size=0.5, friction=0.8)
        spec.worldbody.add_geom(
            name="palm",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=[0, 0, PALM_TOP / 2],
            size=[PALM_HALF, PALM_HALF, PALM_TOP / 2],
            rgba=[0.35, 0.35, 0.4, 1.0],
            contype=CONTYPE_OBJECT,
            conaffinity=CONTYPE_OBJECT,
            friction=[self.friction, 0.005, 0.0001],
        )
        cube = spec.worldbody.add_body(name="cube", pos=[0, 0, PALM_TOP + CUBE_HALF])
        cube.add_freejoint(name="cube_free")
        cube.add_geom(
            name="cube",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[CUBE_HALF] * 3,
            mass=CUBE_MASS,
            rgba=[0.2, 0.55, 0.85, 1.0],
            contype=CONTYPE_OBJECT,
            conaffinity=CONTYPE_OBJECT,
            friction=[self.friction, 0.005, 0.0001],
            condim=4,
        )
        # A stripe on the cube's +x face shows its rotation.
        cube.add_geom(
            name="cube_mark",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=[CUBE_HALF, 0, 0],
            size=[0.001, 0.008, 0.02],
            rgba=[0.95, 0.3, 0.1, 1.0],
            contype=0,
            conaffinity=0,
            mass=0.0,
        )
        self.chains = []
        for i in range(4):
            phi = math.pi / 4 + i * math.pi / 2
            pos = (FINGER_RADIUS * math.cos(phi), FINGER_RADIUS * math.sin(phi), PALM_TOP)
            # Body x toward the palm centre (radial inward), body z up.
            quat = quat_from_axis_angle([0, 0, 1], phi + math.pi)
            self.chains.append(
                add_robot(
                    spec,
                    spec.worldbody,
                    self.finger,
                    self.options,
                    prefix=f"f{i}_",
                    soft_index=i,
                    pos=pos,
                    quat=(quat[0], quat[1], quat[2], quat[3]),
                )
            )
        add_camera(spec, "main", pos=[0.18, -0.26, 0.3], target=[0.0, 0.0, 0.05])
        return spec

    def _bind(self) -> None:
        m = self.model
        self._cube = m.body("cube").id
        self._cube_qvel = m.jnt_dofadr[m.joint("cube_free").id]
        self._tips = np.array([m.site(c.tip_site).id for c in self.chains])
        self._acts = [np.array([m.actuator(a).id for a in c.actuators]) for c in self.chains]

    def _cube_yaw(self) -> float:
        r = self.data.xmat[self._cube].reshape(3, 3)
        return math.atan2(r[1, 0], r[0, 0])

    def _reset_task(self) -> None:
        self.command = np.zeros(8)
        self.data.ctrl[:] = 0.0
        qadr = self.model.jnt_qposadr[self.model.joint("cube_free").id]
        xy = self.np_random.uniform(-0.004, 0.004, 2)
        yaw = float(self.np_random.uniform(-0.2, 0.2))
        self.data.qpos[qadr : qadr + 3] = [xy[0], xy[1], PALM_TOP + CUBE_HALF]
        self.data.qpos[qadr + 3 : qadr + 7] = quat_from_axis_angle([0, 0, 1], yaw)
        mujoco.mj_forward(self.model, self.data)
        self._yaw_prev = self._cube_yaw()
        self._upright_prev = True
        self.rotation = 0.0

    def _apply_action(self, action: np.ndarray) -> None:
        self.command = action.astype(float).copy()
        for i in range(4):
            radial, tangential = self.command[2 * i : 2 * i + 2]
            # Body +x is radial inward; counter-clockwise about +z is body -y for this mount.
            moment = np.array([[radial, -tangential]]) * self.moment_max
            self.data.ctrl[self._acts[i]] = bending_tensions(self.finger, moment)

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        d = self.data
        yaw = self._cube_yaw()
        tilt = math.acos(float(np.clip(d.xmat[self._cube][8], -1.0, 1.0)))
        upright = tilt <= UPRIGHT_TILT
        # Yaw is a rotation about the palm normal only while the cube stands on its face.
        dyaw = (yaw - self._yaw_prev + math.pi) % (2 * math.pi) - math.pi
        if not (upright and self._upright_prev):
            dyaw = 0.0
        self._yaw_prev, self._upright_prev = yaw, upright
        # Opt-in cap: rotation beyond `rotation_cap` earns nothing (turning back below it costs).
        paid = dyaw
        if math.isfinite(self.rotation_cap):
            cap = self.rotation_cap
            paid = min(self.rotation + dyaw, cap) - min(self.rotation, cap)
        self.rotation += dyaw
        pos = d.xpos[self._cube].copy()
        offset = float(np.hypot(pos[0], pos[1]))
        dropped = bool(offset > DROP_RADIUS or pos[2] < PALM_TOP)
        omega = d.qvel[self._cube_qvel + 3 : self._cube_qvel + 6]
        obs = np.concatenate(
            [
                pos,
                d.xmat[self._cube],
                omega,
                d.site_xpos[self._tips].ravel(),
                self.command,
            ]
        ).astype(np.float32)
        terms = {
            "rotation": 10.0 * paid,
            "center": -5.0 * offset,
            "drop": -10.0 if dropped else 0.0,
        }
        # Opt-in shaping: the rotation reward pays speed, and a cube rolled onto a side face
        # (most failures of trained policies) costs only the rotation it no longer earns.
        if self.tilt_weight > 0:
            terms["tilt"] = -self.tilt_weight * tilt
        info = {
            "success": bool(self.rotation >= SUCCESS_ROTATION and upright and not dropped),
            "rotation": self.rotation,
            "tilt": tilt,
            "offset": offset,
            "dropped": dropped,
        }
        return obs, terms, dropped, info
