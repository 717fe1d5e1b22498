"""`softrod/PushCube-v1`: a soft neck on a quadruped pushes a cube to a target (App. G).

v1 (issue 17 item 1) moves the cube's start box forward, from x in [0.40, 0.46] m to [0.48,
0.50] m; the target box (App. G), reward, physics, robot and the 6 s episodes are v0's. Why
(`dev/push_cube_expert.py`, closed-loop `softrod.learn.PushExpert`, seeds 0-99): pushing a
cube forward needs the tip on the ground behind it, and the neck (3 x 0.2 m from x = 0.17 m,
0.28 m up, sagging) reaches the ground pointing forward no nearer than x = 0.36 m, and nearer
than 0.43 m only with segment 1 at or near its curvature limit, mostly toppled sideways
(settled scan, `--scan`). On v0's box the expert solved 27 % of the episodes, 1 of the 26 that
started the cube at x < 0.42 m; on v1's box, 93 %. The new box also keeps every start >= 5 cm
(the success radius) from the targets, so no episode starts solved.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from softrod.envs._base import obs_box
from softrod.envs._reach_core import HangingRobotEnv
from softrod.envs._scene import shipped_robot
from softrod.scene import CONTYPE_OBJECT, OBJECT_AFFINITY, add_rigid

__all__ = ["PushCubeEnv"]

#: Target box [m] (App. G): x in [0.55, 0.7], y in [-0.1, 0.1], on the ground.
TARGET_LOW = (0.55, -0.1)
TARGET_HIGH = (0.7, 0.1)
#: Cube start box [m] [CHOICE: App. G gives none]: in front of the neck, where its tip can come
#: down behind the cube, and >= 5 cm (the success radius) short of the targets, so no episode
#: starts solved (v0: x in [0.40, 0.46], its near half out of the tip's reach: module docstring).
CUBE_LOW = (0.48, -0.05)
CUBE_HIGH = (0.50, 0.05)
#: Cube: 5 cm edge, 50 g.
CUBE_HALF = 0.025
CUBE_MASS = 0.05
#: Cube-to-target distance that counts as success [m].
SUCCESS_RADIUS = 0.05
#: Quadruped trunk start height [m] (settles to about 0.27 m in its standing pose).
TRUNK_HEIGHT = 0.33


class PushCubeEnv(HangingRobotEnv):
    """A three-segment soft neck (`softmanisim_neck`, 3 x 0.2 m) on the front of a standing
    quadruped (`softrod.scene`'s Go1-class model, free base on its four position-servoed legs)
    pushes a 5 cm cube over the ground to a random target (SoftManiSim App. G).

    The neck is the continuum-informed chain (9 links) with pull-only, length-controlled
    tendons; the action changes each segment's commanded curvature as in `Reach-v0`. The cube
    moves only by contact (neck-cube and cube-ground friction). Steps are 0.05 s (5 substeps
    of 10 ms); episodes last `episode_steps` steps (6 s).

    Observation, shape (31,), float32:

    | index | component | unit |
    |---|---|---|
    | 0-8 | distal end of neck segments 1..3, world frame | m |
    | 9-11 | neck tip velocity, world frame | m/s |
    | 12-14 | cube position, world frame | m |
    | 15-17 | cube - tip | m |
    | 18-19 | target (x, y) on the ground | m |
    | 20-21 | target - cube (x, y) | m |
    | 22-24 | quadruped trunk position, world frame | m |
    | 25-30 | commanded curvature of segments 1..3 (toward body x, y) / kappa_max | 1 |

    Action, shape (6,), in [-1, 1]: change of each neck segment's commanded curvature, in units
    of `kappa_rate` [1/m per step], saturating at +-`kappa_max` [1/m]. (App. G drives the neck
    with sinusoids of unspecified parameters; curvature rates are this package's choice.)

    Reward terms (App. G): `push` = exp(-300 d^2), d = horizontal cube-to-target distance [m];
    `touch` = 0.5 while the neck's distal link touches the cube. `info`: `success` (d <= 5 cm),
    `distance` (= d) [m], `cube`, `target`, `touch`.
    """

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        episode_steps: int = 120,
        links: int = 9,
        kappa_max: float = 10.0,
        kappa_rate: float = 1.0,
        width: int = 320,
        height: int = 240,
    ) -> None:
        self._quad_home: tuple[float, ...] = ()
        super().__init__(
            shipped_robot("softmanisim_neck"),
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
            floor_z=0.0,
        )
        self.observation_space = obs_box(31)
        self.cube_target = np.zeros(2)

    def _mount(self, spec: mujoco.MjSpec) -> tuple[mujoco.MjsBody, Any, Any]:
        self.quad = add_rigid(
            spec, spec.worldbody, "quadruped", "quad/", pos=(0.0, 0.0, TRUNK_HEIGHT)
        )
        self._quad_home = tuple(self.quad.home)
        return spec.body(self.quad.flange), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)

    def _camera_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0.35, -1.25, 0.75]), np.array([0.4, 0.0, 0.12])

    def _add_objects(self, spec: mujoco.MjSpec) -> None:
        cube = spec.worldbody.add_body(name="cube", pos=[0.49, 0.0, CUBE_HALF])
        cube.add_freejoint(name="cube_free")
        cube.add_geom(
            name="cube",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[CUBE_HALF] * 3,
            mass=CUBE_MASS,
            rgba=[0.2, 0.55, 0.85, 1.0],
            contype=CONTYPE_OBJECT,
            conaffinity=OBJECT_AFFINITY,
            friction=[0.5, 0.005, 0.0001],
            condim=3,
        )

    def _bind(self) -> None:
        super()._bind()
        m = self.model
        self._cube = m.body("cube").id
        self._cube_q = m.jnt_qposadr[m.joint("cube_free").id]
        self._cube_geoms = {m.geom("cube").id}
        self._trunk = m.body(self.quad.base_body).id
        self._quad_q = np.array([m.joint(j).qposadr[0] for j in self.quad.joints])
        self._quad_act = np.array([m.actuator(a).id for a in self.quad.actuators])

    def _reset_task(self) -> None:
        self._reset_robot()
        self.data.qpos[self._quad_q] = self._quad_home
        self.data.ctrl[self._quad_act] = self._quad_home
        xy = self.np_random.uniform(CUBE_LOW, CUBE_HIGH)
        self.data.qpos[self._cube_q : self._cube_q + 7] = [xy[0], xy[1], CUBE_HALF, 1, 0, 0, 0]
        self.cube_target = self.np_random.uniform(TARGET_LOW, TARGET_HIGH)
        self._set_target(np.array([*self.cube_target, 0.002]))

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        tip = self.tip_position()
        cube = self.data.xpos[self._cube].copy()
        d = float(np.linalg.norm(cube[:2] - self.cube_target))
        touch = self.tip_contacts(self._cube_geoms) > 0
        obs = np.concatenate(
            [
                self.segment_ends().ravel(),
                self.tip_velocity(),
                cube,
                cube - tip,
                self.cube_target,
                self.cube_target - cube[:2],
                self.data.xpos[self._trunk],
                self.kappa / self.kappa_max,
            ]
        ).astype(np.float32)
        terms = {"push": float(np.exp(-300.0 * d * d)), "touch": 0.5 if touch else 0.0}
        info = {
            "success": bool(d <= SUCCESS_RADIUS),
            "distance": d,
            "cube": cube,
            "target": self.cube_target.copy(),
            "touch": bool(touch),
            "tip": tip,
        }
        return obs, terms, False, info
