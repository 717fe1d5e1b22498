"""Empirical rigid-link mode: SoMo-style actuators calibrated from two measurements, in MuJoCo.

An `EmpiricalActuator` is known by what a bench test gives, not by its material: its length,
the tip bending stiffness K_b about body x and y (a tip load over the tip deflection), and the
blocked tip force F_b at a reference pressure. It becomes `n_links` rigid links with one hinge
per bending axis of stiffness kappa (`joint_stiffness`, rule "tip" by default: the fix of §B
Ambiguity 1; "somo" is the paper's eq. 8) and, when actuated, one torque input applied equally to
every joint's x hinge (a MuJoCo fixed tendon over those hinges driven by a motor), with
M_act(p) = F_b L p / p_ref (eq. 9, linear in pressure).

Names inside a chain (behind its prefix): bodies `link<k>`, hinges `j<k>x` / `j<k>y`, site `tip`,
actuators `torque_<a>` (a: actuated actuator index along the manipulator; ctrl = joint torque
[N m]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from softrod.description import Spec
from softrod.somo._calibration import actuation_torque, chain_joint_positions, joint_stiffness

__all__ = [
    "EmpiricalActuator",
    "EmpiricalManipulator",
    "EmpiricalChain",
    "add_empirical_chain",
    "teeple_finger",
]

#: Stiffness-proportional joint damping time [s]: 10 ms damps the finger's first mode (~10 Hz
#: for the SoMo finger) at a few per cent, like a real elastomer, and the discrete integrator
#: stays stable for any value.
DEFAULT_DAMPING_TIME = 0.01


class EmpiricalActuator(Spec):
    """One actuator of a SoMo-style rigid-link manipulator (SI units)."""

    length: float = Field(description="Actuator length L [m].")
    n_links: int = Field(default=10, description="Rigid links N of the chain.")
    tip_stiffness: tuple[float, float] = Field(
        description="Tip bending stiffness K_b about body x and y [N/m] (tip load / deflection)."
    )
    blocked_force: float = Field(
        default=0.0, description="Blocked tip force F_b [N] at reference_pressure; 0: passive."
    )
    reference_pressure: float = Field(default=100e3, description="Pressure of F_b [Pa].")
    width: float = Field(default=0.02, description="Link extent along body x [m] (contact box).")
    thickness: float = Field(default=0.015, description="Link extent along body y [m].")
    mass: float = Field(default=0.005, description="Actuator mass [kg], split over its links.")
    rule: Literal["tip", "somo", "midpoint"] = Field(
        default="tip", description="Joint stiffness rule (softrod.somo.joint_stiffness)."
    )

    @model_validator(mode="after")
    def _check(self) -> EmpiricalActuator:
        for name in ("length", "width", "thickness", "mass", "reference_pressure"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.n_links < 1:
            raise ValueError(f"n_links must be >= 1, got {self.n_links}")
        if not all(k > 0 for k in self.tip_stiffness):
            raise ValueError(f"tip_stiffness must be > 0, got {list(self.tip_stiffness)}")
        if self.blocked_force < 0:
            raise ValueError(f"blocked_force must be >= 0, got {self.blocked_force}")
        return self

    @property
    def actuated(self) -> bool:
        return self.blocked_force > 0

    def kappa(self) -> tuple[float, float]:
        """Joint stiffness about x and y [N m/rad]."""
        return tuple(  # type: ignore[return-value]
            joint_stiffness(self.length, self.n_links, tip_stiffness=k, rule=self.rule)
            for k in self.tip_stiffness
        )

    def torque(self, pressure: float) -> float:
        """Joint torque [N m] at a pressure [Pa]: F_b L p / p_ref."""
        return (
            actuation_torque(self.blocked_force, self.length) * pressure / self.reference_pressure
        )


class EmpiricalManipulator(Spec):
    """Actuators in series (proximal first), e.g. a finger with an actuated and a passive part."""

    name: str = "finger"
    actuators: list[EmpiricalActuator] = Field(min_length=1)
    tip_mass: float = Field(default=0.0, description="Point mass at the tip [kg].")
    damping_time: float = Field(
        default=DEFAULT_DAMPING_TIME, description="Joint damping / stiffness [s]."
    )
    friction: float = Field(default=1.0, description="Sliding friction of the links.")

    @property
    def length(self) -> float:
        return float(sum(a.length for a in self.actuators))


def teeple_finger(
    distal_ratio: float = 0.0,
    n_links: int = 20,
    rule: Literal["tip", "somo", "midpoint"] = "tip",
    distal_stiffness_scale: float = 1.0,
) -> EmpiricalManipulator:
    """The SoMo paper's pneumatic finger (0.1 m, F_b 0.75 N at 100 kPa; Teeple et al.) as an
    actuated proximal part and a passive distal part of `distal_ratio` of the length.

    K_b = 5.05 N/m about the grasp axis (x) and twice that about y: the stiffness of the finger
    definition shipped with SoMo (kappa 278.57 / 557.14 at N = 10 per 0.05 m actuator, world
    scale 20, read back through eq. 8). `distal_stiffness_scale` multiplies the bending stiffness
    EI of the passive distal part (1: the same beam; SoMo's two-segment study finger uses
    `SOMO_DISTAL_STIFFNESS_SCALE`).
    """
    if not 0.0 <= distal_ratio < 1.0:
        raise ValueError(f"distal_ratio must be in [0, 1), got {distal_ratio}")
    if not distal_stiffness_scale > 0:
        raise ValueError(f"distal_stiffness_scale must be > 0, got {distal_stiffness_scale}")
    L = 0.1
    n_distal = int(round(distal_ratio * n_links))
    lengths = [(L * (n_links - n_distal) / n_links, n_links - n_distal)]
    if n_distal:
        lengths.append((L * n_distal / n_links, n_distal))
    acts = []
    for i, (length, n) in enumerate(lengths):
        # Stiffness of a beam part of length l with the finger's EI: K_b = 3 EI / l^3.
        EI = FINGER_EI * (1.0 if i == 0 else distal_stiffness_scale)
        acts.append(
            EmpiricalActuator(
                length=length,
                n_links=n,
                tip_stiffness=(3 * EI / length**3, 6 * EI / length**3),
                blocked_force=0.75 * L / length if i == 0 else 0.0,  # M_act = 0.75 N x 0.1 m
                width=0.023,
                thickness=0.017,
                mass=0.008 * length / L,
                rule=rule,
            )
        )
    return EmpiricalManipulator(name="teeple_finger", actuators=acts, tip_mass=0.002)


#: Bending stiffness EI [N m^2] behind SoMo's finger definition (0.05 m actuators, N = 10,
#: kappa = 278.57 / 20^2 N m/rad, eq. 8 inverted: EI = kappa (3N - 1) L / (6 N^2)).
FINGER_EI = (278.57 / 400.0) * (3 * 10 - 1) * 0.05 / (6 * 10**2)
#: Bending stiffness of the passive distal segment relative to the actuated one in SoMo's
#: pinch-grasp study finger (examples/design_studies/region_of_acquisition/definitions/
#: 2seg_finger_def.yaml in the SoMo repository: grasp-axis joint stiffness 207.14 distal vs
#: 278.57 proximal, the same 5 mm links): the unpressurised distal segment is ~26 % softer.
SOMO_DISTAL_STIFFNESS_SCALE = 207.14 / 278.57


@dataclass(frozen=True)
class EmpiricalChain:
    """Names and layout of an empirical manipulator inside an MjSpec.

    link_s : (n_links, 2) arc-length span [s0, s1] of each link [m]. link_actuator : (n_links,)
    index of the actuator each link belongs to. actuators : motor names (ctrl = torque [N m]).
    """

    prefix: str
    manipulator: EmpiricalManipulator
    bodies: tuple[str, ...]
    link_s: np.ndarray
    link_actuator: np.ndarray
    tip_site: str
    actuators: tuple[str, ...]
    actuated: tuple[int, ...]


def add_empirical_chain(
    spec: Any,
    parent: Any,
    manipulator: EmpiricalManipulator | dict[str, Any],
    *,
    prefix: str = "",
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0),
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0),
    contype: int = 1,
    conaffinity: int = 1,
    rgba: tuple[float, float, float, float] = (0.27, 0.64, 0.86, 1.0),
) -> EmpiricalChain:
    """Add a manipulator (extending along body +z of its base) under `parent` of an MjSpec."""
    import mujoco

    manip = EmpiricalManipulator.model_validate(manipulator)
    body = parent.add_body(name=f"{prefix}mount", pos=list(pos), quat=list(quat))
    bodies: list[str] = []
    spans: list[tuple[float, float]] = []
    owner: list[int] = []
    actuator_names: list[str] = []
    actuated: list[int] = []
    s0 = 0.0
    k = 0
    origin = 0.0  # arc length of the current body's origin
    covered = 0.0  # arc length up to which the chain has geometry
    for a, act in enumerate(manip.actuators):
        x = s0 + chain_joint_positions(act.length, act.n_links, act.rule)
        ends = np.append(x[1:], s0 + act.length)
        kx, ky = act.kappa()
        hinges_x: list[str] = []
        link_mass = act.mass / act.n_links
        for i in range(act.n_links):
            # A stub before the first joint (midpoint rule) belongs to the body before it.
            if x[i] > covered + 1e-12:
                body.add_geom(
                    type=mujoco.mjtGeom.mjGEOM_BOX,
                    size=[act.width / 2, act.thickness / 2, (x[i] - covered) / 2],
                    pos=[0, 0, (covered - origin + x[i] - origin) / 2],
                    mass=0.0,
                    contype=contype,
                    conaffinity=conaffinity,
                    rgba=list(rgba),
                    friction=[manip.friction, 0.005, 0.0001],
                )
            name = f"{prefix}link{k}"
            body = body.add_body(name=name, pos=[0, 0, float(x[i] - origin)])
            length = float(ends[i] - x[i])
            body.add_geom(
                name=f"{prefix}g{k}",
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=[act.width / 2, act.thickness / 2, length / 2],
                pos=[0, 0, length / 2],
                mass=link_mass,
                contype=contype,
                conaffinity=conaffinity,
                rgba=list(rgba),
                friction=[manip.friction, 0.005, 0.0001],
            )
            for ax, stiff in (("x", kx), ("y", ky)):
                axis = [1.0, 0.0, 0.0] if ax == "x" else [0.0, 1.0, 0.0]
                body.add_joint(
                    name=f"{prefix}j{k}{ax}",
                    type=mujoco.mjtJoint.mjJNT_HINGE,
                    axis=axis,
                    stiffness=[stiff, 0, 0],
                    damping=[manip.damping_time * stiff, 0, 0],
                )
            hinges_x.append(f"{prefix}j{k}x")
            bodies.append(name)
            spans.append((float(x[i]), float(ends[i])))
            owner.append(a)
            origin, covered = float(x[i]), float(ends[i])
            k += 1
        if act.actuated:
            # One input, the same torque on every x hinge of this actuator.
            tname = f"{prefix}couple_{a}"
            ten = spec.add_tendon(name=tname)
            for h in hinges_x:
                ten.wrap_joint(h, 1.0)
            motor = spec.add_actuator(name=f"{prefix}torque_{a}", target=tname)
            motor.trntype = mujoco.mjtTrn.mjTRN_TENDON
            motor.set_to_motor()
            limit = act.torque(act.reference_pressure) * 3.0
            motor.ctrllimited = True
            motor.ctrlrange = [-limit, limit]
            actuator_names.append(motor.name)
            actuated.append(a)
        s0 += act.length
    tip_z = float(spans[-1][1] - spans[-1][0])
    body.add_site(name=f"{prefix}tip", pos=[0, 0, tip_z], size=[1e-3, 0, 0])
    if manip.tip_mass > 0:
        body.add_geom(
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[1e-3, 0, 0],
            pos=[0, 0, tip_z],
            mass=manip.tip_mass,
            contype=0,
            conaffinity=0,
            group=3,
        )
    return EmpiricalChain(
        prefix=prefix,
        manipulator=manip,
        bodies=tuple(bodies),
        link_s=np.array(spans),
        link_actuator=np.array(owner),
        tip_site=f"{prefix}tip",
        actuators=tuple(actuator_names),
        actuated=tuple(actuated),
    )
