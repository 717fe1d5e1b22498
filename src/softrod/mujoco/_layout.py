"""Rigid-link discretization of a described robot (numbers only; no MuJoCo import).

ALGORITHMS.md §C.2: the backbone of length L is cut into N elements (each segment gets a whole
number of them, so segment ends are element boundaries). A 3-DOF elastic joint sits at the middle
of every element; rigid links join neighbouring joints, with half links from the base to the first
joint (fixed to the base) and from the last joint to the tip. Link k (k = 0..N-1) is the rigid body
that starts at joint k, passes through element boundary k+1 (where it is tangent to the rod), and
ends at joint k+1 (or at the tip for the last link).

Joint stiffness is EI/h, EI/h, GJ/h for an element of length h (torque = k theta, theta = h u).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from softrod.description import RobotSpec

__all__ = ["ChainLayout", "chain_layout", "split_links", "first_mode_frequency"]

#: Euler-Bernoulli cantilever first-mode eigenvalue (beta_1 L), squared in the frequency formula.
EB_BETA1_L = 1.8751040687119611


def split_links(robot: RobotSpec, links: int) -> list[int]:
    """Number of elements per segment, proportional to segment length, at least one each.

    Largest-remainder rounding so that the counts add up to `links`.
    """
    n_seg = robot.n_segments
    if not isinstance(links, int | np.integer) or isinstance(links, bool):
        raise ValueError(f"links must be an integer, got {links!r}")
    if links < n_seg:
        raise ValueError(
            f"links must be >= the number of segments ({n_seg}) so that every segment gets a "
            f"link, got {links}"
        )
    lengths = np.array([s.length for s in robot.segments])
    extra = links - n_seg
    share = extra * lengths / lengths.sum()
    counts = np.floor(share).astype(int)
    # Hand out the remaining links to the largest remainders (ties: earlier segment first).
    order = np.argsort(-(share - counts), kind="stable")
    for i in order[: extra - int(counts.sum())]:
        counts[i] += 1
    return [int(c) + 1 for c in counts]


@dataclass(frozen=True, eq=False)
class ChainLayout:
    """Geometry, inertia and stiffness of the rigid-link chain (SI units).

    n_links : N, number of elements = moving links = 3-DOF joints.
    node_s : (N + 1,) element boundaries [m] (0 and L included).
    elem_seg : (N,) segment index of each element; elem_length : (N,) h [m].
    joint_s : (N,) arc length of each joint (element middle) [m].
    link_length : (N,) length of link k, from joint k to joint k+1 (or the tip) [m].
    link_mass : (N,) [kg]; link_com : (N,) COM along the link's local z from joint k [m].
    link_inertia : (N, 3) principal inertia about the COM (Ixx, Iyy, Izz) [kg m^2].
    joint_stiffness : (N, 3) (EI/h, EI/h, GJ/h) [N m/rad]; joint_axial : (N,) EA/h [N/m];
    joint_shear : (N,) GA/h [N/m].
    joint_springref : (N, 3) rest angles h u* [rad].
    base_mass : mass of the half link (and disks) fixed to the base [kg].
    disk_s : (n_disks,) disk arc lengths [m]; disk_seg : (n_disks,) segment index;
    disk_link : (n_disks,) link holding each disk (-1: the base); disk_z : (n_disks,) local z of
    each disk on that link [m] (for the base, arc length from the base).
    """

    n_links: int
    node_s: np.ndarray
    elem_seg: np.ndarray
    elem_length: np.ndarray
    joint_s: np.ndarray
    link_length: np.ndarray
    link_mass: np.ndarray
    link_com: np.ndarray
    link_inertia: np.ndarray
    joint_stiffness: np.ndarray
    joint_axial: np.ndarray
    joint_shear: np.ndarray
    joint_springref: np.ndarray
    base_mass: float
    disk_s: np.ndarray
    disk_seg: np.ndarray
    disk_link: np.ndarray
    disk_z: np.ndarray

    @property
    def total_length(self) -> float:
        return float(self.node_s[-1])

    @property
    def total_mass(self) -> float:
        """Moving plus base mass [kg]."""
        return float(self.link_mass.sum() + self.base_mass)

    def locate(self, s: float) -> tuple[int, float]:
        """(link index, local z [m]) of the backbone point at arc length s; link -1 is the base.

        Points on element boundaries lie exactly on the chain; elsewhere they are mapped onto the
        straight link at the same arc-length offset (an O(h^2 kappa) approximation).
        """
        L = self.total_length
        if not 0.0 <= s <= L + 1e-12:
            raise ValueError(f"arc length must be in [0, {L:.6g}] m, got {s!r}")
        if s < self.joint_s[0]:
            return -1, float(s)
        k = int(np.searchsorted(self.joint_s, s, side="right") - 1)
        return k, float(s - self.joint_s[k])


def _rod_piece(rho_A: float, rho_I: float, rho_J: float, z0: float, z1: float):
    """Mass, COM z and inertia about the COM (3,) of a straight rod piece on the z axis."""
    d = z1 - z0
    m = rho_A * d
    bend = rho_I * d + m * d * d / 12.0
    return m, 0.5 * (z0 + z1), np.array([bend, bend, rho_J * d])


def _combine(parts: list[tuple[float, float, np.ndarray]]) -> tuple[float, float, np.ndarray]:
    """Total mass, COM z and inertia about the COM of pieces centred on the z axis."""
    mass = sum(p[0] for p in parts)
    if mass <= 0.0:
        return 0.0, 0.0, np.zeros(3)
    com = sum(p[0] * p[1] for p in parts) / mass
    inertia = np.zeros(3)
    for m, z, i in parts:
        inertia += i + m * (z - com) ** 2 * np.array([1.0, 1.0, 0.0])
    return mass, com, inertia


def chain_layout(robot: RobotSpec, links: int) -> ChainLayout:
    """Discretize `robot` into `links` rigid links (see the module docstring)."""
    counts = split_links(robot, links)
    n = int(sum(counts))
    node_s = [0.0]
    elem_seg: list[int] = []
    start = 0.0
    for j, (seg, c) in enumerate(zip(robot.segments, counts, strict=True)):
        for i in range(1, c + 1):
            node_s.append(start + seg.length * i / c)
            elem_seg.append(j)
        start += seg.length
    nodes = np.array(node_s)
    seg_idx = np.array(elem_seg, dtype=np.int64)
    h = np.diff(nodes)
    joint_s = 0.5 * (nodes[:-1] + nodes[1:])
    ends = np.append(joint_s[1:], nodes[-1])
    link_len = ends - joint_s

    # Section properties per segment.
    bbs = [robot.segment_backbone(j) for j in range(robot.n_segments)]
    rho_A = np.array([b.density * b.A for b in bbs])
    rho_I = np.array([b.density * b.I for b in bbs])
    rho_J = np.array([b.density * b.J for b in bbs])
    EI = np.array([b.youngs_modulus * b.I for b in bbs])
    GJ = np.array([b.G * b.J for b in bbs])
    EA = np.array([b.youngs_modulus * b.A for b in bbs])
    GA = np.array([b.G * b.A for b in bbs])
    u_star = np.array([b.precurvature for b in bbs], dtype=float)

    stiff = np.stack([EI[seg_idx] / h, EI[seg_idx] / h, GJ[seg_idx] / h], axis=1)
    axial = EA[seg_idx] / h
    shear = GA[seg_idx] / h
    springref = u_star[seg_idx] * h[:, None]

    # Disks: evenly spaced per segment, the last at the segment's end.
    disk_s: list[float] = []
    disk_seg: list[int] = []
    start = 0.0
    for j, seg in enumerate(robot.segments):
        for i in range(1, seg.disks + 1):
            disk_s.append(start + seg.length * i / seg.disks)
            disk_seg.append(j)
        start += seg.length
    d_s = np.array(disk_s)
    d_seg = np.array(disk_seg, dtype=np.int64)
    d_link = np.searchsorted(joint_s, d_s, side="right") - 1
    d_z = np.where(d_link >= 0, d_s - joint_s[np.maximum(d_link, 0)], d_s)

    # Link inertia: the two half elements it spans plus its disks (thin solid disks).
    masses = np.zeros(n)
    coms = np.zeros(n)
    inertias = np.zeros((n, 3))
    for k in range(n):
        e0 = seg_idx[k]
        parts = [_rod_piece(rho_A[e0], rho_I[e0], rho_J[e0], 0.0, h[k] / 2)]
        if k + 1 < n:
            e1 = seg_idx[k + 1]
            parts.append(
                _rod_piece(rho_A[e1], rho_I[e1], rho_J[e1], h[k] / 2, h[k] / 2 + h[k + 1] / 2)
            )
        for di in np.flatnonzero(d_link == k):
            seg = robot.segments[int(d_seg[di])]
            r = seg.disk_radius or 0.0
            m = seg.disk_mass
            parts.append(
                (m, float(d_z[di]), np.array([m * r * r / 4, m * r * r / 4, m * r * r / 2]))
            )
        masses[k], coms[k], inertias[k] = _combine(parts)
    base_mass = rho_A[seg_idx[0]] * h[0] / 2 + sum(
        robot.segments[d_seg[i]].disk_mass for i in np.flatnonzero(d_link < 0)
    )
    return ChainLayout(
        n_links=n,
        node_s=nodes,
        elem_seg=seg_idx,
        elem_length=h,
        joint_s=joint_s,
        link_length=link_len,
        link_mass=masses,
        link_com=coms,
        link_inertia=inertias,
        joint_stiffness=stiff,
        joint_axial=axial,
        joint_shear=shear,
        joint_springref=springref,
        base_mass=float(base_mass),
        disk_s=d_s,
        disk_seg=d_seg,
        disk_link=d_link.astype(np.int64),
        disk_z=d_z,
    )


def first_mode_frequency(robot: RobotSpec) -> float:
    """Euler-Bernoulli first cantilever bending frequency omega_1 [rad/s] of the robot.

    Exact for a uniform backbone without disks; for varying segments it uses the softest bending
    stiffness and the mean mass per length (backbone plus disks), a damping-scale estimate only.
    """
    bbs = [robot.segment_backbone(j) for j in range(robot.n_segments)]
    L = robot.total_length
    EI = min(b.youngs_modulus * b.I for b in bbs)
    mass = sum(
        b.density * b.A * s.length + s.disks * s.disk_mass
        for b, s in zip(bbs, robot.segments, strict=True)
    )
    if mass <= 0.0:
        return math.inf
    return EB_BETA1_L**2 * math.sqrt(EI / (mass / L * L**4))
