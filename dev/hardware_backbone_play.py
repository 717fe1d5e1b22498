"""A hysteretic backbone for the physical TDCRs: curvature memory in the NiTi wire itself
(issue 15; docs/validation.md, "A hysteretic backbone").

    PYTHONPATH=src python dev/hardware_backbone_play.py ROBOT FITTED.yaml scan [--stride S]
        [--alpha A,..] [--width W,..]
    PYTHONPATH=src python dev/hardware_backbone_play.py ROBOT FITTED.yaml refit [--stride S]
        [--max-nfev N] [--start A,W] [--save OUT.npz]
    PYTHONPATH=src python dev/hardware_backbone_play.py ROBOT FITTED.yaml val A W [--params P.npz]
    PYTHONPATH=src python dev/hardware_backbone_play.py ROBOT FITTED.yaml check

FITTED is a `softrod hardware fit` description fitted on ROBOT's train file (its 15 parameters
and its tension play are held in `scan` and `val`, fitted with the two here in `refit`).

The candidate: a fraction alpha of the backbone's bending stiffness sits behind a play (stop)
operator of half-width w [1/m] on the curvature, the classical elastic-plastic element with
linear hardening (Prandtl; a superelastic or partly martensitic NiTi wire, or friction between
the wire and the disks it is clamped in, both give it):

    M = EI (kappa - alpha p),    p = play_w(kappa): p moves with kappa only once |kappa - p| > w,

so bending from rest is elastic up to |kappa| = w, then the tangent stiffness is (1 - alpha) EI,
and on reversal the full EI returns until the play is crossed: loops whose width grows with
the bend, and a residual bend alpha p toward the last bend at rest (what the recordings show:
"Memory at rest" in docs/validation.md). p is a 2-vector (both bending directions, the vector
play: the stop moves along kappa - p) per disk interval, the state carried from row to row.

The static solver takes one precurvature per segment, so each segment is cut into one
sub-segment per disk interval (`hardware_underbend.split_segments`: same grid and answers)
and each row is a fixed point on p: precurvature alpha p, solve, p = play(kappa mean over each
interval; previous row's p), until p changes by < FIX_TOL. alpha = 0 is the plain replay of
FITTED (`check`). The rows go through FITTED's tension play (`tension_play`) as in
`replay_marker`. Nothing is selected on val.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.rods import compile_model, solve_static
from softrod.rods._model import _MODEL_CACHE
from softrod.rods._shooting import _FINE_MODELS
from softrod.validate import bootstrap_mean_interval
from softrod.validate._hardware import (
    _calibration,
    _commanded,
    _tracker_pose,
    lag,
    replay_marker,
    tension_play,
)

sys.path.insert(0, "dev")
from hardware_coupling import load  # noqa: E402
from hardware_underbend import _seg_mean, fitted_params, split_segments, summary  # noqa: E402

#: Fixed-point stop: the change of the play state p [1/m] per iteration; 1e-6 1/m over the
#: robot's ~0.2 m moves the tip by far less than 1 um.
FIX_TOL = 1e-6
#: Fixed-point iterations per row before the row is declared failed.
FIX_MAX = 60


def write_precurvature(model, u: np.ndarray) -> bool:
    """Write the bending precurvature u (n_seg, 2) [1/m] into `model` and the refined grids
    the solver keeps for it; True when one of them had another value."""
    stale = False
    for m in (model, *_FINE_MODELS.get(model, {}).values()):
        stale |= not np.array_equal(m.u_star[:, :2], u)
        m.u_star[:, :2] = u
        m.seg_par[:, 6:8] = u
    return stale


def vector_play(x: np.ndarray, p: np.ndarray, w: float) -> np.ndarray:
    """The 2-D play (stop) operator, row-wise: p (k, 2) moves toward x (k, 2) just enough that
    |x - p| <= w."""
    d = x - p
    n = np.linalg.norm(d, axis=1)
    move = np.maximum(n - w, 0.0) / np.maximum(n, 1e-300)
    return p + d * move[:, None]


class BackbonePlay:
    """The hysteretic backbone on `spec` (a fitted description): `solve(d_eff)` solves one row
    of effective displacements (n,) [m] from the carried state and returns (tip, tangent, ok,
    tensions, iterations)."""

    def __init__(self, spec, alpha: float, width: float):
        self.spec, self.alpha, self.width = spec, float(alpha), float(width)
        self.cal = _calibration(spec)
        # The solver's refined grids come from a cache by description content, shared by
        # every model of the same description: drop it, or an earlier replay's precurvature,
        # written into those grids, leaks into this one (its rest lengths included).
        _MODEL_CACHE.clear()
        self.model = compile_model(split_segments(spec))
        n_t = spec.n_tendons
        self.rest = np.asarray(solve_static(self.model, tensions=np.zeros(n_t)).tendon_length)
        self.p = np.zeros((len(self.model.seg_length), 2))
        self.guess = None

    def solve(self, d_eff: np.ndarray):
        model, alpha = self.model, self.alpha
        ell = _commanded(self.spec, self.cal, self.rest, d_eff[None, :])[0]
        p_prev = self.p
        p = p_prev.copy()
        done = False
        sol = None
        for it in range(FIX_MAX):  # noqa: B007 (it counts the iterations after the loop)
            write_precurvature(model, alpha * p)
            sol = solve_static(model, lengths=ell, guess=self.guess, check_stability=False)
            if not sol.success:
                break
            self.guess = sol
            if alpha == 0.0:
                done = True
                break
            kappa = _seg_mean(model, np.asarray(sol.s), np.asarray(sol.curvature)[:, :2])
            new = vector_play(kappa, p_prev, self.width)
            # A refined grid made during this solve starts at the description's precurvature.
            stale = write_precurvature(model, alpha * p)
            change = float(np.max(np.abs(new - p)))
            p = new
            if change < FIX_TOL and not stale:
                done = True
                break
        assert sol is not None
        if done:
            self.p = p
        else:
            # The state stays where the last converged row left it; the next row starts cold.
            self.guess = None
            write_precurvature(model, alpha * p_prev)
        tangent = np.asarray(sol.tip_rotation)[:, 2]
        return sol.tip_position, tangent, done, np.asarray(sol.tendon_tension), it + 1


def replay(spec, rec, alpha: float, width: float, rows=None, stats: dict | None = None):
    """Marker prediction (k, 3) [m] in the tracker frame and success (k,) of the `rows` of a
    recording (default all), in time order through the tension play and the backbone play."""
    cal = _calibration(spec)
    d = np.asarray(rec.displacement, dtype=float)
    if cal.has_lag:
        d = lag(d, rec.t, cal.lag_time_constant, cal.lag_fraction)
    selected = np.zeros(len(d), dtype=bool)
    selected[np.arange(len(d))[rows] if rows is not None else slice(None)] = True
    k = int(selected.sum())
    tips, tangents, ok = np.empty((k, 3)), np.empty((k, 3)), np.empty(k, dtype=bool)
    iters = []
    bp = BackbonePlay(spec, alpha, width)
    j = 0

    def solve(i: int, d_eff: np.ndarray) -> np.ndarray:
        nonlocal j
        tips[j], tangents[j], ok[j], tension, n_it = bp.solve(d_eff)
        iters.append(n_it)
        j += 1
        return tension

    tension_play(d, cal.backlash, cal.backlash_per_tension, solve, selected)
    if stats is not None:
        stats["iters"] = iters
        stats["p_max"] = float(np.max(np.linalg.norm(bp.p, axis=1)))
    rot, trans = _tracker_pose(cal)
    marker = tips + cal.marker_offset * tangents
    return marker @ rot.T + trans[None, :], ok


def _err(spec, rec, alpha, width, rows=None, stats=None):
    tip, ok = replay(spec, rec, alpha, width, rows, stats)
    meas = rec.tip if rows is None else rec.tip[rows]
    return np.linalg.norm(tip - meas, axis=1) * 1e3, (tip - meas).ravel() * 1e3, ok


def check(robot: str, fitted: str) -> None:
    """alpha = 0 against `replay_marker` of FITTED (the plain replay), on the first 60 val rows."""
    spec, recs = load(robot, fitted)
    va = recs["val"]
    rows = np.arange(60)
    ref, _ = replay_marker(spec, va.displacement, rows=rows, t=va.t)
    tip, ok = replay(spec, va, 0.0, 1.0, rows)
    print(f"alpha 0 vs replay_marker: max |diff| {np.abs(tip - ref).max():.2e} m, ok {ok.all()}")
    tip2, ok2 = replay(spec, va, 0.3, 1e6, rows)
    print(f"alpha 0.3, width 1e6 (never yields) vs replay_marker: max |diff| "
          f"{np.abs(tip2 - ref).max():.2e} m, ok {ok2.all()}")  # fmt: skip


def scan(robot: str, fitted: str, stride: int, alphas, widths) -> None:
    spec, recs = load(robot, fitted)
    tr, va = recs["train"], recs["val"]
    rows = np.arange(0, len(tr.t), stride)
    e0, r0, _ = _err(spec, tr, 0.0, 1.0, rows)
    print(f"{robot}: train rows {len(rows)} (every {stride}th); alpha 0: train mean "
          f"{e0.mean():.3f} mm, RMSE {np.sqrt(np.mean(r0**2) * 3):.3f}", flush=True)  # fmt: skip
    best = (r0 @ r0, 0.0, 1.0)
    for a in alphas:
        for w in widths:
            t0 = time.process_time()
            st: dict = {}
            e, r, ok = _err(spec, tr, a, w, rows, st)
            print(f"  alpha {a:.2f} width {w:6.2f} 1/m: train mean {e.mean():.3f} RMSE "
                  f"{np.sqrt(np.mean(r**2) * 3):.3f} ok {ok.mean():.3f} iters median "
                  f"{np.median(st['iters']):.0f} max {max(st['iters'])} |p| {st['p_max']:.1f} "
                  f"[{time.process_time() - t0:.1f} s]", flush=True)  # fmt: skip
            if r @ r < best[0]:
                best = (r @ r, a, w)
    _, a, w = best
    print(f"best on train: alpha {a} width {w}")
    val_report(spec, va, a, w)


def val_report(spec, va, a, w, e_ref=None) -> None:
    e0, _, _ = _err(spec, va, 0.0, 1.0)
    e, _, ok = _err(spec, va, a, w)
    ref = e0 if e_ref is None else e_ref
    diff = e - ref
    lo, hi = bootstrap_mean_interval(diff, va.pattern, seed=0)
    print(f"  val FITTED: {summary(e0, va)}")
    print(f"  val alpha {a:.3f} width {w:.3f}: {summary(e, va)}, ok {ok.mean():.3f}")
    print(f"  val change {diff.mean():+.3f} mm (95 % {lo:+.3f} to {hi:+.3f}, whole val patterns)")


def refit(robot: str, fitted: str, stride: int, max_nfev: int, start, save, fit_on=None) -> None:
    """The 15 parameters, the tension play and (alpha, width) fitted together on every
    `stride`-th train row (bounds and scales of `calibrate_hardware`; the constant backlash
    held), from FITTED's values and `start`; standard errors from the Jacobian at the optimum."""
    from dataclasses import replace

    from scipy.optimize import least_squares

    from softrod.validate import HardwareParams, calibrated_robot
    from softrod.validate._hardware import (
        DIFF_STEP,
        TENSION_BACKLASH_BOUNDS,
        TENSION_BACKLASH_SCALE,
        _bounds,
        _x_scale,
        initial_params,
    )

    spec, recs = load(robot, fitted)
    tr, va = recs["train"], recs["val"]
    cols = spec.calibration.servo_columns
    if fit_on is not None:
        # A capacity check, not a calibration: fit on another file (e.g. train + val).
        from softrod.validate import read_recording

        tr = read_recording(fit_on, servo_columns=cols)
    p0 = fitted_params(robot, spec)
    x0 = p0.to_vector()
    n15 = len(x0)
    lo, hi = _bounds(initial_params(robot).to_vector())
    scale = _x_scale(3)
    beta0 = spec.calibration.backlash_per_tension
    # (beta [m/N], alpha [-], width [1/m]): bounds and optimizer scales.
    x0 = np.r_[x0, beta0, start[0], start[1]]
    lo = np.r_[lo, TENSION_BACKLASH_BOUNDS[0], 0.0, 0.05]
    hi = np.r_[hi, TENSION_BACKLASH_BOUNDS[1], 0.95, 30.0]
    scale = np.r_[scale, TENSION_BACKLASH_SCALE, 0.1, 1.0]
    free = np.ones(len(x0), dtype=bool)
    free[n15 - 1] = False  # the constant backlash held (0)
    x0 = np.clip(x0, lo, hi)
    rows = np.arange(0, len(tr.t), stride)

    def model(x):
        p = replace(HardwareParams.from_vector(x[:n15]), backlash_per_tension=float(x[n15]))
        return calibrated_robot(robot, p, servo_columns=cols)

    n_eval = [0]
    t0 = time.process_time()

    def resid(xf):
        x = x0.copy()
        x[free] = xf
        _, r, _ = _err(model(x), tr, float(x[-2]), float(x[-1]), rows)
        n_eval[0] += 1
        print(f"    eval {n_eval[0]}: alpha {x[-2]:.4f} width {x[-1]:.4f} beta {x[n15]:.3e} "
              f"RMSE {np.sqrt(np.mean(r**2) * 3):.4f} [{time.process_time() - t0:.0f} s]",
              flush=True)  # fmt: skip
        return r

    r0 = resid(x0[free])
    res = least_squares(resid, x0[free], bounds=(lo[free], hi[free]), x_scale=scale[free],
                        diff_step=DIFF_STEP, max_nfev=max_nfev, method="trf")  # fmt: skip
    x = x0.copy()
    x[free] = res.x
    s2 = float(res.fun @ res.fun) / (len(res.fun) - len(res.x))
    cov = np.linalg.pinv(res.jac.T @ res.jac) * s2
    se = np.sqrt(np.diag(cov))
    rms = lambda r: float(np.sqrt(np.mean(r**2) * 3))  # noqa: E731
    print(f"{robot} backbone play refit on {len(rows)} train rows (every {stride}th): nfev "
          f"{res.nfev}, status {res.status} ({res.message}), "
          f"{time.process_time() - t0:.0f} s CPU")  # fmt: skip
    print(f"  alpha = {x[-2]:.4f} +- {se[-2]:.4f}, width = {x[-1]:.4f} +- {se[-1]:.4f} 1/m, "
          f"beta = {x[n15]:.3e} +- {se[-3]:.1e} m/N")  # fmt: skip
    print(f"  train RMSE {rms(r0):.3f} -> {rms(res.fun):.3f} mm")
    print(f"  params {HardwareParams.from_vector(x[:n15]).as_dict()}")
    if save:
        np.savez(save, x=x, se_free=se, free=free)
    e_old, _, _ = _err(spec, va, 0.0, 1.0)
    val_report(model(x), va, float(x[-2]), float(x[-1]), e_ref=e_old)
    e_tr, _, _ = _err(model(x), recs["train"], float(x[-2]), float(x[-1]))
    print(f"  train file, all rows: {summary(e_tr, recs['train'])}")


def main() -> None:
    args = sys.argv[1:]

    def opt(name, default, conv):
        if name in args:
            i = args.index(name)
            v = conv(args[i + 1])
            del args[i : i + 2]
            return v
        return default

    floats = lambda s: [float(v) for v in s.split(",")]  # noqa: E731
    stride = opt("--stride", 8, int)
    max_nfev = opt("--max-nfev", 100, int)
    alphas = opt("--alpha", [0.1, 0.25, 0.5, 0.75], floats)
    widths = opt("--width", [0.5, 1.0, 2.0, 4.0, 8.0], floats)
    fit_on = opt("--fit-on", None, str)
    start = opt("--start", [0.3, 2.0], floats)
    save = opt("--save", None, str)
    robot, fitted, what, *rest = args
    if what == "check":
        check(robot, fitted)
    elif what == "scan":
        scan(robot, fitted, stride, alphas, widths)
    elif what == "refit":
        refit(robot, fitted, stride, max_nfev, start, save, fit_on)
    elif what == "val":
        spec, recs = load(robot, fitted)
        val_report(spec, recs["val"], float(rest[0]), float(rest[1]))
    else:
        raise SystemExit(f"unknown command {what!r}")


if __name__ == "__main__":
    main()
