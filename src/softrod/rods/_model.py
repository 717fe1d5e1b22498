"""Compile a RobotSpec into the immutable arrays the rod solvers run on.

Formulation (shared by every static method): integrate from the base the position p, rotation R
and the *total* moment M carried across the section by rod and tendons together (world frame).
The total force N(s) = F_tip + integral of the distal loads is known in closed form for
world-frame loads, so the only unknown base value is M(0) (3 numbers) for both Kirchhoff and
Cosserat backbones; the rod's own strains follow from an algebraic section balance
(Rucker & Webster 2011):

    R^T N = K_se (v - e3) + sum_i tau_i t_i          (Cosserat only; Kirchhoff has v = e3)
    R^T M = K_bt (u - u*) + sum_i tau_i r_i x t_i,   t_i = w_i / |w_i|,  w_i = v + u x r_i + r_i'

summed over the tendons that pass the section. Straight routing has r_i' = 0; general routing
(helical, per-disk holes) only adds r_i(s)' to w_i (docs/routing.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from softrod.description import RobotSpec, load_robot
from softrod.rods.so3 import quat_to_matrix

__all__ = [
    "RodModel",
    "as_model",
    "compile_model",
    "with_pose_and_lengths",
    "DEFAULT_STEPS_PER_LENGTH",
]

#: Default integration resolution: about this many RK4 steps along the whole backbone (every
#: segment end and disk is also a node). 32 keeps the tip error below 3e-8 m on the shipped
#: robots under heavy loads (FL^2/EI ~ 5), 30x under the 1e-6 m accuracy target;
#: `softrod bench static` reports it as `*.tip_error_vs_fine_m`.
DEFAULT_STEPS_PER_LENGTH = 32


class KernelConstants(NamedTuple):
    """Load arrays of a model that no input changes, built once per model and shared by every
    solve's load assembly (`_inputs._problem`); the kernels only read them, nobody writes them.

    ones : (n_steps, n_t) tension scale without a friction profile [-].
    zero_tendons : (n_t,) commanded lengths of tension control [m].
    zero_nodes : (n_nodes, 3) node moments without point loads [N m].
    no_field : the kernels' magnetic tuple without a field: (B, node dipoles, segment
        dipoles, field direction) = (zeros (3,), zeros (n_nodes, 3), zeros (n_seg, 3), -1).
    straight : (n_nodes, 3) node positions of the straight robot on its base pose [m].
    """

    ones: np.ndarray
    zero_tendons: np.ndarray
    zero_nodes: np.ndarray
    no_field: tuple[np.ndarray, np.ndarray, np.ndarray, int]
    straight: np.ndarray


@dataclass(frozen=True, eq=False)
class RodModel:
    """Numeric model of a described robot (arrays only; SI units).

    Attributes
    ----------
    spec : the RobotSpec it was compiled from.
    cosserat : True for shearable, extensible backbones.
    seg_length : (n_seg,) [m]; seg_start : (n_seg,) arc length of each segment's base [m].
    K_bt : (n_seg, 3) bending/torsion stiffness diag (EI, EI, GJ) [N m^2].
    K_se : (n_seg, 3) shear/axial stiffness diag (GA, GA, EA) [N].
    u_star : (n_seg, 3) precurvature [1/m].
    rho_A : (n_seg,) mass per unit length [kg/m].
    node_s : (n_nodes,) arc length of the integration grid [m]; disks lie on nodes.
    node_point_mass : (n_nodes,) disk mass located at each node [kg].
    step_seg : (n_steps,) segment index of each step.
    tendon_r : (n_t, 3) body-frame tendon offsets [m] (general routing: at the base);
        tendon_seg : (n_t,) anchoring segment.
    tendon_stiffness : (n_t,) axial stiffness [N/m], NaN when not given.
    tendon_rest_length : (n_t,) path length from base to anchor on the straight rod [m].
    base_position : (3,) [m]; base_rotation : (3, 3).
    disk_s : (n_disks,) arc length of every disk [m]; disk_seg : (n_disks,).
    seg_par : (n_seg, 10) packed K_bt, K_se, u_star, rho_A for the kernels.
    tendon_pack : (n_t, 4) packed tendon_r and tendon_seg for the kernels; with general
        routing (n_t, 8 + 6 n_nodes), the path after them (`_routing_columns`, docs/routing.md).
    chamber_r : (n_c, 3) body-frame chamber lines [m]; chamber_seg : (n_c,) their segment.
    n_internal_tendons : kernel tendons appended after the real ones (0 on a compiled model;
        the chambers' tendons on `with_chambers`).
    magnet_s : (n_m,) arc length of each point dipole from the base [m] (grid nodes);
        magnet_seg : (n_m,) its segment; magnet_moment : (n_m, 3) body-frame dipole [A m^2].
    seg_dipole : (n_seg, 3) body-frame dipole density M A of a magnetized backbone [A m].
    applied_moments : (n_moments,) moment-actuator inputs folded into u_star (`with_moments`;
        empty on a compiled model).

    Chambers (docs/actuators.md): a chamber at pressure p along segment j acts on the section
    exactly like a straight tendon at its offset anchored at the segment's end carrying the
    tension -p A_eff(p). A tendon from the base also passes the segments before j, so for
    j > 0 a second internal tendon at the same offset, anchored at the end of segment j - 1,
    carries +p A_eff and cancels it there. `with_chambers` is this model with those tendons
    appended to the kernel arrays; the static solver runs on it.
    """

    spec: RobotSpec
    cosserat: bool
    seg_length: np.ndarray
    seg_start: np.ndarray
    K_bt: np.ndarray
    K_se: np.ndarray
    u_star: np.ndarray
    rho_A: np.ndarray
    node_s: np.ndarray
    node_point_mass: np.ndarray
    step_seg: np.ndarray
    tendon_r: np.ndarray
    tendon_seg: np.ndarray
    tendon_stiffness: np.ndarray
    tendon_rest_length: np.ndarray
    base_position: np.ndarray
    base_rotation: np.ndarray
    disk_s: np.ndarray
    disk_seg: np.ndarray
    seg_par: np.ndarray
    tendon_pack: np.ndarray
    chamber_r: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3)))
    chamber_seg: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    n_internal_tendons: int = 0
    magnet_s: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    magnet_seg: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    magnet_moment: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3)))
    seg_dipole: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3)))
    applied_moments: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))

    def with_moments(self, moments: np.ndarray | None) -> RodModel:
        """This model with the moment actuators' inputs (n_moments,) [-] folded in.

        A uniform internal body-frame moment tau m over segment j shifts the section balance,
        K_bt (u - u*) - tau m = R^T M, so it is exactly the precurvature u* + K_bt^-1 tau m
        (docs/actuators.md). `applied_moments` records the inputs folded in; the shift is
        taken from the model's own rest curvature, so calling it again replaces them."""
        acts = self.spec.moment_actuator_list()
        old = self.applied_moments if self.applied_moments.size else np.zeros(len(acts))
        new = np.zeros(len(acts)) if moments is None else np.asarray(moments, dtype=float)
        if np.array_equal(old, new):
            return self
        shift = np.zeros_like(self.u_star)
        for (j, act), d in zip(acts, new - old, strict=True):
            shift[j] += d * np.asarray(act.moment) / self.K_bt[j]
        u_star = self.u_star + shift
        seg_par = self.seg_par.copy()
        seg_par[:, 6:9] = u_star
        return dataclasses.replace(
            self,
            u_star=u_star,
            seg_par=np.ascontiguousarray(seg_par),
            applied_moments=new.copy(),
        )

    @cached_property
    def is_magnetic(self) -> bool:
        """True when a field acts on the robot (point dipoles or a magnetized backbone)."""
        return bool(np.any(self.magnet_moment) or np.any(self.seg_dipole))

    @cached_property
    def node_dipole(self) -> np.ndarray:
        """(n_nodes, 3) body-frame point dipole at each grid node [A m^2] (for the kernels)."""
        out = np.zeros((self.n_nodes, 3))
        for s, m in zip(self.magnet_s, self.magnet_moment, strict=True):
            out[int(np.argmin(np.abs(self.node_s - s)))] += m
        return out

    @property
    def n_tendons(self) -> int:
        """Tendons in the kernel arrays (the robot's, then any internal chamber tendons)."""
        return int(self.tendon_r.shape[0])

    @property
    def n_chambers(self) -> int:
        return int(self.chamber_r.shape[0])

    @cached_property
    def chamber_map(self) -> np.ndarray:
        """(n_ct, n_c) internal tendon tensions per unit chamber force p A_eff [N/N]: -1 on
        the chamber's own tendon, +1 on the one cancelling it before its segment."""
        rows = [(k, -1.0) for k in range(self.n_chambers)]
        rows += [(k, 1.0) for k in range(self.n_chambers) if self.chamber_seg[k] > 0]
        out = np.zeros((len(rows), self.n_chambers))
        for i, (k, sign) in enumerate(rows):
            out[i, k] = sign
        return out

    def chamber_forces(self, pressures: np.ndarray) -> np.ndarray:
        """Chamber forces p A_eff(p) (n_c,) [N] at gauge pressures (n_c,) [Pa]."""
        chambers = self.spec.chamber_list()
        return np.array([c.force(float(p)) for (_, c), p in zip(chambers, pressures, strict=True)])

    @cached_property
    def with_chambers(self) -> RodModel:
        """This model with one internal tendon per chamber (two past the first segment)
        appended to its tendon arrays (see the class docstring); itself without chambers."""
        if self.n_chambers == 0 or self.n_internal_tendons:
            return self
        cmap = self.chamber_map
        k_of = np.argmax(np.abs(cmap), axis=1)
        # The chamber's own tendon ends at its segment's end, the cancelling one a segment before.
        seg = self.chamber_seg[k_of] - (cmap[np.arange(k_of.size), k_of] > 0)
        r = self.chamber_r[k_of]
        n_ct = k_of.size
        # Routed tendons widen the pack; chamber lines are straight (kind 0, zeros).
        pad = np.zeros((n_ct, self.tendon_pack.shape[1] - 4))
        return dataclasses.replace(
            self,
            tendon_r=np.concatenate([self.tendon_r, r]),
            tendon_seg=np.concatenate([self.tendon_seg, seg]).astype(np.int64),
            tendon_stiffness=np.concatenate([self.tendon_stiffness, np.full(n_ct, np.nan)]),
            tendon_rest_length=np.concatenate(
                [self.tendon_rest_length, self.seg_start[seg] + self.seg_length[seg]]
            ),
            tendon_pack=np.ascontiguousarray(
                np.concatenate([self.tendon_pack, np.c_[r, seg.astype(float), pad]])
            ),
            n_internal_tendons=n_ct,
        )

    @property
    def is_routed(self) -> bool:
        """True when a tendon has general routing (helical or per-disk holes)."""
        return bool(self.tendon_pack.shape[1] > 4)

    def require_straight_routing(self, what: str) -> None:
        """Raise ValueError when `what` (a solver or path) meets general tendon routing."""
        if self.is_routed:
            raise ValueError(
                f"general tendon routing is not supported by {what} yet (docs/routing.md); "
                "use softrod.solve_static(method='shooting')"
            )

    @property
    def n_nodes(self) -> int:
        return int(self.node_s.shape[0])

    @cached_property
    def total_length(self) -> float:
        return float(self.seg_length.sum())

    @cached_property
    def moment_scale(self) -> float:
        """Moment that bends the softest segment by 1 rad over the total length [N m]."""
        return float(self.K_bt[:, :2].min() / self.total_length)

    @cached_property
    def tension_scale(self) -> float:
        """Tension that produces `moment_scale` at the largest tendon offset [N] (the robot's
        tendons; internal chamber tendons never carry unknown tensions)."""
        n_real = self.n_tendons - self.n_internal_tendons
        if n_real == 0:
            return self.moment_scale
        return self.moment_scale / float(np.max(np.abs(self.tendon_r[:n_real, :2])))

    @cached_property
    def kernel_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
        """(node_s, step_seg, seg_par, tendon_pack, cosserat): the kernels' `geo` argument."""
        return (self.node_s, self.step_seg, self.seg_par, self.tendon_pack, self.cosserat)

    @cached_property
    def kernel_constants(self) -> KernelConstants:
        """The input-independent load arrays of this model (`KernelConstants`)."""
        n_nodes, n_t, n_seg = self.n_nodes, self.n_tendons, self.seg_par.shape[0]
        axis = self.base_rotation[:, 2]
        return KernelConstants(
            ones=np.ones((self.step_seg.shape[0], n_t)),
            zero_tendons=np.zeros(n_t),
            zero_nodes=np.zeros((n_nodes, 3)),
            no_field=(np.zeros(3), np.zeros((n_nodes, 3)), np.zeros((n_seg, 3)), -1),
            straight=self.base_position + self.node_s[:, None] * axis,
        )

    @cached_property
    def kernel_base(self) -> tuple[np.ndarray, np.ndarray]:
        """(base_position, base_rotation): the kernels' `base` argument."""
        return (self.base_position, self.base_rotation)

    @cached_property
    def tendon_k(self) -> np.ndarray:
        """Tendon stiffness (n_t,) [N/m] with 0 where not given (for the kernels)."""
        return np.nan_to_num(self.tendon_stiffness, nan=0.0)

    @property
    def total_mass(self) -> float:
        return float((self.rho_A * self.seg_length).sum() + self.node_point_mass.sum())


def compile_model(
    robot: RobotSpec | dict | str,
    steps: int | None = None,
    extra_nodes: tuple[float, ...] = (),
) -> RodModel:
    """Compile a description into a `RodModel`.

    Parameters
    ----------
    robot : a RobotSpec, dict or path (see `softrod.load_robot`).
    steps : approximate number of RK4 steps along the whole backbone (default
        `DEFAULT_STEPS_PER_LENGTH`); every segment end and disk is also a node.
    extra_nodes : arc lengths [m] that must be grid nodes (where point loads act).
    """
    spec = load_robot(robot)
    n_total = DEFAULT_STEPS_PER_LENGTH if steps is None else int(steps)
    if n_total < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    n_seg = spec.n_segments
    seg_length = np.array([s.length for s in spec.segments])
    seg_start = np.concatenate([[0.0], np.cumsum(seg_length)[:-1]])
    L = float(seg_length.sum())
    ds_max = L / n_total

    K_bt = np.zeros((n_seg, 3))
    K_se = np.zeros((n_seg, 3))
    u_star = np.zeros((n_seg, 3))
    rho_A = np.zeros(n_seg)
    for j in range(n_seg):
        bb = spec.segment_backbone(j)
        E, G, I, J, A = bb.youngs_modulus, bb.G, bb.I, bb.J, bb.A
        K_bt[j] = (E * I, E * I, G * J)
        K_se[j] = (G * A, G * A, E * A)
        u_star[j] = bb.precurvature
        rho_A[j] = bb.density * A

    # Point dipoles act at nodes, as point loads do (issue 20).
    magnets = spec.magnet_list()
    extra_nodes = tuple(extra_nodes) + tuple(s for _, s, _ in magnets)
    # A point load at a magnet's s asks for the node twice: keep one (no zero-length step).
    unique: list[float] = []
    for x in sorted(extra_nodes):
        if not unique or x - unique[-1] > 1e-12:
            unique.append(x)
    extra_nodes = tuple(unique)
    seg_dipole = np.zeros((n_seg, 3))
    for j, seg in enumerate(spec.segments):
        if seg.magnetization is not None:
            seg_dipole[j] = np.asarray(seg.magnetization, dtype=float) * spec.segment_backbone(j).A

    # Grid: segment ends and disks are nodes; each interval is split to respect ds_max.
    node_s: list[float] = [0.0]
    node_mass: list[float] = [0.0]
    step_seg: list[int] = []
    disk_s: list[float] = []
    disk_seg: list[int] = []
    for j, seg in enumerate(spec.segments):
        n_int = max(seg.disks, 1)
        for i in range(1, n_int + 1):
            a = seg_start[j] + seg.length * (i - 1) / n_int
            b = seg_start[j] + seg.length * i / n_int
            # Extra nodes strictly inside (a, b) split the interval further.
            cuts = [a] + sorted(x for x in extra_nodes if a + 1e-12 < x < b - 1e-12) + [b]
            for c0, c1 in zip(cuts[:-1], cuts[1:], strict=True):
                n_sub = max(1, math.ceil((c1 - c0) / ds_max - 1e-9))
                for k in range(1, n_sub + 1):
                    node_s.append(c0 + (c1 - c0) * k / n_sub)
                    node_mass.append(0.0)
                    step_seg.append(j)
            if seg.disks > 0:
                node_mass[-1] += seg.disk_mass
                disk_s.append(b)
                disk_seg.append(j)

    tendons = spec.tendon_list()
    n_t = len(tendons)
    tendon_r = np.zeros((n_t, 3))
    tendon_seg = np.zeros(n_t, dtype=np.int64)
    tendon_k = np.full(n_t, np.nan)
    tendon_rest = np.zeros(n_t)
    for i, (j, t) in enumerate(tendons):
        a = math.radians(t.angle_deg)
        tendon_r[i] = (t.offset * math.cos(a), t.offset * math.sin(a), 0.0)
        tendon_seg[i] = j
        if t.stiffness is not None:
            tendon_k[i] = t.stiffness
        tendon_rest[i] = seg_start[j] + seg_length[j]

    # Chamber lines (the internal tendons of `RodModel.with_chambers`).
    chambers = spec.chamber_list()
    chamber_r = np.array([c.body_position for _, c in chambers], dtype=float).reshape(-1, 3)
    chamber_seg = np.array([j for j, _ in chambers], dtype=np.int64)

    seg_par = np.concatenate([K_bt, K_se, u_star, rho_A[:, None]], axis=1)
    tendon_pack = np.concatenate([tendon_r, tendon_seg[:, None].astype(float)], axis=1)
    # General routing: the path columns and the routed path's rest length.
    route = _routing_columns(spec, np.array(node_s), np.array(disk_s), np.array(disk_seg))
    if route is not None:
        tendon_pack = np.concatenate([tendon_pack, route[0]], axis=1)
        tendon_rest = route[1]
    return RodModel(
        spec=spec,
        cosserat=spec.model == "cosserat",
        seg_length=seg_length,
        seg_start=seg_start,
        K_bt=K_bt,
        K_se=K_se,
        u_star=u_star,
        rho_A=rho_A,
        node_s=np.array(node_s),
        node_point_mass=np.array(node_mass),
        step_seg=np.array(step_seg, dtype=np.int64),
        tendon_r=tendon_r,
        tendon_seg=tendon_seg,
        tendon_stiffness=tendon_k,
        tendon_rest_length=tendon_rest,
        base_position=np.array(spec.base.position, dtype=float),
        base_rotation=quat_to_matrix(spec.base.quaternion),
        disk_s=np.array(disk_s),
        disk_seg=np.array(disk_seg, dtype=np.int64),
        seg_par=np.ascontiguousarray(seg_par),
        tendon_pack=np.ascontiguousarray(tendon_pack.reshape(n_t, tendon_pack.shape[1])),
        chamber_r=chamber_r,
        chamber_seg=chamber_seg,
        magnet_s=np.array([s for _, s, _ in magnets], dtype=float),
        magnet_seg=np.array([j for j, _, _ in magnets], dtype=np.int64),
        magnet_moment=np.array([m.moment for _, _, m in magnets], dtype=float).reshape(-1, 3),
        seg_dipole=seg_dipole,
    )


def _routing_columns(
    spec: RobotSpec, node_s: np.ndarray, disk_s: np.ndarray, disk_seg: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Kernel columns of general tendon routing (`_static_kernels._route_fill`), or None when
    every tendon is straight.

    Returns (cols (n_t, 4 + 6 n_nodes), rest_length (n_t,) [m]): per tendon its kind (0
    straight, 1 helix, 2 per-disk holes), the helix's offset [m], phase [rad] and wavenumber
    2 pi / pitch [rad/m], then r and r' (body frame) at every node, r' on the node's distal side
    (the last node: its proximal side). The holes' path is linear in s between the base hole
    (offset, angle_deg) and consecutive disks; its rest length is the length of that polyline
    on the straight rod, sum sqrt(ds^2 + |dr|^2); a helix's is s_anchor sqrt(1 + (d k)^2).
    """
    tendons = spec.tendon_list()
    if all(t.routing == "straight" for _, t in tendons):
        return None
    n_nodes = node_s.shape[0]
    h = np.diff(node_s)
    seg_end = np.cumsum([seg.length for seg in spec.segments])
    cols = np.zeros((len(tendons), 4 + 6 * n_nodes))
    rest = np.zeros(len(tendons))
    for i, (j, t) in enumerate(tendons):
        a = math.radians(t.angle_deg)
        r0 = np.array([t.offset * math.cos(a), t.offset * math.sin(a), 0.0])
        anchor = float(seg_end[j])
        rn = np.tile(r0, (n_nodes, 1))
        dr = np.zeros((n_nodes, 3))
        rest[i] = anchor
        holes = t.hole_positions()
        if t.pitch is not None:
            kw = 2.0 * math.pi / t.pitch
            cols[i, 0:4] = (1.0, t.offset, a, kw)
            ang = a + kw * node_s
            rn[:, 0], rn[:, 1] = t.offset * np.cos(ang), t.offset * np.sin(ang)
            dr[:, 0], dr[:, 1] = -t.offset * kw * np.sin(ang), t.offset * kw * np.cos(ang)
            rest[i] = anchor * math.sqrt(1.0 + (t.offset * kw) ** 2)
        elif holes is not None:
            cols[i, 0] = 2.0
            knot_s = np.concatenate([[0.0], disk_s[disk_seg <= j]])
            knot_r = np.vstack([r0[:2], np.array(holes, dtype=float).reshape(-1, 2)])
            for c in range(2):
                rn[:, c] = np.interp(node_s, knot_s, knot_r[:, c])
            dr[:-1] = np.diff(rn, axis=0) / h[:, None]
            # The tip node has no distal side: its proximal slope. (Past the anchor the path
            # is held at the last hole, where the tendon no longer acts.)
            dr[-1] = dr[-2]
            seg_len = np.hypot(np.diff(knot_s), np.linalg.norm(np.diff(knot_r, axis=0), axis=1))
            rest[i] = float(seg_len.sum())
        cols[i, 4:] = np.concatenate([rn, dr], axis=1).reshape(-1)
    return cols, rest


#: Compiled models of recently seen specs, keyed by content (a RobotSpec is editable, so its
#: identity is no key). Kept because `softrod.solve_static(spec, ..., guess=sol)` in a loop is
#: the documented warm-start pattern: compiling tdcr3 costs ~1.3 ms, a warm solve ~1 ms.
_MODEL_CACHE: OrderedDict[tuple[str, int | None, tuple[float, ...]], RodModel] = OrderedDict()
_MODEL_CACHE_SIZE = 32


def with_pose_and_lengths(
    model: RodModel,
    base_position: np.ndarray | None = None,
    base_rotation: np.ndarray | None = None,
    extensions: np.ndarray | None = None,
) -> RodModel:
    """A copy of `model` on another base pose and/or with segments extended (no recompile).

    extensions : (n_seg,) change of each segment's length [m]; the grid, disks and tendon rest
    lengths stretch with the segment (an extensible backbone keeps its section stiffness).
    """
    changes: dict[str, Any] = {}
    if base_position is not None:
        changes["base_position"] = np.asarray(base_position, dtype=float).reshape(3)
    if base_rotation is not None:
        changes["base_rotation"] = np.asarray(base_rotation, dtype=float).reshape(3, 3)
    if extensions is not None:
        ext = np.asarray(extensions, dtype=float).reshape(-1)
        n_seg = model.seg_length.shape[0]
        if ext.shape != (n_seg,):
            raise ValueError(
                f"extensions must have {n_seg} values (one per segment), got {ext.shape[0]}"
            )
        for j, seg in enumerate(model.spec.segments):
            lo, hi = seg.extension_range if seg.extension_range is not None else (0.0, 0.0)
            if not lo - 1e-12 <= ext[j] <= hi + 1e-12:
                raise ValueError(
                    f"extensions[{j}] must be within segments[{j}].extension_range "
                    f"[{lo}, {hi}] m, got {ext[j]}"
                )
        if np.any(ext != 0.0):
            model.require_straight_routing("segment extensions")
        new_len = model.seg_length + ext
        new_start = np.concatenate([[0.0], np.cumsum(new_len)[:-1]])

        # Map old arc length to new, segment by segment (affine within each segment).
        def remap(s: np.ndarray, seg_idx: np.ndarray) -> np.ndarray:
            frac = (s - model.seg_start[seg_idx]) / model.seg_length[seg_idx]
            return new_start[seg_idx] + frac * new_len[seg_idx]

        node_seg = np.append(model.step_seg, model.step_seg[-1])
        node_s = remap(model.node_s, node_seg)
        node_s[0] = 0.0
        changes.update(
            seg_length=new_len,
            seg_start=new_start,
            node_s=node_s,
            disk_s=remap(model.disk_s, model.disk_seg) if model.disk_s.size else model.disk_s,
            tendon_rest_length=new_start[model.tendon_seg] + new_len[model.tendon_seg],
            magnet_s=remap(model.magnet_s, model.magnet_seg),
        )
    return dataclasses.replace(model, **changes) if changes else model


def as_model(
    robot: RodModel | RobotSpec,
    steps: int | None = None,
    extra_nodes: tuple[float, ...] = (),
) -> RodModel:
    """The `RodModel` a solver runs on: `robot` itself when it already has the grid asked for
    (`steps`, nodes at `extra_nodes` [m]), else compiled from its spec (cached by content).

    Dicts and paths are still loaded here (`softrod.load_robot`) for untyped callers; typed
    code loads them at the top level (`softrod.*`, the CLI)."""
    if isinstance(robot, RodModel):
        missing = [s for s in extra_nodes if not np.any(np.abs(robot.node_s - s) < 1e-12)]
        if steps is None and not missing:
            return robot
        return _regrid(robot, steps, extra_nodes)
    spec = load_robot(robot)
    return _compiled(spec, steps, tuple(extra_nodes))


def _regrid(model: RodModel, steps: int | None, extra_nodes: tuple[float, ...]) -> RodModel:
    """`model` on another grid, keeping what was done to it after compiling: its base pose and
    its segment extensions (a recompile from the spec alone once silently dropped both)."""
    spec = model.spec
    spec_length = np.array([seg.length for seg in spec.segments])
    ext = model.seg_length - spec_length
    # Requested nodes are arc lengths of the extended robot: map them onto the spec's segments.
    spec_start = np.concatenate([[0.0], np.cumsum(spec_length)[:-1]])
    nodes = []
    for s in extra_nodes:
        j = int(np.clip(np.searchsorted(model.seg_start, s, side="right") - 1, 0, ext.size - 1))
        frac = (s - model.seg_start[j]) / model.seg_length[j]
        nodes.append(float(spec_start[j] + frac * spec_length[j]))
    fresh = _compiled(spec, steps, tuple(nodes))
    out = with_pose_and_lengths(
        fresh, model.base_position, model.base_rotation, ext if np.any(ext != 0.0) else None
    )
    # Moment-actuator inputs live in u_star: fold them into the regridded model too.
    out = out.with_moments(model.applied_moments if model.applied_moments.size else None)
    # Snap the requested nodes to the arc lengths asked for (the round trip leaves ~1e-17).
    if extra_nodes:
        node_s = out.node_s.copy()
        for s in extra_nodes:
            k = int(np.argmin(np.abs(node_s - s)))
            node_s[k] = s
        out = dataclasses.replace(out, node_s=node_s)
    return out


def _compiled(spec: RobotSpec, steps: int | None, extra_nodes: tuple[float, ...]) -> RodModel:
    """compile_model(spec, steps, extra_nodes), cached by content."""
    key = (spec.model_dump_json(), steps, tuple(sorted(extra_nodes)))
    hit = _MODEL_CACHE.get(key)
    if hit is not None:
        _MODEL_CACHE.move_to_end(key)
        return hit
    model = compile_model(spec, steps=steps, extra_nodes=tuple(extra_nodes))
    _MODEL_CACHE[key] = model
    if len(_MODEL_CACHE) > _MODEL_CACHE_SIZE:
        _MODEL_CACHE.popitem(last=False)
    return model
