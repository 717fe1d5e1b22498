"""`softrod/FlipSwitch-v0`: seed 002 task 2, flip a wall switch from behind with the TDCR."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from softrod.envs._base import Randomization
from softrod.envs._tdcr_arm import DEMO_ACTION_NOISE, TDCRArmEnv
from softrod.scene import CONTYPE_OBJECT, OBJECT_AFFINITY

__all__ = ["FlipSwitchEnv"]

#: Switch plate half extents (thickness x, width y, height z) [m], toggle lever length, width,
#: thickness [m] (~7 x 10 mm contact area), end stops +-ANGLE [rad] and the force at the lever
#: tip that flips it [N] (seed 002: ~0.9 N); the same values as `softrod.scene.SwitchObject`.
PLATE_HALF = (0.004, 0.035, 0.057)
LEVER = 0.02
LEVER_WIDTH = 0.007
LEVER_THICKNESS = 0.01
ANGLE = 0.35
FLIP_FORCE = 0.9
#: MuJoCo's dry friction is a soft constraint that lets a loaded joint creep; with a 2 g lever
#: and a 1e-6 kg m^2 rotor the toggle crept 0.1 rad/s under its own weight. A 1e-4 kg m^2 rotor
#: and a hard friction impedance bring the creep below 0.002 rad/s (measured).
TOGGLE_ARMATURE = 1e-4
TOGGLE_SOLIMP = (0.99, 0.9999, 0.001, 0.5, 2.0)
#: The toggle counts as off beyond this angle [rad] (it starts at -ANGLE, up).
OFF_ANGLE = 0.2
#: Spawn box of the switch (the toggle's hinge on the plate face), seed 002 Table 5 [m].
SWITCH_LOW = (0.66, -0.06, 0.475)
SWITCH_HIGH = (0.78, 0.24, 0.55)
#: Length of the post under the plate [m] (reaches the floor from the lowest spawn).
POST_LENGTH = 0.42


class FlipSwitchEnv(TDCRArmEnv):
    # The hook's tip must land on a 7 mm lever: tendon jitter makes it miss (measured), so the
    # demonstrations perturb only the arm.
    demo_action_noise = np.concatenate([DEMO_ACTION_NOISE[:7], np.zeros(9)])

    """Seed 002's task 2: flip a wall switch whose plate faces away from the robot.

    The switch plate (8 x 70 x 114 mm, on a post) faces +x, away from the Panda; its toggle
    (20 mm lever, 7 mm wide) sticks out of the far face, starts up ("on", -0.35 rad) and is
    held by dry friction in its hinge: it flips only when about 0.9 N pushes on its tip (joint
    frictionloss = 0.9 N x 20 mm). The switch position (the toggle's hinge) is uniform in seed
    002's box, x in [0.66, 0.78], y in [-0.06, 0.24], z in [0.475, 0.55] m. The robot reaches
    over the plate, presses the toggle down ("off", past +0.2 rad) with the TDCR and retracts:
    the episode succeeds (and terminates) when the toggle is off and the TDCR tip is back
    behind the plate (seed 002 App. E.1); with `terminate_on_success=False` it runs on to its
    time limit (used to record demonstrations that show what follows success). Steps are
    0.05 s (10 substeps of 5 ms); episodes last `episode_steps` steps (12 s).

    Observation, shape (19,), float32 (seed 002's policy input, unnormalized):

    | index | component | unit |
    |---|---|---|
    | 0-6 | Panda joint positions | rad |
    | 7-15 | TDCR tendon displacements (pulled in > 0), segment by segment | m |
    | 16-18 | switch position (toggle hinge), world frame | m |

    With `obs_mode="rgb"` the observation is instead an (84, 84, 3) uint8 RGB image from the
    scene camera `obs_camera` (default: the render camera "main"); rewards, `info` and the
    dynamics do not change (MUJOCO_GL=egl renders headless).

    `randomize` (a dict of the fields of `Randomization` in envs/_base.py; default off)
    perturbs the robot at every reset from the episode's seed: backbone modulus and tendon
    stiffness factors, link mass, damping, joint friction, observation noise, action delay.

    Action, shape (16,): absolute Panda joint targets (7) [rad] and tendon displacements (9,
    in [-0.03, 0.03]) [m]; the drives approach them at most at the Panda's joint speed limits
    and 0.03 m/s (tendon motors).

    Reward terms (diagnostics and RL): `reach` = -|tip - lever tip| [m] before the flip,
    `off` = 1 while the toggle is off, `retreat` = -|x_tip - x_back|_+ [m] (tip in front of
    the plate's back face) once it is off, `done` = 10 on success. `info`: `success`,
    `distance` (tip to lever tip [m]), `toggle` (angle [rad]), `off`, `contacts`
    (TDCR-switch contacts).
    """

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        episode_steps: int = 240,
        links: int = 12,
        terminate_on_success: bool = True,
        width: int = 320,
        height: int = 240,
        obs_mode: str = "state",
        obs_camera: str | None = None,
        randomize: Randomization | dict[str, Any] | None = None,
    ) -> None:
        self.terminate_on_success = bool(terminate_on_success)
        self.flipped = False
        super().__init__(
            episode_steps=episode_steps,
            links=links,
            render_mode=render_mode,
            width=width,
            height=height,
        )
        self._set_obs_mode(obs_mode, obs_camera)
        self._set_randomization(randomize)

    def _camera_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([1.5, -0.75, 0.95]), np.array([0.55, 0.05, 0.45])

    def _add_task(self, spec: mujoco.MjSpec) -> None:
        px, py, pz = PLATE_HALF
        kw = dict(
            contype=CONTYPE_OBJECT, conaffinity=OBJECT_AFFINITY, friction=[0.8, 0.005, 0.0001]
        )
        # The switch rides on a mocap body so that its pose is part of the simulation state.
        sw = spec.worldbody.add_body(name="switch", mocap=True, pos=[0.72, 0.1, 0.5])
        sw.add_geom(
            name="plate",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=[-px, 0, 0],
            size=[px, py, pz],
            rgba=[0.92, 0.9, 0.85, 1.0],
            **kw,
        )
        sw.add_geom(
            name="post",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=[-px, 0, -pz - POST_LENGTH / 2],
            size=[px, 0.01, POST_LENGTH / 2],
            rgba=[0.5, 0.5, 0.5, 1.0],
            **kw,
        )
        toggle = sw.add_body(name="toggle")
        hinge = toggle.add_joint(
            name="toggle_hinge",
            type=mujoco.mjtJoint.mjJNT_HINGE,
            axis=[0, 1, 0],
            range=[-ANGLE, ANGLE],
            frictionloss=FLIP_FORCE * LEVER,
            damping=[1e-4, 0, 0],
            armature=TOGGLE_ARMATURE,
        )
        hinge.solimp_friction = list(TOGGLE_SOLIMP)
        toggle.add_geom(
            name="lever",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=[LEVER / 2, 0, 0],
            size=[LEVER / 2, LEVER_WIDTH / 2, LEVER_THICKNESS / 2],
            mass=0.002,
            rgba=[0.95, 0.95, 0.9, 1.0],
            **kw,
        )
        toggle.add_site(name="lever_tip", pos=[LEVER, 0, 0], size=[0.002, 0, 0])

    def _bind(self) -> None:
        super()._bind()
        m = self.model
        self._switch = m.body("switch").mocapid[0]
        self._hinge_q = m.jnt_qposadr[m.joint("toggle_hinge").id]
        self._lever_tip = m.site("lever_tip").id
        self._switch_geoms = {m.geom(g).id for g in ("plate", "post", "lever")}

    def _reset_task(self) -> None:
        self._reset_arm()
        pos = self.np_random.uniform(SWITCH_LOW, SWITCH_HIGH)
        self.data.mocap_pos[self._switch] = pos
        self.data.qpos[self._hinge_q] = -ANGLE
        self.target_position = pos.copy()
        self.flipped = False

    def toggle_angle(self) -> float:
        """Toggle angle [rad]: -0.35 up (on), +0.35 down (off)."""
        return float(self.data.qpos[self._hinge_q])

    def switch_position(self) -> np.ndarray:
        """The toggle's hinge on the plate face (3,) [m]."""
        return self.data.mocap_pos[self._switch].copy()

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        angle = self.toggle_angle()
        off = angle >= OFF_ANGLE
        self.flipped = self.flipped or off
        tip = self.tip_position()
        back_face = self.target_position[0] - 2 * PLATE_HALF[0]
        behind = bool(tip[0] < back_face)
        success = bool(off and behind)
        d = float(np.linalg.norm(tip - self.data.site_xpos[self._lever_tip]))
        terms = {
            "reach": 0.0 if self.flipped else -d,
            "off": 1.0 if off else 0.0,
            "retreat": -max(0.0, float(tip[0] - back_face)) if self.flipped else 0.0,
            "done": 10.0 if success else 0.0,
        }
        info = {
            "success": success,
            "distance": d,
            "toggle": angle,
            "off": bool(off),
            "contacts": self.tdcr_contacts(self._switch_geoms),
        }
        return self._observation(), terms, bool(success and self.terminate_on_success), info
