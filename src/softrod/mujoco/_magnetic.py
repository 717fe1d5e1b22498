"""The one hook that puts magnetic loads on MuJoCo chains: `MagneticField.apply` before `mj_step`.

MuJoCo has no magnetic elements, so the dipoles of the described robots (point magnets and
magnetized backbones, docs/actuators.md) get their loads from the current orientation every step:

    m_world = R_body m_body,   torque = m_world x B,   force = (grad B)^T m_world,

with B [T] uniform and grad B [T/m] (grad B[i, j] = dB_i / dx_j) constant in space. A magnetized
segment (magnetization M [A/m], section area A) becomes one dipole per link, M A times the arc
length the link stands for (half of each element it spans), at the link's joint-to-joint middle.

Loads go into `data.qfrc_applied` as generalized forces; `apply` first removes what it added on
its previous call, so other users of qfrc_applied (which add to it) are left alone. Scenes, envs
and `softrod render` call `apply(model, data)` right before each `mj_step`.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from softrod.description import check_actuation
from softrod.mujoco._builder import ChainInfo

__all__ = ["MagneticField"]


class MagneticField:
    """A uniform field (and constant gradient) acting on the dipoles of one or more chains.

    Parameters
    ----------
    model : the compiled MjModel holding the chains.
    chains : ChainInfo (or a sequence of them, e.g. every soft robot of a scene).
    field : (3,) world-frame field B [T]; field_gradient : (3, 3) [T/m], default zero.

    Attributes
    ----------
    dipole_body : (n,) body ids; dipole_point : (n, 3) body-local points [m];
    dipole_moment : (n, 3) body-frame moments [A m^2]; field : (3,) [T];
    field_gradient : (3, 3) [T/m].
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        chains: ChainInfo | Sequence[ChainInfo],
        field: Sequence[float] | np.ndarray | None = None,
        field_gradient: Sequence[Sequence[float]] | np.ndarray | None = None,
    ) -> None:
        self.chains = (chains,) if isinstance(chains, ChainInfo) else tuple(chains)
        bodies: list[int] = []
        points: list[np.ndarray] = []
        moments: list[np.ndarray] = []
        for chain in self.chains:
            for body, point, moment in _chain_dipoles(model, chain):
                bodies.append(body)
                points.append(point)
                moments.append(moment)
        self.dipole_body = np.array(bodies, dtype=np.int64)
        self.dipole_point = np.array(points, dtype=float).reshape(-1, 3)
        self.dipole_moment = np.array(moments, dtype=float).reshape(-1, 3)
        self.field = np.zeros(3)
        self.field_gradient = np.zeros((3, 3))
        self._qfrc = np.zeros(model.nv)
        self.set(field, field_gradient)

    @property
    def n_dipoles(self) -> int:
        return int(self.dipole_body.size)

    def set(
        self,
        field: Sequence[float] | np.ndarray | None = None,
        field_gradient: Sequence[Sequence[float]] | np.ndarray | None = None,
    ) -> None:
        """Change the field [T] and gradient [T/m] (None: zero); checked like every input."""
        robot = self.chains[0].robot if self.chains else None
        if robot is None:
            raise ValueError("MagneticField needs at least one chain")
        act = check_actuation(robot, field=field, field_gradient=field_gradient)
        self.field = act.field
        self.field_gradient = act.field_gradient

    def wrenches(
        self, model: mujoco.MjModel, data: mujoco.MjData
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World-frame (points (n, 3) [m], forces (n, 3) [N], torques (n, 3) [N m]) on the
        dipoles at data's current kinematics (run `mj_kinematics` first)."""
        rot = data.xmat[self.dipole_body].reshape(-1, 3, 3)
        m_world = np.einsum("nij,nj->ni", rot, self.dipole_moment)
        points = data.xpos[self.dipole_body] + np.einsum("nij,nj->ni", rot, self.dipole_point)
        torques = np.cross(m_world, self.field)
        forces = m_world @ self.field_gradient  # (grad B)^T m, row by row
        return points, forces, torques

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Replace this field's previous contribution to data.qfrc_applied by the loads at the
        current qpos. Call right before `mujoco.mj_step`."""
        data.qfrc_applied -= self._qfrc
        self._qfrc[:] = 0.0
        if self.n_dipoles and (self.field.any() or self.field_gradient.any()):
            # Kinematics and com-based frames of the current qpos (mj_jac needs both).
            mujoco.mj_kinematics(model, data)
            mujoco.mj_comPos(model, data)
            points, forces, torques = self.wrenches(model, data)
            for i, body in enumerate(self.dipole_body):
                mujoco.mj_applyFT(
                    model, data, forces[i], torques[i], points[i], int(body), self._qfrc
                )
        data.qfrc_applied += self._qfrc

    def reset(self) -> None:
        """Forget the previous contribution without touching data (after `mj_resetData`,
        which already cleared qfrc_applied)."""
        self._qfrc[:] = 0.0

    def remove(self, data: mujoco.MjData) -> None:
        """Take this field's loads out of data.qfrc_applied."""
        data.qfrc_applied -= self._qfrc
        self._qfrc[:] = 0.0


def _chain_dipoles(model: mujoco.MjModel, chain: ChainInfo):
    """(body id, body-local point (3,) [m], body-frame moment (3,) [A m^2]) of a chain's dipoles."""
    robot = chain.robot
    # Point magnets at their arc length.
    for _j, s, magnet in robot.magnet_list():
        body, point = chain.body_point(model, s)
        yield body, point, np.asarray(magnet.moment, dtype=float)
    # Magnetized segments: link k stands for the half elements on either side of joint k+1.
    lay = chain.layout
    density = np.zeros((robot.n_segments, 3))
    for j, seg in enumerate(robot.segments):
        if seg.magnetization is not None:
            density[j] = np.asarray(seg.magnetization) * robot.segment_backbone(j).A
    if not density.any():
        return
    h, seg_of = lay.elem_length, lay.elem_seg
    # The base holds the first half element.
    base = model.body(chain.base_body).id
    yield base, np.array([0.0, 0.0, h[0] / 4]), density[seg_of[0]] * h[0] / 2
    for k in range(lay.n_links):
        body = model.body(chain.link_bodies[k]).id
        moment = density[seg_of[k]] * h[k] / 2
        if k + 1 < lay.n_links:
            moment = moment + density[seg_of[k + 1]] * h[k + 1] / 2
        if moment.any():
            yield body, np.array([0.0, 0.0, lay.link_length[k] / 2]), moment
