"""Reference static solver for tendon-driven rods (the test oracle), after Rucker & Webster 2011.

D. C. Rucker and R. J. Webster III, "Statics and dynamics of continuum robots with general tendon
routing and external loading", IEEE T-RO 27(6), 2011. This is deliberately a *different*
formulation from softrod's (which integrates p, R and the total moment and solves the section
balance algebraically): here the state is the rod's own strains,

    Cosserat:  y = (p, R, v, u, l)   with  [K_se + A, G; B, K_bt + H] [v'; u'] = [d; c]
    Kirchhoff: y = (p, R, n, u, l)   with  v = e3,  (K_bt + H) u' = c,  n' = -f - R (G u' + a)

where, for tendon tension tau_i along the body-frame path r_i(s) (general routing, the
paper's eqs. for p_i^b', A_i .. b_i; straight routing has r_i' = r_i'' = 0),

    p_i^b = v + u x r_i + r_i'               (tendon tangent in the body frame, unnormalized)
    A_i = -tau_i [p_i^b]x^2 / |p_i^b|^3,   B_i = [r_i]x A_i,
    G = -sum_i A_i [r_i]x,                  H = -sum_i B_i [r_i]x
    a_i = A_i (u x p_i^b + u x r_i' + r_i''),  b_i = [r_i]x a_i
    c = -u x K_bt (u - u*) - v x n_b - R^T l - b,   d = -u x n_b - R^T f - a

with n_b = K_se (v - e3) (Cosserat) or R^T n (Kirchhoff), f the external distributed force and
l the external distributed moment (world frame, per unit reference length; l = 0 here).
The tendons' distributed loads on the rod are in A..b; their terminations are point loads.
Routing (`_Route`, read from the description's `pitch` / `holes` / `angles_deg` / `offsets`):
a helix r = d (cos(a + 2 pi s / pitch), sin(...), 0) with r', r'' by hand; per-disk holes a
path linear in s between the base hole and consecutive disks (r'' = 0, r' jumps at the disks,
which are events: the tendon's kink there is a point load, handled by the jump conditions).

Boundary and interface conditions:
* base: p(0), R(0) from the base pose; unknown rod wrench at s = 0+ (Cosserat: 6 numbers, body
  frame), or for Kirchhoff the rod moment (3 numbers) with the rod force from global force
  balance, n(0) = sum of all external forces - sum_i tau_i R t_i(0).
* every interior event (segment end, disk with weight, point load) conserves the *total*
  (rod + passing tendons) section force and moment minus the applied point load. The strains
  (u, v) jump there (tendon sets and stiffness change, tendons kink over disks), and the
  nonlinear section balance is solved for the distal strains.
* tip: rod force/moment + terminating tendons' pull = applied tip wrench (body frame).
* length control: tensions are extra unknowns with tau_i = k_i max(0, l_i - L_i).

ODEs are integrated with scipy's DOP853 (rtol = atol = 1e-12) and the shooting problem is
solved with scipy.optimize.root (hybr), falling back to least_squares (LM); optional load
continuation for large deflections.
The robot is read from a plain description dict (the DESIGN.md format) with its own section
property formulas, so nothing here shares code with softrod.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares, root
from scipy.spatial.transform import Rotation

__all__ = ["RefSolution", "solve_reference"]

E3 = np.array([0.0, 0.0, 1.0])
#: ODE tolerances (relative and absolute) of DOP853; states are O(0.01..10) in SI units.
ODE_TOL = 1e-12
#: Accepted max |scaled shooting residual|; the integration noise floor is ~1e-11.
RESIDUAL_TOL = 1e-9
#: A guess this close needs no root finding (max |scaled residual|; tip error ~ this x length).
SHOOTING_TOL = 1e-10
#: Two events closer than this arc length [m] are merged into one.
_EVENT_MERGE = 1e-12


def _hat(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


# ---------------------------------------------------------------------------------------------
# Robot description (read independently of softrod)


@dataclass(frozen=True)
class _Segment:
    s0: float  # arc length of the segment's base [m]
    length: float  # [m]
    K_bt: np.ndarray  # (3,) EI, EI, GJ [N m^2]
    K_se: np.ndarray  # (3,) GA, GA, EA [N]
    u_star: np.ndarray  # (3,) precurvature [1/m]
    rho_A: float  # [kg/m]
    disk_s: np.ndarray  # (n_disks,) absolute arc length of the disks [m]
    disk_mass: float  # [kg]


@dataclass(frozen=True)
class _Route:
    """Body-frame path of one tendon: helix (d, a0, k = 2 pi / pitch) or a polyline in s."""

    helix: tuple[float, float, float] | None = None
    knot_s: np.ndarray | None = None  # (m,) base and disk arc lengths [m]
    knot_r: np.ndarray | None = None  # (m, 3) hole positions [m]

    def at(self, s: float, piece_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(r, r', r'') at arc length s; piece_s picks the polyline's piece (s +- a little)."""
        if self.helix is not None:
            d, a0, k = self.helix
            c, sn = np.cos(a0 + k * s), np.sin(a0 + k * s)
            return (
                d * np.array([c, sn, 0.0]),
                d * k * np.array([-sn, c, 0.0]),
                -d * k * k * np.array([c, sn, 0.0]),
            )
        ks, kr = self.knot_s, self.knot_r
        assert ks is not None and kr is not None
        if piece_s >= ks[-1]:  # past the anchor (inactive): hold the last hole
            return kr[-1].copy(), np.zeros(3), np.zeros(3)
        i = int(np.clip(np.searchsorted(ks, piece_s, side="right") - 1, 0, ks.size - 2))
        slope = (kr[i + 1] - kr[i]) / (ks[i + 1] - ks[i])
        return kr[i] + slope * (s - ks[i]), slope, np.zeros(3)


@dataclass(frozen=True)
class _Rod:
    cosserat: bool
    segments: list[_Segment]
    tendon_r: np.ndarray  # (n_t, 3) body offsets [m]
    tendon_seg: np.ndarray  # (n_t,) anchoring segment
    tendon_k: np.ndarray  # (n_t,) stiffness [N/m] (nan when absent)
    p0: np.ndarray
    R0: np.ndarray
    routes: tuple[_Route | None, ...] = ()  # per tendon; None: straight

    def paths(self, s: float, piece_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(r, r', r'') (n_t, 3) of every tendon at arc length s (piece_s: see `_Route.at`)."""
        r = self.tendon_r.copy()
        r1 = np.zeros_like(r)
        r2 = np.zeros_like(r)
        for i, route in enumerate(self.routes):
            if route is not None:
                r[i], r1[i], r2[i] = route.at(s, piece_s)
        return r, r1, r2

    @property
    def length(self) -> float:
        return sum(seg.length for seg in self.segments)

    @property
    def n_t(self) -> int:
        return int(self.tendon_r.shape[0])

    def seg_at(self, s: float) -> int:
        for j, seg in enumerate(self.segments):
            if s < seg.s0 + seg.length:
                return j
        return len(self.segments) - 1


def _section(bb: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, float]:
    """Stiffness diagonals K_bt, K_se and mass per length from a backbone dict."""
    E = float(bb["youngs_modulus"])
    if bb.get("shear_modulus") is not None:
        G = float(bb["shear_modulus"])
    else:
        G = E / (2.0 * (1.0 + float(bb["poisson_ratio"])))
    if bb.get("radius") is not None:
        rad = float(bb["radius"])
        A, I, J = np.pi * rad**2, np.pi * rad**4 / 4.0, np.pi * rad**4 / 2.0
    else:
        A, I, J = float(bb["area"]), float(bb["second_moment"]), float(bb["polar_moment"])
    K_bt = np.array([E * I, E * I, G * J])
    K_se = np.array([G * A, G * A, E * A])
    return K_bt, K_se, float(bb.get("density", 0.0)) * A


def _segment_backbone(bb: dict[str, Any], override: dict[str, Any] | None) -> dict[str, Any]:
    """The robot's backbone with a segment's override applied: a given field replaces the
    robot's; a new section (radius vs I/J/A) or shear law (G vs nu) replaces the old one."""
    out = dict(bb)
    for key, value in (override or {}).items():
        if value is None:
            continue
        if key == "radius":
            for k in ("second_moment", "polar_moment", "area"):
                out.pop(k, None)
        if key in ("second_moment", "polar_moment", "area"):
            out.pop("radius", None)
        if key == "shear_modulus":
            out.pop("poisson_ratio", None)
        if key == "poisson_ratio":
            out.pop("shear_modulus", None)
        out[key] = value
    return out


def _parse(robot: dict[str, Any]) -> _Rod:
    segments = []
    s0 = 0.0
    r_list, seg_list, k_list, route_list = [], [], [], []
    disk_list: list[np.ndarray] = []
    for j, seg in enumerate(robot["segments"]):
        bb = _segment_backbone(robot["backbone"], seg.get("backbone"))
        K_bt, K_se, rho_A = _section(bb)
        u_star = np.array(bb.get("precurvature", (0.0, 0.0, 0.0)), dtype=float)
        length = float(seg["length"])
        n_d = int(seg.get("disks", 0))
        disk_s = s0 + length * np.arange(1, n_d + 1) / max(n_d, 1)
        segments.append(
            _Segment(s0, length, K_bt, K_se, u_star, rho_A, disk_s, float(seg.get("disk_mass", 0)))
        )
        disk_list.append(disk_s)
        for t in seg.get("tendons", []):
            a = np.deg2rad(float(t["angle_deg"]))
            d = float(t["offset"])
            r_list.append(d * np.array([np.cos(a), np.sin(a), 0.0]))
            route_list.append(_parse_route(t, d, a, np.concatenate(disk_list)))
            seg_list.append(j)
            k_list.append(np.nan if t.get("stiffness") is None else float(t["stiffness"]))
        s0 += length
    base = robot.get("base", {})
    quat = np.array(base.get("quaternion", (1.0, 0.0, 0.0, 0.0)), dtype=float)
    return _Rod(
        cosserat=robot.get("model", "kirchhoff") == "cosserat",
        segments=segments,
        tendon_r=np.array(r_list, dtype=float).reshape(-1, 3),
        tendon_seg=np.array(seg_list, dtype=int),
        tendon_k=np.array(k_list, dtype=float),
        p0=np.array(base.get("position", (0.0, 0.0, 0.0)), dtype=float),
        R0=Rotation.from_quat(quat / np.linalg.norm(quat), scalar_first=True).as_matrix(),
        routes=tuple(route_list),
    )


def _parse_route(t: dict[str, Any], d: float, a: float, disk_s: np.ndarray) -> _Route | None:
    """A tendon's routing from its description (None: straight). The path starts at the base
    hole (offset, angle_deg); per-disk forms list one hole per disk passed."""
    if t.get("pitch") is not None:
        return _Route(helix=(d, a, 2.0 * np.pi / float(t["pitch"])))
    if t.get("holes") is not None:
        xy = np.array(t["holes"], dtype=float).reshape(-1, 2)
    elif t.get("angles_deg") is not None:
        b = np.deg2rad(np.array(t["angles_deg"], dtype=float))
        xy = d * np.c_[np.cos(b), np.sin(b)]
    elif t.get("offsets") is not None:
        xy = np.array(t["offsets"], dtype=float)[:, None] * np.array([[np.cos(a), np.sin(a)]])
    else:
        return None
    knot_r = np.vstack([[d * np.cos(a), d * np.sin(a), 0.0], np.c_[xy, np.zeros(len(xy))]])
    return _Route(knot_s=np.concatenate([[0.0], disk_s]), knot_r=knot_r)


# ---------------------------------------------------------------------------------------------
# Loads and events


@dataclass
class _Event:
    s: float
    force: np.ndarray = field(default_factory=lambda: np.zeros(3))  # world [N]
    moment: np.ndarray = field(default_factory=lambda: np.zeros(3))  # world [N m]


@dataclass
class _Loads:
    f_dist: np.ndarray  # (3,) world per unit reference length [N/m]
    gravity: np.ndarray  # (3,) [m/s^2]
    tip_force: np.ndarray  # (3,) incl. point loads and disk weight at s = L
    tip_moment: np.ndarray
    events: list[_Event]  # interior events (0 < s < L), sorted
    total_force: np.ndarray  # sum of all external forces [N]


def _loads(rod: _Rod, tip_force, tip_moment, f_dist, gravity, point_loads) -> _Loads:
    L = rod.length
    g = np.zeros(3) if gravity is None else np.asarray(gravity, dtype=float)
    fd = np.zeros(3) if f_dist is None else np.asarray(f_dist, dtype=float)
    F_tip = np.zeros(3) if tip_force is None else np.asarray(tip_force, dtype=float).copy()
    M_tip = np.zeros(3) if tip_moment is None else np.asarray(tip_moment, dtype=float).copy()
    raw: list[tuple[float, np.ndarray, np.ndarray]] = []
    for seg in rod.segments:
        raw.append((seg.s0 + seg.length, np.zeros(3), np.zeros(3)))  # tendon sets change
        for s in seg.disk_s:
            raw.append((float(s), seg.disk_mass * g, np.zeros(3)))
    for item in point_loads or ():
        s, F = float(item[0]), np.asarray(item[1], dtype=float)
        M = np.asarray(item[2], dtype=float) if len(item) > 2 else np.zeros(3)
        raw.append((s, F, M))
    total = F_tip + fd * L + g * sum(seg.rho_A * seg.length for seg in rod.segments)
    events: list[_Event] = []
    for s, F, M in sorted(raw, key=lambda e: e[0]):
        total = total + F
        if s >= L - _EVENT_MERGE:
            F_tip += F
            M_tip += M
        elif events and abs(events[-1].s - s) < _EVENT_MERGE:
            events[-1].force += F
            events[-1].moment += M
        else:
            events.append(_Event(s, F.copy(), M.copy()))
    return _Loads(fd, g, F_tip, M_tip, events, total)


# ---------------------------------------------------------------------------------------------
# Section quantities


def _tangents(rod: _Rod, active: np.ndarray, v: np.ndarray, u: np.ndarray, s, piece_s):
    """Unit body-frame tangents (n_active, 3) of the given tendons at arc length s."""
    r, r1, _ = rod.paths(s, piece_s)
    pb = v[None, :] + np.cross(u[None, :], r[active]) + r1[active]
    return pb / np.linalg.norm(pb, axis=1)[:, None]


def _section_wrench(rod: _Rod, j: int, active, tau, v, u, s, piece_s):
    """Total body-frame force and moment of rod + tendons `active` at a section (arc length s,
    piece_s picking the routing piece) of segment j."""
    seg = rod.segments[j]
    t = _tangents(rod, active, v, u, s, piece_s)
    r = rod.paths(s, piece_s)[0][active]
    ta = tau[active][:, None]
    n_b = seg.K_se * (v - E3) + (ta * t).sum(axis=0)
    m_b = seg.K_bt * (u - seg.u_star) + (ta * np.cross(r, t)).sum(axis=0)
    return n_b, m_b


# ---------------------------------------------------------------------------------------------
# Rucker-Webster right-hand side


@dataclass(frozen=True)
class _PieceData:
    """Constant data of one integration piece (a stretch of one segment between events)."""

    cosserat: bool
    K_bt: np.ndarray
    K_se: np.ndarray
    u_star: np.ndarray
    f_ext: np.ndarray  # (3,) world distributed force incl. weight [N/m]
    rod: _Rod
    pulling: np.ndarray  # (n_t,) True for the tendons pulling here (tau != 0)
    piece_s: float  # an arc length inside the piece (picks the routing piece)
    tau: np.ndarray  # (m,)
    routed: np.ndarray  # (n_t,) True where the tendon passes this piece


def _piece_data(rod: _Rod, j: int, tau: np.ndarray, f_ext: np.ndarray, piece_s) -> _PieceData:
    seg = rod.segments[j]
    routed = rod.tendon_seg >= j
    pulling = routed & (tau != 0.0)
    return _PieceData(
        cosserat=rod.cosserat,
        K_bt=seg.K_bt,
        K_se=seg.K_se,
        u_star=seg.u_star,
        f_ext=f_ext,
        rod=rod,
        pulling=pulling,
        piece_s=piece_s,
        tau=tau[pulling],
        routed=routed,
    )


def _rhs(s: float, y: np.ndarray, pd: _PieceData) -> np.ndarray:
    """Rucker-Webster ODEs; y = (p, R row-major, v (Cosserat) or n (Kirchhoff), u, l)."""
    R = y[3:12].reshape(3, 3)
    u = y[15:18]
    if pd.cosserat:
        v = y[12:15]
        n_b = pd.K_se * (v - E3)
    else:
        v = E3
        n_b = R.T @ y[12:15]
    m_b = pd.K_bt * (u - pd.u_star)
    f_b = R.T @ pd.f_ext
    u_hat = _hat(u)

    # Tendon coupling matrices along the routed paths r(s), all tendons at once.
    r_all, r1_all, r2_all = pd.rod.paths(s, pd.piece_s)
    r, r1, r2 = r_all[pd.pulling], r1_all[pd.pulling], r2_all[pd.pulling]
    r_hat = np.array([_hat(ri) for ri in r]).reshape(-1, 3, 3)
    pb = v - r_hat @ u + r1  # v + u x r + r'
    npb = np.sqrt(np.einsum("ni,ni->n", pb, pb))
    outer = pb[:, :, None] * pb[:, None, :]
    # A_i = -tau [pb]x^2 / |pb|^3 with [pb]x^2 = pb pb^T - |pb|^2 I
    A_i = (pd.tau / npb**3)[:, None, None] * ((npb**2)[:, None, None] * np.eye(3) - outer)
    B_i = r_hat @ A_i
    A = A_i.sum(axis=0)
    B = B_i.sum(axis=0)
    G = -(A_i @ r_hat).sum(axis=0)
    H = -(B_i @ r_hat).sum(axis=0)
    a_i = np.einsum("nij,nj->ni", A_i, (pb + r1) @ u_hat.T + r2)  # A_i (u x pb + u x r' + r'')
    a = a_i.sum(axis=0)
    b = np.einsum("nij,nj->i", r_hat, a_i)

    c = -u_hat @ m_b - _cross(v, n_b) - b
    dy = np.empty_like(y)
    if pd.cosserat:
        d = -u_hat @ n_b - f_b - a
        lhs = np.empty((6, 6))
        lhs[:3, :3] = A
        lhs[:3, 3:] = G
        lhs[3:, :3] = B
        lhs[3:, 3:] = H
        lhs[range(3), range(3)] += pd.K_se
        lhs[range(3, 6), range(3, 6)] += pd.K_bt
        sol = np.linalg.solve(lhs, np.concatenate([d, c]))
        us = sol[3:]
        dy[12:15] = sol[:3]
    else:
        us = np.linalg.solve(np.diag(pd.K_bt) + H, c)
        dy[12:15] = -pd.f_ext - R @ (G @ us + a)
    dy[0:3] = R @ v
    dy[3:12] = (R @ u_hat).reshape(-1)
    dy[15:18] = us
    w = v + r_all @ u_hat.T + r1_all  # v + u x r + r' for every tendon
    dy[18:] = np.where(pd.routed, np.sqrt(np.einsum("ni,ni->n", w, w)), 0.0)
    return dy


# ---------------------------------------------------------------------------------------------
# Shooting


@dataclass(frozen=True)
class RefSolution:
    """Reference equilibrium. positions_at(s) samples the backbone (dense DOP853 output).

    tip_position (3,) [m]; tip_rotation (3, 3); tendon_tension, tendon_length (n_t,);
    base_force, base_moment (3,) world-frame rod force/moment at s = 0+ (without tendons);
    tip_strain, tip_curvature (3,) body v and u at s = L-; residual: max |scaled residual|;
    force_check: Kirchhoff only, |tip force balance| [N] (satisfied by construction, so it
    measures the integration error).
    """

    tip_position: np.ndarray
    tip_rotation: np.ndarray
    tendon_tension: np.ndarray
    tendon_length: np.ndarray
    base_force: np.ndarray
    base_moment: np.ndarray
    tip_strain: np.ndarray
    tip_curvature: np.ndarray
    residual: float
    force_check: float
    _pieces: list = field(repr=False, default_factory=list)

    def positions_at(self, s: np.ndarray) -> np.ndarray:
        """Backbone positions (n, 3) [m] at arc lengths s (n,)."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        out = np.empty((s.shape[0], 3))
        for k, sk in enumerate(s):
            for sa, sb, dense in self._pieces:
                if sa - 1e-12 <= sk <= sb + 1e-12:
                    out[k] = dense(min(max(sk, sa), sb))[0:3]
                    break
            else:
                raise ValueError(f"s = {sk} is outside the rod")
        return out


class _Problem:
    def __init__(self, rod: _Rod, loads: _Loads, tau: np.ndarray | None, lengths):
        self.rod = rod
        self.loads = loads
        self.tau_fixed = tau
        self.lengths = None if lengths is None else np.asarray(lengths, dtype=float)
        seg0 = rod.segments[0]
        L = rod.length
        EI = min(seg.K_bt[0] for seg in rod.segments)
        self.m_scale = EI / L  # [N m]
        self.f_scale = EI / L**2  # [N]
        r_max = np.max(np.abs(rod.tendon_r)) if rod.n_t else 1.0
        self.t_scale = self.m_scale / r_max  # [N]
        self.n_w = 6 if rod.cosserat else 3
        self.seg0 = seg0
        # Integration pieces between events.
        cuts = [0.0] + [e.s for e in loads.events] + [L]
        self.pieces = [(cuts[k], cuts[k + 1]) for k in range(len(cuts) - 1)]

    # Unknowns: scaled rod wrench at 0+ (body), then scaled tensions under length control.
    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.lengths is None:
            return x, self.tau_fixed
        return x[: self.n_w], x[self.n_w :] * self.t_scale

    def initial_state(self, w: np.ndarray, tau: np.ndarray, lam: float) -> np.ndarray:
        rod, seg = self.rod, self.seg0
        n_t = rod.n_t
        y = np.zeros(18 + n_t)
        y[0:3] = rod.p0
        y[3:12] = rod.R0.reshape(-1)
        if rod.cosserat:
            y[12:15] = E3 + w[:3] * self.f_scale / seg.K_se
            y[15:18] = seg.u_star + w[3:] * self.m_scale / seg.K_bt
        else:
            u0 = seg.u_star + w * self.m_scale / seg.K_bt
            all_t = np.ones(n_t, dtype=bool)
            t = _tangents(rod, all_t, E3, u0, 0.0, 0.0)
            tendon_pull = rod.R0 @ (tau[:, None] * t).sum(axis=0) if n_t else np.zeros(3)
            y[12:15] = lam * self.loads.total_force - tendon_pull
            y[15:18] = u0
        return y

    def jump(self, y: np.ndarray, ev: _Event, j_before: int, j_after: int, tau, lam) -> np.ndarray:
        """Strains distal of an interior event from conservation of the total section wrench."""
        rod = self.rod
        R = y[3:12].reshape(3, 3)
        u_m = y[15:18]
        v_m = y[12:15] if rod.cosserat else E3
        act_m = rod.tendon_seg >= j_before
        act_p = rod.tendon_seg >= j_after
        s, before, after = ev.s, ev.s - 1e-9, ev.s + 1e-9  # routing pieces either side
        if rod.cosserat:
            n_m, m_m = _section_wrench(rod, j_before, act_m, tau, v_m, u_m, s, before)
        else:
            _, m_m = _section_wrench(rod, j_before, act_m, tau, v_m, u_m, s, before)
        m_target = m_m - R.T @ (lam * ev.moment)
        y = y.copy()
        if rod.cosserat:
            n_target = n_m - R.T @ (lam * ev.force)

            def bal(x):
                n_p, m_p = _section_wrench(rod, j_after, act_p, tau, x[:3], x[3:], s, after)
                return np.concatenate(
                    [(n_p - n_target) / self.f_scale, (m_p - m_target) / self.m_scale]
                )

            x0 = np.concatenate([v_m, u_m])
            sol = root(bal, x0, method="hybr", options={"xtol": 1e-15})
            y[12:15], y[15:18] = sol.x[:3], sol.x[3:]
        else:

            def bal(u):
                m_p = _section_wrench(rod, j_after, act_p, tau, E3, u, s, after)[1]
                return (m_p - m_target) / self.m_scale

            u_p = root(bal, u_m, method="hybr", options={"xtol": 1e-15}).x
            # Rod force: total force (rod + tendons) minus the point force is conserved.
            t_m = _tangents(rod, act_m, E3, u_m, s, before)
            t_p = _tangents(rod, act_p, E3, u_p, s, after)
            pull_m = R @ (tau[act_m][:, None] * t_m).sum(axis=0)
            pull_p = R @ (tau[act_p][:, None] * t_p).sum(axis=0)
            y[12:15] = y[12:15] + pull_m - lam * ev.force - pull_p
            y[15:18] = u_p
        return y

    def integrate(self, x: np.ndarray, lam: float, dense: bool = False, load: float | None = None):
        """Integrate base to tip with tensions (or fixed tensions x lam) and external loads x
        `load` (default lam). Returns (tip state or None on failure, tensions, dense pieces)."""
        rod, loads = self.rod, self.loads
        load = lam if load is None else load
        w, tau = self.split(x)
        tau = np.asarray(tau, dtype=float) * (lam if self.lengths is None else 1.0)
        y = self.initial_state(w, tau, load)
        pieces = []
        for k, (sa, sb) in enumerate(self.pieces):
            j = rod.seg_at(0.5 * (sa + sb))
            f_ext = load * (loads.f_dist + rod.segments[j].rho_A * loads.gravity)
            sol = solve_ivp(
                _rhs,
                (sa, sb),
                y,
                method="DOP853",
                rtol=ODE_TOL,
                atol=ODE_TOL,
                args=(_piece_data(rod, j, tau, f_ext, 0.5 * (sa + sb)),),
                dense_output=dense,
            )
            if not sol.success or not np.all(np.isfinite(sol.y[:, -1])):
                return None, tau, pieces
            y = sol.y[:, -1]
            if dense:
                pieces.append((sa, sb, sol.sol))
            if k < len(self.pieces) - 1:
                ev = loads.events[k]
                y = self.jump(y, ev, j, rod.seg_at(sb + 1e-9), tau, load)
        return y, tau, pieces

    def residual(self, x: np.ndarray, lam: float = 1.0) -> np.ndarray:
        y, tau, _ = self.integrate(x, lam)
        if y is None:
            return np.full(x.shape, 1e6)
        return self.tip_residual(y, tau, lam)[0]

    def tip_residual(self, y, tau, lam) -> tuple[np.ndarray, float]:
        rod, loads = self.rod, self.loads
        j = len(rod.segments) - 1
        R = y[3:12].reshape(3, 3)
        u = y[15:18]
        v = y[12:15] if rod.cosserat else E3
        ending = rod.tendon_seg == j
        L = rod.length
        n_b, m_b = _section_wrench(rod, j, ending, tau, v, u, L, L - 1e-9)
        res_m = (m_b - R.T @ (lam * loads.tip_moment)) / self.m_scale
        force_check = 0.0
        if rod.cosserat:
            res_f = (n_b - R.T @ (lam * loads.tip_force)) / self.f_scale
            out = [res_f, res_m]
        else:
            t = _tangents(rod, ending, E3, u, L, L - 1e-9)
            pull = R @ (tau[ending][:, None] * t).sum(axis=0)
            force_check = float(np.linalg.norm(y[12:15] + pull - lam * loads.tip_force))
            out = [res_m]
        if self.lengths is not None:
            lengths = y[18:]
            stretch = np.maximum(0.0, lengths - self.lengths)
            out.append((tau - rod.tendon_k * stretch) / self.t_scale)
        return np.concatenate(out), force_check

    def guess(self, lam: float) -> np.ndarray:
        """Base rod wrench balancing the loads on the tendon-only shape (exact without loads).

        The tendon-only equilibrium is known in closed form at the base (straight tendons,
        t = e3); its shape is integrated once and the external loads' moment about the base
        is taken along it (and straight-path tensions under length control)."""
        rod, loads = self.rod, self.loads
        if self.lengths is None:
            tau = lam * self.tau_fixed
        else:
            anchor = np.array([rod.segments[j].s0 + rod.segments[j].length for j in rod.tendon_seg])
            tau = rod.tendon_k * np.maximum(0.0, anchor - self.lengths)
        m_t = -(tau[:, None] * np.cross(rod.tendon_r, E3)).sum(axis=0)
        w = m_t / self.m_scale
        if rod.cosserat:
            w = np.concatenate([-tau.sum() * E3 / self.f_scale, w])
        x = w if self.lengths is None else np.concatenate([w, tau / self.t_scale])
        y, _, pieces = self.integrate(x, lam, dense=True, load=0.0)
        if y is None:
            return x

        def pos(s):
            for sa, sb, dense in pieces:
                if sa - 1e-12 <= s <= sb + 1e-12:
                    return dense(min(max(s, sa), sb))[0:3] - rod.p0
            return pieces[-1][2](pieces[-1][1])[0:3] - rod.p0

        # Moment of the external loads about the base along that shape.
        M = lam * loads.tip_moment + np.cross(y[0:3] - rod.p0, lam * loads.tip_force)
        for ev in loads.events:
            M = M + lam * (ev.moment + np.cross(pos(ev.s), ev.force))
        gl_x, gl_w = np.polynomial.legendre.leggauss(8)
        for sa, sb, dense in pieces:
            q = lam * (
                loads.f_dist + rod.segments[rod.seg_at(0.5 * (sa + sb))].rho_A * loads.gravity
            )
            for xi, wi in zip(gl_x, gl_w, strict=True):
                s = 0.5 * (sa + sb) + 0.5 * (sb - sa) * xi
                M = M + 0.5 * (sb - sa) * wi * np.cross(dense(s)[0:3] - rod.p0, q)
        w_m = (rod.R0.T @ M + m_t) / self.m_scale
        if rod.cosserat:
            n_b = rod.R0.T @ (lam * loads.total_force) - tau.sum() * E3
            w = np.concatenate([n_b / self.f_scale, w_m])
        else:
            w = w_m
        return w if self.lengths is None else np.concatenate([w, tau / self.t_scale])


def _solve_level(prob: _Problem, x0: np.ndarray, lam: float) -> tuple[np.ndarray, float]:
    """scipy's hybrid Powell method (MINPACK hybrd), then Levenberg-Marquardt if needed.

    hybrd stops on the relative step (xtol); 1e-10 sits just above the integration noise,
    which would otherwise make it spin on finite-difference Jacobians near the root. The
    residual itself is what decides acceptance."""

    def fun(x):
        return prob.residual(x, lam)

    x = x0
    res = np.max(np.abs(fun(x)))
    if res > SHOOTING_TOL:  # the guess is exact without external loads
        x = root(fun, x, method="hybr", options={"xtol": 1e-10}).x
        res = np.max(np.abs(fun(x)))
    if res > RESIDUAL_TOL:
        x = least_squares(fun, x, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15).x
        res = np.max(np.abs(fun(x)))
    return x, res


def solve_reference(
    robot: dict[str, Any],
    tensions: Sequence[float] | None = None,
    *,
    lengths: Sequence[float] | None = None,
    tip_force: Sequence[float] | None = None,
    tip_moment: Sequence[float] | None = None,
    distributed_force: Sequence[float] | None = None,
    gravity: Sequence[float] | None = None,
    point_loads: Sequence[Any] = (),
    continuation: int = 1,
) -> RefSolution:
    """Solve the static equilibrium of `robot` (a description dict) to ~1e-12.

    Same inputs and conventions as `softrod.solve_static` (SI, world frame, tensions or
    commanded lengths ordered segment by segment). `continuation` > 1 ramps the loads in that
    many equal steps (for large deflections). Raises RuntimeError if the shooting fails.
    """
    rod = _parse(robot)
    loads = _loads(rod, tip_force, tip_moment, distributed_force, gravity, point_loads)
    tau = None
    if lengths is None:
        tau = np.zeros(rod.n_t) if tensions is None else np.asarray(tensions, dtype=float)
    prob = _Problem(rod, loads, tau, lengths)

    x = prob.guess(1.0 / continuation)
    res = np.inf
    for k in range(1, continuation + 1):
        lam = k / continuation
        x, res = _solve_level(prob, x, lam)  # each level starts from the previous solution
    if res > RESIDUAL_TOL:
        raise RuntimeError(f"reference shooting did not converge: residual {res:.3e}")

    y, tau_final, pieces = prob.integrate(x, 1.0, dense=True)
    residual, force_check = prob.tip_residual(y, tau_final, 1.0)
    w, _ = prob.split(x)
    seg0 = rod.segments[0]
    y0 = prob.initial_state(w, tau_final, 1.0)
    u0 = y0[15:18]
    base_moment = rod.R0 @ (seg0.K_bt * (u0 - seg0.u_star))
    if rod.cosserat:
        base_force = rod.R0 @ (seg0.K_se * (y0[12:15] - E3))
    else:
        base_force = y0[12:15]
    return RefSolution(
        tip_position=y[0:3].copy(),
        tip_rotation=y[3:12].reshape(3, 3).copy(),
        tendon_tension=np.asarray(tau_final, dtype=float).copy(),
        tendon_length=y[18:].copy(),
        base_force=base_force,
        base_moment=base_moment,
        tip_strain=(y[12:15] if rod.cosserat else E3).copy(),
        tip_curvature=y[15:18].copy(),
        residual=float(np.max(np.abs(residual))),
        force_check=force_check,
        _pieces=pieces,
    )
