"""Linearisation of an `LGVIModel`: its frequencies, the stable step, the E.6 correction."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.linalg

from softrod.dynamics._implicit_kernels import IMPLICIT_NEWMARK_BETA, _strains
from softrod.dynamics._inputs import _Loads0, _zero_loads
from softrod.dynamics._lgvi_kernels import _forces
from softrod.dynamics._loads import Magnet
from softrod.dynamics._model import LGVIModel, build_lgvi_model, cay
from softrod.rods import RodModel

__all__ = [
    "APPLIED_DT_LIMIT",
    "DAMPING_DT_LIMIT",
    "DEFAULT_DT_SAFETY",
    "IMPLICIT_MODES",
    "IMPLICIT_STEPS_PER_PERIOD",
    "implicit_time_step",
    "linear_modes",
    "stable_time_step",
]

#: Automatic step = DEFAULT_DT_SAFETY * 2 / omega_max, omega_max the highest frequency of the
#: model linearised at the initial state. Explicit (Stormer-Verlet-type) updates are stable
#: for omega dt < 2; half of it leaves room for stiffening under large deflection and tendon
#: load and keeps the energy error of the fastest modes small.
DEFAULT_DT_SAFETY = 0.5
#: Explicit viscous damping (velocity of the last step) is monotone for c dt / m < 1; the
#: automatic step keeps c dt / m below this.
DAMPING_DT_LIMIT = 0.5
#: Finite-difference step of the linearisation, relative to the robot length (positions) and
#: in radians (rotations): central differences of forces that are smooth on this scale.
_FD_REL = 1e-7
#: Automatic step of the implicit integrator: IMPLICIT_STEPS_PER_PERIOD steps per period of the
#: IMPLICIT_MODES-th lowest linear mode (a round rod's modes come in pairs: the 6th is the
#: third bending mode in each plane, below the first torsion and axial modes for slender rods).
#: The midpoint rule lengthens a period by (omega dt)^2 / 12: 0.8 % for that mode, 3e-5 for
#: the first bending mode (17.5 x slower); faster modes are stable, their periods stretched.
IMPLICIT_MODES = 6
IMPLICIT_STEPS_PER_PERIOD = 20
#: The implicit step keeps omega dt of the explicit (applied-load) part below this (Verlet's
#: limit is 2; the margin covers the loads' change along the motion).
APPLIED_DT_LIMIT = 1.0
#: The "auto" frequency correction takes its target from a model this many times finer.
FREQ_REFERENCE_FACTOR = 8


def _kernel_loads(ld: _Loads0) -> tuple:
    """The kernels' one-row `loads` tuple of a load snapshot (no base translation needed)."""
    return (ld.gravity, ld.dist[None], ld.tip_force[None], ld.tip_moment[None],
            ld.tension[None], ld.B[None], ld.G[None], np.zeros((1, 3)), ld.base_R)  # fmt: skip


def _eval_forces(
    model: LGVIModel, p: np.ndarray, O: np.ndarray, ld: _Loads0
) -> tuple[float, np.ndarray, np.ndarray]:
    f = np.empty((model.n_nodes, 3))
    tau = np.empty((model.n_nodes, 3))
    V = _forces(p, O, model.kernel_model, _kernel_loads(ld), 0, f, tau)
    return float(V), f, tau


def linear_modes(
    model: LGVIModel,
    positions: np.ndarray | None = None,
    frames: np.ndarray | None = None,
    loads: _Loads0 | None = None,
) -> tuple[float, float]:
    """(omega_min, omega_max) [rad/s] of the model linearised at a configuration (default: rest,
    unloaded), from the finite-difference stiffness and the lumped masses and inertias."""
    w = _frequencies(model, positions, frames, loads)
    if w.size == 0:
        return 0.0, 0.0
    return float(w[0]), float(w[-1])


def _frequencies(
    model: LGVIModel,
    positions: np.ndarray | None = None,
    frames: np.ndarray | None = None,
    loads: _Loads0 | None = None,
) -> np.ndarray:
    """Ascending positive linear frequencies omega (k,) [rad/s] (see `linear_modes`)."""
    K, mass = _stiffness(model, positions, frames, loads)
    w = 1.0 / np.sqrt(mass)
    A = 0.5 * (K + K.T) * w[:, None] * w[None, :]
    lam = scipy.linalg.eigvalsh(A)
    return np.sqrt(lam[lam > 0])


def _stiffness(
    model: LGVIModel,
    positions: np.ndarray | None = None,
    frames: np.ndarray | None = None,
    loads: _Loads0 | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Finite-difference stiffness (n_q, n_q) in the free (translation, body rotation)
    coordinates at a configuration (default: rest, unloaded) and the lumped masses (n_q,)."""
    p = model.rest_positions.copy() if positions is None else np.array(positions, dtype=float)
    O = model.rest_rotations.copy() if frames is None else np.array(frames, dtype=float)
    ld = _zero_loads(model) if loads is None else loads
    pf = np.flatnonzero(model.pos_free)
    rf = np.flatnonzero(model.rot_free)
    n_q = 3 * (pf.size + rf.size)
    eps_p = _FD_REL * model.total_length
    eps_r = _FD_REL

    def gen(pp: np.ndarray, OO: np.ndarray) -> np.ndarray:
        _, f, tau = _eval_forces(model, pp, OO, ld)
        return np.concatenate([f[pf].ravel(), tau[rf].ravel()])

    K = np.empty((n_q, n_q))
    col = 0
    for a in pf:
        for c in range(3):
            pp = p.copy()
            pp[a, c] += eps_p
            gp = gen(pp, O)
            pp[a, c] -= 2 * eps_p
            gm = gen(pp, O)
            K[:, col] = -(gp - gm) / (2 * eps_p)
            col += 1
    for a in rf:
        for c in range(3):
            e = np.zeros(3)
            e[c] = eps_r
            OO = O.copy()
            OO[a] = O[a] @ cay(e)
            gp = gen(p, OO)
            OO[a] = O[a] @ cay(-e)
            gm = gen(p, OO)
            K[:, col] = -(gp - gm) / (2 * eps_r)
            col += 1
    mass = np.concatenate([np.repeat(model.node_mass[pf], 3), model.node_J[rf].ravel()])
    return K, mass


def stable_time_step(
    model: LGVIModel,
    positions: np.ndarray | None = None,
    frames: np.ndarray | None = None,
    loads: _Loads0 | None = None,
    node_damping: np.ndarray | None = None,
    node_angular_damping: np.ndarray | None = None,
    safety: float = DEFAULT_DT_SAFETY,
) -> float:
    """Automatic step [s]: `safety` * 2 / omega_max, also keeping c dt / m and c_w dt / J
    below `DAMPING_DT_LIMIT` (see the constants)."""
    _, w_max = linear_modes(model, positions, frames, loads)
    dt = safety * 2.0 / w_max
    if node_damping is not None and np.any(node_damping > 0):
        ratio = float(np.max(node_damping[model.pos_free] / model.node_mass[model.pos_free, None]))
        if ratio > 0:
            dt = min(dt, DAMPING_DT_LIMIT / ratio)
    if node_angular_damping is not None and np.any(node_angular_damping > 0):
        rf = model.rot_free
        ratio = float(np.max(node_angular_damping[rf] / model.node_J[rf]))
        if ratio > 0:
            dt = min(dt, DAMPING_DT_LIMIT / ratio)
    return dt


def _material_model(
    model: LGVIModel, p: np.ndarray, O: np.ndarray, base_R: np.ndarray
) -> LGVIModel:
    """The model with its rest strains moved to the strains at (p, O) (base frame row 0 of
    base_R): stress-free there, so its stiffness at (p, O) is the material part B^T W B alone,
    without the geometric stiffness of whatever stress (p, O) carries."""
    n_side = 1 if model.shear_eval == "left" else 2
    zero = np.zeros_like(model.elem_g0a)
    elastic = (model.elem_len, model.elem_C1, zero, zero, n_side - 1, model.spr_i, model.spr_j,
               model.spr_K, np.zeros_like(model.spr_c0))  # fmt: skip
    e = np.zeros((n_side * model.n_elements + model.spr_i.shape[0], 3))
    _strains(np.ascontiguousarray(p), np.ascontiguousarray(O), base_R, 0, elastic, e)
    g = e[: n_side * model.n_elements].reshape(model.n_elements, n_side, 3)
    return dataclasses.replace(
        model,
        elem_g0a=g[:, 0].copy(),
        elem_g0b=g[:, -1].copy() if n_side == 2 else model.elem_g0b,
        spr_c0=e[n_side * model.n_elements :].copy(),
    )


def implicit_time_step(
    model: LGVIModel,
    positions: np.ndarray | None = None,
    frames: np.ndarray | None = None,
    loads: _Loads0 | None = None,
    node_damping: np.ndarray | None = None,
    node_angular_damping: np.ndarray | None = None,
) -> float:
    """Automatic step [s] of the implicit integrator: `IMPLICIT_STEPS_PER_PERIOD` steps per
    period of the `IMPLICIT_MODES`-th lowest mode of the rod's material stiffness B^T W B at the
    configuration (the highest when there are fewer), and c dt / m, c_w dt / J below
    `DAMPING_DT_LIMIT` (viscous damping stays explicit).

    The modes are those of the unstressed rod in the current shape: the prestress of a start
    that is not an equilibrium of the loads (a tendon pulled from the straight rest, a bent rod
    released) carries a geometric stiffness that the motion does not see (tdcr3: the backbone's
    2 N tendon compression is ~30 Euler loads, so the loaded linearisation puts f1 at 8-12 Hz
    instead of 2.95 Hz, and the release's has negative eigenvalues)."""
    p = model.rest_positions if positions is None else np.asarray(positions, dtype=float)
    O = model.rest_rotations if frames is None else np.asarray(frames, dtype=float)
    unloaded = _zero_loads(model)
    if loads is not None:
        unloaded = dataclasses.replace(unloaded, base_R=loads.base_R)
    K_mat, mass = _stiffness(_material_model(model, p, O, unloaded.base_R), p, O, unloaded)
    K_mat = 0.5 * (K_mat + K_mat.T)
    s = 1.0 / np.sqrt(mass)
    lam = scipy.linalg.eigvalsh(K_mat * s[:, None] * s[None, :])
    w = np.sqrt(lam[lam > 0])
    if w.size == 0:
        raise ValueError("implicit_time_step: the linearised model has no positive frequency")
    w_ref = float(w[min(IMPLICIT_MODES, w.size) - 1])
    dt = 2.0 * math.pi / (IMPLICIT_STEPS_PER_PERIOD * w_ref)
    # The applied loads (tendons, magnets, ...) are explicit (trapezoidal rule): their stiffness
    # K_app = K - K_el (loaded minus unloaded, one configuration) must satisfy the Verlet limit
    # against the implicit part's effective mass, dt^2 lambda_max(K_app, M + beta dt^2 K_mat)
    # <= APPLIED_DT_LIMIT^2; halve dt until it does.
    if loads is not None:
        K, _ = _stiffness(model, p, O, loads)
        K_el, _ = _stiffness(model, p, O, unloaded)
        K_app = 0.5 * (K - K_el + (K - K_el).T)
        if np.max(np.abs(K_app)) > 1e-12 * np.max(np.abs(K_el)):
            for _ in range(20):
                lam_app = scipy.linalg.eigvalsh(
                    K_app, np.diag(mass) + IMPLICIT_NEWMARK_BETA * dt * dt * K_mat
                )
                if dt * dt * lam_app[-1] <= APPLIED_DT_LIMIT**2:
                    break
                dt *= 0.5
    if node_damping is not None and np.any(node_damping > 0):
        ratio = float(np.max(node_damping[model.pos_free] / model.node_mass[model.pos_free, None]))
        if ratio > 0:
            dt = min(dt, DAMPING_DT_LIMIT / ratio)
    if node_angular_damping is not None and np.any(node_angular_damping > 0):
        rf = model.rot_free
        ratio = float(np.max(node_angular_damping[rf] / model.node_J[rf]))
        if ratio > 0:
            dt = min(dt, DAMPING_DT_LIMIT / ratio)
    return dt


def _frequency_scale(
    rod: RodModel, elements: Any, shear_eval: str, clamp: str, magnets: Sequence[Magnet],
    rotary_inertia_scale: float, target_hz: float | None,
) -> float:  # fmt: skip
    """The E.6 correction gamma = (omega_target / omega_sim)^2 at the model's resolution."""
    coarse = build_lgvi_model(rod, elements, shear_eval, clamp, magnets, 1.0, rotary_inertia_scale)
    w_sim, _ = linear_modes(coarse)
    if target_hz is None:
        n_fine = FREQ_REFERENCE_FACTOR * coarse.n_elements
        fine = build_lgvi_model(rod, n_fine, "left", "half", magnets, 1.0, rotary_inertia_scale)
        w_target, _ = linear_modes(fine)
    else:
        w_target = 2 * math.pi * float(target_hz)
    return (w_target / w_sim) ** 2
