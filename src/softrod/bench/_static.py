"""`softrod bench static`: speed and accuracy of the static solver (issue 2 benchmark).

Cases (each prints `case.metric: value` lines):
- softmanisim: the SoftManiSim robot (1 segment, 4 tendons at 7.5 mm, EI = 2.2e-3 N m^2),
  random tip forces 0-2 N in random directions, distributed load [1, 1, 1] N/m, random
  tensions on two adjacent tendons; sequential solves, each warm-started from the previous.
- tdcr3: the seed-002 3-segment, 9-tendon TDCR under gravity; warm along a smooth tension
  trajectory (100 Hz) and cold (straight start) on random tensions.
- scipy_lm: the same SoftManiSim problem solved the way a typical Python implementation does
  it (scipy solve_ivp + least_squares(method="lm"), finite-difference Jacobian).
- accuracy: tip error of the default resolution against a 16x finer solution.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from softrod.description import find_robot, load_robot
from softrod.rods import compile_model, solve_static

__all__ = ["run_static_bench", "example_robot_path"]


def example_robot_path(name: str) -> Path:
    """Path of a shipped example robot by name (`softrod.description.find_robot`)."""
    return find_robot(name)


def _random_unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _softmanisim_inputs(n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    out = []
    for _ in range(n):
        k = int(rng.integers(4))
        tau = np.zeros(4)
        tau[k] = rng.uniform(0, 2.0)
        tau[(k + 1) % 4] = rng.uniform(0, 2.0)
        out.append(
            dict(
                tensions=tau,
                tip_force=rng.uniform(0, 2.0) * _random_unit(rng),
                distributed_force=np.array([1.0, 1.0, 1.0]),
            )
        )
    return out


def _time_sequence(model: Any, inputs: list[dict[str, Any]], warm: bool) -> tuple[np.ndarray, list]:
    times = np.empty(len(inputs))
    results = []
    prev = None
    for i, kw in enumerate(inputs):
        t0 = time.perf_counter()
        sol = solve_static(model, guess=prev if warm else None, **kw)
        times[i] = time.perf_counter() - t0
        results.append(sol)
        prev = sol if sol.success else None
    return times, results


def _scipy_lm_solver(spec) -> Callable[[dict, np.ndarray | None], tuple[np.ndarray, bool]]:
    """A plain SciPy shooting solver for a one-segment Kirchhoff robot (the baseline)."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import least_squares

    model = compile_model(spec)
    EI = model.K_bt[0, 0]
    GJ = model.K_bt[0, 2]
    L = model.total_length
    r = model.tendon_r
    Kd = np.array([EI, EI, GJ])

    def solve(kw: dict, x0: np.ndarray | None) -> tuple[np.ndarray, bool]:
        tau = np.asarray(kw["tensions"], float)
        F = np.asarray(kw["tip_force"], float)
        f = np.asarray(kw["distributed_force"], float)

        def section(mb: np.ndarray, u: np.ndarray) -> np.ndarray:
            # Newton on K u + sum tau r x t(u) = mb (a few iterations, numpy).
            for _ in range(8):
                w = np.array([0.0, 0.0, 1.0]) + np.cross(u, r)
                nw = np.linalg.norm(w, axis=1)
                t = w / nw[:, None]
                g = Kd * u + (tau[:, None] * np.cross(r, t)).sum(0) - mb
                J = np.diag(Kd)
                for i in range(len(tau)):
                    P = tau[i] * (np.eye(3) - np.outer(t[i], t[i])) / nw[i]
                    rx = np.array(
                        [[0, -r[i, 2], r[i, 1]], [r[i, 2], 0, -r[i, 0]], [-r[i, 1], r[i, 0], 0]]
                    )
                    J = J - rx @ P @ rx
                du = np.linalg.solve(J, -g)
                u = u + du
                if np.max(np.abs(du)) < 1e-12:
                    break
            return u

        def rhs(s: float, y: np.ndarray) -> np.ndarray:
            R = y[3:12].reshape(3, 3)
            M = y[12:15]
            N = F + f * (L - s)
            u = section(R.T @ M, np.zeros(3))
            pd = R[:, 2]
            uh = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
            return np.concatenate([pd, (R @ uh).ravel(), -np.cross(pd, N)])

        def residual(m0: np.ndarray) -> np.ndarray:
            y0 = np.concatenate([np.zeros(3), np.eye(3).ravel(), m0])
            sol = solve_ivp(rhs, (0, L), y0, rtol=1e-6, atol=1e-9)
            return sol.y[12:15, -1] / (EI / L)

        res = least_squares(
            residual, np.zeros(3) if x0 is None else x0, method="lm", xtol=1e-10, ftol=1e-10
        )
        return res.x, bool(res.success)

    return solve


def run_static_bench(
    n_softmanisim: int = 300, n_tdcr: int = 100, n_scipy: int = 20, seed: int = 0
) -> dict[str, float]:
    """Run the static benchmark; returns {"case.metric": value}. Single thread, after JIT."""
    rng = np.random.default_rng(seed)
    out: dict[str, float] = {}

    # --- SoftManiSim robot, warm-started sequential solves under random loads
    sms = load_robot(example_robot_path("softmanisim"))
    m_sms = compile_model(sms)
    inputs = _softmanisim_inputs(n_softmanisim, rng)
    _time_sequence(m_sms, inputs[:5], warm=True)  # JIT warm-up
    t, res = _time_sequence(m_sms, inputs, warm=True)
    out["softmanisim.n_solves"] = float(n_softmanisim)
    out["softmanisim.median_ms"] = float(np.median(t) * 1e3)
    out["softmanisim.p95_ms"] = float(np.percentile(t, 95) * 1e3)
    out["softmanisim.converged_fraction"] = float(np.mean([r.success for r in res]))
    out["softmanisim.mean_newton_iterations"] = float(np.mean([r.nit for r in res]))
    out["softmanisim.max_residual"] = float(max(r.residual for r in res))
    # Accuracy of the default resolution against a 16x finer grid on a few of the cases.
    fine = compile_model(sms, steps=16 * (m_sms.n_nodes - 1))
    errs = [
        np.linalg.norm(res[i].tip_position - solve_static(fine, **inputs[i]).tip_position)
        for i in range(0, n_softmanisim, max(1, n_softmanisim // 10))
    ]
    out["softmanisim.tip_error_vs_fine_m"] = float(max(errs))

    # --- SciPy L-M shooting baseline on the same problem (fewer solves: it is slow)
    lm = _scipy_lm_solver(sms)
    x_prev = None
    t_lm = []
    err_lm = []
    for i in range(n_scipy):
        t0 = time.perf_counter()
        x_prev, _ok = lm(inputs[i], x_prev)
        t_lm.append(time.perf_counter() - t0)
        err_lm.append(np.linalg.norm(x_prev - res[i].base_moment))
    out["scipy_lm.median_ms"] = float(np.median(t_lm) * 1e3)
    out["scipy_lm.speedup_softrod_x"] = out["scipy_lm.median_ms"] / out["softmanisim.median_ms"]

    # --- 3-segment TDCR: warm along a smooth trajectory, cold from a straight start
    tdcr = load_robot(example_robot_path("tdcr3"))
    m_tdcr = compile_model(tdcr)
    g = np.array([0.0, 0.0, -9.81])
    ts = np.arange(n_tdcr) / 100.0
    phase = rng.uniform(0, 2 * np.pi, size=9)
    traj: list[dict[str, Any]] = [
        dict(tensions=np.maximum(0.0, 1.5 * np.sin(2 * np.pi * 0.5 * tk + phase)), gravity=g)
        for tk in ts
    ]
    _time_sequence(m_tdcr, traj[:3], warm=True)
    t, res_t = _time_sequence(m_tdcr, traj, warm=True)
    out["tdcr3_warm.median_ms"] = float(np.median(t) * 1e3)
    out["tdcr3_warm.converged_fraction"] = float(np.mean([r.success for r in res_t]))
    cold: list[dict[str, Any]] = [
        dict(
            tensions=rng.uniform(0, 3.0, size=9) * (rng.random(9) < 0.4),
            gravity=g,
            tip_force=0.2 * _random_unit(rng),
        )
        for _ in range(n_tdcr)
    ]
    t, res_c = _time_sequence(m_tdcr, cold, warm=False)
    out["tdcr3_cold.median_ms"] = float(np.median(t) * 1e3)
    out["tdcr3_cold.p95_ms"] = float(np.percentile(t, 95) * 1e3)
    out["tdcr3_cold.converged_fraction"] = float(np.mean([r.success for r in res_c]))
    fine_t = compile_model(tdcr, steps=16 * (m_tdcr.n_nodes - 1))
    errs = [
        np.linalg.norm(res_c[i].tip_position - solve_static(fine_t, **cold[i]).tip_position)
        for i in range(0, n_tdcr, max(1, n_tdcr // 10))
    ]
    out["tdcr3.tip_error_vs_fine_m"] = float(max(errs))
    return out
