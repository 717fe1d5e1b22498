"""Length control with pressurised chambers: an outer semismooth Newton on the tendon tensions.

The kernels' length control makes every kernel tendon an unknown of the length law, but a
chamber's internal tendons carry a known tension (-p A_eff). So with pressures the length law
is solved around the exact tension-control solve: find the robot's tensions tau (n_t,) with

    F(tau) = tau - k max(0, l(tau) - L_cmd) = 0,

l(tau) the tendon path lengths of `solve_static(tensions=tau, pressures=p, ...)`. Its Jacobian
is exact from one sensitivity integration: dl/dtau = dl/dM0 dM0/dtau + dl/dtau at fixed M0,
dM0/dtau = -(dM(L)/dM0)^-1 dM(L)/dtau (the implicit function theorem on the shooting residual).
The answer is that tension-control equilibrium, so it equals `solve_static(tensions=tau, ...)`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from softrod.rods._inputs import StaticLoads
from softrod.rods._model import RodModel
from softrod.rods._pcc import _pcc_tensions
from softrod.rods._result import StaticResult
from softrod.rods._sensitivity import _shooting_eval, chamber_kernel_loads

__all__ = ["solve_lengths_with_chambers"]

#: Outer Newton iterations (each one warm-started tension solve and one sensitivity pass).
_MAX_OUTER = 40
#: Smallest damping factor of an outer step before the solve reports a stall.
_MIN_DAMPING = 1.0 / 64.0
#: Scaled length-law residual below which a stall is round-off (the inner solves leave
#: ~1e-13 of the length in l), reported as a stall like `_shooting`'s, not as divergence.
_ROUND_OFF = 1e-11

Solve = Callable[[RodModel, StaticLoads, StaticResult | None], StaticResult]


def _law(model: RodModel, inp: StaticLoads, tau: np.ndarray, res: StaticResult) -> np.ndarray:
    """Scaled length-law residual F(tau) / tension_scale (n_t,) at a tension-control result."""
    assert inp.lengths is not None
    stretch = res.tendon_length[: model.n_tendons] - inp.lengths
    return (tau - model.tendon_k * np.maximum(stretch, 0.0)) / model.tension_scale


def _law_jacobian(
    model: RodModel, inp: StaticLoads, tau: np.ndarray, res: StaticResult
) -> np.ndarray:
    """dF/dtau / tension_scale (n_t, n_t) at a tension-control result on the kernel model."""
    n_t = model.n_tendons
    assert inp.lengths is not None
    ev = _shooting_eval(model.with_chambers, chamber_kernel_loads(model, inp, tau), res.base_moment)
    dM0 = -np.linalg.solve(ev.d_moment_d_M0, ev.d_moment_d_tension[:, :n_t])
    dl = ev.d_length_d_M0[:n_t] @ dM0 + ev.d_length_d_tension[:n_t, :n_t]
    active = (ev.tendon_length[:n_t] - inp.lengths) > 0
    return (np.eye(n_t) - (model.tendon_k * active)[:, None] * dl) / model.tension_scale


def solve_lengths_with_chambers(
    model: RodModel, inp: StaticLoads, guess: StaticResult | None, solve: Solve, rtol: float
) -> StaticResult:
    """Equilibrium under commanded tendon lengths `inp.lengths` and chamber pressures.

    model : the compiled robot (with chambers); solve(kernel model, loads, guess) runs the
    tension-control method on `model.with_chambers`; rtol : tolerance on the scaled length-law
    residual |F| / tension_scale (the shooting residual's). Returns the robot's result (its own
    tendons' tensions and lengths, `inputs` = inp, `stable` None as for any length control;
    `nit`, `nfev` summed over the inner solves).
    """
    assert inp.lengths is not None and inp.pressures is not None
    n_t = model.n_tendons
    kmodel = model.with_chambers
    # Start from the guess's tensions, else the constant-curvature estimate without pressure.
    if guess is not None and guess.tendon_tension.shape == (n_t,):
        tau = guess.tendon_tension.copy()
    else:
        tau = _pcc_tensions(model, inp.lengths)
    loads = chamber_kernel_loads(model, inp, tau)
    start = None
    if guess is not None and guess.tendon_tension.shape == (n_t,):
        assert loads.tensions is not None
        start = dataclasses.replace(guess, tendon_tension=loads.tensions.copy())
    res = solve(kmodel, loads, start)
    nit, nfev = res.nit, res.nfev
    status, message = 0, "converged"
    if not res.success:
        status, message = res.status, res.message
    else:
        F = _law(model, inp, tau, res)
        for _ in range(_MAX_OUTER):
            if np.abs(F).max() <= rtol:
                break
            step = -np.linalg.solve(_law_jacobian(model, inp, tau, res), F)
            # Damped: halve the step until the residual falls (tensions stay pull-only).
            alpha = 1.0
            while alpha >= _MIN_DAMPING:
                trial_tau = np.maximum(tau + alpha * step, 0.0)
                trial = solve(kmodel, chamber_kernel_loads(model, inp, trial_tau), res)
                nit, nfev = nit + trial.nit, nfev + trial.nfev
                if trial.success:
                    trial_F = _law(model, inp, trial_tau, trial)
                    if np.abs(trial_F).max() < np.abs(F).max():
                        tau, res, F = trial_tau, trial, trial_F
                        break
                alpha *= 0.5
            else:
                where = "at round-off" if np.abs(F).max() <= _ROUND_OFF else "above rtol"
                status, message = 2, f"did not converge: the length law stalled {where}"
                break
        else:
            status, message = 1, "did not converge: too many iterations of the length law"
    # A slack tendon carries exactly no tension (the outer Newton leaves round-off).
    tau = np.where(res.tendon_length[:n_t] <= inp.lengths, 0.0, tau)
    warm = res.warm
    if warm is not None:
        # The shape balances tension-control loads of the kernel model, not these inputs.
        warm = dataclasses.replace(warm, balanced_loads=None)
    return dataclasses.replace(
        res,
        success=status == 0 and res.success,
        status=status if res.success else res.status,
        message=message,
        residual=max(res.residual, float(np.abs(_law(model, inp, tau, res)).max())),
        nit=nit,
        nfev=nfev,
        tendon_tension=tau,
        tendon_length=res.tendon_length[:n_t].copy(),
        inputs=inp,
        warm=warm,
        stable=None,
    )
