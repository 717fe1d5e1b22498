"""A twisted disk stack as a candidate for the hardware error (issue 15): each segment's disks
turned progressively about the backbone, so every tendon, the distal ones in the proximal disks
included, follows a helix-like path of holes. Fitted on train only with the 15 parameters and
the tension play; val replayed once. Nothing is fitted on val.

    PYTHONPATH=src python dev/hardware_twist.py ROBOT [--no-play] [--max-nfev N] [--stride S]
        [--bound-deg B] [--fit-on TRAINVAL.csv]

Twist tw_m [deg] of segment m: the hole of disk i (1..n_m) of segment m lies at the tendon's
angle + sum_{m' < m} tw_m' + tw_m i / n_m (`angles_deg` routing, docs/routing.md; the base
hole at the tendon's angle). The fit's per-segment angle offset turns a segment's tendons
along their whole path; the twist turns the stack progressively, so it changes where the
distal tendons pass the proximal disks: the coupling the three-segment val patterns excite.
First the 16 (15 + play) are fitted as `softrod hardware fit --tension-backlash` does (run to
convergence), then all 19 together from there and twist 0. `--fit-on`: fit on another file
instead of train (the capacity screen of docs/validation.md, "The model class's own floor on
val": `dev/hardware_capacity.py`'s `trainval.csv`; not a calibration), and also report the
train file's error.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

import softrod.validate._hardware as hw
from softrod.datasets import load_tdcr_recording
from softrod.description import load_robot
from softrod.validate import bootstrap_mean_interval, motion_direction

sys.path.insert(0, str(Path(__file__).parent))
from hardware_residual import family  # noqa: E402

#: Twist bound per segment [rad] (30 deg: the fitted angle offsets are within 3 deg on v4,
#: 14 deg on v6) and its optimizer scale [rad].
TWIST_BOUND = math.radians(30.0)
TWIST_SCALE = 0.1


def twisted(spec, tw: np.ndarray):
    """`spec` with the disk stack twisted by tw [rad per segment] (`angles_deg` routing)."""
    raw = spec.model_dump()
    segs = raw["segments"]
    cum = np.r_[0.0, np.cumsum(tw)]
    for k, seg in enumerate(segs):
        for td in seg["tendons"]:
            base = float(td["angle_deg"])
            holes = []
            for m in range(k + 1):
                n = int(segs[m]["disks"])
                holes += [base + math.degrees(cum[m] + tw[m] * i / n) for i in range(1, n + 1)]
            td["angles_deg"] = holes
    return load_robot(raw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("robot")
    ap.add_argument("--no-play", action="store_true")
    ap.add_argument("--max-nfev", type=int, default=hw.DEFAULT_MAX_NFEV)
    ap.add_argument("--stride", type=int, default=hw.DEFAULT_STRIDE)
    ap.add_argument("--bound-deg", type=float, default=math.degrees(TWIST_BOUND))
    ap.add_argument("--fit-on", default=None)
    args = ap.parse_args()
    bound = math.radians(args.bound_deg)
    play = not args.no_play
    tr = train = load_tdcr_recording(args.robot, "train")
    va = load_tdcr_recording(args.robot, "val")
    if args.fit_on is not None:
        from softrod.validate import read_recording

        tr = read_recording(args.fit_on, n_tendons=9).as_tdcr(args.robot)
    t0 = time.perf_counter()
    fit = hw.calibrate_hardware(
        args.robot, train=tr, stride=args.stride, max_nfev=args.max_nfev, tension_backlash=play
    )
    print(
        f"{args.robot}: the 16 alone: train RMSE {fit.rmse_after_mm:.2f} mm, {fit.nfev} steps, "
        f"converged {fit.converged} [{time.perf_counter() - t0:.0f} s]",
        flush=True,
    )
    p0 = fit.params
    x_hw = p0.to_vector()
    n_hw = len(x_hw)
    lo, hi = hw._bounds(hw.initial_params(args.robot).to_vector())
    scale = hw._x_scale(3)
    x0 = np.r_[x_hw, p0.backlash_per_tension, 0.0, 0.0, 0.0]
    lo = np.r_[lo, hw.TENSION_BACKLASH_BOUNDS[0], [-bound] * 3]
    hi = np.r_[hi, hw.TENSION_BACKLASH_BOUNDS[1], [bound] * 3]
    scale = np.r_[scale, hw.TENSION_BACKLASH_SCALE, [TWIST_SCALE] * 3]
    free = np.ones(len(x0), dtype=bool)
    free[n_hw - 1] = False  # the constant backlash held at 0, as `hardware fit` does
    free[n_hw] = play
    x0 = np.clip(x0, lo, hi)
    rows = np.arange(0, len(tr.t), args.stride)

    def spec_of(x: np.ndarray):
        params = replace(hw.HardwareParams.from_vector(x[:n_hw]), backlash_per_tension=x[n_hw])
        return twisted(hw.calibrated_robot(args.robot, params), x[n_hw + 1 :])

    def resid(xf: np.ndarray) -> np.ndarray:
        x = x0.copy()
        x[free] = xf
        tip, _ = hw.replay_marker(spec_of(x), tr.displacement, rows=rows, t=tr.t)
        return (tip - tr.tip[rows]).ravel()

    t0 = time.perf_counter()
    r0 = resid(x0[free])
    res = least_squares(resid, x0[free], bounds=(lo[free], hi[free]), x_scale=scale[free],
                        diff_step=hw.DIFF_STEP, max_nfev=args.max_nfev, method="trf")  # fmt: skip
    x = x0.copy()
    x[free] = res.x
    jac = hw._forward_jacobian(resid, res.x, res.fun, lo[free], hi[free], scale[free])
    s2 = float(res.fun @ res.fun) / (len(res.fun) - len(res.x))
    se = np.sqrt(np.diag(np.linalg.pinv(jac.T @ jac)) * s2)
    rms = lambda r: float(np.sqrt(np.mean(np.sum(r.reshape(-1, 3) ** 2, axis=1))) * 1e3)  # noqa: E731
    print(
        f"  with the twist: train RMSE {rms(r0):.2f} -> {rms(res.fun):.2f} mm, {res.nfev} steps, "
        f"converged {res.status > 0} [{time.perf_counter() - t0:.0f} s]; twist "
        + ", ".join(
            f"{math.degrees(v):+.2f} +- {math.degrees(s):.2f} deg"
            for v, s in zip(x[n_hw + 1 :], se[-3:], strict=True)
        )
        + (f"; play {x[n_hw] * 1e6:.1f} um/N" if play else ""),
        flush=True,
    )
    errs = {}
    for name, xx in (("without", x0), ("with", x)):
        tip, _ = hw.replay_marker(spec_of(xx), va.displacement, t=va.t)
        errs[name] = e = np.linalg.norm(tip - va.tip, axis=1) * 1e3
        md = motion_direction(va.displacement)
        fam = {}
        for lab, ei in zip(va.pattern, e, strict=True):
            fam.setdefault(family(lab), []).append(ei)
        print(
            f"  val {name} the twist: mean / median / max {e.mean():.2f} / {np.median(e):.2f} / "
            f"{e.max():.1f} mm, pulling / releasing {e[md > 0].mean():.2f} / "
            f"{e[md < 0].mean():.2f}; "
            + ", ".join(f"{k} {np.mean(v):.2f}" for k, v in sorted(fam.items())),
            flush=True,
        )
    if args.fit_on is not None:
        for name, xx in (("without", x0), ("with", x)):
            tip, _ = hw.replay_marker(spec_of(xx), train.displacement, t=train.t)
            e = np.linalg.norm(tip - train.tip, axis=1) * 1e3
            print(f"  train file {name} the twist: mean / median {e.mean():.2f} / "
                  f"{np.median(e):.2f} mm", flush=True)  # fmt: skip
    d = errs["with"] - errs["without"]
    lo_ci, hi_ci = bootstrap_mean_interval(d, va.pattern, seed=0)
    print(
        f"  val change {d.mean():+.3f} mm (95 % {lo_ci:+.3f} to {hi_ci:+.3f}, whole val patterns)"
    )


if __name__ == "__main__":
    main()
