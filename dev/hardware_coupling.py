"""Coupling between segments on the physical TDCRs: candidates fitted on train only, val
replayed once per fitted value (issue 15; docs/validation.md, "Coupling between segments").

    PYTHONPATH=src python dev/hardware_coupling.py ROBOT FITTED.yaml CANDIDATE [--stride S]

FITTED is a `softrod hardware fit` description fitted on ROBOT's train file; its 15 (16)
parameters are held. CANDIDATE:

- `families`: the fitted description's residual on train and val by the number of segments
  bent at once and which ones (no fit).
- `passthrough`: the distal tendons' radius in the proximal disks, c x offset (a scale per
  distal segment, c1 for segment 2's tendons in segment 1's disks, c2 for segment 3's in
  segments 1-2), `offsets` routing (docs/routing.md); scanned with c1 = c2 on every S-th train
  row, then both refined by least squares from the best scan point.
- `refit`: the 15 parameters and the pass-through scales fitted together on every S-th train
  row (`calibrate_hardware(..., passthrough=True)`, `--max-nfev N` evaluations), started from
  FITTED's parameters (read back from its description) and straight tendons (1, 1). Writes
  `--out FILE.yaml` and prints val.
- `gamma`: a length coupling on the commands, the distal tendon i's displacement less gamma x
  the length its path loses to the proximal segments' bends at the tendons' common radius,
  d_i - gamma sum_j (2/3) cos(a_i - a_j) d_j over the tendons j of the segments proximal to
  i's (gamma = 0: the model's own geometric coupling only; > 0: more coupling, e.g. a tendon
  rubbing its way over the proximal holes); scanned with the 15 held on every S-th train row.
- `mu2`: capstan friction (`friction_sequence`, stick band 0) fitted on the two-segment train
  rows only (every S-th), with its standard error from the 1-D Jacobian at the optimum.

Nothing is fitted or selected on val: its numbers are printed for the train-chosen values
(and, marked "diagnostic", for the scan points).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.description import find_robot, load_robot
from softrod.validate import motion_direction, read_recording, recording_path
from softrod.validate._hardware import friction_sequence, replay_marker


def family(label: str) -> str:
    s = label.removeprefix("rep1_").removesuffix("_hold")
    if s.startswith("tendon"):
        return "tendon_pull"
    if s.startswith("seg"):
        return "one:" + s.split("_")[0][3:]
    if s.startswith("pair"):
        return "two:" + s.split("_")[0][4:] + "_" + s.split("_")[1]
    return "three:" + s.split("_dir")[0]


def passthrough(spec, c: tuple[float, ...]):
    """`spec` with segment k's tendons (k >= 1) at c[k-1] x offset in the disks of segments
    0..k-1 (and the base hole), at their offset in their own segment's disks."""
    raw = spec.model_dump()
    segs = raw["segments"]
    for k in range(1, len(segs)):
        n_prox = sum(int(segs[j]["disks"]) for j in range(k))
        for td in segs[k]["tendons"]:
            r = td["offset"]
            td["offset"] = c[k - 1] * r
            td["offsets"] = [c[k - 1] * r] * n_prox + [r] * int(segs[k]["disks"])
    return load_robot(raw)


def load(robot: str, fitted: str):
    spec = load_robot(find_robot(fitted))
    cal = spec.calibration
    assert cal is not None
    return spec, {
        split: read_recording(recording_path(robot, split), servo_columns=cal.servo_columns)
        for split in ("train", "val")
    }


def err(spec, rec, rows=None, **kw) -> np.ndarray:
    tip, _ = replay_marker(spec, rec.displacement, rows=rows, t=rec.t, **kw)
    meas = rec.tip if rows is None else rec.tip[rows]
    return np.linalg.norm(tip - meas, axis=1) * 1e3


def summary(e: np.ndarray, rec) -> str:
    d = motion_direction(rec.displacement)
    return (
        f"mean {e.mean():.2f} median {np.median(e):.2f} max {e.max():.2f} "
        f"pull/release {e[d > 0].mean():.2f}/{e[d < 0].mean():.2f}"
    )


def families(spec, recs) -> None:
    """Residual by pattern family; radial = along the horizontal direction from the straight
    pose to the predicted tip (> 0: bent further than predicted), axial = along z."""
    for split, rec in recs.items():
        tip, _ = replay_marker(spec, rec.displacement, t=rec.t)
        r = (rec.tip - tip) * 1e3
        e = np.linalg.norm(r, axis=1)
        rest = np.median(tip[np.linalg.norm(rec.displacement, axis=1) < 5e-4], axis=0)
        off = (tip - rest)[:, :2] * 1e3
        bend = np.linalg.norm(off, axis=1)
        u = off / np.maximum(bend, 1e-6)[:, None]
        radial = np.sum(r[:, :2] * u, axis=1)
        fam = np.array([family(p) for p in rec.pattern])
        print(f"{split}: {summary(e, rec)}")
        for f in sorted(set(fam)):
            m = fam == f
            big = m & (bend > 40.0)
            rb = radial[big].mean() if big.any() else np.nan
            share = 100 * rb / bend[big].mean() if big.any() else np.nan
            print(f"  {f:22s} {m.sum():4d} rows  mean {e[m].mean():5.2f} mm  bend "
                  f"{bend[m].mean():5.1f} mm  radial {radial[m].mean():+5.2f}  axial "
                  f"{r[m, 2].mean():+5.2f}  | bend > 40 mm: {big.sum():3d} rows radial "
                  f"{rb:+5.2f} mm ({share:+4.1f} %)")  # fmt: skip


def scan_passthrough(spec, recs, stride: int) -> None:
    tr, va = recs["train"], recs["val"]
    rows = np.arange(0, len(tr.t), stride)
    n_seg = len(spec.segments)
    meas = tr.tip[rows]
    best = (np.inf, 1.0)
    for c in (1.0, 0.05, 0.3, 0.6, 0.8, 1.1, 1.2):
        t0 = time.process_time()
        s = passthrough(spec, (c,) * (n_seg - 1))
        e_tr = err(s, tr, rows)
        e_va = err(s, va)
        print(f"  c {c:4.2f}: train mean {e_tr.mean():.2f} | val (diagnostic) {e_va.mean():.2f} "
              f"[{time.process_time() - t0:.1f} s CPU]", flush=True)  # fmt: skip
        if e_tr.mean() < best[0]:
            best = (e_tr.mean(), c)
    from scipy.optimize import least_squares

    def resid(x: np.ndarray) -> np.ndarray:
        tip, _ = replay_marker(passthrough(spec, tuple(x)), tr.displacement, rows=rows, t=tr.t)
        return (tip - meas).ravel() * 1e3

    x0 = np.full(n_seg - 1, best[1])
    res = least_squares(resid, x0, bounds=(0.05, 1.22), diff_step=1e-3, max_nfev=6, method="trf")
    jac = res.jac
    s2 = float(res.fun @ res.fun) / (len(res.fun) - len(res.x))
    se = np.sqrt(np.diag(np.linalg.inv(jac.T @ jac)) * s2)
    s = passthrough(spec, tuple(res.x))
    e_tr, e_va = err(s, tr, rows), err(s, va)
    print(f"  fitted c = {np.round(res.x, 3)} +- {np.round(se, 3)} (nfev {res.nfev}): "
          f"train mean {e_tr.mean():.2f}")  # fmt: skip
    print(f"  val: {summary(e_va, va)}")


def fit_mu2(spec, recs, stride: int) -> None:
    tr, va = recs["train"], recs["val"]
    fam = np.array([family(p) for p in tr.pattern])
    two = np.flatnonzero(np.char.startswith(fam.astype(str), "two:"))
    rows = two[::stride]
    meas = tr.tip[rows]
    print(f"  two-segment train rows: {len(two)}, fitted on {len(rows)}")

    def resid(mu: float) -> np.ndarray:
        # The selected rows in time order as one friction sequence (state carried).
        tip, _ = replay_marker(
            spec, tr.displacement, rows=rows, t=tr.t,
            sequence_model=friction_sequence, friction=(mu, 0.0),
        )  # fmt: skip
        return (tip - meas).ravel() * 1e3

    scan = {}
    for mu in (0.0, 0.05, 0.1, 0.2, 0.3):
        t0 = time.process_time()
        r = resid(mu)
        scan[mu] = r
        e = np.linalg.norm(r.reshape(-1, 3), axis=1).mean()
        print(f"  mu {mu:4.2f}: two-segment train mean {e:.3f} mm, SSR {r @ r:.1f} "
              f"[{time.process_time() - t0:.1f} s CPU]", flush=True)  # fmt: skip
    mus = np.array(list(scan))
    ssr = np.array([r @ r for r in scan.values()])
    # Parabola through the best scan point and its neighbours: the 1-D least-squares optimum.
    i = int(np.clip(np.argmin(ssr), 1, len(mus) - 2))
    a, b, _ = np.polyfit(mus[i - 1 : i + 2], ssr[i - 1 : i + 2], 2)
    mu_hat = float(np.clip(-b / (2 * a), 0.0, 1.0)) if a > 0 else float(mus[np.argmin(ssr)])
    r_hat = resid(mu_hat)
    h = 0.01
    jac = (resid(mu_hat + h) - r_hat) / h
    s2 = float(r_hat @ r_hat) / (len(r_hat) - 1)
    se = float(np.sqrt(s2 / (jac @ jac)))
    e = np.linalg.norm(r_hat.reshape(-1, 3), axis=1).mean()
    print(f"  fitted mu = {mu_hat:.3f} +- {se:.3f}: two-segment train mean {e:.3f} mm")
    e_va = err(spec, va, sequence_model=friction_sequence, friction=(mu_hat, 0.0))
    print(f"  val: {summary(e_va, va)}")


def coupled(spec, d: np.ndarray, gamma: float) -> np.ndarray:
    """d (T, n) less gamma x each distal tendon's path length lost to the proximal bends."""
    seg = np.concatenate([[k] * len(s.tendons) for k, s in enumerate(spec.segments)])
    a = np.radians([t.angle_deg for _, t in spec.tendon_list()])
    m = (2.0 / 3.0) * np.cos(a[:, None] - a[None, :]) * (seg[None, :] < seg[:, None])
    return d - gamma * d @ m.T


def scan_gamma(spec, recs, stride: int) -> None:
    tr, va = recs["train"], recs["val"]
    rows = np.arange(0, len(tr.t), stride)
    best = (np.inf, 0.0)
    for g in (0.0, -0.2, -0.1, 0.1, 0.2, 0.4):
        tip, _ = replay_marker(spec, coupled(spec, tr.displacement, g), rows=rows, t=tr.t)
        e_tr = np.linalg.norm(tip - tr.tip[rows], axis=1).mean() * 1e3
        print(f"  gamma {g:+.2f}: train mean {e_tr:.2f} mm", flush=True)
        if e_tr < best[0]:
            best = (e_tr, g)
    tip, _ = replay_marker(spec, coupled(spec, va.displacement, best[1]), t=va.t)
    e = np.linalg.norm(tip - va.tip, axis=1) * 1e3
    print(f"  gamma chosen on train {best[1]:+.2f}: val {summary(e, va)}")


def refit(robot: str, spec, recs, stride: int, max_nfev: int, out: str) -> None:
    import math
    from dataclasses import replace

    import yaml

    from softrod.validate import HardwareParams, calibrate_hardware, calibrated_robot
    from softrod.validate._hardware import hardware_robot

    # FITTED's parameters, read back from its description (angles against the shipped ones).
    shipped = hardware_robot(robot)
    cal = spec.calibration
    pre = np.reshape(cal.pretension, (len(spec.segments), -1))
    params = HardwareParams(
        stiffness=tuple(float(s.tendons[0].stiffness) for s in spec.segments),
        pretension=tuple(float(p) for p in pre[:, 0]),
        angle_offset=tuple(
            math.radians(s.tendons[0].angle_deg - s0.tendons[0].angle_deg)
            for s, s0 in zip(spec.segments, shipped.segments, strict=True)
        ),
        marker_offset=cal.marker_offset,
        translation=tuple(cal.tracker_translation),
        tilt=tuple(math.radians(a) for a in cal.tracker_tilt_deg),
        backlash=cal.backlash,
    )
    tr, va = recs["train"], recs["val"]
    start = calibrated_robot(robot, params, servo_columns=spec.calibration.servo_columns)
    print(f"  start (FITTED's parameters): val {err(start, va).mean():.2f} mm", flush=True)
    t0 = time.process_time()
    fit = calibrate_hardware(
        robot, tr.as_tdcr(robot), stride=stride, max_nfev=max_nfev,
        initial=replace(params, passthrough=(1.0,) * (len(spec.segments) - 1)),
        passthrough=True,
    )  # fmt: skip
    se = (fit.extra["standard_errors"] or {}).get("passthrough_scale")
    print(f"  fitted c = {np.round(fit.params.passthrough, 4)} +- "
          f"{np.round(se, 4) if se else se} ({fit.extra['standard_errors_message']}); train RMSE "
          f"{fit.rmse_before_mm:.2f} -> {fit.rmse_after_mm:.2f} mm on {fit.train_rows} rows, "
          f"nfev {fit.nfev}, {time.process_time() - t0:.0f} s CPU", flush=True)  # fmt: skip
    print(f"  params {fit.params.as_dict()}")
    new = calibrated_robot(robot, fit.params, servo_columns=spec.calibration.servo_columns)
    with open(out, "w") as f:
        f.write(yaml.safe_dump(new.to_dict(), sort_keys=False))
    print(f"  val: {summary(err(new, va), va)}")
    held = calibrated_robot(
        robot, replace(fit.params, passthrough=()), servo_columns=spec.calibration.servo_columns
    )
    print(f"  its c taken out (straight tendons): val {err(held, va).mean():.2f} mm")


def main() -> None:
    args = sys.argv[1:]
    opts = {"--stride": "4", "--max-nfev": "3", "--out": "refit.yaml"}
    for key in opts:
        if key in args:
            i = args.index(key)
            opts[key] = args[i + 1]
            del args[i : i + 2]
    stride = int(opts["--stride"])
    robot, fitted, what = args
    spec, recs = load(robot, fitted)
    if what == "families":
        families(spec, recs)
    elif what == "passthrough":
        scan_passthrough(spec, recs, stride)
    elif what == "refit":
        refit(robot, spec, recs, stride, int(opts["--max-nfev"]), opts["--out"])
    elif what == "gamma":
        scan_gamma(spec, recs, stride)
    elif what == "mu2":
        fit_mu2(spec, recs, stride)
    else:
        raise SystemExit(f"unknown candidate {what!r}")


if __name__ == "__main__":
    main()
