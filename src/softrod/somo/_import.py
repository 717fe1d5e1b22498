"""Convert a SoMo manipulator definition (YAML/JSON/dict) into a softrod robot description.

SoMo describes each actuator as `n_segments` rigid links with spring joints (`spring_stiffness`
kappa per axis). softrod describes the continuum: each SoMo actuator becomes one segment whose
backbone bending stiffness EI reproduces kappa (`bending_stiffness_from_joint`, rule "somo" by
default: the beam SoMo's eq. 8 was calibrated from). The section comes from the link shape;
E = EI / I. What cannot be mapped is listed in the returned notes, never dropped silently.

SoMo's actuation (`apply_actuation_torques(actuator_nrs, axis_nrs, torques)`: the same torque
on every joint of one axis) is a uniform internal moment along the actuator whatever the
curvature: by default (`actuation="moments"`) each driven axis, bending or torsion, becomes a
moment actuator of the segment with moment +-1 / Y^2 N m about that body axis per unit input, so
its input is SoMo's torque (world-scaled N m) at any bend. `SomoImport.moment_of_axis` maps
(actuator, axis) to the `moments` index, in SoMo's (actuator, axis) order.

`actuation="chambers"` keeps the earlier import (descriptions and scripts that pass `pressures`):
each bending axis becomes a chamber at the backbone's outer radius d, area 1 / (d Y^2), whose
"pressure" is SoMo's torque (`SomoImport.pressure_of_axis`); a torsion axis stays a moment
actuator. A chamber's moment is SoMo's only at small bends: its line folds back where the
curvature reaches 1 / d, and the exact solver has no equilibrium past that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from softrod.description import RobotSpec, load_robot
from softrod.somo._calibration import bending_stiffness_from_joint

__all__ = ["ACTUATIONS", "SomoImport", "import_somo", "read_somo", "IMPORT_RULES"]

IMPORT_RULES = ("somo", "tip", "midpoint", "chain")
#: How SoMo's torque actuation imports (module docstring); the first is the default.
ACTUATIONS = ("moments", "chambers")
#: Poisson ratio used when the SoMo actuator has no torsion joint (rigid in torsion there):
#: 0.5, an incompressible elastomer, the usual material of SoMo's pneumatic actuators.
DEFAULT_POISSON = 0.5
#: Relative difference above which two stiffnesses count as different in the notes.
REL_DIFF = 0.01


@dataclass(frozen=True)
class SomoImport:
    """Result of `import_somo`: the description, what could not be mapped, and SoMo's N.

    moment_of_axis : (actuator, axis) -> index into the `moments` input of a driven axis (every
        driven axis by default; the torsion axes only with actuation "chambers").
    pressure_of_axis : (actuator, axis) -> index into `pressures` (actuation "chambers" only).
    """

    robot: RobotSpec
    notes: tuple[str, ...]
    n_links: tuple[int, ...]
    pressure_of_axis: Mapping[tuple[int, int], int] = field(default_factory=dict)
    moment_of_axis: Mapping[tuple[int, int], int] = field(default_factory=dict)


def read_somo(source: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """A SoMo manipulator definition as a dict (YAML or JSON file, or a dict)."""
    if isinstance(source, Mapping):
        return dict(source)
    path = Path(source)
    if not path.is_file():
        raise ValueError(f"SoMo definition not found: {path}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"cannot parse {path}: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return data


def _num(where: str, value: Any, positive: bool = True) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be a number, got {value!r}") from None
    if not math.isfinite(x) or (positive and not x > 0):
        raise ValueError(f"{where} must be {'> 0' if positive else 'finite'}, got {value!r}")
    return x


def _section(
    where: str, link: Mapping[str, Any], scale: float
) -> tuple[dict[str, float], float, str]:
    """(section fields, I about link x [m^4], description) of a SoMo link's cross-section."""
    shape = str(link.get("shape_type", "")).lower()
    dims = link.get("dimensions")
    if not isinstance(dims, list | tuple) or not dims:
        raise ValueError(f"{where}.dimensions must be a list of numbers, got {dims!r}")
    d = [_num(f"{where}.dimensions[{i}]", v) / scale for i, v in enumerate(dims)]
    if shape in ("box", "stadium") and len(d) >= 2:
        a, b = d[0], d[1]  # x and y extent; z is along the actuator
        area = a * b
        i_x, i_y = a * b**3 / 12.0, b * a**3 / 12.0
        fields = {"second_moment": i_x, "polar_moment": i_x + i_y, "area": area}
        text = f"{shape} {a * 1e3:.3g} x {b * 1e3:.3g} mm"
        if shape == "stadium":
            text += " (treated as its bounding box)"
        return fields, i_x, text
    if shape in ("cylinder", "capsule", "sphere"):
        r = d[0]
        return {"radius": r}, math.pi * r**4 / 4.0, f"{shape} radius {r * 1e3:.3g} mm"
    raise ValueError(
        f"{where}.shape_type must be box, stadium, cylinder, capsule or sphere, got {shape!r}"
    )


def import_somo(
    source: str | Path | Mapping[str, Any],
    *,
    world_scale: float = 1.0,
    rule: str = "somo",
    name: str | None = None,
    actuation: str = "moments",
) -> SomoImport:
    """Convert a SoMo manipulator definition (module docstring).

    Parameters
    ----------
    world_scale : SoMo's world scale Y of the file (lengths x Y, stiffnesses and torques x Y^2,
        masses unscaled); the description is written in SI (divided back).
    rule : how `spring_stiffness` maps to EI: "somo" (eq. 8 inverted: the beam SoMo was
        calibrated to), "tip" / "midpoint" (the file's kappa came from those rules), or "chain"
        (the beam that bends like SoMo's chain at the tip).
    actuation : "moments" (SoMo's torques as uniform moment actuators, `moments` input) or
        "chambers" (bending axes as chambers, `pressures` input; small bends only).
    """
    if rule not in IMPORT_RULES:
        raise ValueError(f"--rule must be one of {', '.join(IMPORT_RULES)}, got {rule!r}")
    if actuation not in ACTUATIONS:
        raise ValueError(f"--actuation must be one of {', '.join(ACTUATIONS)}, got {actuation!r}")
    Y = _num("--world-scale", world_scale)
    data = read_somo(source)
    notes: list[str] = []
    acts = data.get("actuator_definitions")
    if not isinstance(acts, list) or not acts:
        raise ValueError("actuator_definitions must be a non-empty list of actuators")
    n_act = data.get("n_act")
    if n_act is not None and int(n_act) != len(acts):
        notes.append(
            f"n_act is {n_act} but {len(acts)} actuators are defined; used the definitions"
        )

    segments: list[dict[str, Any]] = []
    # SoMo's driven axes per actuator, in joint order: (joint index, body axis, sign).
    driven: list[list[tuple[int, str, float]]] = []
    n_links: list[int] = []
    EIs: list[float] = []
    sections: list[dict[str, float]] = []
    GJs: list[float | None] = []
    densities: list[float] = []
    for a, act in enumerate(acts):
        where = f"actuator_definitions[{a}]"
        if not isinstance(act, Mapping):
            raise ValueError(f"{where} must be a mapping, got {act!r}")
        L = _num(f"{where}.actuator_length", act.get("actuator_length")) / Y
        N = act.get("n_segments")
        if not isinstance(N, int) or N < 1:
            raise ValueError(f"{where}.n_segments must be an integer >= 1, got {N!r}")
        link = act.get("link_definition")
        if not isinstance(link, Mapping):
            raise ValueError(f"{where}.link_definition must be a mapping")
        section, i_x, section_text = _section(f"{where}.link_definition", link, Y)
        mass = _num(f"{where}.link_definition.mass", link.get("mass", 0.0), positive=False)
        # Joints by axis: x and y bend, z twists.
        joints = act.get("joint_definitions") or []
        kappa: dict[str, float] = {}
        rest: dict[str, float] = {}
        # SoMo's actuation axes (index into joint_definitions): every bending joint, and the
        # first torsion joint (the one mapped to G).
        axes_driven: list[tuple[int, str, float]] = []
        for j, jd in enumerate(joints):
            jw = f"{where}.joint_definitions[{j}]"
            if str(jd.get("joint_type", "revolute")) != "revolute":
                notes.append(
                    f"{jw}: joint_type {jd.get('joint_type')!r} not mapped (revolute only)"
                )
                continue
            axis = [float(v) for v in jd.get("axis", [])]
            nz = [i for i, v in enumerate(axis) if v != 0]
            if len(axis) != 3 or len(nz) != 1:
                notes.append(f"{jw}: axis {axis} is not a body axis; not mapped")
                continue
            ax = "xyz"[nz[0]]
            if ax in "xy" or ax not in kappa:
                axes_driven.append((j, ax, math.copysign(1.0, axis[nz[0]])))
            if ax in kappa:
                notes.append(
                    f"{jw}: a second joint about {ax} (SoMo stacks it at the same link); only "
                    "the first is mapped"
                )
                continue
            # Torques and stiffnesses scale with Y^2 (SoMo §III-B.4), angles not at all.
            kappa[ax] = _num(f"{jw}.spring_stiffness", jd.get("spring_stiffness")) / Y**2
            rest[ax] = math.copysign(1.0, axis[nz[0]]) * float(jd.get("joint_neutral_position", 0))
            off = jd.get("neutral_axis_offset")
            if off is not None and any(float(v) != 0 for v in off):
                notes.append(
                    f"{jw}: neutral_axis_offset {list(off)} not mapped (softrod's bending axis "
                    "is the backbone centreline)"
                )
            if "joint_control_limit_force" in jd:
                notes.append(
                    f"{jw}: joint_control_limit_force {jd['joint_control_limit_force']} (PyBullet "
                    "spring-control force limit) not mapped; MuJoCo joints use damping_ratio"
                )
        if "x" not in kappa and "y" not in kappa:
            raise ValueError(f"{where}: needs a revolute joint about x or y with spring_stiffness")
        bend_axis = "x" if "x" in kappa else "y"
        EI = bending_stiffness_from_joint(kappa[bend_axis], L, N, rule=rule)  # type: ignore[arg-type]
        if bend_axis == "y" and "second_moment" in section:
            # softrod has one second moment: use the one about the mapped axis (y).
            section["second_moment"] = section["polar_moment"] - i_x
        if "x" in kappa and "y" in kappa and abs(kappa["y"] / kappa["x"] - 1) > REL_DIFF:
            notes.append(
                f"{where}: bending stiffness about y ({kappa['y']:.4g} N m/rad) differs from "
                f"about x ({kappa['x']:.4g}); softrod backbones bend isotropically, so the x "
                "value is used for both (use softrod.somo.EmpiricalActuator for anisotropic "
                "rigid-link fingers)"
            )
        if "z" in kappa:
            GJ: float | None = kappa["z"] * L / N  # N torsion springs in series
        else:
            GJ = None
            notes.append(
                f"{where}: no torsion joint (SoMo's chain is rigid in torsion); softrod uses "
                f"poisson_ratio {DEFAULT_POISSON}"
            )
        precurv = [0.0, 0.0, 0.0]
        for ax, theta in rest.items():
            if theta != 0:
                precurv["xyz".index(ax)] = theta * N / L  # rest angle per link / link length
        seg: dict[str, Any] = {"length": L}
        if any(precurv):
            seg["_precurvature"] = precurv
        if act.get("planar_flag") not in (None, 0):
            notes.append(
                f"{where}: planar_flag {act.get('planar_flag')} (SoMo's planar constraint) not "
                "mapped; constrain motion in the scene instead"
            )
        driven.append(axes_driven)
        notes.append(
            f"{where}: section from the link shape ({section_text}); E = EI / I with "
            f"EI = {EI:.4g} N m^2 from spring_stiffness {kappa[bend_axis]:.4g} N m/rad (rule "
            f"{rule!r}, N = {N})"
        )
        segments.append(seg)
        n_links.append(N)
        EIs.append(EI)
        sections.append(section)
        GJs.append(GJ)
        A = section["area"] if "area" in section else math.pi * section["radius"] ** 2
        densities.append(mass / (A * L / N) if mass > 0 else 0.0)

    # Backbone from actuator 0; later actuators override what differs.
    def backbone(k: int) -> dict[str, Any]:
        sec = sections[k]
        I = sec.get("second_moment", math.pi * sec.get("radius", 0.0) ** 4 / 4.0)
        J = sec.get("polar_moment", math.pi * sec.get("radius", 0.0) ** 4 / 2.0)
        E = EIs[k] / I
        bb: dict[str, Any] = {"youngs_modulus": E, **sec, "density": densities[k]}
        GJ = GJs[k]
        if GJ is not None:
            bb["shear_modulus"] = GJ / J
        else:
            bb["poisson_ratio"] = DEFAULT_POISSON
        return bb

    base_bb = backbone(0)
    for k, seg in enumerate(segments):
        precurv = seg.pop("_precurvature", None)
        bb = backbone(k)
        if precurv is not None:
            bb["precurvature"] = precurv
        diff = {key: v for key, v in bb.items() if base_bb.get(key) != v}
        if k > 0 and diff:
            seg["backbone"] = diff
        elif k == 0 and precurv is not None:
            base_bb["precurvature"] = precurv

    # Actuation: SoMo's torque input per driven axis (module docstring).
    pressure_of_axis, moment_of_axis = _actuators(segments, sections, driven, Y, actuation, notes)

    # Base and tip links.
    if data.get("base_definition"):
        notes.append(
            "base_definition (a rigid base link) not mapped: mount the robot in a scene instead"
        )
    tip = data.get("tip_definition")
    if isinstance(tip, Mapping) and tip:
        m_tip = _num("tip_definition.mass", tip.get("mass", 0.0), positive=False)
        if m_tip > 0:
            segments[-1]["disks"] = 1
            segments[-1]["disk_mass"] = m_tip
            notes.append(
                f"tip_definition: its mass {m_tip:g} kg is a disk at the tip; its shape "
                f"({tip.get('shape_type')}) is not mapped"
            )
        else:
            notes.append("tip_definition: massless tip link not mapped")
    for key in ("urdf_filename",):
        if key in data:
            notes.append(f"{key} not used (softrod builds MuJoCo models from the description)")
    notes.append(
        "SoMo's rigid-link discretization N = "
        + ", ".join(str(n) for n in n_links)
        + " per actuator is not part of a softrod description; choose links when building "
        "the MuJoCo model (softrod mjcf --links)"
    )
    robot_name = name or str(data.get("manipulator_name") or "somo_manipulator")
    robot = load_robot(
        {"name": robot_name, "model": "kirchhoff", "backbone": base_bb, "segments": segments}
    )
    return SomoImport(
        robot=robot,
        notes=tuple(notes),
        n_links=tuple(n_links),
        pressure_of_axis=pressure_of_axis,
        moment_of_axis=moment_of_axis,
    )


def _actuators(
    segments: list[dict[str, Any]],
    sections: list[dict[str, float]],
    driven: list[list[tuple[int, str, float]]],
    Y: float,
    actuation: str,
    notes: list[str],
) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    """Add SoMo's driven axes to `segments` as actuators whose input is SoMo's torque
    (world-scaled N m): a moment actuator of moment sign / Y^2 about the body axis (every axis
    with actuation "moments", torsion only with "chambers"), or a chamber of area 1 / (d Y^2) at
    the outer radius d (bending with "chambers"). Returns (pressure_of_axis, moment_of_axis)."""
    pressure_of_axis: dict[tuple[int, int], int] = {}
    moment_of_axis: dict[tuple[int, int], int] = {}
    for k, seg in enumerate(segments):
        sec = sections[k]
        d = sec["radius"] if "radius" in sec else math.sqrt(sec["area"] / math.pi)
        chambers: list[dict[str, Any]] = []
        moments: list[dict[str, Any]] = []
        for axis_nr, ax, sign in driven[k]:
            if actuation == "chambers" and ax in "xy":
                # Moment p A (r x e_z): +x needs r along +y (90 deg), +y along -x (180 deg).
                angle = (90.0 if ax == "x" else 180.0) + (180.0 if sign < 0 else 0.0)
                chambers.append({"area": 1.0 / (d * Y**2), "offset": d, "angle_deg": angle % 360.0})
                pressure_of_axis[(k, axis_nr)] = len(pressure_of_axis)
            else:
                moment = [0.0, 0.0, 0.0]
                moment["xyz".index(ax)] = sign / Y**2
                moments.append({"moment": moment})
                moment_of_axis[(k, axis_nr)] = len(moment_of_axis)
        where = f"actuator_definitions[{k}]"
        if chambers:
            seg["chambers"] = chambers
            axes = [a for a in pressure_of_axis if a[0] == k]
            notes.append(
                f"{where}: SoMo torque actuation (no tendon routing) of axes "
                f"{[a for _, a in axes]} -> chambers (pressures "
                f"{[pressure_of_axis[a] for a in axes]}); input = SoMo's torque on every joint "
                "of the axis (world-scaled N m); SoMo's moment only at small bends"
            )
        if moments:
            seg["moment_actuators"] = moments
            axes = [a for a in moment_of_axis if a[0] == k]
            what = (
                "torsion actuation"
                if actuation == "chambers"
                else "torque actuation (no tendon routing)"
            )
            notes.append(
                f"{where}: SoMo {what} of axes {[a for _, a in axes]} -> moment_actuators "
                f"(moments {[moment_of_axis[a] for a in axes]}); input = SoMo's torque on every "
                "joint of the axis (world-scaled N m), a uniform moment at any bend"
            )
    return pressure_of_axis, moment_of_axis
