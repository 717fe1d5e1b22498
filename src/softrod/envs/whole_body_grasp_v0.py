"""`softrod/WholeBodyGrasp-v0`: seed 002 task 1, wrap a cylinder with the TDCR and bin it."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from softrod.envs._tdcr_arm import TDCRArmEnv
from softrod.scene import CONTYPE_OBJECT, OBJECT_AFFINITY

__all__ = ["WholeBodyGraspEnv"]

#: Objects collide with every collision group.
#: Table: top at TABLE_TOP [m], spanning the cylinder's spawn box with margin.
TABLE_TOP = 0.19
TABLE_CENTER = (0.6, 0.0)
TABLE_HALF = (0.2, 0.3)
#: Cylinder [CHOICE: the paper gives no size]: radius 2 cm, 8 cm tall, 20 g, so that the
#: 186.5 mm TDCR can wrap it more than once around.
CYL_RADIUS = 0.02
CYL_HALF_HEIGHT = 0.04
CYL_MASS = 0.02
#: Spawn box of the cylinder centre (seed 002 Table 5): x, y [m]; its base rests on the table.
CYL_LOW = (0.47, -0.2)
CYL_HIGH = (0.72, 0.2)
#: Bin on the floor beside the table: inner half extents, wall height [m].
BIN_CENTER = (0.3, 0.45)
BIN_HALF = 0.1
BIN_HEIGHT = 0.1
BIN_WALL = 0.005


class WholeBodyGraspEnv(TDCRArmEnv):
    """Seed 002's task 1: the TDCR on a Panda wraps its body around a cylinder standing on a
    table, lifts it, carries it over a bin and releases it (ALGORITHMS.md C.4).

    The cylinder (radius 2 cm, 8 cm, 20 g) spawns uniformly in seed 002's box, x in
    [0.47, 0.72] m, y in [-0.2, 0.2] m, standing on the table (its centre at z = 0.23 m). It is
    held only by contact and friction with the TDCR's backbone and disks. The episode succeeds
    (and terminates) when the cylinder lies inside the bin on the floor at (0.3, 0.45) m; it
    fails (terminates) when the cylinder falls off the table elsewhere. With
    `terminate_on_success=False` a successful episode runs on to its time limit (used to record
    demonstrations that show what follows success). Steps are 0.05 s
    (10 substeps of 5 ms); episodes last `episode_steps` steps (15 s).

    Observation, shape (19,), float32 (seed 002's policy input, unnormalized):

    | index | component | unit |
    |---|---|---|
    | 0-6 | Panda joint positions | rad |
    | 7-15 | TDCR tendon displacements (pulled in > 0), segment by segment | m |
    | 16-18 | cylinder centre, world frame | m |

    Action, shape (16,): absolute Panda joint targets (7, within the joint limits) [rad] and
    tendon displacements (9, in [-0.03, 0.03]) [m]; the drives approach them at most at the
    Panda's joint speed limits and 0.03 m/s (tendon motors).

    Reward terms (for diagnostics and RL; the seed-002 policy is trained by imitation):
    `reach` = -|tip - cylinder| [m], `lift` = 10 x cylinder height above its rest [m]
    (capped at 0.1 m), `place` = 10 on success. `info`: `success`, `distance` (horizontal
    cylinder-to-bin distance [m]), `cylinder` (position), `contacts` (TDCR-cylinder contacts).
    """

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        episode_steps: int = 300,
        links: int = 12,
        terminate_on_success: bool = True,
        width: int = 320,
        height: int = 240,
    ) -> None:
        self.terminate_on_success = bool(terminate_on_success)
        super().__init__(
            episode_steps=episode_steps,
            links=links,
            render_mode=render_mode,
            width=width,
            height=height,
        )

    def _add_task(self, spec: mujoco.MjSpec) -> None:
        world = spec.worldbody
        kw = dict(
            contype=CONTYPE_OBJECT, conaffinity=OBJECT_AFFINITY, friction=[0.8, 0.005, 0.0001]
        )
        world.add_geom(
            name="table",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=[*TABLE_CENTER, TABLE_TOP / 2],
            size=[*TABLE_HALF, TABLE_TOP / 2],
            rgba=[0.55, 0.42, 0.3, 1.0],
            **kw,
        )
        cyl = world.add_body(name="cylinder", pos=[0.6, 0.0, TABLE_TOP + CYL_HALF_HEIGHT])
        cyl.add_freejoint(name="cylinder_free")
        cyl.add_geom(
            name="cylinder",
            type=mujoco.mjtGeom.mjGEOM_CYLINDER,
            size=[CYL_RADIUS, CYL_HALF_HEIGHT, 0],
            mass=CYL_MASS,
            condim=4,
            rgba=[0.85, 0.25, 0.2, 1.0],
            **kw,
        )
        # The bin: a floor plate and four walls.
        bx, by = BIN_CENTER
        h, w, a = BIN_HEIGHT, BIN_WALL, BIN_HALF
        for name, size, pos in (
            ("bin_floor", [a + w, a + w, w / 2], [bx, by, w / 2]),
            ("bin_xp", [w / 2, a + w, h / 2], [bx + a + w / 2, by, h / 2]),
            ("bin_xn", [w / 2, a + w, h / 2], [bx - a - w / 2, by, h / 2]),
            ("bin_yp", [a, w / 2, h / 2], [bx, by + a + w / 2, h / 2]),
            ("bin_yn", [a, w / 2, h / 2], [bx, by - a - w / 2, h / 2]),
        ):
            world.add_geom(
                name=name,
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=size,
                pos=pos,
                rgba=[0.3, 0.5, 0.35, 1.0],
                **kw,
            )

    def _bind(self) -> None:
        super()._bind()
        m = self.model
        self._cyl = m.body("cylinder").id
        self._cyl_q = m.jnt_qposadr[m.joint("cylinder_free").id]
        self._cyl_geoms = {m.geom("cylinder").id}

    def _reset_task(self) -> None:
        self._reset_arm()
        xy = self.np_random.uniform(CYL_LOW, CYL_HIGH)
        self.data.qpos[self._cyl_q : self._cyl_q + 7] = [
            xy[0],
            xy[1],
            TABLE_TOP + CYL_HALF_HEIGHT,
            1.0,
            0.0,
            0.0,
            0.0,
        ]
        self.target_position = self.data.qpos[self._cyl_q : self._cyl_q + 3].copy()

    def cylinder_position(self) -> np.ndarray:
        """Cylinder centre in the world (3,) [m]."""
        return self.data.xpos[self._cyl].copy()

    def in_bin(self, p: np.ndarray) -> bool:
        """Whether point p lies inside the bin's walls, below their top."""
        return bool(
            abs(p[0] - BIN_CENTER[0]) < BIN_HALF
            and abs(p[1] - BIN_CENTER[1]) < BIN_HALF
            and p[2] < BIN_HEIGHT
        )

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        cyl = self.cylinder_position()
        self.target_position = cyl
        success = self.in_bin(cyl)
        on_table = (
            abs(cyl[0] - TABLE_CENTER[0]) < TABLE_HALF[0]
            and abs(cyl[1] - TABLE_CENTER[1]) < TABLE_HALF[1]
        )
        fallen = (cyl[2] < TABLE_TOP - 0.02) and not success and not on_table
        # Fell off beside the table: not in the bin and below the table top.
        fallen = bool(fallen and cyl[2] < 0.5 * TABLE_TOP)
        tip = self.tip_position()
        terms = {
            "reach": -float(np.linalg.norm(tip - cyl)),
            "lift": 10.0 * float(np.clip(cyl[2] - TABLE_TOP - CYL_HALF_HEIGHT, 0.0, 0.1)),
            "place": 10.0 if success else 0.0,
        }
        info = {
            "success": success,
            "distance": float(np.hypot(cyl[0] - BIN_CENTER[0], cyl[1] - BIN_CENTER[1])),
            "cylinder": cyl,
            "contacts": self.tdcr_contacts(self._cyl_geoms),
        }
        return (
            self._observation(),
            terms,
            bool((success and self.terminate_on_success) or fallen),
            info,
        )
