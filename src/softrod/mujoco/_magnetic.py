"""The one hook that puts magnetic loads on MuJoCo chains: `MagneticField.apply` before `mj_step`.

MuJoCo has no magnetic elements, so the dipoles of the described robots (point magnets and
magnetized backbones, docs/actuators.md) get their loads from the current orientation every step:

    m_world = R_body m_body,   torque = m_world x B,   force = (grad B)^T m_world,

with B [T] uniform and grad B [T/m] (grad B[i, j] = dB_i / dx_j) constant in space. A magnetized
segment (magnetization M [A/m], section area A) becomes one dipole per link, M A times the arc
length the link stands for (half of each element it spans), at the link's joint-to-joint middle.

Field sources (`FieldSource`: a permanent magnet or a coil on a rigid body, point-dipole model)
add their field and its exact gradient at each robot dipole's current world position, from the
source body's current pose (`point_dipole_field`):

    B(x) = mu0 / (4 pi) (3 rhat (rhat . m_s) - m_s) / |r|^3,   r = x - x_s,

and the reaction (the opposite force and torque, applied at the robot dipole) goes on the source
body, so the pair conserves momentum. A coil is the far-field dipole m_s = N I A n.

Loads go into `data.qfrc_applied` as generalized forces; `apply` first removes what it added on
its previous call, so other users of qfrc_applied (which add to it) are left alone. Scenes, envs
and `softrod render` call `apply(model, data)` right before each `mj_step`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numba
import numpy as np

from softrod.description import check_actuation
from softrod.dynamics import MU0
from softrod.mujoco._builder import ChainInfo

__all__ = ["FieldSource", "MagneticField", "point_dipole_field"]

#: mu0 / (4 pi) [T m / A].
_MU0_4PI = MU0 / (4.0 * math.pi)


@dataclass(frozen=True)
class FieldSource:
    """A point-dipole field source (a permanent magnet, or a coil far from its windings) on a
    MuJoCo body.

    body : body name or id ("world" / 0 for a fixed source); position : (3,) dipole centre in
    the body frame [m]; moment : (3,) dipole moment in the body frame [A m^2] (a coil:
    N I A n, turns x current x area along its axis); radius : the magnet's (or coil's) size
    [m]: a robot dipole closer than this to the centre would sit inside the source, which is
    an error (the point-dipole field holds at distances beyond about 2x the size).
    """

    body: str | int
    position: Sequence[float] | np.ndarray
    moment: Sequence[float] | np.ndarray
    radius: float = 0.005


def point_dipole_field(
    points: Sequence[Sequence[float]] | np.ndarray,
    source_position: Sequence[float] | np.ndarray,
    source_moment: Sequence[float] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Field and exact gradient of one point dipole at world points.

    points : (n, 3) or (3,) [m]; source_position : (3,) [m]; source_moment : (3,) [A m^2].
    Returns B (n, 3) [T] and grad B (n, 3, 3) [T/m] (grad B[k, i, j] = dB_i / dx_j at point k;
    symmetric and traceless). ValueError at the source itself (zero distance).
    """
    pts = np.asarray(points, dtype=float).reshape(-1, 3)
    pos = np.asarray(source_position, dtype=float).reshape(1, 3)
    mom = np.asarray(source_moment, dtype=float).reshape(1, 3)
    field = np.zeros((pts.shape[0], 3))
    grad = np.zeros((pts.shape[0], 3, 3))
    hit = _dipole_fields_out(pos, mom, np.zeros(1), pts, field, grad)
    if hit >= 0:
        raise ValueError(f"points[{hit}] is at the dipole's centre: its field is undefined there")
    return field, grad


@numba.njit(cache=True)
def _dipole_fields_out(
    src_pos: np.ndarray,
    src_moment: np.ndarray,
    src_radius: np.ndarray,
    points: np.ndarray,
    field_out: np.ndarray,
    grad_out: np.ndarray,
) -> int:
    """Add every source dipole's B (n, 3) [T] and grad B (n, 3, 3) [T/m] at the points.

    src_pos, src_moment : (k, 3) world [m], [A m^2]; src_radius : (k,) [m]. Returns
    i * k + j for the first point i closer than source j's radius (or at zero distance),
    else -1 (outputs then complete)."""
    n, k = points.shape[0], src_pos.shape[0]
    for i in range(n):
        for j in range(k):
            r0 = points[i, 0] - src_pos[j, 0]
            r1 = points[i, 1] - src_pos[j, 1]
            r2 = points[i, 2] - src_pos[j, 2]
            d2 = r0 * r0 + r1 * r1 + r2 * r2
            if d2 <= src_radius[j] * src_radius[j] or d2 == 0.0:
                return i * k + j
            r = (r0, r1, r2)
            m = (src_moment[j, 0], src_moment[j, 1], src_moment[j, 2])
            rm = r0 * m[0] + r1 * m[1] + r2 * m[2]
            inv2 = 1.0 / d2
            inv3 = inv2 / math.sqrt(d2)
            # B = c (3 r (r.m) / d^5 - m / d^3)
            for a in range(3):
                field_out[i, a] += _MU0_4PI * inv3 * (3.0 * r[a] * rm * inv2 - m[a])
            # dB_a/dx_b = 3c / d^5 ((r.m) delta_ab + r_a m_b + m_a r_b - 5 r_a r_b (r.m) / d^2)
            c5 = 3.0 * _MU0_4PI * inv3 * inv2
            for a in range(3):
                for b in range(3):
                    g = r[a] * m[b] + m[a] * r[b] - 5.0 * r[a] * r[b] * rm * inv2
                    if a == b:
                        g += rm
                    grad_out[i, a, b] += c5 * g
    return -1


class MagneticField:
    """A uniform field (and constant gradient) plus point-dipole field sources acting on the
    dipoles of one or more chains.

    Parameters
    ----------
    model : the compiled MjModel holding the chains.
    chains : ChainInfo (or a sequence of them, e.g. every soft robot of a scene).
    field : (3,) world-frame field B [T]; field_gradient : (3, 3) [T/m], default zero.
    field_sources : FieldSource entries (magnets or coils on bodies of `model`), default none;
        their field and gradient are evaluated at each dipole's current position every step.

    Attributes
    ----------
    dipole_body : (n,) body ids; dipole_point : (n, 3) body-local points [m];
    dipole_moment : (n, 3) body-frame moments [A m^2]; field : (3,) [T];
    field_gradient : (3, 3) [T/m]; source_body : (k,) body ids; source_point : (k, 3)
    body-local centres [m]; source_moment : (k, 3) body-frame moments [A m^2];
    source_radius : (k,) [m].
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        chains: ChainInfo | Sequence[ChainInfo],
        field: Sequence[float] | np.ndarray | None = None,
        field_gradient: Sequence[Sequence[float]] | np.ndarray | None = None,
        field_sources: Sequence[FieldSource] = (),
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
        self.source_body, self.source_point, self.source_moment, self.source_radius = (
            _source_arrays(model, field_sources)
        )
        self.field = np.zeros(3)
        self.field_gradient = np.zeros((3, 3))
        self._qfrc = np.zeros(model.nv)
        self.set(field, field_gradient)

    @property
    def n_dipoles(self) -> int:
        return int(self.dipole_body.size)

    @property
    def n_sources(self) -> int:
        return int(self.source_body.size)

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

    def source_fields(
        self, model: mujoco.MjModel, data: mujoco.MjData, points: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each source's field (k, n, 3) [T] and gradient (k, n, 3, 3) [T/m] at world points
        (n, 3) [m], from the source bodies' current poses (run `mj_kinematics` first).
        ValueError naming the source when a point is inside its radius."""
        k, n = self.n_sources, points.shape[0]
        fields = np.zeros((k, n, 3))
        grads = np.zeros((k, n, 3, 3))
        for j in range(k):
            body = int(self.source_body[j])
            rot = data.xmat[body].reshape(3, 3)
            centre = data.xpos[body] + rot @ self.source_point[j]
            hit = _dipole_fields_out(
                centre[None],
                (rot @ self.source_moment[j])[None],
                self.source_radius[j : j + 1],
                points,
                fields[j],
                grads[j],
            )
            if hit >= 0:
                gap = float(np.linalg.norm(points[hit] - centre))
                raise ValueError(
                    f"field_sources[{j}] (body {model.body(body).name or 'world'!r}): robot "
                    f"dipole {hit} is {1e3 * gap:.3g} mm from the source's centre, within its "
                    f"radius {1e3 * self.source_radius[j]:.3g} mm (inside the magnet, where the "
                    "point-dipole model does not hold)"
                )
        return fields, grads

    def wrenches(
        self, model: mujoco.MjModel, data: mujoco.MjData
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World-frame (points (n, 3) [m], forces (n, 3) [N], torques (n, 3) [N m]) on the
        dipoles at data's current kinematics (run `mj_kinematics` first), the sources' fields
        included."""
        points, forces, torques, _, _ = self._loads(model, data)
        return points, forces, torques

    def _loads(
        self, model: mujoco.MjModel, data: mujoco.MjData
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`wrenches` plus each source's share of them: forces and torques (k, n, 3)."""
        rot = data.xmat[self.dipole_body].reshape(-1, 3, 3)
        m_world = np.einsum("nij,nj->ni", rot, self.dipole_moment)
        points = data.xpos[self.dipole_body] + np.einsum("nij,nj->ni", rot, self.dipole_point)
        torques = np.cross(m_world, self.field)
        forces = m_world @ self.field_gradient  # (grad B)^T m, row by row
        if not self.n_sources:
            empty = np.zeros((0, self.n_dipoles, 3))
            return points, forces, torques, empty, empty
        # Each source's field at the dipoles' current positions: torque m x B, force G^T m.
        fields, grads = self.source_fields(model, data, points)
        src_torques = np.cross(m_world[None], fields)
        src_forces = np.einsum("knji,nj->kni", grads, m_world)
        return (
            points,
            forces + src_forces.sum(0),
            torques + src_torques.sum(0),
            src_forces,
            src_torques,
        )

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Replace this field's previous contribution to data.qfrc_applied by the loads at the
        current qpos (sources: the reactions on their bodies too). Call right before
        `mujoco.mj_step`."""
        data.qfrc_applied -= self._qfrc
        self._qfrc[:] = 0.0
        if self.n_dipoles and (self.field.any() or self.field_gradient.any() or self.n_sources):
            # Kinematics and com-based frames of the current qpos (mj_jac needs both).
            mujoco.mj_kinematics(model, data)
            mujoco.mj_comPos(model, data)
            points, forces, torques, src_forces, src_torques = self._loads(model, data)
            for i, body in enumerate(self.dipole_body):
                mujoco.mj_applyFT(
                    model, data, forces[i], torques[i], points[i], int(body), self._qfrc
                )
            # The reaction on a source body: the opposite wrench at the robot dipole (the pair's
            # force and moment about any point then cancel).
            for j, body in enumerate(self.source_body):
                if body == 0:
                    continue
                for i in range(self.n_dipoles):
                    mujoco.mj_applyFT(
                        model,
                        data,
                        -src_forces[j, i],
                        -src_torques[j, i],
                        points[i],
                        int(body),
                        self._qfrc,
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


def _source_arrays(
    model: mujoco.MjModel, sources: Sequence[FieldSource]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Checked (body ids (k,), points (k, 3) [m], moments (k, 3) [A m^2], radii (k,) [m])."""
    k = len(sources)
    body = np.zeros(k, dtype=np.int64)
    point, moment, radius = np.zeros((k, 3)), np.zeros((k, 3)), np.zeros(k)
    for j, src in enumerate(sources):
        where = f"field_sources[{j}]"
        if isinstance(src.body, str):
            name = "" if src.body == "world" else src.body
            try:
                body[j] = 0 if not name else model.body(name).id
            except KeyError:
                raise ValueError(f"{where}.body {src.body!r} is not a body of the model") from None
        elif 0 <= int(src.body) < model.nbody:
            body[j] = int(src.body)
        else:
            raise ValueError(f"{where}.body {src.body!r} is not a body id (0..{model.nbody - 1})")
        for key, out in (("position", point), ("moment", moment)):
            value = np.asarray(getattr(src, key), dtype=float).reshape(-1)
            if value.shape != (3,) or not np.all(np.isfinite(value)):
                raise ValueError(f"{where}.{key} must be 3 finite numbers, got {value.tolist()}")
            out[j] = value
        if not (math.isfinite(src.radius) and src.radius >= 0):
            raise ValueError(f"{where}.radius must be >= 0 [m], got {src.radius}")
        radius[j] = src.radius
    return body, point, moment, radius


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
