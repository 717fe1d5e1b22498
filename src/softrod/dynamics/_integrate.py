"""The stepping loop of `simulate_dynamic` and the damping filter: tabulates the inputs in
chunks, calls the kernel `_run` and collects the samples (ALGORITHMS.md E.3-E.5)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from softrod.dynamics._implicit_kernels import (
    IMPLICIT_NEWMARK_BETA,
    STATUS_IMPLICIT_NEWTON,
    _run_implicit,
)
from softrod.dynamics._inputs import _RunInputs
from softrod.dynamics._lgvi_kernels import (
    STATUS_NEWTON,
    STATUS_NONFINITE,
    STATUS_OK,
    _kinetic,
    _run,
)
from softrod.dynamics._model import LGVIModel, cay, cayinv
from softrod.dynamics._modes import DEFAULT_DT_SAFETY, implicit_time_step, stable_time_step

__all__ = [
    "AUTO_STEP_RATIO",
    "CHUNK_STEPS",
    "IMPLICIT_DAMPING",
    "IMPLICIT_NEWMARK_BETA",
    "IMPLICIT_REFRESH_STEPS",
    "INTEGRATORS",
    "KV_REFRESH_STEPS",
]

#: The time steppers of `simulate_dynamic(integrator=...)`: "explicit" (the LGVI of ALGORITHMS.md
#: E.3, translations explicit), "implicit" (the variational step with the elastic energy in the
#: strains at both ends of the step, `_implicit_kernels`) and "auto" (`_auto_integrator`).
INTEGRATORS = ("explicit", "implicit", "auto")
#: `integrator="auto"` takes the implicit step when its automatic step (accuracy: the bending
#: modes) is at least this many times the explicit one's (stability: the fastest mode), i.e.
#: for stiff slender rods: seed 002's steel rod 7200x, the NiTi backbones of tdcr3 and
#: ftdcr_v4 (30 elements) 7300x / 8200x (implicit); the TPU rod 89x, the soft TDCR and PDMS
#: rods of the tests 59x / 15x (explicit). An implicit step costs 20-40 explicit ones
#: (`softrod bench dynamics`), so above this ratio it is over 25x faster; below it the
#: explicit step, bit for bit the one of `integrator="explicit"`, is kept.
AUTO_STEP_RATIO = 1000.0
#: Newton iterations between refactorisations of the implicit step's matrix M + dt^2/4 B(q^j)^T
#: W B(q^{j+1}): 1 is Newton's method. The stiffness contrast (EA / (EI / l^2) ~ 5600 for the
#: steel rod at 20 elements) makes a matrix from another configuration contract slowly.
IMPLICIT_REFRESH_STEPS = 1
#: Default numerical damping of the implicit step (0: the purely variational step). With
#: implicit_damping > 0 the step's velocity is projected with (M + dt beta_n B^T W B) u =
#: M u_pred, beta_n = implicit_damping x dt: it takes a fraction of about implicit_damping
#: (omega dt)^2 of a mode's velocity per step, i.e. removes the modes faster than the step.
IMPLICIT_DAMPING = 0.0

#: Steps per kernel call when some input varies in time (inputs are tabulated per step).
CHUNK_STEPS = 4096
#: Steps between refactorisations of the Kelvin-Voigt damping matrix B^T W B, which follows
#: the configuration: over 16 automatic steps (0.25 ms for the TPU rod, 0.05 ms for steel) the
#: frames of the SoRoSim releases turn by ~1e-3 rad at most, while refactoring every step costs
#: a banded Cholesky (n_q bw^2 flops) per step.
KV_REFRESH_STEPS = 16

_STATUS_MESSAGES = {
    STATUS_OK: "completed",
    STATUS_NONFINITE: "diverged: non-finite positions (time step too large for the load?)",
    STATUS_NEWTON: "diverged: the rotation update (Newton on the Cayley map) did not converge",
    STATUS_IMPLICIT_NEWTON: "diverged: the implicit step's Newton iteration did not converge "
    "(time step too large for the load?)",
}


@dataclass
class _Filter:
    """Kernel arrays of the damping filter: nodes (n_f,), meas (n_steps + 1, n_f, 3) the
    measurements y^j, trend (n_steps + 1, n_f, 3) the backward trend y^j - y^{j-1}, R (3, 3),
    W (n_f, 3, 3), mass (n_f,) (the paper's l M), paper (bool), drift (bool): the trend also
    carries the model's undamped acceleration (`estimate_damping`'s trend="model")."""

    nodes: np.ndarray
    meas: np.ndarray
    trend: np.ndarray
    R: np.ndarray
    W: np.ndarray
    mass: np.ndarray
    paper: bool
    drift: bool = False


def _kv_layout(model: LGVIModel) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Generalised velocity layout of the Kelvin-Voigt solve, interleaved node by node so that
    the damping matrix is banded: dof_p, dof_r (n,) first index of each node's translation /
    rotation (-1 when prescribed), n_q, and the half bandwidth."""
    n = model.n_nodes
    dof_p = np.full(n, -1, dtype=np.int64)
    dof_r = np.full(n, -1, dtype=np.int64)
    q = 0
    for a in range(n):
        if model.pos_free[a]:
            dof_p[a] = q
            q += 3
        if model.rot_free[a]:
            dof_r[a] = q
            q += 3
    groups = []
    for i in range(model.n_elements):
        frames = (i,) if model.shear_eval == "left" else (i, i + 1)
        groups.append([dof_p[i], dof_p[i + 1], *(dof_r[c] for c in frames)])
    for i, j in zip(model.spr_i, model.spr_j, strict=True):
        groups.append([dof_r[j], dof_r[i] if i >= 0 else -1])
    bw = 0
    for g in groups:
        d = [x for x in g if x >= 0]
        if d:
            bw = max(bw, max(d) + 2 - min(d))
    return dof_p, dof_r, q, bw


def _integrate(
    su: _RunInputs,
    state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float],
    dt: float,
    n_steps: int,
    every: int,
    filt: _Filter | None = None,
    integrator: str = "explicit",
    stats: dict | None = None,
    numerical_damping: float = 0.0,
    newmark_beta: float = IMPLICIT_NEWMARK_BETA,
) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Run n_steps + 1 steps (the extra one completes the last sample's energy).

    integrator : "explicit" or "implicit" (`INTEGRATORS`; the filter needs "explicit"). stats,
    when given, receives "newton_iterations" (implicit step). numerical_damping (implicit
    only): Kelvin-Voigt time added to `strain_damping`, in steps (beta += it x dt);
    newmark_beta (implicit only): the strain weight `IMPLICIT_NEWMARK_BETA`.

    state (p, p_prev, O, fr, t0) is advanced in place to step n_steps (on success). Returns
    (status, steps done, rec_p, rec_O, rec_E, rec_K) with rows every `every` steps (rec_K:
    per step, filter only).
    """
    model = su.model
    n = model.n_nodes
    p, p_prev, O, fr, t0 = state
    if integrator == "auto":
        integrator = _auto_integrator(su, state)
    n_rec = n_steps // every + 1
    rec_p = np.full((n_rec, n, 3), np.nan)
    rec_O = np.full((n_rec, n, 3, 3), np.nan)
    rec_E = np.full(n_rec, np.nan)
    ke_prev = np.array(
        [_kinetic(p, p_prev, fr, model.node_mass, model.node_J, model.pos_free, model.rot_free, dt)]
    )
    work_f = np.zeros((n, 3))
    work_tau = np.zeros((n, 3))
    work_p = np.zeros((n, 3))
    # Kelvin-Voigt damping: layout, banded factor and work arrays (unused when beta = 0).
    kv_dof_p, kv_dof_r, n_q, kv_bw = _kv_layout(model)
    kv_L = (np.zeros((n_q, n_q)) if su.strain_damping > 0 or integrator == "implicit"
            else np.zeros((1, 1)))  # fmt: skip
    kv_u = np.zeros(n_q)
    kv_J = np.zeros((2, 3, 3))
    # The kernel tuples that stay the same over the run.
    state_k = (p, p_prev, O, fr)
    damping = (su.c_lin, su.c_ang, su.strain_damping, kv_dof_p, kv_dof_r, kv_bw,
               KV_REFRESH_STEPS)  # fmt: skip
    work = (ke_prev, work_f, work_tau, work_p, kv_L, kv_u, kv_J)
    implicit = integrator == "implicit"
    if implicit:
        if filt is not None:
            raise ValueError("the damping filter (E.5) runs with integrator='explicit'")
        n_s = model.n_elements * (1 if model.shear_eval == "left" else 2) + model.spr_i.shape[0]
        imp = (np.zeros((n_s, 3)), np.zeros((n_s, 3)), np.zeros((n_s, 3)), np.zeros((n_s, 3)),
               np.zeros((n, 3, 3)), np.zeros((n_q, n_q)), np.zeros(n_q), np.zeros((6, 3, 3)),
               np.ones(1, dtype=np.int64), np.full(1, IMPLICIT_REFRESH_STEPS, dtype=np.int64),
               np.zeros(1, dtype=np.int64))  # fmt: skip
    total = n_steps + 1
    chunk = CHUNK_STEPS if (su.varies or filt is not None) else total
    rec_K_parts = []
    status = STATUS_OK
    done = 0
    snapshot = None
    while done < total:
        # The last step runs alone so that the state at n_steps can be kept for continuation.
        if done == n_steps:
            snapshot = (p.copy(), p_prev.copy(), O.copy(), fr.copy())
        k = min(chunk, total - done, n_steps - done if done < n_steps else 1)
        tk = t0 + (done + np.arange(k + 1)) * dt
        tension = su.tension.series(tk[:-1]) if model.n_kernel_tendons else np.zeros((1, 0))
        B, G = su.field.series(tk[:-1])
        bp, bR = su.base.series(tk)
        if filt is None:
            f_args = (np.zeros(0, dtype=np.int64), np.zeros((1, 0, 3)), np.zeros((1, 0, 3)),
                      np.eye(3), np.zeros((0, 3, 3)), np.zeros(0), False, False)  # fmt: skip
            rec_K = np.zeros((0, 0, 3))
        else:
            meas = np.ascontiguousarray(filt.meas[done : done + k + 1])
            trend = np.ascontiguousarray(filt.trend[done : done + k + 1])
            f_args = (filt.nodes, meas, trend, filt.R, filt.W, filt.mass, filt.paper,
                      filt.drift)  # fmt: skip
            rec_K = np.zeros((k, filt.nodes.shape[0], 3))
        loads = (su.gravity, su.dist.series(tk[:-1]), su.tip_force.series(tk[:-1]),
                 su.tip_moment.series(tk[:-1]), np.ascontiguousarray(tension),
                 np.ascontiguousarray(B), np.ascontiguousarray(G), np.ascontiguousarray(bp),
                 np.ascontiguousarray(bR))  # fmt: skip
        if implicit:
            status, m = _run_implicit(state_k, model.kernel_model, loads, damping,
                                      numerical_damping * dt, newmark_beta, dt, done, k, every,
                                      (rec_p, rec_O, rec_E, rec_K), work, imp)  # fmt: skip
        else:
            status, m = _run(state_k, model.kernel_model, loads, damping, f_args, dt, done, k,
                             every, (rec_p, rec_O, rec_E, rec_K), work)  # fmt: skip
        rec_K_parts.append(rec_K[:m])
        done += m
        if status != STATUS_OK:
            break
    rec_K_all = np.concatenate(rec_K_parts) if rec_K_parts else np.zeros((0, 0, 3))
    if implicit and stats is not None:
        stats["newton_iterations"] = int(imp[-1][0])
    if snapshot is not None:
        for dst, src in zip((p, p_prev, O, fr), snapshot, strict=True):
            dst[...] = src
        done = n_steps
    return int(status), done, rec_p, rec_O, rec_E, rec_K_all


def _auto_integrator(su: _RunInputs, state: tuple, dt_safety: float = DEFAULT_DT_SAFETY) -> str:
    """ "implicit" when the implicit automatic step is at least `AUTO_STEP_RATIO` times the
    explicit one at the initial state (p, _, O, _, t0) and loads, else "explicit"."""
    p, _, O, _, t0 = state
    ld = su.loads_at(t0)
    dt_ex = stable_time_step(su.model, p, O, ld, su.c_lin, su.c_ang, dt_safety)
    dt_im = implicit_time_step(su.model, p, O, ld, su.c_lin, su.c_ang)
    return "implicit" if dt_im >= AUTO_STEP_RATIO * dt_ex else "explicit"


def _choose_dt(
    su: _RunInputs, dt: float | None, state: tuple, dt_safety: float, integrator: str = "explicit"
) -> tuple[float, bool]:
    if dt is None:
        p, _, O, _, t0 = state
        ld = su.loads_at(t0)
        if integrator == "implicit":
            return implicit_time_step(su.model, p, O, ld, su.c_lin, su.c_ang), True
        return stable_time_step(su.model, p, O, ld, su.c_lin, su.c_ang, dt_safety), True
    if not (isinstance(dt, int | float) and dt > 0 and math.isfinite(dt)):
        raise ValueError(f"dt must be > 0 [s], got {dt!r}")
    return float(dt), False


# ---------------------------------------------------------------------------------------------
# Section frames at the nodes (for output)


def _section_frames(model: LGVIModel, frames: np.ndarray, base_R: np.ndarray) -> np.ndarray:
    """Section frames (k, n, 3, 3) at the nodes from model frames (k, n, 3, 3).

    Link frames: node a (0 < a < N) takes the Cayley midpoint of links a - 1 and a, node 0 the
    base frame (k, 3, 3), node N the tip frame. Section layouts are returned as they are.
    """
    if not model.link_frames:
        return frames.copy()
    out = frames.copy()
    A = frames[:, :-2]
    B = frames[:, 1:-1]
    c = cayinv(np.swapaxes(A, -1, -2) @ B)
    # Half of the rotation in the Cayley parameter: tan(phi/4) from tan(phi/2).
    hc = c / (1.0 + np.sqrt(1.0 + 0.25 * np.sum(c * c, axis=-1)))[..., None]
    out[:, 1:-1] = A @ cay(hc)
    out[:, 0] = base_R
    return out
