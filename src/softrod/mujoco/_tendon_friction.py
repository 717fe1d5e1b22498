"""Tendon friction with memory on MuJoCo chains: `TendonFriction.apply` before `mj_step`.

The static model of docs/friction.md (capstan law at every hole, wrap angles from the shape,
the tension profile clamped between the pull and release limits of the last one, stick band)
put on the chain's spatial tendons. A MuJoCo spatial tendon carries one tension along its whole
path (its actuator's), and its `frictionloss` is one Coulomb force on the tendon length, not a
distribution over holes; so the friction is added as forces, through the same per-step
mechanism as `MagneticField` (a hook that replaces its previous contribution to
`data.qfrc_applied` right before every step):

* the holes are the tendon's routing sites as built (`model.wrap_objid` of the tendon), all but
  the last, which is the anchor; the tendon arrives at the first along the base's z axis;
* the wrap at hole h is the angle between the straight pieces on either side of it, measured on
  the current site positions; theta_j = the wrap of the holes proximal to piece j;
* the piece tensions t_j follow the clamp of the static model, step by step:
  t_j <- min(max(t_j, T exp(-mu theta_j)), T exp(+mu theta_j)) with T the actuator's tension
  now, or keep t_j while a reversal of T stays inside the stick band;
* the actuator already pulls every piece with T, so piece j adds (t_j - T) u_j at its proximal
  site and -(t_j - T) u_j at its distal one (u_j its unit direction), i.e. the friction each
  hole takes from the tendon goes into the disk that holds it.

With mu = 0 the profile is T everywhere and the hook adds nothing (exactly zero).
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from softrod.mujoco._builder import ChainInfo
from softrod.mujoco._equilibrium import settle
from softrod.rods import capstan_update

__all__ = ["TendonFriction", "friction_sequence"]


class TendonFriction:
    """Capstan friction with memory on the tendons of one or more chains (docs/friction.md).

    Parameters
    ----------
    model : the compiled MjModel holding the chains.
    chains : ChainInfo (or a sequence of them).
    mu : friction coefficient [-], scalar or one per tendon of all chains; None takes each
        robot's description (`tendons[i].friction.mu`, else `tendon_friction.mu`, else 0).
    stick_band : tension reversal [N] that keeps a tendon stuck, scalar or per tendon; None
        takes the description's.
    per_step : True (default): the memory advances on every `apply`, as a tendon does in time.
        False: `apply` clamps the memory of the last `commit` (the profile of the last
        equilibrium) and `commit` advances it, as between the steps of
        `softrod.rods.solve_sequence` (`friction_sequence` uses this).

    Attributes
    ----------
    tension : (n_pieces,) piece tensions [N] of all tendons (the memory); tendon k owns
        pieces piece_start[k]:piece_start[k + 1], from the base to the anchor.
    command : (n,) effective tension command [N] (NaN before the first call); direction : (n,)
        +1 pulled in, -1 let out, 0 not yet moved.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        chains: ChainInfo | Sequence[ChainInfo],
        mu: float | Sequence[float] | np.ndarray | None = None,
        stick_band: float | Sequence[float] | np.ndarray | None = None,
        per_step: bool = True,
    ) -> None:
        self.chains = (chains,) if isinstance(chains, ChainInfo) else tuple(chains)
        if not self.chains:
            raise ValueError("TendonFriction needs at least one chain")
        described = [fr for chain in self.chains for fr in _described_friction(chain)]
        n = len(described)
        self.mu = _per_tendon("mu", mu, n, [m for m, _ in described])
        self.stick_band = _per_tendon("stick_band", stick_band, n, [b for _, b in described])
        self.per_step = per_step
        actuators, gears, sites, bases, start = [], [], [], [], [0]
        for chain in self.chains:
            base = model.body(chain.base_body).id
            for tname, aname in zip(chain.tendons, chain.actuators, strict=True):
                tid = model.tendon(tname).id
                adr, num = int(model.tendon_adr[tid]), int(model.tendon_num[tid])
                aid = model.actuator(aname).id
                actuators.append(aid)
                gears.append(float(model.actuator_gear[aid, 0]))
                sites.append(np.array(model.wrap_objid[adr : adr + num], dtype=np.int64))
                bases.append(base)
                start.append(start[-1] + num - 1)
        self.actuator = np.array(actuators, dtype=np.int64)
        self.gear = np.array(gears)
        self.base_body = np.array(bases, dtype=np.int64)
        self.piece_start = np.array(start, dtype=np.int64)
        # Piece p runs from site proximal[p] to site distal[p] of tendon piece_tendon[p].
        self.proximal = np.concatenate([s[:-1] for s in sites])
        self.distal = np.concatenate([s[1:] for s in sites])
        self.piece_tendon = np.repeat(np.arange(n), np.diff(self.piece_start))
        self._first = self.piece_start[:-1]
        bodies = np.concatenate([model.site_bodyid[self.proximal], model.site_bodyid[self.distal]])
        self._bodies, self._body_of = np.unique(bodies, return_inverse=True)
        self._qfrc = np.zeros(model.nv)
        self.reset()

    @property
    def n_tendons(self) -> int:
        return int(self.actuator.size)

    def reset(self) -> None:
        """Forget the memory (slack tendons, nothing moved) and the previous contribution
        (after `mj_resetData`, which already cleared qfrc_applied)."""
        n_p = int(self.piece_start[-1])
        self.tension = np.zeros(n_p)
        self.command = np.full(self.n_tendons, np.nan)
        self.direction = np.zeros(self.n_tendons)
        self._next: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._qfrc[:] = 0.0

    def remove(self, data: mujoco.MjData) -> None:
        """Take this hook's forces out of data.qfrc_applied."""
        data.qfrc_applied -= self._qfrc
        self._qfrc[:] = 0.0

    def base_tension(self, data: mujoco.MjData) -> np.ndarray:
        """(n,) tension [N] each actuator pulls its tendon with at data's current actuation
        (`mj_fwdActuation` done): -gear x actuator force, >= 0."""
        return np.maximum(-self.gear * data.actuator_force[self.actuator], 0.0)

    def wrap(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """At data's kinematics: (theta (n_pieces,) wrap [rad] over the holes proximal to each
        piece, unit (n_pieces, 3) piece directions, proximal to distal)."""
        d = data.site_xpos[self.distal] - data.site_xpos[self.proximal]
        length = np.sqrt(np.einsum("ij,ij->i", d, d))
        unit = d / np.where(length > 0.0, length, 1.0)[:, None]
        # Each piece turns from the one before it; a tendon arrives along its base's z axis.
        before = np.empty_like(unit)
        before[1:] = unit[:-1]
        before[self._first] = data.xmat[self.base_body][:, 2::3]
        cross = np.cross(before, unit)
        alpha = np.arctan2(
            np.sqrt(np.einsum("ij,ij->i", cross, cross)), np.einsum("ij,ij->i", before, unit)
        )
        total = np.cumsum(alpha)
        # Accumulated per tendon: subtract what the tendons before it turned.
        offset = np.r_[0.0, total[self.piece_start[1:-1] - 1]]
        return total - offset[self.piece_tendon], unit

    def update(self, data: mujoco.MjData) -> np.ndarray:
        """The piece tensions (n_pieces,) [N] at data's current kinematics and actuation (the
        clamp of the module doc; run the kinematics and `mj_fwdActuation` first); advances
        the memory with `per_step`, else keeps them for `commit`."""
        theta, _ = self.wrap(data)
        tension, effective, direction = capstan_update(
            self.tension,
            self.base_tension(data),
            self.command,
            self.direction,
            theta,
            self.piece_tendon,
            self.mu,
            self.stick_band,
        )
        self._next = (tension, effective, direction)
        if self.per_step:
            self.commit()
        return tension

    def commit(self) -> None:
        """Make the profile of the last `apply` the memory (with per_step=False: call once the
        chain has settled at a step of a sequence)."""
        if self._next is not None:
            self.tension, self.command, self.direction = self._next
            self._next = None

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Replace this hook's previous contribution to data.qfrc_applied by the friction
        forces at the current qpos and controls (advancing the memory with per_step). Call
        right before `mujoco.mj_step`."""
        data.qfrc_applied -= self._qfrc
        self._qfrc[:] = 0.0
        # Kinematics, com frames (mj_applyFT), tendon lengths and actuator forces of now.
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        mujoco.mj_tendon(model, data)
        mujoco.mj_transmission(model, data)
        mujoco.mj_fwdActuation(model, data)
        tension = self.update(data)
        extra = tension - self.base_tension(data)[self.piece_tendon]
        if extra.any():
            _, unit = self.wrap(data)
            pull = extra[:, None] * unit
            # Piece p pulls its proximal site along u_p and its distal site back; the loads
            # are summed per body about the body origin.
            points = np.vstack([data.site_xpos[self.proximal], data.site_xpos[self.distal]])
            forces = np.vstack([pull, -pull])
            moments = np.cross(points - data.xpos[self._bodies[self._body_of]], forces)
            n_b = self._bodies.size
            force = np.zeros((n_b, 3))
            torque = np.zeros((n_b, 3))
            for c in range(3):
                force[:, c] = np.bincount(self._body_of, forces[:, c], n_b)
                torque[:, c] = np.bincount(self._body_of, moments[:, c], n_b)
            for i, body in enumerate(self._bodies):
                mujoco.mj_applyFT(
                    model, data, force[i], torque[i], data.xpos[body], int(body), self._qfrc
                )
        data.qfrc_applied += self._qfrc


def _described_friction(chain: ChainInfo) -> list[tuple[float, float]]:
    """(mu, stick_band) of each tendon of a chain's robot from its description."""
    robot = chain.robot
    default = robot.tendon_friction
    out = []
    for _, tendon in robot.tendon_list():
        fr = tendon.friction if tendon.friction is not None else default
        out.append((0.0, 0.0) if fr is None else (float(fr.mu), float(fr.stick_band)))
    return out


def _per_tendon(name: str, value: object, n: int, default: list[float]) -> np.ndarray:
    arr = np.array(default, dtype=float) if value is None else np.asarray(value, dtype=float)
    try:
        arr = np.broadcast_to(arr, (n,)).copy()
    except ValueError:
        raise ValueError(f"{name} must be a scalar or have {n} entries, got {arr.shape}") from None
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr >= 0.0)))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] must be a finite number >= 0, got {arr[bad[0]]}")
    return arr


def friction_sequence(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    chain: ChainInfo,
    friction: TendonFriction,
    controls: np.ndarray,
    *,
    ramp_time: float = 0.05,
    damping_time: float = 0.05,
    qvel_tol: float = 1e-6,
    max_time: float = 20.0,
) -> np.ndarray:
    """Quasi-static tip positions of a chain along a sequence of tendon controls, with friction.

    From data's current state, each row of `controls` (T, n_actuators of the chain) [N] (or [m]
    under length control) is reached by a linear ramp of the chain's controls over `ramp_time`
    [s] and then held until the motion dies out (`settle` with `damping_time`, `qvel_tol`,
    `max_time`); the friction hook runs before every step of both, so its memory follows the
    history of the commands. With `friction.per_step` False the memory is committed once per
    row, at the settled shape: the clamp of `softrod.rods.solve_sequence` between consecutive
    equilibria (independent of the ramp). With per_step True it advances every time step, and
    the result depends on how fast the ramp is against the settling time (a lagging shape
    sticks the tendon earlier). Returns the tip site's position (T, 3) [m] at each settled row.
    """
    controls = np.asarray(controls, dtype=float)
    act = np.array([model.actuator(a).id for a in chain.actuators], dtype=np.int64)
    if controls.ndim != 2 or controls.shape[1] != act.size:
        raise ValueError(f"controls must have shape (T, {act.size}), got {controls.shape}")
    if not (ramp_time >= 0.0 and np.isfinite(ramp_time)):
        raise ValueError(f"ramp_time must be a finite number >= 0 [s], got {ramp_time!r}")
    tip = model.site(chain.tip_site).id
    n_ramp = int(np.ceil(ramp_time / model.opt.timestep))
    stiff = np.zeros(model.nv)
    for j in range(model.njnt):
        stiff[model.jnt_dofadr[j]] = model.jnt_stiffness[j]
    tips = np.empty((controls.shape[0], 3))
    for row, target in enumerate(controls):
        start = data.ctrl[act].copy()
        # Ramp with the settling damping, so the chain follows the commands quasi-statically.
        saved = model.dof_damping.copy()
        model.dof_damping[:] = saved + damping_time * stiff
        try:
            for n in range(1, n_ramp + 1):
                data.ctrl[act] = start + (target - start) * (n / n_ramp)
                friction.apply(model, data)
                mujoco.mj_step(model, data)
        finally:
            model.dof_damping[:] = saved
        data.ctrl[act] = target
        settle(
            model,
            data,
            damping_time=damping_time,
            qvel_tol=qvel_tol,
            max_time=max_time,
            before_step=friction.apply,
        )
        friction.commit()
        tips[row] = data.site_xpos[tip]
    return tips
