"""What the per-row candidate probes of issue 15 share (`hardware_backbone_play.py`,
`hardware_tendon_law.py`): a replay of a recording through the fitted tension play with a row
solver that carries its own state, the tip errors, the val report, and the refit of the
candidate's parameters together with the 15 and the play (docs/validation.md).

A row solver is any object with `solve(d_eff) -> (tip (3,) [m], tip tangent (3,), converged,
tendon tensions (n,) [N], fixed-point iterations)` for one row of effective displacements
d_eff (n,) [m], solved from the state its previous row left.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from hardware_coupling import load
from hardware_underbend import fitted_params, summary

from softrod.validate import bootstrap_mean_interval
from softrod.validate._hardware import _calibration, _tracker_pose, lag, tension_play


def replay(spec, rec, solver, rows=None, stats: dict | None = None):
    """Marker prediction (k, 3) [m] in the tracker frame and success (k,) of the `rows` of a
    recording (default all), in time order: every row runs `spec`'s tension play (and lag), the
    selected rows are solved by `solver`, whose tensions the play reads (as `replay_marker`).
    `stats` gets the fixed-point iterations per row (`iters`) and the solver (`solver`)."""
    cal = _calibration(spec)
    d = np.asarray(rec.displacement, dtype=float)
    if cal.has_lag:
        d = lag(d, rec.t, cal.lag_time_constant, cal.lag_fraction)
    selected = np.zeros(len(d), dtype=bool)
    selected[np.arange(len(d))[rows] if rows is not None else slice(None)] = True
    k = int(selected.sum())
    tips, tangents, ok = np.empty((k, 3)), np.empty((k, 3)), np.empty(k, dtype=bool)
    iters: list[int] = []
    j = 0

    def solve(i: int, d_eff: np.ndarray) -> np.ndarray:
        nonlocal j
        tips[j], tangents[j], ok[j], tension, n_it = solver.solve(d_eff)
        iters.append(n_it)
        j += 1
        return tension

    tension_play(d, cal.backlash, cal.backlash_per_tension, solve, selected)
    if stats is not None:
        stats["iters"], stats["solver"] = iters, solver
    rot, trans = _tracker_pose(cal)
    marker = tips + cal.marker_offset * tangents
    return marker @ rot.T + trans[None, :], ok


def errors(spec, rec, solver, rows=None, stats: dict | None = None):
    """Tip errors (k,) [mm], the residual (3k,) [mm] and success (k,) of `replay`."""
    tip, ok = replay(spec, rec, solver, rows, stats)
    meas = rec.tip if rows is None else rec.tip[rows]
    return np.linalg.norm(tip - meas, axis=1) * 1e3, (tip - meas).ravel() * 1e3, ok


def rmse(r: np.ndarray) -> float:
    """Tip RMSE [mm] of a residual (3k,) [mm]."""
    return float(np.sqrt(np.mean(r**2) * 3))


def val_report(va, e0: np.ndarray, e: np.ndarray, label: str, ok: np.ndarray) -> None:
    """val without (e0) and with (e) the candidate, and the paired change with its 95 %
    bootstrap interval over whole val patterns (2000, seed 0)."""
    diff = e - e0
    lo, hi = bootstrap_mean_interval(diff, va.pattern, seed=0)
    print(f"  val without: {summary(e0, va)}")
    print(f"  val {label}: {summary(e, va)}, ok {ok.mean():.3f}")
    print(f"  val change {diff.mean():+.3f} mm (95 % {lo:+.3f} to {hi:+.3f}, whole val patterns)")


def play_vectors(robot: str, x15: np.ndarray, beta: float, start=(), lower=(), upper=(),
                 scale=()):  # fmt: skip
    """The tension-play fit's unknowns: (x0, lo, hi, x_scale, free) over the 15 parameters'
    vector `x15` (`HardwareParams.to_vector`), the play `beta` [m/N] and a candidate's extra
    parameters (start, bounds, optimizer scales), with `calibrate_hardware`'s bounds and scales
    and the constant backlash held at its value (0 in `hardware fit`)."""
    from softrod.validate._hardware import (
        TENSION_BACKLASH_BOUNDS,
        TENSION_BACKLASH_SCALE,
        _bounds,
        _x_scale,
        initial_params,
    )

    lo, hi = _bounds(initial_params(robot).to_vector())
    x0 = np.r_[x15, beta, start]
    lo = np.r_[lo, TENSION_BACKLASH_BOUNDS[0], lower]
    hi = np.r_[hi, TENSION_BACKLASH_BOUNDS[1], upper]
    x_scale = np.r_[_x_scale(3), TENSION_BACKLASH_SCALE, scale]
    free = np.ones(len(x0), dtype=bool)
    free[len(x15) - 1] = False  # the constant backlash
    return np.clip(x0, lo, hi), lo, hi, x_scale, free


def play_params(x: np.ndarray, n15: int):
    """`HardwareParams` of the fit vector x: the 15 (`x[:n15]`) and the play `x[n15]`."""
    from softrod.validate import HardwareParams

    return replace(HardwareParams.from_vector(x[:n15]), backlash_per_tension=float(x[n15]))


def refit(
    robot: str,
    fitted: str,
    *,
    names: Sequence[str],
    start: Sequence[float],
    lower: Sequence[float],
    upper: Sequence[float],
    scale: Sequence[float],
    make_solver: Callable[[Any, np.ndarray], Any],
    stride: int,
    max_nfev: int,
    fit_on: str | None = None,
    save: str | None = None,
) -> None:
    """The 15 parameters, the tension play and the candidate's `names` fitted together on
    every `stride`-th train row (bounds and scales of `calibrate_hardware`, the constant
    backlash held), from FITTED's values and `start`; standard errors from the Jacobian at the
    optimum. make_solver(spec, values) is a fresh row solver with the candidate at `values`.
    fit_on: fit on that file instead of train (the capacity screen, not a calibration)."""
    from scipy.optimize import least_squares

    from softrod.validate import calibrated_robot, read_recording
    from softrod.validate._hardware import DIFF_STEP

    spec, recs = load(robot, fitted)
    tr, va = recs["train"], recs["val"]
    cols = spec.calibration.servo_columns
    if fit_on is not None:
        tr = read_recording(fit_on, servo_columns=cols)
    x15 = fitted_params(robot, spec).to_vector()
    n15, m = len(x15), len(names)
    beta = spec.calibration.backlash_per_tension
    x0, lo, hi, x_scale, free = play_vectors(robot, x15, beta, start, lower, upper, scale)
    rows = np.arange(0, len(tr.t), stride)

    def model(x):
        return calibrated_robot(robot, play_params(x, n15), servo_columns=cols)

    n_eval = [0]
    t0 = time.process_time()

    def resid(xf):
        x = x0.copy()
        x[free] = xf
        spec_x = model(x)
        _, r, _ = errors(spec_x, tr, make_solver(spec_x, x[-m:]), rows)
        n_eval[0] += 1
        shown = " ".join(f"{n} {v:+.5g}" for n, v in zip(names, x[-m:], strict=True))
        print(f"    eval {n_eval[0]}: {shown} beta {x[n15]:.3e} RMSE {rmse(r):.4f} "
              f"[{time.process_time() - t0:.0f} s]", flush=True)  # fmt: skip
        return r

    r0 = resid(x0[free])
    res = least_squares(resid, x0[free], bounds=(lo[free], hi[free]), x_scale=x_scale[free],
                        diff_step=DIFF_STEP, max_nfev=max_nfev, method="trf")  # fmt: skip
    x = x0.copy()
    x[free] = res.x
    s2 = float(res.fun @ res.fun) / (len(res.fun) - len(res.x))
    se = np.sqrt(np.diag(np.linalg.pinv(res.jac.T @ res.jac) * s2))
    print(f"{robot} refit on {len(rows)} rows (every {stride}th) of "
          f"{fit_on or 'train'}: nfev {res.nfev}, status {res.status} ({res.message}), "
          f"{time.process_time() - t0:.0f} s CPU")  # fmt: skip
    print("  " + ", ".join(f"{n} = {v:.4g} +- {s:.2g}" for n, v, s in
                           zip(names, x[-m:], se[-m:], strict=True))
          + f", beta = {x[n15]:.3e} +- {se[-m - 1]:.1e} m/N")  # fmt: skip
    print(f"  train RMSE {rmse(r0):.3f} -> {rmse(res.fun):.3f} mm")
    print(f"  params {play_params(x, n15).as_dict()}")
    if save:
        np.savez(save, x=x, se_free=se, free=free)
    spec_x = model(x)
    # val against FITTED (the calibration without the candidate), and the train file.
    e_old, _, _ = errors(spec, va, make_solver(spec, np.zeros(m)))
    e_new, _, ok = errors(spec_x, va, make_solver(spec_x, x[-m:]))
    val_report(va, e_old, e_new, "with the candidate (against FITTED)", ok)
    e_tr, _, _ = errors(spec_x, recs["train"], make_solver(spec_x, x[-m:]))
    print(f"  train file, all rows: {summary(e_tr, recs['train'])}")


def option(args: list[str], name: str, default, conv):
    """Pop `name VALUE` from `args` and return conv(VALUE), else `default`."""
    if name in args:
        i = args.index(name)
        value = conv(args[i + 1])
        del args[i : i + 2]
        return value
    return default


def floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]
