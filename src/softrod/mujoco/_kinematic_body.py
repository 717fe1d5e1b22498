"""The rod model inside a MuJoCo scene as a kinematic body (SoftManiSim's coupling, A.2.5).

Where a user wants softrod's rod model rather than the rigid-link chain (`softrod.mujoco`),
the backbone is shown and collided as a chain of mocap capsules placed along the solved shape
every step. MuJoCo then detects contacts with the scene; `contact_point_loads` returns the
contact forces on the rod as `point_loads` for the next static solve, the feedback the
paper's PyBullet coupling left to the user. Without it the rod passes through objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from softrod.rods import so3

if TYPE_CHECKING:
    from softrod.rods import StaticResult

__all__ = ["KinematicRod"]


@dataclass
class KinematicRod:
    """A chain of `n_bodies` mocap capsules that follows a rod shape in a MuJoCo scene.

    Build: `rod = KinematicRod(n_bodies=20, radius=0.005)`, `rod.add_to(spec)` before
    compiling; then `rod.bind(model)` and, every step, `rod.place(data, result)` (a
    StaticResult or any object with `s`, `positions`) followed by `mujoco.mj_forward`.
    """

    n_bodies: int = 20
    radius: float = 0.005
    prefix: str = "rod"
    rgba: tuple[float, float, float, float] = (0.9, 0.45, 0.1, 1.0)
    friction: float = 0.5
    #: Names of static geoms (walls, tables) to collide with: MuJoCo skips contacts between
    #: two bodies fixed to the world, which mocap bodies are, so such pairs are explicit.
    collide_with: tuple[str, ...] = ()
    _mocap_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    _geom_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    _s_mid: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if self.n_bodies < 1:
            raise ValueError(f"n_bodies must be >= 1, got {self.n_bodies}")
        if not self.radius > 0:
            raise ValueError(f"radius must be > 0 [m], got {self.radius}")

    def add_to(self, spec: Any) -> None:
        """Add the capsules to an `mujoco.MjSpec` (world-level mocap bodies); the geoms named
        in `collide_with` must already be in the spec."""
        for i in range(self.n_bodies):
            body = spec.worldbody.add_body(name=f"{self.prefix}_{i}", mocap=True)
            body.add_geom(
                name=f"{self.prefix}_geom_{i}",
                type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                size=[self.radius, 0.01, 0.0],
                rgba=list(self.rgba),
                friction=[self.friction, 0.005, 0.0001],
            )
            for other in self.collide_with:
                spec.add_pair(
                    geomname1=f"{self.prefix}_geom_{i}",
                    geomname2=other,
                    condim=3,
                    friction=[self.friction, self.friction, 0.005, 0.0001, 0.0001],
                )

    def bind(self, model: Any) -> None:
        """Look up the capsules in the compiled model."""
        bodies = [
            mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"{self.prefix}_{i}")
            for i in range(self.n_bodies)
        ]
        if min(bodies) < 0:
            raise ValueError(f"the model has no kinematic rod with prefix {self.prefix!r}")
        self._mocap_ids = np.array([model.body_mocapid[b] for b in bodies])
        self._geom_ids = np.array(
            [
                mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"{self.prefix}_geom_{i}")
                for i in range(self.n_bodies)
            ]
        )
        self._model = model

    def place(self, data: Any, shape: StaticResult | Any) -> None:
        """Put capsule i between the rod points at s_i and s_{i+1} (equal arc-length pieces).

        Capsule half-lengths are fixed at bind time in MuJoCo, so each capsule is centred on
        its chord and oriented along it; its length is set through `model.geom_size`.
        """
        if self._mocap_ids.size == 0:
            raise ValueError("call bind(model) after compiling, before place()")
        s = np.asarray(shape.s)
        pos = np.asarray(shape.positions)
        knots = np.linspace(s[0], s[-1], self.n_bodies + 1)
        pts = np.column_stack([np.interp(knots, s, pos[:, a]) for a in range(3)])
        self._s_mid = 0.5 * (knots[1:] + knots[:-1])
        for i in range(self.n_bodies):
            a, b = pts[i], pts[i + 1]
            chord = b - a
            length = float(np.linalg.norm(chord))
            m = self._mocap_ids[i]
            data.mocap_pos[m] = 0.5 * (a + b)
            data.mocap_quat[m] = so3.quat_from_z(chord if length > 0 else np.array([0, 0, 1.0]))
            self._model.geom_size[self._geom_ids[i], 1] = max(0.5 * length, 1e-6)

    def contact_point_loads(
        self, model: Any, data: Any, stiffness: float = 2000.0
    ) -> list[tuple[float, np.ndarray]]:
        """Contact forces on the rod as [(s [m], world force on the rod (3,) [N]), ...],
        ready for `solve_static(point_loads=...)` (call after `mujoco.mj_forward`).

        The rod is kinematic, so MuJoCo's constraint solver gives it no force (it has no
        degrees of freedom); the force is a penalty, `stiffness` [N/m] times the penetration
        depth, along the contact normal, pushing the rod out of the object.
        """
        if not stiffness > 0:
            raise ValueError(f"stiffness must be > 0 [N/m], got {stiffness!r}")
        out: list[tuple[float, np.ndarray]] = []
        geom_to_piece = {int(g): i for i, g in enumerate(self._geom_ids)}
        for k in range(data.ncon):
            con = data.contact[k]
            g1, g2 = int(con.geom1), int(con.geom2)
            if (g1 in geom_to_piece) == (g2 in geom_to_piece):
                continue  # not the rod, or the rod with itself
            depth = -float(con.dist)
            if depth <= 0.0:
                continue
            normal = np.asarray(con.frame[:3], dtype=float)  # from geom1 to geom2 (world)
            sign = -1.0 if g1 in geom_to_piece else 1.0
            piece = geom_to_piece[g1] if g1 in geom_to_piece else geom_to_piece[g2]
            out.append((float(self._s_mid[piece]), sign * stiffness * depth * normal))
        return out
