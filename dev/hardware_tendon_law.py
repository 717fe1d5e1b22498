"""A tendon that stiffens with its tension, for the physical TDCRs (issue 15;
docs/validation.md, "A tendon that stiffens with its tension").

    PYTHONPATH=src python dev/hardware_tendon_law.py ROBOT FITTED.yaml scan [--stride S] [--b B,..]
    PYTHONPATH=src python dev/hardware_tendon_law.py ROBOT FITTED.yaml refit [--stride S]
        [--max-nfev N] [--start B]
    PYTHONPATH=src python dev/hardware_tendon_law.py ROBOT FITTED.yaml val B
    PYTHONPATH=src python dev/hardware_tendon_law.py ROBOT FITTED.yaml check
    PYTHONPATH=src python dev/hardware_tendon_law.py ROBOT FITTED.yaml ranges

FITTED is a `softrod hardware fit` description fitted on ROBOT's train file (its 15 parameters
and tension play held in `scan` / `val`, fitted with b in `refit`).

Why: the val rows pull harder than any train row (ftdcr_v4: summed tension p99 30 N against
23.6 N on train, the distal tendons up to 12.5 N against 7.8 N; `ranges`), so a tendon law
that is linear on train but not beyond it would show first on val, and as an under-bend. A
braided or polymer tendon stiffens as its constructional stretch is taken up. The law, one
parameter b [1/N] for every tendon (a material property; the length-dependent k is the fit's):

    stretch e(T) = T / (k (1 + b T)),    secant stiffness k (1 + b T), tangent k (1 + b T)^2,

b > 0 stiffening, b < 0 softening (1 + b T > 0 over the rows), b = 0 the shipped linear tendon.
The static solver keeps its linear tendon of stiffness k; the law enters through the
commanded length: L' = L_cmd + e(T) - T / k makes the solver's k (path - L') equal T where
path - L_cmd = e(T), a fixed point on the tensions per row (until they change by < FIX_TOL).
L_cmd = rest - d - e(T_pre), so a row at d = 0 carries the pretension, as with the linear law.
The rows go through FITTED's tension play as in `replay_marker`. Nothing is selected on val.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.rods import compile_model, solve_static
from softrod.validate import bootstrap_mean_interval
from softrod.validate._hardware import (
    _calibration,
    _tracker_pose,
    lag,
    replay_marker,
    tension_play,
)

sys.path.insert(0, "dev")
from hardware_coupling import load  # noqa: E402
from hardware_underbend import fitted_params, summary  # noqa: E402

#: Fixed-point stop on the tendon tensions [N]: 1e-7 N moves the tip by far less than 1 um.
FIX_TOL = 1e-7
#: Fixed-point iterations per row before the row is declared failed.
FIX_MAX = 60


def stretch(tension: np.ndarray, k: np.ndarray, b: float) -> np.ndarray:
    """e(T) = T / (k (1 + b T)) [m] per tendon."""
    return tension / (k * (1.0 + b * tension))


class TendonLaw:
    """`solve(d_eff)` solves one row of effective displacements (n,) [m] on `spec` with the
    tendon law of coefficient b; returns (tip, tangent, ok, tensions, iterations)."""

    def __init__(self, spec, b: float):
        self.spec, self.b = spec, float(b)
        self.cal = _calibration(spec)
        self.model = compile_model(spec)
        self.k = np.array([float(t.stiffness) for _, t in spec.tendon_list()])
        n_t = spec.n_tendons
        self.rest = np.asarray(solve_static(self.model, tensions=np.zeros(n_t)).tendon_length)
        pre = np.asarray(self.cal.pretension, dtype=float)
        self.offset = stretch(pre, self.k, self.b)
        self.guess = None
        self.tension = pre.copy()

    def solve(self, d_eff: np.ndarray):
        k, b = self.k, self.b
        l_cmd = self.rest - d_eff - self.offset
        t = self.tension.copy()
        done, sol, it = False, None, 0
        for it in range(FIX_MAX):  # noqa: B007 (it counts the iterations after the loop)
            ell = l_cmd + stretch(t, k, b) - t / k
            sol = solve_static(self.model, lengths=ell, guess=self.guess, check_stability=False)
            if not sol.success:
                break
            self.guess = sol
            new = np.asarray(sol.tendon_tension, dtype=float)
            if np.any(1.0 + b * new <= 0.05):
                break
            change = float(np.max(np.abs(new - t)))
            t = new
            if change < FIX_TOL or b == 0.0:
                done = True
                break
        assert sol is not None
        if done:
            self.tension = t
        else:
            self.guess = None
        tangent = np.asarray(sol.tip_rotation)[:, 2]
        return sol.tip_position, tangent, done, np.asarray(sol.tendon_tension), it + 1


def replay(spec, rec, b: float, rows=None, stats: dict | None = None):
    """Marker prediction (k, 3) [m] in the tracker frame and success (k,) of the `rows` of a
    recording (default all), in time order through the tension play and the tendon law."""
    cal = _calibration(spec)
    d = np.asarray(rec.displacement, dtype=float)
    if cal.has_lag:
        d = lag(d, rec.t, cal.lag_time_constant, cal.lag_fraction)
    selected = np.zeros(len(d), dtype=bool)
    selected[np.arange(len(d))[rows] if rows is not None else slice(None)] = True
    n = int(selected.sum())
    tips, tangents, ok = np.empty((n, 3)), np.empty((n, 3)), np.empty(n, dtype=bool)
    iters, tmax = [], []
    law = TendonLaw(spec, b)
    j = 0

    def solve(i: int, d_eff: np.ndarray) -> np.ndarray:
        nonlocal j
        tips[j], tangents[j], ok[j], tension, n_it = law.solve(d_eff)
        iters.append(n_it)
        tmax.append(tension.max())
        j += 1
        return tension

    tension_play(d, cal.backlash, cal.backlash_per_tension, solve, selected)
    if stats is not None:
        stats["iters"], stats["tmax"] = iters, float(max(tmax))
    rot, trans = _tracker_pose(cal)
    marker = tips + cal.marker_offset * tangents
    return marker @ rot.T + trans[None, :], ok


def _err(spec, rec, b, rows=None, stats=None):
    tip, ok = replay(spec, rec, b, rows, stats)
    meas = rec.tip if rows is None else rec.tip[rows]
    return np.linalg.norm(tip - meas, axis=1) * 1e3, (tip - meas).ravel() * 1e3, ok


def check(robot: str, fitted: str) -> None:
    """b = 0 against `replay_marker` of FITTED on the first 60 val rows."""
    spec, recs = load(robot, fitted)
    va = recs["val"]
    rows = np.arange(60)
    ref, _ = replay_marker(spec, va.displacement, rows=rows, t=va.t)
    tip, ok = replay(spec, va, 0.0, rows)
    print(f"b = 0 vs replay_marker: max |diff| {np.abs(tip - ref).max():.2e} m, ok {ok.all()}")


def ranges(robot: str, fitted: str) -> None:
    """FITTED's tendon tensions [N] on train and val (every row, linear law, no play): per
    tendon p50 / p99 / max, and summed over the tendons p50 / p99 / max."""
    spec, recs = load(robot, fitted)
    for split in ("train", "val"):
        rec = recs[split]
        law = TendonLaw(spec, 0.0)
        t = np.array([law.solve(d)[3] for d in np.asarray(rec.displacement, dtype=float)])
        pct = lambda a, q: np.round(np.percentile(a, q, axis=0), 1)  # noqa: E731
        print(f"{split}: per tendon p50 {pct(t, 50)}, p99 {pct(t, 99)}, max {pct(t, 100)}")
        print(f"{split}: summed p50 / p99 / max {pct(t.sum(axis=1), [50, 99, 100])}")


def val_report(spec, va, b, e_ref=None) -> None:
    e0, _, _ = _err(spec, va, 0.0)
    st: dict = {}
    e, _, ok = _err(spec, va, b, None, st)
    diff = e - (e0 if e_ref is None else e_ref)
    lo, hi = bootstrap_mean_interval(diff, va.pattern, seed=0)
    print(f"  val FITTED: {summary(e0, va)}")
    print(f"  val b {b:+.4f} 1/N: {summary(e, va)}, ok {ok.mean():.3f}, max T {st['tmax']:.1f} N")
    print(f"  val change {diff.mean():+.3f} mm (95 % {lo:+.3f} to {hi:+.3f}, whole val patterns)")


def scan(robot: str, fitted: str, stride: int, bs) -> None:
    spec, recs = load(robot, fitted)
    tr, va = recs["train"], recs["val"]
    rows = np.arange(0, len(tr.t), stride)
    best = (np.inf, 0.0)
    for b in bs:
        t0 = time.process_time()
        st: dict = {}
        e, r, ok = _err(spec, tr, b, rows, st)
        print(f"  b {b:+.4f} 1/N: train mean {e.mean():.3f} RMSE {np.sqrt(np.mean(r**2) * 3):.3f}"
              f" ok {ok.mean():.3f} iters median {np.median(st['iters']):.0f} max "
              f"{max(st['iters'])} [{time.process_time() - t0:.1f} s]", flush=True)  # fmt: skip
        if r @ r < best[0]:
            best = (r @ r, b)
    print(f"best on train: b {best[1]}")
    val_report(spec, va, best[1])


def refit(robot: str, fitted: str, stride: int, max_nfev: int, start: float, fit_on=None) -> None:
    """The 15 parameters, the tension play and b fitted together on every `stride`-th train row
    (bounds and scales of `calibrate_hardware`; the constant backlash held)."""
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
    x0 = fitted_params(robot, spec).to_vector()
    n15 = len(x0)
    lo, hi = _bounds(initial_params(robot).to_vector())
    scale = _x_scale(3)
    # (beta [m/N], b [1/N]): bounds (1 + b T > 0 up to 20 N) and optimizer scales.
    x0 = np.r_[x0, spec.calibration.backlash_per_tension, start]
    lo = np.r_[lo, TENSION_BACKLASH_BOUNDS[0], -0.04]
    hi = np.r_[hi, TENSION_BACKLASH_BOUNDS[1], 1.0]
    scale = np.r_[scale, TENSION_BACKLASH_SCALE, 0.05]
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
        _, r, _ = _err(model(x), tr, float(x[-1]), rows)
        n_eval[0] += 1
        print(f"    eval {n_eval[0]}: b {x[-1]:+.5f} beta {x[n15]:.3e} RMSE "
              f"{np.sqrt(np.mean(r**2) * 3):.4f} [{time.process_time() - t0:.0f} s]",
              flush=True)  # fmt: skip
        return r

    r0 = resid(x0[free])
    res = least_squares(resid, x0[free], bounds=(lo[free], hi[free]), x_scale=scale[free],
                        diff_step=DIFF_STEP, max_nfev=max_nfev, method="trf")  # fmt: skip
    x = x0.copy()
    x[free] = res.x
    s2 = float(res.fun @ res.fun) / (len(res.fun) - len(res.x))
    se = np.sqrt(np.diag(np.linalg.pinv(res.jac.T @ res.jac) * s2))
    rms = lambda r: float(np.sqrt(np.mean(r**2) * 3))  # noqa: E731
    print(f"{robot} tendon law refit on {len(rows)} train rows (every {stride}th): nfev "
          f"{res.nfev}, status {res.status} ({res.message}), "
          f"{time.process_time() - t0:.0f} s CPU")  # fmt: skip
    print(f"  b = {x[-1]:+.5f} +- {se[-1]:.5f} 1/N, beta = {x[n15]:.3e} +- {se[-2]:.1e} m/N")
    print(f"  train RMSE {rms(r0):.3f} -> {rms(res.fun):.3f} mm")
    print(f"  params {HardwareParams.from_vector(x[:n15]).as_dict()}")
    e_old, _, _ = _err(spec, va, 0.0)
    val_report(model(x), va, float(x[-1]), e_ref=e_old)
    e_tr, _, _ = _err(model(x), recs["train"], float(x[-1]))
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

    stride = opt("--stride", 8, int)
    max_nfev = opt("--max-nfev", 100, int)
    bs = opt("--b", [0.0, -0.02, 0.02, 0.05, 0.1, 0.2], lambda s: [float(v) for v in s.split(",")])
    fit_on = opt("--fit-on", None, str)
    start = opt("--start", 0.02, float)
    robot, fitted, what, *rest = args
    if what == "check":
        check(robot, fitted)
    elif what == "scan":
        scan(robot, fitted, stride, bs)
    elif what == "refit":
        refit(robot, fitted, stride, max_nfev, start, fit_on)
    elif what == "ranges":
        ranges(robot, fitted)
    elif what == "val":
        spec, recs = load(robot, fitted)
        val_report(spec, recs["val"], float(rest[0]))
    else:
        raise SystemExit(f"unknown command {what!r}")


if __name__ == "__main__":
    main()
