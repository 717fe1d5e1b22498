"""Distributed predictive filters that estimate per-node damping (ALGORITHMS.md E.5)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from softrod.dynamics._inputs import _RunInputs, _start_state
from softrod.dynamics._integrate import (
    _STATUS_MESSAGES,
    IMPLICIT_DAMPING,
    INTEGRATORS,
    STATUS_OK,
    _Filter,
    _integrate,
)
from softrod.dynamics._modes import stable_time_step
from softrod.dynamics._simulate import _setup

__all__ = ["CAUSAL_WINDOWS", "DEFAULT_VELOCITY_FLOOR", "FIT_MAX_ITER", "FIT_RTOL",
           "DampingEstimate", "estimate_damping"]  # fmt: skip

#: Default W regularises each node's estimate as if its velocity were never below this [m/s]:
#: W = R (dt^2 v_floor / m)^2, so K is shrunk only where |v| is comparable to v_floor (E.5
#: "Degeneracy"). 1e-4 m/s is far below the velocities of the release tests (cm/s and more).
DEFAULT_VELOCITY_FLOOR = 1e-4

#: Gauss-Newton iterations of the least-squares fit; it converges in 3-6 (the trajectory is
#: smooth in the damping and the stiffness factor), so 20 only guards a bad start.
FIT_MAX_ITER = 20
#: The fit stops when a Gauss-Newton step changes each parameter by less than this fraction of
#: its standard error (noise, `DampingEstimate.std_error`) or of its value (noise-free data):
#: further steps cannot change the answer by anything the data can tell apart.
FIT_RTOL = 1e-3
#: Levenberg-Marquardt dampings tried per iteration (0, then 1e-3 x 10^i) before the fit stops.
_LM_TRIES = 5
#: Running estimates of the causal fit when `every` is not given: ten cost 2.6x the offline
#: fit (warm-started windows; 1.97 s vs 0.75 s CPU on the PDMS test, docs/dynamics.md).
CAUSAL_WINDOWS = 10
#: The stiffness factor the fit may reach: a model off by more than 4x is not a mismatch.
_GAMMA_RANGE = (0.25, 4.0)


@dataclass(frozen=True, eq=False)
class DampingEstimate:
    """Output of `estimate_damping`.

    t : (k,) [s]; nodes : (n_f,) filtered node indices; positions : (k, n, 3) the model
    positions [m] (the filter's, or the fitted model's for "least_squares"); damping :
    (k, n_f, 3) per-step estimates K (N s/m, world axes; the paper's scaling gives its own
    units and frame; "least_squares": the fit repeated); estimate : (n_f, 3) K per filtered node
    ("predictive": the velocity-weighted mean of the per-step estimates over the last `window`
    fraction, sum v^2 K / sum v^2 per component; "least_squares": the fitted damping per unit
    length times the node's lumped length, the same on every axis); tracking_error : (k,) max
    over filtered nodes of |p_model - p_measured| [m]. method : the method used.
    damping_per_length : the fitted damping c [N s/m^2] ("least_squares"; NaN otherwise);
    stiffness_scale : the fitted factor on every stiffness of the model (1.0 when not fitted);
    std_error : (n_f, 3) standard error of `estimate` from the residual's noise level (NaN for
    "predictive"); noise : RMS of the fit residual [m] (the measurement noise when the model
    fits; NaN for "predictive"); n_iter : Gauss-Newton iterations (0 for "predictive").
    With `causal=True` ("least_squares"): running_t : (m,) [s] the end of each expanding
    window, t_e = e dt; running_damping_per_length : (m,) [N s/m^2], running_stiffness_scale :
    (m,) and running_std_error : (m,) [N s/m^2] the fit on samples 0..e only; `damping[j]` is
    then the latest of these with e <= j (NaN before the first window ends), and the other
    fields are the last window's, i.e. the offline fit (None without `causal`).
    """

    success: bool
    status: int
    message: str
    t: np.ndarray
    nodes: np.ndarray
    positions: np.ndarray
    damping: np.ndarray
    estimate: np.ndarray
    tracking_error: np.ndarray
    dt: float
    wall_time: float
    method: str = "predictive"
    damping_per_length: float = math.nan
    stiffness_scale: float = 1.0
    std_error: np.ndarray | None = None
    noise: float = math.nan
    n_iter: int = 0
    running_t: np.ndarray | None = None
    running_damping_per_length: np.ndarray | None = None
    running_stiffness_scale: np.ndarray | None = None
    running_std_error: np.ndarray | None = None


def _backward_trend(meas: np.ndarray, step0: np.ndarray) -> np.ndarray:
    """The backward trend y^j - y^{j-1}, (k, n_f, 3) [m]; before the first sample the model's
    initial step `step0` (n_f, 3) (p^0 - p^{-1}) stands in for y^0 - y^{-1}."""
    return np.ascontiguousarray(np.concatenate([step0[None], np.diff(meas, axis=0)]))


def _scaled_inputs(
    su: _RunInputs, c: float, scale: float, nodes: np.ndarray, others: bool
) -> _RunInputs:
    """`su` with every stiffness times `scale` and damping c per unit length at `nodes` (and at
    every node when `others`, i.e. no `damping` was given)."""
    model = su.model
    if scale != 1.0:
        model = replace(model, elem_C1=model.elem_C1 * scale, spr_K=model.spr_K * scale,
                        stiffness_scale=model.stiffness_scale * scale)  # fmt: skip
    c_lin = su.c_lin.copy()
    where = np.arange(model.n_nodes) if others else nodes
    c_lin[where] = c * model.node_weight[where, None]
    c_lin[~model.pos_free] = su.c_lin[~model.pos_free]
    return replace(su, model=model, c_lin=np.ascontiguousarray(c_lin))


def _fit(
    su: _RunInputs, initial: Any, dt: float, meas: np.ndarray, nodes: np.ndarray,
    fit_stiffness: bool, others: bool, integrator: str = "explicit",
    theta0: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int, int, int, np.ndarray]:  # fmt: skip
    """Least-squares fit of (c, stiffness factor) to the measured positions (see
    `estimate_damping`), from `theta0` (default c = 0, gamma = 1; the causal fit warm-starts
    each window from the previous window's answer). Returns (theta, covariance of theta per
    unit noise variance, status, steps done, iterations, model positions (n_steps + 1, n, 3))."""
    n_steps = meas.shape[0] - 1
    num = IMPLICIT_DAMPING if integrator == "implicit" else 0.0

    def run(theta: np.ndarray) -> tuple[int, int, np.ndarray]:
        sc = _scaled_inputs(su, float(theta[0]), float(theta[1]), nodes, others)
        state = _start_state(sc, initial, dt)
        status, done, rec_p, _, _, _ = _integrate(sc, state, dt, n_steps, 1,
                                                  integrator=integrator,
                                                  numerical_damping=num)  # fmt: skip
        return status, done, rec_p

    def residual(rec_p: np.ndarray) -> np.ndarray:
        return (rec_p[:, nodes] - meas).ravel()

    # Scales: the damping whose decay time is the record's, and the stiffness factor itself.
    m_line = float(np.sum(su.model.node_mass) / su.model.total_length)
    scale = np.array([m_line / (n_steps * dt), 1.0])
    h = np.array([1e-3, 1e-4]) * scale
    n_par = 2 if fit_stiffness else 1
    theta = np.array([0.0, 1.0]) if theta0 is None else np.array(theta0, dtype=float)
    status, done, rec_p = run(theta)
    r = residual(rec_p)
    cost = float(r @ r)
    JtJ = np.eye(n_par)
    n_iter = 0
    for n_iter in range(1, FIT_MAX_ITER + 1):
        if status != STATUS_OK:
            break
        # Forward-difference Jacobian of the residual in (c, gamma).
        J = np.empty((r.shape[0], n_par))
        for i in range(n_par):
            th = theta.copy()
            th[i] += h[i]
            st_i, _, rec_i = run(th)
            if st_i != STATUS_OK:
                return theta, np.full((2, 2), np.nan), st_i, done, n_iter, rec_p
            J[:, i] = (residual(rec_i) - r) / h[i]
        JtJ = J.T @ J
        g = J.T @ r
        # Levenberg-Marquardt: the Gauss-Newton step, damped until it lowers the cost.
        accepted = None
        mu = 0.0
        for _ in range(_LM_TRIES):
            step = -np.linalg.solve(JtJ + mu * np.diag(np.diag(JtJ)), g)
            trial = theta.copy()
            trial[:n_par] += step
            trial[0] = max(trial[0], 0.0)
            trial[1] = min(max(trial[1], _GAMMA_RANGE[0]), _GAMMA_RANGE[1])
            st_t, done_t, rec_t = run(trial)
            if st_t == STATUS_OK:
                r_t = residual(rec_t)
                if float(r_t @ r_t) <= cost:
                    accepted = (trial, r_t, rec_t, done_t)
                    break
            mu = max(1e-3, 10.0 * mu)
        if accepted is None:
            # No step lowers the cost: the minimum to round-off.
            break
        delta = np.abs(accepted[0] - theta)[:n_par]
        theta, r, rec_p, done = accepted
        cost = float(r @ r)
        # Converged: the step is far below the parameters' standard error (or round-off).
        sigma2 = cost / max(r.shape[0] - n_par, 1)
        se = np.sqrt(np.diag(np.linalg.inv(JtJ)) * sigma2)
        floor = 1e-10 * np.maximum(np.abs(theta), scale)[:n_par]
        if np.all(delta <= np.maximum(FIT_RTOL * se, floor)):
            break
    cov = np.zeros((2, 2))
    cov[:n_par, :n_par] = np.linalg.inv(JtJ)
    return theta, cov, status, done, n_iter, rec_p


def estimate_damping(
    robot: Any,
    measurements: np.ndarray,
    dt: float,
    *,
    nodes: Sequence[int] | None = None,
    initial: Any = None,
    R: float | np.ndarray = 1.0,
    W: float | np.ndarray | None = None,
    velocity_floor: float = DEFAULT_VELOCITY_FLOOR,
    paper_scaling: bool = False,
    window: float = 0.5,
    tensions: Any = None,
    tip_force: Any = None,
    distributed_force: Any = None,
    gravity: Any = None,
    magnets: Any = None,
    field: Any = None,
    damping: Any = None,
    base_motion: Any = None,
    elements: int | Sequence[int] | None = None,
    shear_eval: str = "left",
    clamp: str = "auto",
    rotary_inertia_scale: float = 1.0,
    sample_every: int = 1,
    method: str | None = None,
    fit_stiffness: bool = True,
    trend: str = "model",
    integrator: str = "auto",
    causal: bool = False,
    every: int | None = None,
) -> DampingEstimate:
    """Estimate the damping at the measured nodes from measured positions (E.5).

    Two methods:

    * "least_squares" (default): the least-squares form of the E.5 predictor over the whole
      record, with a noise model. The measured positions are y = p(c, gamma) + noise, white
      with one variance sigma^2 (R = I / sigma^2 then drops out of the minimiser);
      p(c, gamma) are the model's
      positions from `initial` with damping c [N s/m^2] per unit length (K = c x lumped
      length at each node, the `damping` convention of `simulate_dynamic`) and every
      stiffness times gamma. Levenberg-Marquardt minimises sum |p - y|^2 over the whole
      record. Fitting gamma (`fit_stiffness`, default) takes out a stiffness mismatch: an
      error in E scales the elastic force, which is displacement-proportional and changes
      the frequencies, while the damping force is velocity-proportional and changes the decay;
      the two are separate directions of the fit, so gamma absorbs the stiffness error and c
      stays unbiased. Noise averages over all k n_f samples: std_error = sigma sqrt(diag
      (J^T J)^-1) with sigma from the residual. Cost: about three runs of the model per
      iteration. It uses the whole record (offline) unless `causal=True`: then the same fit
      runs on the expanding window of samples 0..e at every `every`-th sample e (and the
      last), each warm-started from the previous window's answer, so the estimate at t_e
      uses only measurements up to t_e (`running_*` fields; the last equals the offline fit
      to within FIT_RTOL of its standard error). On the PDMS release of tests/test_filter.py
      it is within 10 % from a quarter period (0.12 s) on at 1-10 um of noise and +-5 % in E.
    * "predictive" (default with `paper_scaling`): the paper's per-step filter. Each measured
      node estimates its own damping capacity K (3,) every step from the output error, its
      undamped one-step model drift and the backward (causal) measurement trend d: only
      measurements up to step j set the step to j + 1 (`trend`):
      K = -(M^T R M + W)^-1 M^T R (Z + e - d), M = dp^{j+1}/dK = -(dt^2/m) diag(v)
      (consistent) or the paper's -(2 dt^2/(l M)) O^T diag(p^j - p^{j-1}) dt
      (`paper_scaling=True`), then propagates with it. Accurate (4e-4) on noise-free data
      from the same model; measurement noise and stiffness errors pass straight into K (see
      docs/dynamics.md).

    Other nodes use `damping` (default: for "least_squares" the fitted c everywhere).

    measurements : (k, n_f, 3) measured positions [m] of `nodes` at t = j dt, j = 0..k-1 (the
        integrator's step); (k, n, 3) with all nodes is accepted and node 0 dropped.
    nodes : model node indices measured (default all but the base node 0).
    initial : as in `simulate_dynamic` (the state the measured motion starts from).
    method : "least_squares" or "predictive" (default: "least_squares", or "predictive" with
        `paper_scaling`).
    fit_stiffness : fit the stiffness factor gamma along with c ("least_squares").
    causal : the running (causal) least-squares fit on expanding windows ("least_squares").
    every : samples between the running estimates (int >= 2; default ceil(k / CAUSAL_WINDOWS),
        ten estimates); only with `causal`. Cost: one warm-started fit per window over its
        own length (2-4 iterations; ten windows 2.6x the offline fit, docs/dynamics.md).
    R : scalar or (3, 3) output weight [1/m^2]; W : scalar or (3, 3) estimate weight (default
        from `velocity_floor` [m/s], see `DEFAULT_VELOCITY_FLOOR`) ("predictive").
    window : fraction of the run (from the end) averaged into `estimate` ("predictive").
    trend : the predictive filter's causal trend d ("predictive"): "linear", the spec's
        backward difference y^j - y^{j-1} (it predicts y^{j+1} at constant velocity, so the
        measured acceleration stays in Z + e - d and K absorbs f / v: 169 % off noise-free
        in the PDMS test), or "model" (default), that plus the model's undamped
        drift dt^2 f / m, so that Z + e - d = 2 e^j - e^{j-1} is the output error the damping
        left and K lags the truth by one step (O(omega dt)).
    integrator : the model's time step, as in `simulate_dynamic` ("least_squares" only:
        "implicit" lets a stiff rod's measurements come at the bending modes' rate, e.g. 1 ms
        for the steel rod, instead of the explicit step's 1e-7 s). Default "auto": the
        measurement period `dt` is the step, so "explicit" where `dt` is within the explicit
        step's stability limit at the initial state (every soft-rod case, unchanged), else
        "implicit"; "predictive" always runs explicit.
    Loads and discretisation options as in `simulate_dynamic`.
    """
    t_wall = time.perf_counter()
    if method is None:
        method = "predictive" if paper_scaling else "least_squares"
    if method not in ("least_squares", "predictive"):
        raise ValueError(f"method must be 'least_squares' or 'predictive', got {method!r}")
    if method == "least_squares" and paper_scaling:
        raise ValueError("paper_scaling is an option of method='predictive'")
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    # The per-step filter corrects inside the explicit kernel; the fit only runs the model.
    if integrator == "auto" and method == "predictive":
        integrator = "explicit"
    if method == "predictive" and integrator != "explicit":
        raise ValueError("method='predictive' runs with integrator='explicit'")
    su = _setup(robot, tensions, tip_force, distributed_force, gravity, magnets, field, damping,
                None, None, base_motion, elements, shear_eval, clamp, None, None,
                rotary_inertia_scale)  # fmt: skip
    model = su.model
    n = model.n_nodes
    if not (isinstance(dt, int | float) and dt > 0 and math.isfinite(dt)):
        raise ValueError(f"dt must be > 0 [s] (the measurement period), got {dt!r}")
    # The measurement period is the step: explicit where it is stable there, else implicit.
    if integrator == "auto":
        p0, _, O0, _, t0 = _start_state(su, initial, float(dt))
        dt_ex = stable_time_step(model, p0, O0, su.loads_at(t0), su.c_lin, su.c_ang, 1.0)
        integrator = "explicit" if dt <= dt_ex else "implicit"
    meas = np.asarray(measurements, dtype=float)
    if meas.ndim != 3 or meas.shape[2] != 3 or meas.shape[0] < 3:
        raise ValueError(f"measurements must be (k >= 3, n_f, 3) [m], got shape {meas.shape}")
    if nodes is None:
        if meas.shape[1] == n:
            meas = meas[:, 1:]
        nodes_arr = np.arange(1, n, dtype=np.int64)
    else:
        nodes_arr = np.asarray(nodes, dtype=np.int64).reshape(-1)
    if meas.shape[1] != nodes_arr.shape[0]:
        raise ValueError(
            f"measurements have {meas.shape[1]} nodes, expected {nodes_arr.shape[0]} (nodes)"
        )
    if np.any(nodes_arr < 1) or np.any(nodes_arr >= n):
        raise ValueError(f"nodes must be in 1..{n - 1} (node 0 is the clamped base)")
    if not np.all(np.isfinite(meas)):
        raise ValueError("measurements must be finite")
    Rm = np.asarray(R, dtype=float) * (np.eye(3) if np.ndim(R) == 0 else 1.0)
    if Rm.shape != (3, 3):
        raise ValueError(f"R must be a scalar or (3, 3), got shape {Rm.shape}")
    n_f = nodes_arr.shape[0]
    # The paper's l M per node: the line mass times the element length there.
    l_node = np.append(model.elem_len, model.elem_len[-1])[nodes_arr]
    rho_A = model.rod.rho_A[model.elem_seg[np.minimum(nodes_arr, model.n_elements - 1)]]
    paper_mass = rho_A * l_node
    if W is None:
        if paper_scaling:
            scale = 2 * dt**4 * velocity_floor / paper_mass
        else:
            scale = dt**2 * velocity_floor / model.node_mass[nodes_arr]
        Wm = (scale**2)[:, None, None] * Rm[None]
    else:
        W0 = np.asarray(W, dtype=float) * (np.eye(3) if np.ndim(W) == 0 else 1.0)
        if W0.shape != (3, 3):
            raise ValueError(f"W must be a scalar or (3, 3), got shape {W0.shape}")
        Wm = np.repeat(W0[None], n_f, axis=0)
    n_steps = meas.shape[0] - 1
    if causal and method != "least_squares":
        raise ValueError("causal is an option of method='least_squares' (the per-step "
                         "'predictive' filter is causal already)")  # fmt: skip
    if every is not None and not causal:
        raise ValueError(f"every is an option of causal=True, got every={every!r}")
    n_every = max(-(-n_steps // CAUSAL_WINDOWS), 2) if every is None else every
    if causal and not (isinstance(n_every, int | np.integer) and 2 <= n_every <= n_steps):
        raise ValueError(f"every must be an int in 2..{n_steps} (samples), got {every!r}")
    if method == "least_squares":
        others = damping is None
        n_par = 2 if fit_stiffness else 1
        running: dict[str, Any] = {}
        if causal:
            # The same fit on the expanding window [0, t_e] at every `every`-th sample, each
            # from the previous window's answer: the estimate at t_e uses samples 0..e only.
            ends = list(range(int(n_every), n_steps + 1, int(n_every)))
            if ends[-1] != n_steps:
                ends.append(n_steps)
            theta_w: np.ndarray | None = None
            rows: list[tuple[float, float, float, float]] = []
            for e in ends:
                fit = _fit(su, initial, float(dt), meas[: e + 1], nodes_arr,
                           bool(fit_stiffness), others, integrator, theta_w)  # fmt: skip
                theta_w, cov_w, st_w, _, _, rec_w = fit
                if st_w != STATUS_OK:
                    break
                res_w = rec_w[: e + 1, nodes_arr] - meas[: e + 1]
                s2_w = np.sum(res_w**2) / max(res_w.size - n_par, 1)
                rows.append((e * dt, float(theta_w[0]), float(theta_w[1]),
                             float(np.sqrt(max(cov_w[0, 0] * s2_w, 0.0)))))  # fmt: skip
            arr = np.array(rows, dtype=float).reshape(-1, 4)
            running = dict(running_t=arr[:, 0], running_damping_per_length=arr[:, 1],
                           running_stiffness_scale=arr[:, 2],
                           running_std_error=arr[:, 3])  # fmt: skip
        else:
            fit = _fit(su, initial, float(dt), meas, nodes_arr, bool(fit_stiffness), others,
                       integrator)  # fmt: skip
        theta, cov, status, done, n_iter, rec_p = fit
        n_ok = min(done, n_steps) // sample_every + 1
        # (A causal run that failed stops at its window: the residual up to there.)
        m_res = min(rec_p.shape[0], n_steps + 1)
        resid = rec_p[:m_res, nodes_arr] - meas[:m_res]
        noise = float(np.sqrt(np.mean(resid**2))) if status == STATUS_OK else math.nan
        sigma2 = np.sum(resid**2) / max(resid.size - n_par, 1)
        c_se = float(np.sqrt(max(cov[0, 0] * sigma2, 0.0)))
        weight = model.node_weight[nodes_arr]
        est = np.repeat((theta[0] * weight)[:, None], 3, axis=1)
        rec_K = np.repeat(est[None], n_steps, axis=0)
        if causal:
            # Step j holds the latest running estimate that uses samples up to j (NaN before
            # the first window ends).
            c_step = np.full(n_steps, np.nan)
            for e, c_e in zip(ends, running["running_damping_per_length"], strict=False):
                c_step[e:] = c_e
            rec_K = np.repeat((c_step[:, None] * weight[None])[:, :, None], 3, axis=2)
        pos = rec_p[: n_ok * sample_every : sample_every]
        extra = dict(method=method, damping_per_length=float(theta[0]),
                     stiffness_scale=float(theta[1]),
                     std_error=np.repeat((c_se * weight)[:, None], 3, axis=1), noise=noise,
                     n_iter=int(n_iter), **running)  # fmt: skip
    else:
        state = _start_state(su, initial, float(dt))
        if trend not in ("model", "linear"):
            raise ValueError(f"trend must be 'model' or 'linear', got {trend!r}")
        d = _backward_trend(meas, state[0][nodes_arr] - state[1][nodes_arr])
        filt = _Filter(nodes_arr, np.ascontiguousarray(meas), d, Rm, np.ascontiguousarray(Wm),
                       paper_mass, bool(paper_scaling), trend == "model")  # fmt: skip
        status, done, rec_p, _, _, rec_K = _integrate(su, state, float(dt), n_steps,
                                                      sample_every, filt)  # fmt: skip
        rec_K = rec_K[:n_steps]
        n_ok = min(done, n_steps) // sample_every + 1
        pos = rec_p[:n_ok]
        # Velocity-weighted mean over the window.
        k0 = int(rec_K.shape[0] * (1 - window))
        v = np.diff(meas, axis=0)[k0 : rec_K.shape[0]] / dt
        w = v**2
        est = np.sum(w * rec_K[k0:], axis=0) / np.maximum(np.sum(w, axis=0), 1e-300)
        extra = dict(method=method, std_error=np.full((n_f, 3), np.nan))
    t = np.arange(n_ok) * sample_every * dt
    err = np.max(np.linalg.norm(pos[:, nodes_arr] - meas[: n_ok * sample_every : sample_every],
                                axis=2), axis=1)  # fmt: skip
    msg = _STATUS_MESSAGES[status]
    if status != STATUS_OK:
        msg = f"{msg} at t = {done * dt:.6g} s"
    return DampingEstimate(
        success=status == STATUS_OK,
        status=status,
        message=msg,
        t=t,
        nodes=nodes_arr,
        positions=pos,
        damping=rec_K,
        estimate=est,
        tracking_error=err,
        dt=float(dt),
        wall_time=time.perf_counter() - t_wall,
        **extra,  # type: ignore[arg-type]
    )
