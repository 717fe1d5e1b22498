"""What the calibrated model misses on the physical TDCRs: the residual (measured - predicted
marker) of a fitted description on its train file, characterised, and cheap candidate models
of it screened on train and scored on val.

    PYTHONPATH=src python dev/hardware_residual.py ROBOT FITTED.yaml [--cache FILE.npz] [TAU:A ...]

FITTED is a `softrod hardware fit` description fitted on ROBOT's train file. Nothing is fitted on
val: every candidate's parameters come from train rows, val is only replayed.

1. The residual on train: by time (session deciles: drift?), pulling / releasing / holding,
   command rate, bend size, in the bend frame (radial = along the horizontal direction from
   the straight pose to the predicted tip, tangential, axial), per pattern family, and at rest
   against the time since the last bend (does a residual bend decay: creep?).
2. Candidates, linearised: the tip's sensitivity J_i = d marker / d displacement (3, 9) at each
   row comes from 9 replays with one tendon's displacement shifted by `H` (the play and the
   warm starts run as in the replay), so a candidate that changes the effective displacement
   by delta_i predicts the residual J_i delta_i; its few parameters are fitted on train by
   linear least squares (a scan over a time constant), then val's error after the correction
   is printed. Output-side candidates (drift, a tip-frame marker offset) are linear too.
   Geometry: each segment's tendon offset scaled (3 more replays per file, `geometry`).
3. Each TAU:A given (a lag's time constant [s] and fraction) is checked with a true replay
   (the lagged displacements through `replay_marker`, nothing linearised).

Linearisation error: a candidate's correction is small against the bend, but the check of 3.
says how far the linear estimate is from the real one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from softrod.description import find_robot, load_robot
from softrod.validate import motion_direction, read_recording, recording_path
from softrod.validate._hardware import replay_marker

#: Displacement shift for the sensitivities [m] (a few servo ticks; the tip moves ~1 mm).
H = 1e-4
#: Time constants scanned by the lag candidates [s] (rows are ~0.6 s apart).
TAUS = (0.3, 0.6, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0)


def lowpass(d: np.ndarray, t: np.ndarray, tau: float) -> np.ndarray:
    """First-order lag of each column of d (T, n) with time constant tau [s] (exact for a
    command held between samples: y += (1 - exp(-dt / tau)) (d - y))."""
    out = np.empty_like(d)
    out[0] = d[0]
    for i in range(1, len(d)):
        a = 1.0 - np.exp(-(t[i] - t[i - 1]) / tau)
        out[i] = out[i - 1] + a * (d[i] - out[i - 1])
    return out


def family(label: str) -> str:
    """Pattern family: tendon pulls, one segment's bends or circle, pairs, three segments."""
    s = label.removeprefix("rep1_").removesuffix("_hold")
    if s.startswith("tendon"):
        return "tendon_pull"
    if s.startswith("seg"):
        return s.split("_")[0] + ("_circle" if "circle" in s else "_dir")
    if s.startswith("pair"):
        return "_".join(s.split("_")[:2])
    return s.split("_dir")[0]


def stats(e: np.ndarray) -> str:
    return f"{e.mean():.2f}" if e.size else "-"


def sensitivities(spec, disp: np.ndarray, base: np.ndarray) -> np.ndarray:
    """(T, 3, n) d marker / d displacement by forward differences of whole replays."""
    n = disp.shape[1]
    jac = np.empty((len(disp), 3, n))
    for k in range(n):
        d = disp.copy()
        d[:, k] += H
        tip, _ = replay_marker(spec, d)
        jac[:, :, k] = (tip - base) / H
    return jac


def load(robot: str, fitted: str, cache: Path | None):
    spec = load_robot(find_robot(fitted))
    cal = spec.calibration
    assert cal is not None
    out = {}
    t_start = None
    for split in ("train", "val"):
        path = recording_path(robot, split)
        rec = read_recording(path, servo_columns=cal.servo_columns)
        t0 = float(np.loadtxt(path, delimiter=",", skiprows=1, usecols=0, max_rows=1))
        t_start = t0 if t_start is None else min(t_start, t0)
        out[split] = {"rec": rec, "t_abs": rec.t + t0}
    data = np.load(cache) if cache is not None and cache.is_file() else None
    for split, s in out.items():
        if data is not None:
            s["pred"], s["jac"] = data[f"{split}_pred"], data[f"{split}_jac"]
            continue
        s["pred"], _ = replay_marker(spec, s["rec"].displacement)
        s["jac"] = sensitivities(spec, s["rec"].displacement, s["pred"])
    if cache is not None and data is None:
        np.savez(cache, **{f"{k}_{q}": out[k][q] for k in out for q in ("pred", "jac")})
    for s in out.values():
        s["t"] = s["t_abs"] - t_start
    return spec, out


def characterise(s: dict) -> None:
    rec = s["rec"]
    r = (rec.tip - s["pred"]) * 1e3
    e = np.linalg.norm(r, axis=1)
    t, d = s["t"], rec.displacement
    print(f"train: {len(e)} rows, residual mean {e.mean():.2f} mm; mean vector "
          f"{np.array2string(r.mean(0), precision=2)} mm")  # fmt: skip
    # Drift: the residual by session decile.
    print("  by time (tenths of the train file): |r| / mean r [mm]")
    for q, idx in enumerate(np.array_split(np.arange(len(e)), 10)):
        print(f"    {q}: t {t[idx[0]]:6.0f}-{t[idx[-1]]:6.0f} s |r| {e[idx].mean():5.2f}  "
              f"r {np.array2string(r[idx].mean(0), precision=2)}")  # fmt: skip
    # Bend frame: radial = horizontal direction from the straight pose to the predicted tip.
    rest = np.median(s["pred"][np.linalg.norm(d, axis=1) < 5e-4], axis=0)
    off = (s["pred"] - rest)[:, :2]
    bend = np.linalg.norm(off, axis=1) * 1e3
    u = off / np.maximum(np.linalg.norm(off, axis=1), 1e-9)[:, None]
    radial = np.sum(r[:, :2] * u, axis=1)
    tang = u[:, 0] * r[:, 1] - u[:, 1] * r[:, 0]
    direction = motion_direction(d)
    print("  by motion: rows, |r|, radial (+ = bent further than predicted), tangential, axial")
    for name, m in (
        ("pulling", direction > 0),
        ("releasing", direction < 0),
        ("holding", direction == 0),
    ):
        print(f"    {name:9s} {m.sum():5d} |r| {stats(e[m])} radial {stats(radial[m])} "
              f"tangential {stats(tang[m])} axial {stats(r[m, 2])}")  # fmt: skip
    rate = np.r_[0.0, np.linalg.norm(np.diff(d, axis=0), axis=1) / np.diff(t)] * 1e3
    print("  by command rate |dd/dt| [mm/s]: |r|, radial while pulling / releasing")
    for lo, hi in ((0, 0.2), (0.2, 0.6), (0.6, 1.0), (1.0, 2.0), (2.0, 1e9)):
        m = (rate >= lo) & (rate < hi)
        print(f"    {lo:.1f}-{hi:.1f}: {m.sum():5d} |r| {stats(e[m])} radial pull "
              f"{stats(radial[m & (direction > 0)])} release "
              f"{stats(radial[m & (direction < 0)])}")  # fmt: skip
    print("  by bend (predicted tip's distance from the straight pose) [mm]: |r|, radial")
    for lo, hi in ((0, 15), (15, 30), (30, 60), (60, 90), (90, 1e9)):
        m = (bend >= lo) & (bend < hi)
        print(f"    {lo:3.0f}-{hi:3.0f}: {m.sum():5d} |r| {stats(e[m])} radial {stats(radial[m])} "
              f"axial {stats(r[m, 2])}")  # fmt: skip
    print("  by pattern family: rows, |r|, radial pull / release")
    fam = np.array([family(p) for p in rec.pattern])
    for f in dict.fromkeys(fam):
        m = fam == f
        print(f"    {f:14s} {m.sum():4d} |r| {stats(e[m])} radial pull "
              f"{stats(radial[m & (direction > 0)])} release "
              f"{stats(radial[m & (direction < 0)])}")  # fmt: skip
    # Creep: at rest, the residual against the time since the last clearly bent row.
    norm = np.linalg.norm(d, axis=1)
    rest_rows = np.flatnonzero(norm < 5e-4)
    since, mag = [], []
    for i in rest_rows:
        bent = np.flatnonzero(norm[:i] > 5e-3)
        if bent.size:
            since.append(t[i] - t[bent[-1]])
            mag.append(e[i])
    since_a, mag_a = np.array(since), np.array(mag)
    print("  at rest (|d| < 0.5 mm) after a bend: |r| by time since the last bend (|d| > 5 mm)")
    for lo, hi in ((0, 2), (2, 5), (5, 10), (10, 30), (30, 1e9)):
        m = (since_a >= lo) & (since_a < hi)
        print(f"    {lo:3.0f}-{hi:3.0f} s: {m.sum():4d} rows |r| {stats(mag_a[m])}")


def lin_fit(features_train: np.ndarray, r_train: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of r (m,) on the columns of features (m, p)."""
    coef, *_ = np.linalg.lstsq(features_train, r_train, rcond=None)
    return coef


def screen(out: dict) -> None:
    """Linearised candidates: fit on train, print train / val mean error [mm]."""
    tr, va = out["train"], out["val"]

    def base(s: dict) -> np.ndarray:
        return (s["rec"].tip - s["pred"]) * 1e3

    def report(name: str, corr_tr: np.ndarray, corr_va: np.ndarray, note: str = "") -> float:
        e_tr = np.linalg.norm(base(tr) - corr_tr, axis=1).mean()
        e_va = np.linalg.norm(base(va) - corr_va, axis=1).mean()
        print(f"  {name:42s} train {e_tr:5.2f}  val {e_va:5.2f} mm  {note}")
        return e_va

    z_tr, z_va = np.zeros_like(base(tr)), np.zeros_like(base(va))
    print("candidates (linearised; fitted on train only):")
    report("none (the fitted description)", z_tr, z_va)

    def jd(s: dict, delta: np.ndarray) -> np.ndarray:
        return np.einsum("tij,tj->ti", s["jac"], delta) * 1e3

    # Lag: d_eff = d + a (lowpass_tau(d) - d), one gain a for all tendons, tau scanned.
    best = (np.inf, 0.0, 0.0)
    for tau in TAUS:
        f_tr = jd(tr, lowpass(tr["rec"].displacement, tr["t"], tau) - tr["rec"].displacement)
        f_va = jd(va, lowpass(va["rec"].displacement, va["t"], tau) - va["rec"].displacement)
        a = float(lin_fit(f_tr.reshape(-1, 1), base(tr).ravel())[0])
        e_tr = np.linalg.norm(base(tr) - a * f_tr, axis=1).mean()
        report(f"lag tau {tau:g} s", a * f_tr, a * f_va, f"a = {a:.3f}")
        if e_tr < best[0]:
            best = (e_tr, tau, a)
    print(f"  -> lag chosen on train: tau {best[1]:g} s, a {best[2]:.3f}")
    # Lag per segment (3 gains) at the train-best tau.
    tau = best[1]
    f_tr_k = [jd(tr, _seg(lowpass(tr["rec"].displacement, tr["t"], tau)
                          - tr["rec"].displacement, g)) for g in range(3)]  # fmt: skip
    f_va_k = [jd(va, _seg(lowpass(va["rec"].displacement, va["t"], tau)
                          - va["rec"].displacement, g)) for g in range(3)]  # fmt: skip
    a3 = lin_fit(np.stack([f.ravel() for f in f_tr_k], 1), base(tr).ravel())
    c_tr = sum(a * f for a, f in zip(a3, f_tr_k, strict=True))
    c_va = sum(a * f for a, f in zip(a3, f_va_k, strict=True))
    report(f"lag tau {tau:g} s, a per segment", c_tr, c_va, f"a = {np.round(a3, 3)}")
    # Two time constants (fast + slow memory), gains fitted, taus scanned.
    best2 = (np.inf, None)
    for t1 in TAUS[:6]:
        for t2 in TAUS[4:]:
            if t2 <= t1:
                continue
            fs = [jd(tr, lowpass(tr["rec"].displacement, tr["t"], q) - tr["rec"].displacement)
                  for q in (t1, t2)]  # fmt: skip
            c = lin_fit(np.stack([f.ravel() for f in fs], 1), base(tr).ravel())
            e = np.linalg.norm(base(tr) - c[0] * fs[0] - c[1] * fs[1], axis=1).mean()
            if e < best2[0]:
                best2 = (e, (t1, t2, c))
    t1, t2, c = best2[1]  # type: ignore[misc]
    fv = [jd(va, lowpass(va["rec"].displacement, va["t"], q) - va["rec"].displacement)
          for q in (t1, t2)]  # fmt: skip
    ft = [jd(tr, lowpass(tr["rec"].displacement, tr["t"], q) - tr["rec"].displacement)
          for q in (t1, t2)]  # fmt: skip
    report(f"two lags tau {t1:g} + {t2:g} s", c[0] * ft[0] + c[1] * ft[1],
           c[0] * fv[0] + c[1] * fv[1], f"a = {np.round(c, 3)}")  # fmt: skip
    # Servo zero per tendon (9 offsets) and gain per tendon (9 factors).
    n = tr["rec"].displacement.shape[1]
    eye = np.eye(n)
    f_tr = np.stack([jd(tr, np.tile(eye[k], (len(tr["t"]), 1)) * 1e-3).ravel()
                     for k in range(n)], 1)  # fmt: skip
    f_va = np.stack([jd(va, np.tile(eye[k], (len(va["t"]), 1)) * 1e-3).ravel()
                     for k in range(n)], 1)  # fmt: skip
    c = lin_fit(f_tr, base(tr).ravel())
    report("servo zero per tendon (9)", (f_tr @ c).reshape(-1, 3), (f_va @ c).reshape(-1, 3),
           f"[mm] {np.round(c, 2)}")  # fmt: skip
    f_tr = np.stack([jd(tr, tr["rec"].displacement * eye[k]).ravel() for k in range(n)], 1)
    f_va = np.stack([jd(va, va["rec"].displacement * eye[k]).ravel() for k in range(n)], 1)
    c = lin_fit(f_tr, base(tr).ravel())
    report("gain per tendon (9)", (f_tr @ c).reshape(-1, 3), (f_va @ c).reshape(-1, 3),
           f"{np.round(c, 3)}")  # fmt: skip

    # Drift: a constant and a linear trend in session time on the tracked tip (6).
    def drift_feats(s: dict) -> np.ndarray:
        m = len(s["t"])
        cols = []
        for j in range(3):
            for f in (np.ones(m), s["t"] / 1000.0):
                x = np.zeros((m, 3))
                x[:, j] = f
                cols.append(x.ravel())
        return np.stack(cols, 1)

    c = lin_fit(drift_feats(tr), base(tr).ravel())
    report(
        "drift: tip offset + linear in time (6)",
        (drift_feats(tr) @ c).reshape(-1, 3),
        (drift_feats(va) @ c).reshape(-1, 3),
        f"per 1000 s [mm] {np.round(c[1::2], 2)}",
    )

    # A marker offset off the tip tangent is a tip-frame constant; its effect varies with the
    # tip's rotation, which the tangent carries only in part: approximated here by a term
    # linear in the predicted tip's horizontal offset (3 x 2 matrix, 6).
    def bend_feats(s: dict) -> np.ndarray:
        m = len(s["t"])
        off = s["pred"][:, :2] * 1e3
        cols = []
        for j in range(3):
            for q in range(2):
                x = np.zeros((m, 3))
                x[:, j] = off[:, q] / 100.0
                cols.append(x.ravel())
        return np.stack(cols, 1)

    c = lin_fit(bend_feats(tr), base(tr).ravel())
    report(
        "linear in the bend (6: frame scale / shear)",
        (bend_feats(tr) @ c).reshape(-1, 3),
        (bend_feats(va) @ c).reshape(-1, 3),
    )
    return None


def _seg(delta: np.ndarray, g: int) -> np.ndarray:
    out = np.zeros_like(delta)
    out[:, 3 * g : 3 * g + 3] = delta[:, 3 * g : 3 * g + 3]
    return out


def check_lag(spec, out: dict, tau: float, a: float) -> None:
    """The lag candidate through a true replay (train and val)."""
    for split in ("train", "val"):
        s = out[split]
        d = s["rec"].displacement
        eff = d + a * (lowpass(d, s["t"], tau) - d)
        tip, _ = replay_marker(spec, eff)
        e = np.linalg.norm(tip - s["rec"].tip, axis=1) * 1e3
        print(f"  replayed lag tau {tau:g} s a {a:g}: {split} mean {e.mean():.2f} mm")


#: Relative change of a segment's tendon offsets for the geometry sensitivities.
GEOMETRY_STEP = 0.01


def geometry(spec, out: dict, cache: Path | None) -> None:
    """Linearised candidate: each segment's tendons at another offset from the backbone
    (a radius scale per segment's tendons, 3 parameters; the 15 held at the fit)."""
    from softrod.description import load_robot as _load

    data = np.load(cache) if cache is not None and cache.is_file() else None
    cols: dict[str, list[np.ndarray]] = {"train": [], "val": []}
    for g in range(len(spec.segments)):
        raw = spec.model_dump()
        for td in raw["segments"][g]["tendons"]:
            td["offset"] *= 1.0 + GEOMETRY_STEP
        moved = _load(raw)
        for split in ("train", "val"):
            s = out[split]
            key = f"{split}_geo{g}"
            if data is not None and key in data:
                tip = data[key]
            else:
                tip, _ = replay_marker(moved, s["rec"].displacement)
            cols[split].append(tip)
    if cache is not None and data is None:
        np.savez(cache, **{f"{k}_geo{g}": cols[k][g] for k in cols for g in range(3)})
    base = {k: (out[k]["rec"].tip - out[k]["pred"]) * 1e3 for k in out}
    f = {k: np.stack([((c - out[k]["pred"]) * 1e3).ravel() for c in cols[k]], 1) for k in cols}
    c = lin_fit(f["train"], base["train"].ravel())
    for k in ("train", "val"):
        e = np.linalg.norm(base[k] - (f[k] @ c).reshape(-1, 3), axis=1).mean()
        print(f"  tendon offset scale per segment (3): {k} {e:.2f} mm "
              f"(scales {np.round(1 + c * GEOMETRY_STEP, 3)})")  # fmt: skip


def main() -> None:
    args = sys.argv[1:]
    cache = None
    if "--cache" in args:
        i = args.index("--cache")
        cache = Path(args[i + 1])
        del args[i : i + 2]
    robot, fitted = args[0], args[1]
    spec, out = load(robot, fitted, cache)
    characterise(out["train"])
    screen(out)
    geo = None if cache is None else cache.with_name(cache.stem + "_geo.npz")
    geometry(spec, out, geo)
    for tau, a in (p.split(":") for p in args[2:]):
        check_lag(spec, out, float(tau), float(a))


if __name__ == "__main__":
    main()
