"""Gravity as a candidate for the hardware error (issue 15): the calibrated ftdcr robots with
their own weight along the backbone axis, the 15 parameters (and the tension play) refitted on
train with it, val replayed. Nothing is fitted on val.

    PYTHONPATH=src python dev/hardware_gravity.py ROBOT G[,G...] [--play] [--max-nfev N]
    PYTHONPATH=src python dev/hardware_gravity.py ROBOT G[,G...] --fitted FITTED.yaml

With `--fitted`, nothing is refitted: FITTED (a `softrod hardware fit` description) is
replayed with each gravity as it is (what the weight alone does to a weightless calibration).

G [m/s^2] is gravity along the base frame's z axis (the backbone's axis at the straight pose):
+9.81 = the robot hanging tip down, -9.81 = standing tip up; 0 = today's model (the authors set
gravity to 0 0 0 in configs/generation/ftdcr_v*_sysid.json, and so do softrod's fits). The
weight is the description's: NiTi backbone (6450 kg/m^3) plus 30 disks of 0.59 g.

A probe, not a package option: it routes every `solve_static` call of the hardware fit and
replay (`softrod.validate._hardware`) through one with that gravity.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import softrod.validate._hardware as hw
from softrod.datasets import load_tdcr_recording
from softrod.description import load_robot
from softrod.rods import solve_static
from softrod.validate import motion_direction


def with_gravity(g: float):
    def solve(model, **kw):
        kw.setdefault("gravity", (0.0, 0.0, g))
        return solve_static(model, **kw)

    return solve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("robot")
    ap.add_argument("g", help="comma-separated gravity values along base z [m/s^2]")
    ap.add_argument("--play", action="store_true", help="also fit the tension play")
    ap.add_argument("--max-nfev", type=int, default=hw.DEFAULT_MAX_NFEV)
    ap.add_argument("--fitted", help="replay this fitted description, no refit")
    args = ap.parse_args()
    val = load_tdcr_recording(args.robot, "val")
    train = load_tdcr_recording(args.robot, "train")

    def errors(spec) -> list[str]:
        cols = []
        for name, rec in (("train", train), ("val", val)):
            tip, ok = hw.replay_marker(spec, rec.displacement, t=rec.t)
            e = np.linalg.norm(tip - rec.tip, axis=1) * 1e3
            md = motion_direction(rec.displacement)
            cols.append(
                f"{name} {e.mean():.2f} / {np.median(e):.2f} / {e.max():.1f} "
                f"(pull {e[md > 0].mean():.2f}, release {e[md < 0].mean():.2f})"
            )
        return cols

    for g in (float(v) for v in args.g.split(",")):
        hw.solve_static = with_gravity(g)
        t0 = time.perf_counter()
        if args.fitted:
            cols = errors(load_robot(args.fitted))
            print(f"g {g:+6.2f}, {args.fitted} as fitted: mean / median / max [mm]: "
                  f"{' | '.join(cols)}", flush=True)  # fmt: skip
            continue
        fit = hw.calibrate_hardware(
            args.robot, train=train, max_nfev=args.max_nfev, tension_backlash=args.play
        )
        cols = errors(hw.calibrated_robot(args.robot, fit.params))
        play = fit.extra.get("backlash_per_tension")
        play_txt = "none" if play is None else f"{play * 1e6:.1f} um/N"
        print(
            f"g {g:+6.2f}: train RMSE {fit.rmse_after_mm:.2f} mm ({fit.nfev} steps, "
            f"converged {fit.converged}); play {play_txt};"
            f" mean / median / max [mm]: {' | '.join(cols)} [{time.perf_counter() - t0:.0f} s]",
            flush=True,
        )


if __name__ == "__main__":
    main()
