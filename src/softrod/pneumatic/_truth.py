"""Ground-truth simulator of the planar pneumatic arm: what the no-load model leaves out.

It stands in for the hardware of ALGORITHMS.md D (motion capture at 20 Hz): the same arm, as a
discrete Kirchhoff rod lying on a table, advanced frame by frame with

* **actuation**: each segment's stress-free (rest) curvature and length are the no-load values
  of D.1 at the segment's *actual* pressure, so with every load switched off the rod settles
  exactly onto the no-load PCC backbone (tested);
* **loads of distal segments on proximal ones**: the table is tilted by `table_tilt_deg`, so
  the weight of the arm (backbone and plates) has an in-plane component that every segment
  carries for all segments beyond it, bending it by EI-limited amounts the PCC model ignores;
* **dry friction against the table** (Coulomb, coefficient `friction_coefficient`, normal
  force from the out-of-plane weight component), which makes the shape depend on how a
  configuration was reached (hysteresis: the arm does not return to straight after a cycle);
* **rate effects**: the chamber pressure lags its set-point (first order, time constant
  `pressure_time_constant`, the pumps and PD controller) and the elastomer is viscoelastic
  (Kelvin-Voigt bending, relaxation time `bending_relaxation_time`).

Formulation. The backbone is split into `links_per_plate` straight chords per plate interval.
Unknowns are the chord angles phi (K,). Each sub-step minimises the incremental potential

    Pi(phi) = sum_k S_k/2 (psi_k - psi*_k)^2 + V_k/2 (psi_k - psi_k^prev)^2
              - sum_n m_n g_par . x_n
              + sum_n mu m_n g_perp (sqrt(|x_n - a_n|^2 + delta^2) - delta)

(psi_k: turning angle at node k; S_k = EI / Voronoi length; V_k = S_k * relaxation / dt), the
variational form of implicit-Euler viscoelasticity with rate-independent friction. The
friction term is Coulomb's law regularised over `friction_smoothing` = delta about a
persistent stick point a_n per node (elastoplastic friction): after every sub-step a node
further than 3 delta from its anchor drags the anchor along (slip), otherwise the anchor stays
(stick), so static friction holds a sub-critical load indefinitely instead of creeping.
Stationarity of Pi is the static balance of elastic, viscous, gravity and friction forces at
every node. Newton's method with the exact Hessian and a backtracking line search solves it
to `newton_tol`.
Rest turning angles kappa* ds and chord lengths 2 sin(kappa* ds / 2) / kappa* put the nodes
exactly on the PCC arcs when unloaded, and the discretisation converges at O(ds^2) to the
exact Kirchhoff rod (`softrod.solve_static`) under loads (tested against it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np

from softrod.description import RobotSpec
from softrod.pneumatic._model import PneumaticArm, compile_pneumatic
from softrod.pneumatic._pcc import _curvature_length

__all__ = ["GroundTruthConfig", "GroundTruthArm", "GroundTruthState"]

#: Below this |kappa ds| the chord length uses its series; dropped term ~(kappa ds)^4/1920.
_CHORD_SERIES = 1e-4
#: A node sticks while it is within this many `friction_smoothing` lengths of its friction
#: anchor (the regularised force is then below 3 / sqrt(10) = 95 % of mu N); beyond, it slips
#: and drags the anchor along. Persistent anchors make static friction hold indefinitely.
_STICK_RADIUS = 3.0


@dataclass(frozen=True)
class GroundTruthConfig:
    """Physics and numerics of the ground-truth arm (defaults: the shipped benchmark)."""

    frame_dt: float = 0.05
    """Frame period [s]: the 20 Hz motion-capture rate of D.2."""
    substeps: int = 2
    """Incremental solves per frame (implicit Euler sub-steps of frame_dt / substeps)."""
    links_per_plate: int = 2
    """Straight chords between consecutive support plates (discretisation, O(ds^2))."""
    gravity: float = 9.81
    """Gravitational acceleration [m/s^2]."""
    table_tilt_deg: float = 25.0
    """Tilt of the table [deg]: in-plane weight g sin(tilt), normal weight g cos(tilt)."""
    downhill_deg: float = -90.0
    """Direction of the in-plane weight in the arm's plane [deg from +x] (-90: toward -y)."""
    friction_coefficient: float = 0.25
    """Coulomb friction coefficient between the arm and the table."""
    friction_smoothing: float = 5e-4
    """Slip displacement over which friction builds up to mu N (regularisation) [m]."""
    bending_relaxation_time: float = 0.02
    """Kelvin-Voigt relaxation time of the elastomer in bending [s] (0: elastic)."""
    pressure_time_constant: float = 0.05
    """First-order lag of each chamber pressure behind its set-point [s] (0: ideal)."""
    newton_tol: float = 1e-9
    """Stop when the largest generalised force (a moment) is below this [N m]."""
    max_newton_iter: int = 100
    """Newton iterations per sub-step before the step is reported as unconverged."""

    def __post_init__(self) -> None:
        checks = {
            "frame_dt": self.frame_dt > 0,
            "substeps": self.substeps >= 1,
            "links_per_plate": self.links_per_plate >= 1,
            "gravity": self.gravity >= 0,
            "friction_coefficient": self.friction_coefficient >= 0,
            "friction_smoothing": self.friction_smoothing > 0,
            "bending_relaxation_time": self.bending_relaxation_time >= 0,
            "pressure_time_constant": self.pressure_time_constant >= 0,
            "newton_tol": self.newton_tol > 0,
            "max_newton_iter": self.max_newton_iter >= 1,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(
                    f"GroundTruthConfig.{name} is out of range: {getattr(self, name)!r}"
                )

    def without_loads(self) -> GroundTruthConfig:
        """The same arm with gravity, friction and rate effects off (recovers no-load PCC)."""
        from dataclasses import replace

        return replace(
            self,
            table_tilt_deg=0.0,
            gravity=0.0,
            friction_coefficient=0.0,
            bending_relaxation_time=0.0,
            pressure_time_constant=0.0,
        )


@dataclass
class GroundTruthState:
    """Mutable state of the simulated arm (arrays owned by the simulator).

    phi : (K,) chord angles [rad]; nodes : (K+1, 2) node positions [m]; turn : (K,) turning
    angles at nodes 0..K-1 [rad]; anchor : (K+1, 2) friction stick points [m]; pressure :
    (n_seg,) actual chamber pressures [Pa]; command : (n_seg,) last set-point [Pa].
    """

    phi: np.ndarray
    nodes: np.ndarray
    turn: np.ndarray
    anchor: np.ndarray
    pressure: np.ndarray
    command: np.ndarray

    def copy(self) -> GroundTruthState:
        return GroundTruthState(
            self.phi.copy(),
            self.nodes.copy(),
            self.turn.copy(),
            self.anchor.copy(),
            self.pressure.copy(),
            self.command.copy(),
        )


@dataclass(frozen=True)
class _Grid:
    """Discretisation arrays (see GroundTruthArm)."""

    interval_seg: np.ndarray
    n_intervals: np.ndarray
    node_mass: np.ndarray
    plate_node: np.ndarray
    node_half_width: np.ndarray
    stats: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _geometry(
    kappa: np.ndarray,
    length: np.ndarray,
    ei: np.ndarray,
    interval_seg: np.ndarray,
    n_intervals: np.ndarray,
    chord_out: np.ndarray,
    rest_turn_out: np.ndarray,
    rest_in_out: np.ndarray,
    stiff_out: np.ndarray,
    share_out: np.ndarray,
) -> None:
    """Chord lengths, rest turning angles and turning stiffness for the current actuation."""
    k_int = interval_seg.shape[0]
    for e in range(k_int):
        j = interval_seg[e]
        ds = length[j] / n_intervals[j]
        a = kappa[j] * ds
        if abs(a) < _CHORD_SERIES:
            chord_out[e] = ds * (1.0 - a * a / 24.0)
        else:
            chord_out[e] = 2.0 * math.sin(0.5 * a) / kappa[j]
    for k in range(k_int):
        j = interval_seg[k]
        ds = length[j] / n_intervals[j]
        out_rest = 0.5 * kappa[j] * ds
        out_comp = 0.5 * ds / ei[j]
        if k > 0:
            jp = interval_seg[k - 1]
            dsp = length[jp] / n_intervals[jp]
            in_rest = 0.5 * kappa[jp] * dsp
            in_comp = 0.5 * dsp / ei[jp]
        else:
            in_rest = 0.0
            in_comp = 0.0
        rest_turn_out[k] = in_rest + out_rest
        rest_in_out[k] = in_rest
        stiff_out[k] = 1.0 / (in_comp + out_comp)
        share_out[k] = in_comp / (in_comp + out_comp)


@numba.njit(cache=True)
def _positions(phi: np.ndarray, chord: np.ndarray, out: np.ndarray) -> None:
    out[0, 0] = 0.0
    out[0, 1] = 0.0
    for e in range(phi.shape[0]):
        out[e + 1, 0] = out[e, 0] + chord[e] * math.cos(phi[e])
        out[e + 1, 1] = out[e, 1] + chord[e] * math.sin(phi[e])


@numba.njit(cache=True)
def _potential(
    phi: np.ndarray,
    chord: np.ndarray,
    rest_turn: np.ndarray,
    stiff: np.ndarray,
    visc: np.ndarray,
    turn_prev: np.ndarray,
    mass: np.ndarray,
    g_par: np.ndarray,
    fric: np.ndarray,
    anchor: np.ndarray,
    delta: float,
    x_work: np.ndarray,
) -> float:
    """Incremental potential Pi(phi) [J] (module docstring)."""
    _positions(phi, chord, x_work)
    total = 0.0
    prev = 0.0
    for k in range(phi.shape[0]):
        psi = phi[k] - prev
        prev = phi[k]
        total += 0.5 * stiff[k] * (psi - rest_turn[k]) ** 2
        total += 0.5 * visc[k] * (psi - turn_prev[k]) ** 2
    for n in range(1, x_work.shape[0]):
        dx = x_work[n, 0] - anchor[n, 0]
        dy = x_work[n, 1] - anchor[n, 1]
        total -= mass[n] * (g_par[0] * x_work[n, 0] + g_par[1] * x_work[n, 1])
        total += fric[n] * (math.sqrt(dx * dx + dy * dy + delta * delta) - delta)
    return total


@numba.njit(cache=True)
def _gradient_hessian(
    phi: np.ndarray,
    chord: np.ndarray,
    rest_turn: np.ndarray,
    stiff: np.ndarray,
    visc: np.ndarray,
    turn_prev: np.ndarray,
    mass: np.ndarray,
    g_par: np.ndarray,
    fric: np.ndarray,
    anchor: np.ndarray,
    delta: float,
    x_work: np.ndarray,
    grad_out: np.ndarray,
    hess_out: np.ndarray,
) -> None:
    """Exact gradient (K,) [N m] and Hessian (K, K) [N m] of the incremental potential."""
    n_int = phi.shape[0]
    _positions(phi, chord, x_work)
    grad_out[:] = 0.0
    hess_out[:, :] = 0.0
    # Bending springs and dampers: psi_k = phi_k - phi_{k-1} (phi_{-1} = 0, the clamp).
    prev = 0.0
    for k in range(n_int):
        psi = phi[k] - prev
        prev = phi[k]
        m = stiff[k] * (psi - rest_turn[k]) + visc[k] * (psi - turn_prev[k])
        h = stiff[k] + visc[k]
        grad_out[k] += m
        hess_out[k, k] += h
        if k > 0:
            grad_out[k - 1] -= m
            hess_out[k - 1, k - 1] += h
            hess_out[k, k - 1] -= h
            hess_out[k - 1, k] -= h
    # Node forces, accumulated distal to proximal: Gs_e = sum_{n > e} dW/dx_n, Hs_e likewise.
    gs0 = 0.0
    gs1 = 0.0
    h00 = 0.0
    h01 = 0.0
    h11 = 0.0
    hs = np.empty((n_int, 3))
    gs = np.empty((n_int, 2))
    for n in range(x_work.shape[0] - 1, 0, -1):
        dx = x_work[n, 0] - anchor[n, 0]
        dy = x_work[n, 1] - anchor[n, 1]
        r = math.sqrt(dx * dx + dy * dy + delta * delta)
        f = fric[n] / r
        gs0 += -mass[n] * g_par[0] + f * dx
        gs1 += -mass[n] * g_par[1] + f * dy
        f3 = fric[n] / (r * r * r)
        h00 += f - f3 * dx * dx
        h01 += -f3 * dx * dy
        h11 += f - f3 * dy * dy
        e = n - 1
        gs[e, 0] = gs0
        gs[e, 1] = gs1
        hs[e, 0] = h00
        hs[e, 1] = h01
        hs[e, 2] = h11
    for e in range(n_int):
        ue0 = math.cos(phi[e])
        ue1 = math.sin(phi[e])
        pe0 = -ue1 * chord[e]
        pe1 = ue0 * chord[e]
        grad_out[e] += pe0 * gs[e, 0] + pe1 * gs[e, 1]
        hess_out[e, e] -= chord[e] * (ue0 * gs[e, 0] + ue1 * gs[e, 1])
        for f_ in range(e, n_int):
            pf0 = -math.sin(phi[f_]) * chord[f_]
            pf1 = math.cos(phi[f_]) * chord[f_]
            # Suffix sums start at the more distal of the two chords.
            a00 = hs[f_, 0]
            a01 = hs[f_, 1]
            a11 = hs[f_, 2]
            v = pe0 * (a00 * pf0 + a01 * pf1) + pe1 * (a01 * pf0 + a11 * pf1)
            hess_out[e, f_] += v
            if f_ != e:
                hess_out[f_, e] += v


@numba.njit(cache=True)
def _cholesky_solve(a: np.ndarray, b: np.ndarray, work: np.ndarray, x_out: np.ndarray) -> bool:
    """Solve a x = b for symmetric a by Cholesky; False when a is not positive definite."""
    n = a.shape[0]
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j]
            for k in range(j):
                s -= work[i, k] * work[j, k]
            if i == j:
                if s <= 0.0:
                    return False
                work[i, i] = math.sqrt(s)
            else:
                work[i, j] = s / work[j, j]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= work[i, k] * x_out[k]
        x_out[i] = s / work[i, i]
    for i in range(n - 1, -1, -1):
        s = x_out[i]
        for k in range(i + 1, n):
            s -= work[k, i] * x_out[k]
        x_out[i] = s / work[i, i]
    return True


@numba.njit(cache=True)
def _solve_increment(
    phi: np.ndarray,
    chord: np.ndarray,
    rest_turn: np.ndarray,
    stiff: np.ndarray,
    visc: np.ndarray,
    turn_prev: np.ndarray,
    mass: np.ndarray,
    g_par: np.ndarray,
    fric: np.ndarray,
    anchor: np.ndarray,
    delta: float,
    tol: float,
    max_iter: int,
) -> tuple[int, float]:
    """Minimise the incremental potential in place (Newton + backtracking); (iters, |g|)."""
    n = phi.shape[0]
    grad = np.empty(n)
    hess = np.empty((n, n))
    x_work = np.empty((n + 1, 2))
    trial = np.empty(n)
    chol = np.empty((n, n))
    step = np.empty(n)
    gnorm = math.inf
    it = 0
    for it in range(max_iter):
        _gradient_hessian(
            phi, chord, rest_turn, stiff, visc, turn_prev, mass, g_par, fric, anchor, delta,
            x_work, grad, hess,
        )  # fmt: skip
        gnorm = np.max(np.abs(grad))
        if gnorm < tol:
            return it, gnorm
        # Newton direction; shift the Hessian until it is positive definite (buckled states).
        diag_scale = 0.0
        for i in range(n):
            diag_scale = max(diag_scale, abs(hess[i, i]))
        shift = 0.0
        for _ in range(60):
            for i in range(n):
                hess[i, i] += shift
            ok = _cholesky_solve(hess, -grad, chol, step)
            for i in range(n):
                hess[i, i] -= shift
            if ok:
                break
            shift = max(4.0 * shift, 1e-10 * diag_scale)
        pi0 = _potential(
            phi, chord, rest_turn, stiff, visc, turn_prev, mass, g_par, fric, anchor, delta,
            x_work,
        )  # fmt: skip
        slope = np.dot(grad, step)
        alpha = 1.0
        for _ in range(40):
            trial[:] = phi + alpha * step
            pi1 = _potential(
                trial, chord, rest_turn, stiff, visc, turn_prev, mass, g_par, fric, anchor,
                delta, x_work,
            )  # fmt: skip
            if pi1 <= pi0 + 1e-4 * alpha * slope or alpha < 1e-10:
                break
            alpha *= 0.5
        phi[:] = trial
    _gradient_hessian(
        phi, chord, rest_turn, stiff, visc, turn_prev, mass, g_par, fric, anchor, delta,
        x_work, grad, hess,
    )  # fmt: skip
    return it + 1, np.max(np.abs(grad))


@numba.njit(cache=True)
def _plate_poses(
    phi: np.ndarray,
    nodes: np.ndarray,
    turn: np.ndarray,
    rest_turn: np.ndarray,
    rest_in: np.ndarray,
    share: np.ndarray,
    plate_node: np.ndarray,
    out: np.ndarray,
) -> None:
    """Plate poses (m, 3). A node's tangent splits the elastic turning by the compliances of
    its two half-chords (exact PCC tangents when unloaded); the free tip keeps its rest
    half-turn (no moment acts there)."""
    n_int = phi.shape[0]
    for i in range(plate_node.shape[0]):
        k = plate_node[i]
        out[i, 0] = nodes[k, 0]
        out[i, 1] = nodes[k, 1]
        if k == 0:
            out[i, 2] = 0.0
        elif k == n_int:
            # Rest half-turn of the last chord: rest_turn[K-1] - rest_in[K-1].
            out[i, 2] = phi[n_int - 1] + rest_turn[n_int - 1] - rest_in[n_int - 1]
        else:
            out[i, 2] = phi[k - 1] + rest_in[k] + share[k] * (turn[k] - rest_turn[k])


@numba.njit(cache=True)
def _run_frames(commands: np.ndarray, state: tuple, arm: tuple, grid: tuple, loads: tuple,
                numerics: tuple, out: tuple) -> None:  # fmt: skip
    """Advance the state through every frame's set-point (n_frames, n_seg); record plates
    (n_frames, m, 3), nodes (n_frames, K+1, 2) and the worst residual per frame.

    state (in/out): (phi, nodes, turn, anchor, pressure); arm: (coeffs, width, rest_length, ei);
    grid: (interval_seg, n_intervals, mass, plate_node); loads: (g_par, fric); numerics:
    (delta, relax, lag, dt_sub, substeps, tol, max_iter); out: (plates, nodes, gnorm).
    """
    phi, nodes, turn, anchor, pressure = state
    coeffs, width, rest_length, ei = arm
    interval_seg, n_intervals, mass, plate_node = grid
    g_par, fric = loads
    delta, relax, lag, dt_sub, substeps, tol, max_iter = numerics
    plates_out, nodes_out, gnorm_out = out
    n_seg = pressure.shape[0]
    n_int = phi.shape[0]
    kappa = np.empty(n_seg)
    length = np.empty(n_seg)
    chord = np.empty(n_int)
    rest_turn = np.empty(n_int)
    rest_in = np.empty(n_int)
    stiff = np.empty(n_int)
    share = np.empty(n_int)
    visc = np.empty(n_int)
    turn_prev = np.empty(n_int)
    for f in range(commands.shape[0]):
        worst = 0.0
        for _ in range(substeps):
            for j in range(n_seg):
                pressure[j] += lag * (commands[f, j] - pressure[j])
            _curvature_length(pressure, coeffs, width, rest_length, kappa, length)
            _geometry(
                kappa, length, ei, interval_seg, n_intervals, chord, rest_turn, rest_in,
                stiff, share,
            )  # fmt: skip
            for k in range(n_int):
                visc[k] = stiff[k] * relax / dt_sub
                turn_prev[k] = turn[k]
            _, g = _solve_increment(
                phi, chord, rest_turn, stiff, visc, turn_prev, mass, g_par, fric, anchor,
                delta, tol, max_iter,
            )  # fmt: skip
            worst = max(worst, g)
            _positions(phi, chord, nodes)
            prev = 0.0
            for k in range(n_int):
                turn[k] = phi[k] - prev
                prev = phi[k]
            # Friction anchors follow a slipping node (return mapping): within
            # _STICK_RADIUS * delta the node sticks and keeps its anchor.
            lim = _STICK_RADIUS * delta
            for n in range(1, n_int + 1):
                dx = nodes[n, 0] - anchor[n, 0]
                dy = nodes[n, 1] - anchor[n, 1]
                d = math.sqrt(dx * dx + dy * dy)
                if d > lim:
                    anchor[n, 0] = nodes[n, 0] - dx * lim / d
                    anchor[n, 1] = nodes[n, 1] - dy * lim / d
        gnorm_out[f] = worst
        nodes_out[f] = nodes
        _plate_poses(phi, nodes, turn, rest_turn, rest_in, share, plate_node, plates_out[f])


# --------------------------------------------------------------------------------------------
# Public simulator
# --------------------------------------------------------------------------------------------


class GroundTruthArm:
    """The planar pneumatic arm with gravity, table friction and rate effects (module doc).

    Parameters
    ----------
    arm : a compiled `PneumaticArm` or a robot description with pneumatic segments.
    config : physics and numerics (`GroundTruthConfig`).

    Use `reset(q)` to place the arm, then `run(commands)` with set-points (n_frames, n_seg)
    [Pa], one per 20 Hz frame; it returns the plate backbones (n_frames, m, 3).
    """

    def __init__(
        self,
        arm: PneumaticArm | RobotSpec | dict | str,
        config: GroundTruthConfig | None = None,
    ) -> None:
        self.arm = arm if isinstance(arm, PneumaticArm) else compile_pneumatic(arm)
        self.config = config if config is not None else GroundTruthConfig()
        self._grid = self._build_grid()
        self.state = self._unloaded_state(np.zeros(self.arm.n_segments))
        self.last_residual = 0.0
        self.last_nodes = self.state.nodes[None].copy()

    # Discretisation -------------------------------------------------------------------------
    def _build_grid(self) -> _Grid:
        a, cfg = self.arm, self.config
        n_int_seg = np.array(
            [seg.disks * cfg.links_per_plate for seg in a.spec.segments], dtype=np.int64
        )
        interval_seg = np.repeat(np.arange(a.n_segments), n_int_seg).astype(np.int64)
        n_nodes = int(n_int_seg.sum()) + 1
        # Backbone mass lumped half to each end of every chord (rest length: mass is conserved).
        mass = np.zeros(n_nodes)
        for e, js in enumerate(interval_seg):
            m_e = a.mass_per_length[js] * a.rest_length[js] / n_int_seg[js]
            mass[e] += 0.5 * m_e
            mass[e + 1] += 0.5 * m_e
        plate_node = [0]
        start = 0
        for j, seg in enumerate(a.spec.segments):
            for i in range(seg.disks):
                node = start + (i + 1) * cfg.links_per_plate
                plate_node.append(node)
                mass[node] += seg.disk_mass
            start += int(n_int_seg[j])
        half = np.empty(n_nodes)
        half[0] = a.half_width[0]
        half[1:] = a.half_width[interval_seg]
        return _Grid(
            interval_seg=interval_seg,
            n_intervals=n_int_seg,
            node_mass=mass,
            plate_node=np.asarray(plate_node, dtype=np.int64),
            node_half_width=half,
        )

    @property
    def n_nodes(self) -> int:
        """Nodes of the discretised backbone (chord ends, base included)."""
        return int(self._grid.node_mass.shape[0])

    @property
    def node_half_width(self) -> np.ndarray:
        """(n_nodes,) half width of the arm at every node [m] (collision radius)."""
        return self._grid.node_half_width

    @property
    def node_mass(self) -> np.ndarray:
        """(n_nodes,) lumped mass at every node [kg] (node 0 is clamped)."""
        return self._grid.node_mass

    def _loads(self) -> tuple[np.ndarray, np.ndarray]:
        cfg = self.config
        tilt = math.radians(cfg.table_tilt_deg)
        down = math.radians(cfg.downhill_deg)
        g_par = cfg.gravity * math.sin(tilt) * np.array([math.cos(down), math.sin(down)])
        fric = cfg.friction_coefficient * cfg.gravity * math.cos(tilt) * self._grid.node_mass
        return g_par, fric

    def _unloaded_state(self, q: np.ndarray) -> GroundTruthState:
        a, gr = self.arm, self._grid
        kappa = np.empty(a.n_segments)
        length = np.empty(a.n_segments)
        _curvature_length(q, a.strain_coeffs, a.width, a.rest_length, kappa, length)
        n_int = gr.interval_seg.shape[0]
        chord = np.empty(n_int)
        rest_turn = np.empty(n_int)
        work = [np.empty(n_int) for _ in range(3)]
        _geometry(
            kappa,
            length,
            a.bending_stiffness,
            gr.interval_seg,
            gr.n_intervals,
            chord,
            rest_turn,
            *work,
        )
        phi = np.cumsum(rest_turn)
        nodes = np.empty((n_int + 1, 2))
        _positions(phi, chord, nodes)
        return GroundTruthState(
            phi, nodes, rest_turn.copy(), nodes.copy(), q.astype(float), q.astype(float)
        )

    # Simulation -----------------------------------------------------------------------------
    def reset(self, q: np.ndarray | None = None, settle_frames: int = 40) -> np.ndarray:
        """Place the arm at its no-load shape for set-point q (default 0), then hold q for
        `settle_frames` frames so it settles under the loads; returns the backbone (m, 3)."""
        qq = np.zeros(self.arm.n_segments) if q is None else self.arm.check_pressures(q)
        self.state = self._unloaded_state(np.asarray(qq, dtype=float))
        if settle_frames > 0:
            return self.run(np.repeat(qq[None], settle_frames, axis=0))[-1]
        return self.backbone()

    def backbone(self) -> np.ndarray:
        """Plate poses (m, 3) of the current state."""
        a, gr = self.arm, self._grid
        st = self.state
        kappa = np.empty(a.n_segments)
        length = np.empty(a.n_segments)
        _curvature_length(st.pressure, a.strain_coeffs, a.width, a.rest_length, kappa, length)
        n_int = gr.interval_seg.shape[0]
        geo = [np.empty(n_int) for _ in range(5)]
        chord, rest_turn, rest_in, _stiff, share = geo
        _geometry(kappa, length, a.bending_stiffness, gr.interval_seg, gr.n_intervals, *geo)
        out = np.empty((a.n_plates, 3))
        _plate_poses(st.phi, st.nodes, st.turn, rest_turn, rest_in, share, gr.plate_node, out)
        return out

    def run(self, commands: np.ndarray) -> np.ndarray:
        """Advance one frame per set-point row; returns plate backbones (n_frames, m, 3).

        The node polylines of those frames are kept in `last_nodes` (n_frames, K+1, 2) and the
        worst Newton residual [N m] in `last_residual`.
        """
        a, gr, cfg = self.arm, self._grid, self.config
        cmd = np.ascontiguousarray(a.check_pressures(np.atleast_2d(commands), "commands"))
        n = cmd.shape[0]
        plates = np.empty((n, a.n_plates, 3))
        nodes = np.empty((n, self.n_nodes, 2))
        gnorm = np.empty(n)
        g_par, fric = self._loads()
        dt_sub = cfg.frame_dt / cfg.substeps
        lag = 1.0
        if cfg.pressure_time_constant > 0:
            lag = 1.0 - math.exp(-dt_sub / cfg.pressure_time_constant)
        st = self.state
        _run_frames(
            cmd,
            (st.phi, st.nodes, st.turn, st.anchor, st.pressure),
            (a.strain_coeffs, a.width, a.rest_length, a.bending_stiffness),
            (gr.interval_seg, gr.n_intervals, gr.node_mass, gr.plate_node),
            (g_par, fric),
            (
                float(cfg.friction_smoothing),
                float(cfg.bending_relaxation_time),
                float(lag),
                float(dt_sub),
                int(cfg.substeps),
                float(cfg.newton_tol),
                int(cfg.max_newton_iter),
            ),
            (plates, nodes, gnorm),
        )
        st.command = cmd[-1].copy()
        self.last_nodes = nodes
        self.last_residual = float(gnorm.max()) if n else 0.0
        return plates
