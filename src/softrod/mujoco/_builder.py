"""RobotSpec -> mujoco.MjSpec: the continuum-informed rigid-link chain (ALGORITHMS.md §C.2).

Names inside a robot (all behind the robot's `prefix`, empty for a standalone model):

| element | name |
|---|---|
| base body (the robot's `base` pose) | `base` |
| link k = 0..N-1 | `link<k>` |
| hinges of joint k | `j<k>x`, `j<k>y`, `j<k>z` (slides: shear `j<k>u`, `j<k>v`, axial `j<k>s`) |
| distal end of the backbone | site `tip` |
| tendon i (input order) | tendon `tendon_<i>`, sites `t<i>_<n>` |
| actuator of tendon i | `tension_<i>` (force) or `length_<i>` (length control) |
| chamber k (pressure input order) | fixed tendon `chamber_<k>`, actuator `pressure_<k>` |
| moment actuator k (`moments` input order) | fixed tendon `moment_<k>`, actuator `moment_<k>` |

A chamber's pressure p [Pa] acts as the uniform body-frame moment p A (r x e_z) over its segment
(and, with axial slides, the axial force p A): the fixed tendon `chamber_<k>` couples the
segment's hinges with coefficients A (r x e_z) [m^3] (and its axial slides with A [m^2]), and the
motor `pressure_<k>` (gear 1, ctrl = p [Pa]) drives it, so every joint of the segment carries the
moment p A d, which bends the chain with the constant curvature p A d / EI (docs/actuators.md).
Magnets are not model elements: `softrod.mujoco.MagneticField` applies their loads each step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from softrod.description import RobotSpec, load_robot
from softrod.mujoco._collision import soft_collision_bits
from softrod.mujoco._layout import ChainLayout, chain_layout, first_mode_frequency
from softrod.mujoco._options import MujocoOptions

__all__ = [
    "ChainInfo",
    "add_robot",
    "build_spec",
    "chain_info",
    "configure_spec",
    "resolve_options",
]

_RGBA_BACKBONE = (0.75, 0.75, 0.78, 1.0)
_RGBA_DISK = (0.95, 0.55, 0.15, 1.0)
_RGBA_TENDON = (0.1, 0.35, 0.9, 1.0)
#: Visual width of tendons [m] (drawing only).
_TENDON_WIDTH = 3e-4
#: Thickest default collision disk [m] (the seed-002 PLA disks are 5 mm high).
_MAX_DISK_THICKNESS = 0.005


@dataclass(frozen=True)
class ChainInfo:
    """Names and layout of one robot inside a MjSpec (see the module table).

    damping_time : target stiffness-proportional damping factor beta [s].
    joint_damping_time : beta actually put on the joints (the discrete integrator supplies
    `timestep` of it numerically).
    """

    prefix: str
    robot: RobotSpec
    options: MujocoOptions
    layout: ChainLayout
    base_body: str
    link_bodies: tuple[str, ...]
    joints: tuple[str, ...]
    tip_site: str
    tendons: tuple[str, ...]
    actuators: tuple[str, ...]
    damping_time: float
    joint_damping_time: float
    pressure_actuators: tuple[str, ...] = ()
    moment_actuators: tuple[str, ...] = ()

    @property
    def damping_ratio(self) -> float:
        """First-mode damping ratio the model has, numerical dissipation included."""
        dt = self.options.timestep if self.options.integrator == "discrete" else 0.0
        return 0.5 * max(self.damping_time, dt) * first_mode_frequency(self.robot)

    @property
    def n_links(self) -> int:
        return self.layout.n_links

    def body_point(self, model: mujoco.MjModel, s: float) -> tuple[int, np.ndarray]:
        """(body id, body-local point (3,) [m]) of the backbone point at arc length s [m]."""
        k, z = self.layout.locate(s)
        name = self.base_body if k < 0 else self.link_bodies[k]
        return model.body(name).id, np.array([0.0, 0.0, z])


def resolve_options(
    options: MujocoOptions | dict[str, Any] | None, **overrides: Any
) -> MujocoOptions:
    """A validated MujocoOptions from an instance or dict plus keyword overrides."""
    if options is None:
        base: dict[str, Any] = {}
    elif isinstance(options, MujocoOptions):
        base = options.model_dump()
    elif isinstance(options, dict):
        base = dict(options)
    else:
        raise ValueError(f"options must be a MujocoOptions or dict, got {type(options).__name__}")
    base.update({k: v for k, v in overrides.items() if v is not None})
    return MujocoOptions.model_validate(base)


def configure_spec(spec: mujoco.MjSpec, options: MujocoOptions) -> None:
    """Compiler and solver settings shared by robot models and scenes."""
    spec.compiler.degree = False
    spec.compiler.autolimits = True
    # Links of flat (box) sections have polar moments above 2 I, which breaks the inertia
    # triangle inequality MuJoCo checks; balancing touches only such bodies.
    spec.compiler.balanceinertia = True
    spec.option.timestep = options.timestep
    spec.option.integrator = {
        "discrete": mujoco.mjtIntegrator.mjINT_DISCRETE,
        "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
        "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
        "euler": mujoco.mjtIntegrator.mjINT_EULER,
        "rk4": mujoco.mjtIntegrator.mjINT_RK4,
    }[options.integrator]
    spec.option.gravity = list(options.gravity)
    spec.option.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
    spec.option.solver = mujoco.mjtSolver.mjSOL_NEWTON
    # Headroom for offscreen rendering of videos up to 1280 x 720.
    spec.visual.global_.offwidth = max(spec.visual.global_.offwidth, 1280)
    spec.visual.global_.offheight = max(spec.visual.global_.offheight, 720)


def _check_massive(robot: RobotSpec) -> None:
    for j in range(robot.n_segments):
        if robot.segment_backbone(j).density <= 0 and robot.segments[j].disk_mass <= 0:
            where = (
                "backbone.density"
                if robot.segments[j].backbone is None
                else (f"segments[{j}].backbone.density")
            )
            raise ValueError(
                f"{where} must be > 0 for a MuJoCo model (links need mass), got "
                f"{robot.segment_backbone(j).density}; or give segments[{j}].disk_mass"
            )


def add_robot(
    spec: mujoco.MjSpec,
    parent: mujoco.MjsBody,
    robot: RobotSpec | dict | str,
    options: MujocoOptions | dict[str, Any] | None = None,
    *,
    prefix: str = "",
    soft_index: int = 0,
    pos: tuple[float, float, float] | None = None,
    quat: tuple[float, float, float, float] | None = None,
) -> ChainInfo:
    """Add a robot's rigid-link chain under `parent` (world or a rigid robot's flange).

    Parameters
    ----------
    spec : the MjSpec being built; parent : body to mount on.
    robot : the description; options : MujocoOptions (or dict) for the chain.
    prefix : prepended to every name of this robot (scenes with several robots).
    soft_index : index among the soft robots of the scene (collision bits).
    pos, quat : base pose in `parent` [m], (w, x, y, z); default the robot's `base` pose.
    """
    robot = load_robot(robot)
    opts = resolve_options(options)
    if (opts.axial or opts.shear) and robot.model != "cosserat":
        raise ValueError(
            "axial and shear slide joints need model: cosserat, the robot is kirchhoff"
        )
    _check_massive(robot)
    lay = chain_layout(robot, opts.links)
    n = lay.n_links
    if opts.damping_time is not None:
        beta = opts.damping_time
    else:
        beta = 2.0 * opts.damping_ratio / first_mode_frequency(robot)
    # The discrete integrator is backward Euler on the springs, which itself damps every mode as
    # stiffness-proportional damping with beta = timestep; the joints add only the rest.
    beta_joint = max(beta - opts.timestep, 0.0) if opts.integrator == "discrete" else beta

    contype, conaffinity = soft_collision_bits(soft_index) if opts.contact else (0, 0)
    r_back = max(robot.segment_backbone(j).outer_radius for j in range(robot.n_segments))
    geom_kw = dict(
        contype=contype,
        conaffinity=conaffinity,
        condim=3,
        friction=[opts.friction, 0.005, 0.0001],
        solref=list(opts.contact_solref),
        solimp=list(opts.contact_solimp) + [0.5, 2.0],
    )

    # Base body at the robot's base pose, carrying the fixed half link.
    base = parent.add_body(
        name=f"{prefix}base",
        pos=list(robot.base.position if pos is None else pos),
        quat=list(robot.base.quaternion if quat is None else quat),
    )
    base.add_geom(
        name=f"{prefix}g_base",
        type=mujoco.mjtGeom.mjGEOM_CAPSULE,
        fromto=[0, 0, 0, 0, 0, float(lay.joint_s[0])],
        size=[r_back, 0, 0],
        rgba=list(_RGBA_BACKBONE),
        mass=0.0,
        **geom_kw,
    )

    # Links, each starting at its joint.
    bodies: list[mujoco.MjsBody] = []
    joint_names: list[str] = []
    body = base
    for k in range(n):
        offset = float(lay.joint_s[0]) if k == 0 else float(lay.link_length[k - 1])
        body = body.add_body(name=f"{prefix}link{k}", pos=[0, 0, offset])
        body.explicitinertial = True
        body.mass = float(lay.link_mass[k])
        body.ipos = [0.0, 0.0, float(lay.link_com[k])]
        body.inertia = [float(x) for x in lay.link_inertia[k]]
        # Slides first (translation across the joint), then the three hinges.
        slides = []
        if opts.shear:
            slides += [
                ("u", (1.0, 0.0, 0.0), lay.joint_shear[k]),
                ("v", (0.0, 1.0, 0.0), lay.joint_shear[k]),
            ]
        if opts.axial:
            slides.append(("s", (0.0, 0.0, 1.0), lay.joint_axial[k]))
        for tag, axis3, k_lin in slides:
            name = f"{prefix}j{k}{tag}"
            body.add_joint(
                name=name,
                type=mujoco.mjtJoint.mjJNT_SLIDE,
                axis=list(axis3),
                stiffness=[float(k_lin), 0, 0],
                damping=[beta_joint * float(k_lin), 0, 0],
            )
            joint_names.append(name)
        axes = "xyz" if opts.hinge_order == "xyz" or k % 2 == 0 else "zyx"
        for ax in axes:
            i = "xyz".index(ax)
            axis = [0.0, 0.0, 0.0]
            axis[i] = 1.0
            name = f"{prefix}j{k}{ax}"
            stiff = float(lay.joint_stiffness[k, i])
            body.add_joint(
                name=name,
                type=mujoco.mjtJoint.mjJNT_HINGE,
                axis=axis,
                stiffness=[stiff, 0, 0],
                springref=float(lay.joint_springref[k, i]),
                damping=[beta_joint * stiff, 0, 0],
            )
            joint_names.append(name)
        body.add_geom(
            name=f"{prefix}g{k}",
            type=mujoco.mjtGeom.mjGEOM_CAPSULE,
            fromto=[0, 0, 0, 0, 0, float(lay.link_length[k])],
            size=[r_back, 0, 0],
            rgba=list(_RGBA_BACKBONE),
            mass=0.0,
            **geom_kw,
        )
        bodies.append(body)
    bodies[-1].add_site(
        name=f"{prefix}tip", pos=[0, 0, float(lay.link_length[-1])], size=[1e-3, 0, 0]
    )

    # Spacer disks (collision and drawing; their mass is in the link inertia).
    for d in range(len(lay.disk_s)):
        seg = robot.segments[int(lay.disk_seg[d])]
        if seg.disk_radius is None:
            continue
        spacing = seg.length / max(seg.disks, 1)
        thick = opts.disk_thickness or min(0.6 * spacing, _MAX_DISK_THICKNESS)
        holder = base if lay.disk_link[d] < 0 else bodies[int(lay.disk_link[d])]
        holder.add_geom(
            name=f"{prefix}disk{d}",
            type=mujoco.mjtGeom.mjGEOM_CYLINDER,
            pos=[0, 0, float(lay.disk_z[d])],
            size=[seg.disk_radius, thick / 2, 0],
            rgba=list(_RGBA_DISK),
            mass=0.0,
            **geom_kw,
        )

    # Tendons: sites from the base to the anchoring segment's end; actuators.
    tendon_names: list[str] = []
    actuator_names: list[str] = []
    seg_end = np.cumsum([s.length for s in robot.segments])
    for i, (j, tendon) in enumerate(robot.tendon_list()):
        a = math.radians(tendon.angle_deg)
        rx, ry = tendon.offset * math.cos(a), tendon.offset * math.sin(a)
        holders: list[tuple[mujoco.MjsBody, float]] = [(base, 0.0)]
        # Arc length of each routing site: the tendon's hole there (general routing).
        site_s = [0.0]
        if opts.tendon_routing == "links":
            last = int(np.argmin(np.abs(lay.node_s - seg_end[j])))
            # A site at every joint (offset d from the joint, in the distal link's frame) and
            # the anchor at the segment's end. Sites at joints keep the tendon's moment arm about
            # each joint at d; sites at the element boundaries instead add h^2 kappa / 4 to it
            # (measured: 7x larger tip error at a 90 deg bend, docs/mujoco.md).
            for k in range(last):
                holders.append((bodies[k], 0.0))
            holders.append((bodies[last - 1], float(lay.elem_length[last - 1] / 2)))
            site_s += [float(lay.joint_s[k]) for k in range(last)] + [float(seg_end[j])]
        else:
            for d_idx in np.flatnonzero(lay.disk_s <= seg_end[j] + 1e-12):
                link = int(lay.disk_link[d_idx])
                holders.append((base if link < 0 else bodies[link], float(lay.disk_z[d_idx])))
                site_s.append(float(lay.disk_s[d_idx]))
        tname = f"{prefix}tendon_{i}"
        ten = spec.add_tendon(name=tname, width=_TENDON_WIDTH, rgba=list(_RGBA_TENDON))
        for n_site, (holder, z) in enumerate(holders):
            sname = f"{prefix}t{i}_{n_site}"
            if tendon.routing != "straight":
                rx, ry = robot.tendon_path_xy(i, site_s[n_site])
            holder.add_site(name=sname, pos=[rx, ry, z], size=[2e-4, 0, 0], group=3)
            ten.wrap_site(sname)
        tendon_names.append(tname)
        act = spec.add_actuator()
        act.trntype = mujoco.mjtTrn.mjTRN_TENDON
        act.target = tname
        if opts.tendon_control == "force":
            act.name = f"{prefix}tension_{i}"
            act.set_to_motor()
            act.gear[0] = -1.0  # positive control pulls (shortens the tendon)
            act.ctrllimited = True
            act.ctrlrange = [0.0, opts.max_tension]
        else:
            if tendon.stiffness is None:
                raise ValueError(
                    f"segments[{j}].tendons[{[t for _, t in robot.tendon_list()].index(tendon)}]"
                    ".stiffness is required for tendon_control: length"
                )
            act.name = f"{prefix}length_{i}"
            act.set_to_position(kp=float(tendon.stiffness))
            act.forcelimited = True
            act.forcerange = [-opts.max_tension, 0.0]  # pull only
        actuator_names.append(act.name)

    # Chambers: a fixed tendon over the segment's joints carries the uniform chamber moment.
    pressure_names: list[str] = []
    for k, (j, chamber) in enumerate(robot.chamber_list()):
        arm = chamber.moment_arm
        ten = spec.add_tendon(name=f"{prefix}chamber_{k}")
        elems = np.flatnonzero(lay.elem_seg == j)
        wraps = 0
        for e in elems:
            for ax, coef in (("x", arm[0]), ("y", arm[1])):
                if coef != 0.0:
                    ten.wrap_joint(f"{prefix}j{e}{ax}", float(chamber.area * coef))
                    wraps += 1
            if opts.axial:
                ten.wrap_joint(f"{prefix}j{e}s", float(chamber.area))
                wraps += 1
        if wraps == 0:
            # A centred chamber on an inextensible chain does nothing, but keeps its actuator
            # (the input order); MuJoCo needs a non-empty tendon path.
            ten.wrap_joint(f"{prefix}j{int(elems[0])}x", 0.0)
        pressure_names.append(
            _add_tendon_motor(
                spec, f"{prefix}pressure_{k}", f"{prefix}chamber_{k}", chamber.pressure_range
            )
        )

    moment_names = _add_moment_actuators(spec, robot, lay, prefix)
    return ChainInfo(
        prefix=prefix,
        robot=robot,
        options=opts,
        layout=lay,
        base_body=f"{prefix}base",
        link_bodies=tuple(b.name for b in bodies),
        joints=tuple(joint_names),
        tip_site=f"{prefix}tip",
        tendons=tuple(tendon_names),
        actuators=tuple(actuator_names),
        damping_time=float(beta),
        joint_damping_time=float(beta_joint),
        pressure_actuators=tuple(pressure_names),
        moment_actuators=tuple(moment_names),
    )


def _add_moment_actuators(
    spec: mujoco.MjSpec, robot: RobotSpec, lay: ChainLayout, prefix: str
) -> list[str]:
    """Moment actuator k: a fixed tendon `moment_<k>` over its segment's hinges (torsion
    included) with the body-frame moment m per unit input as coefficients, driven by the motor
    `moment_<k>` (gear 1, ctrl = the input [-]): every joint of the segment carries tau m, the
    rigid-link image of the uniform internal moment (SoMo's equal torque on every joint)."""
    names: list[str] = []
    for k, (j, act_spec) in enumerate(robot.moment_actuator_list()):
        ten = spec.add_tendon(name=f"{prefix}moment_{k}")
        elems = np.flatnonzero(lay.elem_seg == j)
        wraps = 0
        for e in elems:
            for ax, coef in zip("xyz", act_spec.moment, strict=True):
                if coef != 0.0:
                    ten.wrap_joint(f"{prefix}j{e}{ax}", float(coef))
                    wraps += 1
        if wraps == 0:
            # A zero moment does nothing, but keeps its actuator (the input order).
            ten.wrap_joint(f"{prefix}j{int(elems[0])}x", 0.0)
        names.append(_add_tendon_motor(spec, f"{prefix}moment_{k}", f"{prefix}moment_{k}", None))
    return names


def _add_tendon_motor(
    spec: mujoco.MjSpec, name: str, tendon: str, ctrlrange: Sequence[float] | None
) -> str:
    """A motor of gear 1 on the fixed tendon `tendon` (ctrl = the actuator's input), limited to
    `ctrlrange` when given; returns its name."""
    act = spec.add_actuator()
    act.name = name
    act.trntype = mujoco.mjtTrn.mjTRN_TENDON
    act.target = tendon
    act.set_to_motor()
    act.gear[0] = 1.0
    act.ctrllimited = ctrlrange is not None
    if ctrlrange is not None:
        act.ctrlrange = [float(x) for x in ctrlrange]
    return name


def build_spec(
    robot: RobotSpec | dict | str,
    links: int | None = None,
    options: MujocoOptions | dict[str, Any] | None = None,
    **overrides: Any,
) -> mujoco.MjSpec:
    """A standalone MjSpec of the robot as a rigid-link chain (ALGORITHMS.md §C.2).

    Parameters
    ----------
    robot : RobotSpec, dict or path to a description.
    links : number of links N (default `MujocoOptions.links`).
    options : MujocoOptions or dict; keyword `overrides` replace its fields.

    Returns
    -------
    mujoco.MjSpec with a site `tip` at the distal end, one actuator `tension_<k>` per tendon in
    input order (ctrl = tension [N], >= 0 pulls), then one `pressure_<k>` per chamber
    (ctrl = gauge pressure [Pa]), then one `moment_<k>` per moment actuator (ctrl = its input),
    a light and a camera. `spec.compile()` gives
    the MjModel; `spec.to_xml()` the MJCF.
    """
    opts = resolve_options(options, links=links, **overrides)
    robot = load_robot(robot)
    spec = mujoco.MjSpec()
    spec.modelname = robot.name
    configure_spec(spec, opts)
    L = robot.total_length
    base = np.asarray(robot.base.position, dtype=float)
    spec.worldbody.add_light(
        name="light",
        pos=[float(base[0]), float(base[1]), float(base[2] + 3 * L)],
        dir=[0, 0, -1],
        diffuse=[0.8, 0.8, 0.8],
    )
    spec.worldbody.add_camera(
        name="side",
        pos=[float(base[0]), float(base[1] - 2.5 * L), float(base[2] + 0.5 * L)],
        xyaxes=[1, 0, 0, 0, 0, 1],
    )
    add_robot(spec, spec.worldbody, robot, opts)
    return spec


def chain_info(
    robot: RobotSpec | dict | str,
    options: MujocoOptions | dict | None = None,
    prefix: str = "",
    **overrides: Any,
) -> ChainInfo:
    """The ChainInfo `build_spec` would produce, without building (names and layout)."""
    spec = mujoco.MjSpec()
    opts = resolve_options(options, **overrides)
    configure_spec(spec, opts)
    return add_robot(spec, spec.worldbody, robot, opts, prefix=prefix)
