"""A calibration held toward the authors' identified values, its weight chosen on train alone
by cross-validation over train's pattern families (issue 15; docs/validation.md, "A prior
chosen on train").

    PYTHONPATH=src python dev/hardware_prior.py ROBOT cv [--lambdas L,..] [--stride S]
    PYTHONPATH=src python dev/hardware_prior.py ROBOT val L [--stride S]

The fit is `softrod hardware fit --tension-backlash`'s (the 15 parameters and the tension play,
least squares on every S-th train row, run to convergence) with one more block of residuals:
sqrt(lambda) (x - x_prior) / scale, x_prior the authors' values (`initial_params`: their
tendon stiffness, pretension and marker offset; zero angle offsets, tracker translation and
tilt), scale the fit's own optimizer scales (log-stiffness 1, pretension 1 N, angles 0.1 rad,
lengths 1 cm, tilt 0.05 rad). The data residuals are in mm, so lambda [mm^2] trades 1 mm of
tip residual per row against one scale of parameter change. lambda = 0 is the calibration.

`cv`: train's pattern families (`hardware_residual.family`) are dealt into FOLDS groups; each
group is left out in turn, the fit runs on the rest of the strided train rows, and the
left-out group's strided rows are replayed (time order, the tension play over the whole
recording as in `replay_marker`); the mean tip error over all left-out rows per lambda, and
the lambda with the lowest. Val is not read. `val L`: the fit on all strided train rows at
lambda = L, replayed on train and val.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.optimize import least_squares

from softrod.validate import calibrated_robot, read_recording, recording_path
from softrod.validate._hardware import (
    DIFF_STEP,
    TENSION_BACKLASH_INITIAL,
    initial_params,
    replay_marker,
)

sys.path.insert(0, "dev")
import hardware_rowprobe as rowprobe  # noqa: E402
from hardware_coupling import summary  # noqa: E402
from hardware_residual import family  # noqa: E402

#: Groups the pattern families are dealt into for the cross-validation.
FOLDS = 5
#: Trust-region steps at most per fit (SciPy's tolerances stop it first: 16-37 steps).
MAX_NFEV = 100


def fit(robot: str, rec, rows: np.ndarray, lam: float) -> tuple[object, dict]:
    """The tension-play fit on `rows` of `rec` with the prior of weight `lam` [mm^2]; returns
    (the fitted description, info)."""
    x15 = initial_params(robot).to_vector()
    n15 = len(x15)
    x0, lo, hi, scale, free = rowprobe.play_vectors(robot, x15, TENSION_BACKLASH_INITIAL)
    # The prior is the authors' values, from which the fit also starts (the constant backlash
    # held at 0, as the CLI's fit); it acts on the 15, the tension play has no prior value.
    x_prior = x0.copy()
    prior_mask = free.copy()
    prior_mask[n15] = False

    def model(x):
        return calibrated_robot(robot, rowprobe.play_params(x, n15))

    def resid(xf):
        x = x0.copy()
        x[free] = xf
        tip, _ = replay_marker(model(x), rec.displacement, rows=rows, t=rec.t)
        data = (tip - rec.tip[rows]).ravel() * 1e3
        prior = np.sqrt(lam) * (x - x_prior)[prior_mask] / scale[prior_mask]
        return np.r_[data, prior]

    t0 = time.time()
    res = least_squares(resid, x0[free], bounds=(lo[free], hi[free]), x_scale=scale[free],
                        diff_step=DIFF_STEP, max_nfev=MAX_NFEV, method="trf")  # fmt: skip
    x = x0.copy()
    x[free] = res.x
    params = rowprobe.play_params(x, n15)
    info = {
        "nfev": res.nfev,
        "converged": res.status > 0,
        "rmse": rowprobe.rmse(res.fun[: 3 * len(rows)]),
        "seconds": time.time() - t0,
        "stiffness": np.asarray(params.stiffness),
        "marker_mm": params.marker_offset * 1e3,
    }
    return model(x), info


def tip_error(spec, rec, rows=None) -> np.ndarray:
    tip, _ = replay_marker(spec, rec.displacement, rows=rows, t=rec.t)
    meas = rec.tip if rows is None else rec.tip[rows]
    return np.linalg.norm(tip - meas, axis=1) * 1e3


def main() -> None:
    args = sys.argv[1:]

    stride = rowprobe.option(args, "--stride", 8, int)
    lambdas = rowprobe.option(args, "--lambdas", [0.0, 1.0, 10.0, 100.0], rowprobe.floats)
    robot, what, *rest = args
    tr = read_recording(recording_path(robot, "train"), n_tendons=9)
    strided = np.arange(0, len(tr.t), stride)
    if what == "cv":
        fam = np.array([family(p) for p in tr.pattern])
        names = sorted(set(fam))
        group = {f: i % FOLDS for i, f in enumerate(names)}
        g = np.array([group[f] for f in fam])
        print(f"{robot}: {len(strided)} strided train rows, {len(names)} families in {FOLDS} "
              f"groups: {[[f for f in names if group[f] == k] for k in range(FOLDS)]}")  # fmt: skip
        for lam in lambdas:
            errs = []
            for k in range(FOLDS):
                fit_rows, out_rows = strided[g[strided] != k], strided[g[strided] == k]
                spec, info = fit(robot, tr, fit_rows, lam)
                e = tip_error(spec, tr, out_rows)
                errs.append(e)
                print(f"  lambda {lam:g}, group {k} left out: fit RMSE {info['rmse']:.2f} mm "
                      f"({info['nfev']} evaluations, converged {info['converged']}, "
                      f"{info['seconds']:.0f} s), left-out mean {e.mean():.2f} mm",
                      flush=True)  # fmt: skip
            e = np.concatenate(errs)
            print(f"lambda {lam:g}: cross-validated mean {e.mean():.3f} mm, RMSE "
                  f"{np.sqrt(np.mean(e**2)):.3f} mm over {len(e)} rows", flush=True)  # fmt: skip
    elif what == "val":
        lam = float(rest[0])
        va = read_recording(recording_path(robot, "val"), n_tendons=9)
        spec, info = fit(robot, tr, strided, lam)
        e_tr, e_va = tip_error(spec, tr), tip_error(spec, va)
        print(f"{robot} lambda {lam:g}: fit RMSE {info['rmse']:.2f} mm ({info['nfev']} "
              f"evaluations, converged {info['converged']}, {info['seconds']:.0f} s), stiffness "
              f"{np.round(info['stiffness'])} N/m, marker {info['marker_mm']:.1f} mm")  # fmt: skip
        print(f"  train {summary(e_tr, tr)}")
        print(f"  val {summary(e_va, va)}")
    else:
        raise SystemExit(f"unknown command {what!r}")


if __name__ == "__main__":
    main()
