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


def main() -> None:
    args = sys.argv[1:]
    stride = 4
    if "--stride" in args:
        i = args.index("--stride")
        stride = int(args[i + 1])
        del args[i : i + 2]
    robot, fitted, what = args
    spec, recs = load(robot, fitted)
    if what == "families":
        families(spec, recs)
    elif what == "passthrough":
        scan_passthrough(spec, recs, stride)
    elif what == "mu2":
        fit_mu2(spec, recs, stride)
    else:
        raise SystemExit(f"unknown candidate {what!r}")


if __name__ == "__main__":
    main()
