"""Disk-to-disk contact as the three-segment under-bend of the physical TDCRs (issue 15;
docs/validation.md, "Disk contact"): contact parameters from the robots' geometry, not fitted.

    PYTHONPATH=src python dev/hardware_contact.py ROBOT FITTED.yaml curvature [--thickness T]
    PYTHONPATH=src python dev/hardware_contact.py ROBOT FITTED.yaml contact [--thickness T]
        [--scale S ...] [--stride N]
    PYTHONPATH=src python dev/hardware_contact.py ROBOT FITTED.yaml scan --scale S ... [--stride N]
        [--half first|second] [--penalty R]
    PYTHONPATH=src python dev/hardware_contact.py ROBOT FITTED.yaml refit --scale S0 [--stride N]
        [--max-nfev M]

FITTED is a `softrod hardware fit` description fitted on ROBOT's train file (15 parameters,
held). T is the disk thickness [m] (default `DISK_THICKNESS`).

Geometry. Rigid disks of thickness t and radius R_d sit perpendicular to the backbone at the
robot's disk arc lengths (`RodModel.disk_s`: segment j's disks at s_j + i L_j / n_j, i = 1..n_j),
so consecutive disk centres are h = L_j / n_j apart along the backbone and the free gap between
their faces on the straight robot is g = h - t. Bend the interval to a circular arc of
curvature kappa (radius rho = 1 / kappa, relative tilt of the two disks theta = kappa h). Every
cross-section plane of the arc passes through the centre of curvature; a disk's face is its
cross-section plane shifted by t / 2 along the tangent, and the first points to meet are the
two facing rims on the inside of the bend, at rho - R_d from the centre. By symmetry they meet
on the bisecting section (angle theta / 2): the rim corner of the proximal disk, at
(rho - R_d, t / 2) in a frame with the proximal section along x, lies on that plane when

    tan(kappa h / 2) (1 - kappa R_d) = kappa t / 2,                               (exact)

whose small-angle root is kappa_c = (h - t) / (h R_d) = 2 g / (h D), D = 2 R_d. Beyond it the
two disks pivot about the touching rims: the backbone between them, R_d from the pivot, has
to stretch, so the interval's bending stiffness jumps from EI0 = E pi r^4 / 4 to about
EA R_d^2 = EI0 4 (R_d / r)^2 (rigid PLA disks, the wire clamped in them): `PENALTY_RATIO`.

Commands:

- `curvature`: the frictionless replay of train and val (the plain `replay_marker` answers),
  and per row the tilt theta between consecutive disks (angle between their backbone
  tangents; the interval's mean curvature kbar = theta / h), per segment the maximum over its
  intervals; printed per split and pattern class (one-, two-, three-segment bends, single
  tendon pulls): the largest kbar against the interval's exact kappa_c, and the thickness (gap)
  at which that row's tilt would just close the gap.
- `contact`: the replay with the contact law (a prototype around the unchanged static solver, as
  dev/hardware_underbend.py's stiffening): each disk interval a sub-segment
  (`split_segments`), and each row a fixed point on the intervals' secant stiffness: from the
  previous solve's interval moment M = EI kbar, the law kbar(M) = M / EI0 below
  M_c = EI0 kappa_c and kappa_c + (M - M_c) / (EI0 (1 + PENALTY_RATIO)) above, EI = M / kbar(M),
  until EI changes by < FIX_TOL. `--scale S` multiplies every kappa_c by S; train (every N-th
  row) and val at each S given (a diagnostic: nothing is chosen here).
- `scan`: one scale on every kappa_c fitted on train only (the 15 held), val replayed once at
  the train-chosen scale (`scan`); `refit`: the scale and the 15 fitted together from S0.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.optimize import brentq

from softrod.rods import compile_model, solve_static
from softrod.validate import bootstrap_mean_interval, motion_direction
from softrod.validate._hardware import replay_marker

sys.path.insert(0, "dev")
from hardware_coupling import family, load  # noqa: E402
from hardware_underbend import (  # noqa: E402
    fitted_params,
    split_segments,
    write_bending_stiffness,
)

#: Disk thickness [m]: the robot file's "PLA disk 11 mm x 5 mm" (src/softrod/data/robots/
#: ftdcr_v4.yaml, whose disk_mass 0.59 g is PLA at 1240 kg/m^3 over that cylinder); the authors'
#: configs (configs/generation/ftdcr_v*_sysid.json) give radius and links, no thickness.
DISK_THICKNESS = 5e-3
#: Disk thickness over spacing where `DISK_THICKNESS` does not fit the spacing
#: (`disk_thickness`): the MuJoCo builder's collision-disk rule, docs/mujoco.md "Contact".
DISK_FILL = 0.6
#: Contact stiffness over EI0: the pivot about the touching rims stretches the wire R_d from it,
#: EA R_d^2 / EI0 = 4 (R_d / r)^2 = 484 for R_d 5.5 mm, r 0.5 mm (rigid disks, wire clamped).
PENALTY_RATIO = 484.0
#: Fixed-point stop: relative change of the intervals' EI; 1e-7 moves the tip by << 1 um.
FIX_TOL = 1e-7
#: Fixed-point iterations per row before the row is declared failed.
FIX_MAX = 60
#: Tolerance [m] for finding a disk's arc length among the solution's nodes (disks are nodes).
NODE_TOL = 1e-9


def kappa_contact(h: float, t: float, rd: float) -> tuple[float, float]:
    """(exact, small-angle) curvature [1/m] at which two disks of thickness t [m], radius rd
    [m], centres h [m] apart on a circular-arc backbone touch at their inner rims; 0 when the
    gap is closed already (t >= h)."""
    g = h - t
    if g <= 0.0:
        return 0.0, 0.0
    approx = g / (h * rd)

    def f(k: float) -> float:
        return np.tan(0.5 * k * h) * (1.0 - k * rd) - 0.5 * k * t

    hi = min(1.0 / rd, np.pi / h) * (1.0 - 1e-12)
    return float(brentq(f, 1e-9, hi, xtol=1e-12)), float(approx)


def gap_closed_by(theta: float, h: float, rd: float) -> float:
    """Disk thickness [m] at which a tilt theta [rad] over spacing h [m] (circular arc) just
    brings the inner rims together: t = 2 tan(theta / 2) (rho - rd), rho = h / theta."""
    if theta <= 0.0:
        return h
    return float(2.0 * np.tan(0.5 * theta) * (h / theta - rd))


def disk_thickness(disk_s: np.ndarray, thickness: float) -> np.ndarray:
    """(n_disks,) thickness [m] of the disks at arc lengths disk_s [m]: `thickness` where it is
    below the disk's shorter spacing to a neighbour (the base plate at s = 0 counts), else 0.6
    of that spacing (the MuJoCo builder's collision-disk rule, docs/mujoco.md "Contact"):
    ftdcr_v6's third segment, 8 disks on 22 mm (h = 2.75 mm), cannot hold 5 mm disks, nor can
    the last disk of its second segment, 2.75 mm before the third's first."""
    gaps = np.diff(np.r_[0.0, disk_s])
    h = np.minimum(gaps, np.r_[gaps[1:], np.inf])
    return np.where(h > thickness, thickness, DISK_FILL * h)


def intervals(spec, thickness: float):
    """Disk-to-disk intervals of `spec`: (s_a, s_b, h, segment of the distal disk, kappa_c
    exact, kappa_c small-angle, disk radius, mean thickness of the two disks) arrays; the
    first disk's interval to the base plate is left out (the base plate's face is not in the
    robot files). Two disks of different thickness t_a, t_b are taken as two of (t_a + t_b) / 2
    (the same gap; exact in the small-angle root)."""
    m = compile_model(spec)
    ds = np.asarray(m.disk_s)
    seg = np.asarray(m.disk_seg)
    rd = np.array([spec.segments[j].disk_radius for j in seg])
    td = disk_thickness(ds, thickness)
    sa, sb = ds[:-1], ds[1:]
    h = sb - sa
    t = 0.5 * (td[:-1] + td[1:])
    kc = np.array([kappa_contact(*x) for x in zip(h, t, rd[1:], strict=True)])
    return sa, sb, h, seg[1:], kc[:, 0], kc[:, 1], rd[1:], t


def tilt_sequence(spec_disks, stats: dict):
    """A `SequenceModel` that solves as `_static_sequence` (same calls, same answers) and
    records per row the tilt [rad] of every disk interval of `spec_disks` (`intervals`)."""
    sa, sb = spec_disks[0], spec_disks[1]

    def seq(spec, lengths, mu, band):
        model = compile_model(spec)
        tips, tangents = np.empty((len(lengths), 3)), np.empty((len(lengths), 3))
        ok = np.empty(len(lengths), dtype=bool)
        guess = None
        for i, ell in enumerate(lengths):
            sol = solve_static(model, lengths=ell, guess=guess)
            ok[i] = sol.success
            guess = sol if sol.success else None
            tips[i] = sol.tip_position
            tangents[i] = np.asarray(sol.tip_rotation)[:, 2]
            stats.setdefault("tilt", []).append(_tilts(sol, sa, sb))
        return tips, tangents, ok

    return seq


def _tilts(sol, sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
    s = np.asarray(sol.s)
    z = np.asarray(sol.rotations)[:, :, 2]

    def idx(x: np.ndarray) -> np.ndarray:
        i = np.clip(np.searchsorted(s, x - NODE_TOL), 0, len(s) - 1)
        assert np.all(np.abs(s[i] - x) < NODE_TOL), "a disk is not a node of the solution"
        return i

    za, zb = z[idx(sa)], z[idx(sb)]
    return np.arccos(np.clip(np.sum(za * zb, axis=1), -1.0, 1.0))


def pattern_class(label: str) -> str:
    f = family(label)
    return {"one": "one-segment", "two": "two-segment", "three": "three-segment"}.get(
        f.split(":")[0], f
    )


def curvature(robot: str, fitted: str, thickness: float) -> None:
    spec, recs = load(robot, fitted)
    geo = intervals(spec, thickness)
    sa, sb, h, seg, kc, kc0, rd, t = geo
    n_seg = len(spec.segments)
    print(f"{robot}: disk thickness {thickness * 1e3:.2f} mm (0.6 h where it does not fit); "
          "per segment (intervals by their distal disk):")  # fmt: skip
    for j in range(n_seg):
        m = seg == j
        print(f"  segment {j + 1}: spacing h {h[m].min() * 1e3:.3f}-{h[m].max() * 1e3:.3f} mm, "
              f"t {t[m].min() * 1e3:.2f}-{t[m].max() * 1e3:.2f} mm, gap "
              f"{(h[m] - t[m]).min() * 1e3:.3f} mm, disk radius {rd[m][0] * 1e3:.2f} mm, "
              f"kappa_c exact {kc[m].min():.2f}-{kc[m].max():.2f} 1/m (2 g / (h D): "
              f"{kc0[m].min():.2f}-{kc0[m].max():.2f})")  # fmt: skip
    for split in ("train", "val"):
        rec = recs[split]
        st: dict = {}
        t0 = time.process_time()
        tip, ok = replay_marker(
            spec, rec.displacement, t=rec.t, sequence_model=tilt_sequence(geo, st)
        )
        tip0, _ = replay_marker(spec, rec.displacement, t=rec.t)
        e = np.linalg.norm(tip - rec.tip, axis=1) * 1e3
        tilt = np.array(st["tilt"])  # (rows, intervals)
        kbar = tilt / h[None, :]
        cls = np.array([pattern_class(p) for p in rec.pattern])
        print(f"{split} ({len(rec.t)} rows, ok {ok.mean():.3f}, same as the plain replay to "
              f"{np.abs(tip - tip0).max():.1e} m; mean error {e.mean():.2f} mm) "
              f"[{time.process_time() - t0:.1f} s CPU]")  # fmt: skip
        for c in sorted(set(cls)):
            rows = cls == c
            parts = []
            for j in range(n_seg):
                m = seg == j
                kb = kbar[np.ix_(rows, m)]
                r, k = np.unravel_index(np.argmax(kb / kc[m][None, :]), kb.shape)
                ii = np.flatnonzero(m)[k]
                ts = gap_closed_by(tilt[np.flatnonzero(rows)[r], ii], h[ii], rd[ii])
                parts.append(
                    f"s{j + 1} {kb.max():.1f} 1/m, {kb[r, k] / kc[ii]:.2f} kappa_c "
                    f"(closes t >= {ts * 1e3:.2f}, g <= {(h[ii] - ts) * 1e3:.2f} mm)"
                )
            print(f"  {c:14s} ({rows.sum():4d} rows) max kbar: " + "; ".join(parts))


def contact_sequence(kc_int: np.ndarray, stats: dict | None = None):
    """A `SequenceModel` with the contact law on every disk interval (see the module
    docstring); kc_int : (n_sub,) contact curvature [1/m] per sub-segment of `split_segments`
    (inf for the base interval and intervals with no contact)."""

    def seq(spec, lengths, mu, band):
        base = split_segments(spec)
        model = compile_model(base)
        ei0 = model.K_bt[:, 0].copy()
        n_sub = len(ei0)
        assert len(kc_int) == n_sub

        def set_ratio(ratio: np.ndarray) -> bool:
            return write_bending_stiffness(model, ei0 * ratio)

        ones = np.ones(n_sub)
        ratio = ones.copy()
        set_ratio(ratio)
        seg_start = np.asarray(model.seg_start)
        seg_end = seg_start + np.asarray(model.seg_length)
        tips, tangents = np.empty((len(lengths), 3)), np.empty((len(lengths), 3))
        ok = np.empty(len(lengths), dtype=bool)
        guess = None
        iters = []
        for i, ell in enumerate(lengths):
            done = False
            n_iter = 0
            for it in range(FIX_MAX):
                n_iter = it + 1
                sol = solve_static(model, lengths=ell, guess=guess, check_stability=False)
                if not sol.success:
                    break
                guess = sol
                kbar = _tilts(sol, seg_start, seg_end) / (seg_end - seg_start)
                moment = ratio * kbar  # M / EI0 [1/m]
                over = np.maximum(moment - kc_int, 0.0)
                k_new = np.minimum(moment, kc_int) + over / (1.0 + PENALTY_RATIO)
                new = np.where(k_new > 0.0, moment / np.where(k_new > 0, k_new, 1.0), 1.0)
                new = np.maximum(new, 1.0)
                change = np.max(np.abs(new / ratio - 1.0))
                stale = set_ratio(ratio)
                if change < FIX_TOL and not stale:
                    done = True
                    break
                ratio = new
                set_ratio(ratio)
            ok[i] = done and sol.success
            if not ok[i]:
                guess = None
                ratio = ones.copy()
                set_ratio(ratio)
            iters.append(n_iter)
            tips[i] = sol.tip_position
            tangents[i] = np.asarray(sol.tip_rotation)[:, 2]
            if stats is not None:
                stats.setdefault("ratio_max", []).append(float(ratio.max()))
                stats.setdefault("ratio", []).append(ratio.copy())
        if stats is not None:
            stats.setdefault("iters", []).extend(iters)
        return tips, tangents, ok

    return seq


def sub_kappa_c(spec, thickness: float) -> np.ndarray:
    """kappa_c [1/m] per `split_segments` sub-segment (one per disk interval, the base one
    inf: no disk face known there)."""
    kc = intervals(spec, thickness)[4]
    return np.r_[np.inf, np.where(kc > 0, kc, 0.0)]


def summary(e: np.ndarray, rec) -> str:
    d = motion_direction(rec.displacement)
    cls = np.array([family(p) for p in rec.pattern])
    parts = " ".join(
        f"{f.split(':')[1]} {e[cls == f].mean():.2f}" for f in sorted(set(cls)) if "three" in f
    )
    return (
        f"mean {e.mean():.2f} median {np.median(e):.2f} max {e.max():.2f} "
        f"pull/release {e[d > 0].mean():.2f}/{e[d < 0].mean():.2f} | {parts}"
    )


def contact(robot: str, fitted: str, thickness: float, scales: list[float], stride: int) -> None:
    spec, recs = load(robot, fitted)
    kc = sub_kappa_c(spec, thickness)
    tr, va = recs["train"], recs["val"]
    rows = np.arange(0, len(tr.t), stride)
    base = {}
    for split, rec, rr in (("train", tr, rows), ("val", va, None)):
        tip, _ = replay_marker(spec, rec.displacement, rows=rr, t=rec.t)
        meas = rec.tip if rr is None else rec.tip[rr]
        base[split] = np.linalg.norm(tip - meas, axis=1) * 1e3
        sub = rec if rr is None else None
        print(f"{split} without contact: mean {base[split].mean():.3f} mm"
              + (f" ({summary(base[split], sub)})" if sub is not None else ""))  # fmt: skip
    for sc in scales:
        for split, rec, rr in (("train", tr, rows), ("val", va, None)):
            st: dict = {}
            t0 = time.process_time()
            tip, ok = replay_marker(spec, rec.displacement, rows=rr, t=rec.t,
                                    sequence_model=contact_sequence(kc * sc, st))  # fmt: skip
            meas = rec.tip if rr is None else rec.tip[rr]
            e = np.linalg.norm(tip - meas, axis=1) * 1e3
            r = (tip - meas).ravel() * 1e3
            extra = ""
            if rr is None:
                diff = e - base[split]
                lo, hi = bootstrap_mean_interval(diff, rec.pattern, seed=0)
                extra = (f" | {summary(e, rec)}; change {diff.mean():+.3f} mm "
                         f"(95 % {lo:+.3f} to {hi:+.3f})")  # fmt: skip
            print(f"  scale {sc:.3f} {split}: mean {e.mean():.3f} mm SSR {r @ r:.0f}, ok "
                  f"{ok.mean():.3f}, rows in contact {np.mean(np.array(st['ratio_max']) > 1):.3f},"
                  f" fixed point median {np.median(st['iters']):.0f} max {max(st['iters'])} "
                  f"[{time.process_time() - t0:.1f} s CPU]{extra}", flush=True)  # fmt: skip


def _replay(spec, rec, kc, rows=None, stats=None):
    tip, ok = replay_marker(spec, rec.displacement, rows=rows, t=rec.t,
                            sequence_model=contact_sequence(kc, stats))  # fmt: skip
    meas = rec.tip if rows is None else rec.tip[rows]
    return (tip - meas).ravel() * 1e3, tip, ok


def scan(
    robot: str, fitted: str, thickness: float, scales: list[float], stride: int, half: str = ""
) -> None:
    """One scale on every kappa_c fitted on train only: train sum of squares at each scale
    (every `stride`-th row), the least-squares optimum from a parabola through the best scale
    and its neighbours (or the best scale when the sum is flat or monotonic there), its
    standard error from the 1-D Jacobian there (rows independent: a lower bound); val once at
    the train-chosen scale, paired against no contact. half "first" / "second": only the train
    rows of the first / second half of the recording's time (a stability check)."""
    spec, recs = load(robot, fitted)
    kc = sub_kappa_c(spec, thickness)
    tr, va = recs["train"], recs["val"]
    rows = np.arange(0, len(tr.t), stride)
    if half:
        first = tr.t[rows] < 0.5 * (tr.t[0] + tr.t[-1])
        rows = rows[first if half == "first" else ~first]
    print(f"{robot}: scale on kappa_c, train rows {len(rows)} of {len(tr.t)} (every {stride}th"
          f"{', ' + half + ' half in time' if half else ''})")  # fmt: skip
    ssr = {}
    for sc in sorted(scales, reverse=True):
        st: dict = {}
        t0 = time.process_time()
        r, _, ok = _replay(spec, tr, kc * sc, rows, st)
        ssr[sc] = r
        e = np.linalg.norm(r.reshape(-1, 3), axis=1)
        print(f"  scale {sc:.3f}: train mean {e.mean():.3f} mm SSR {r @ r:.0f}, "
              f"ok {ok.mean():.3f}, "
              f"rows in contact {np.mean(np.array(st['ratio_max']) > 1):.3f} "
              f"[{time.process_time() - t0:.1f} s CPU]", flush=True)  # fmt: skip
    vs = np.array(sorted(ssr))
    q = np.array([ssr[v] @ ssr[v] for v in vs])
    b = int(np.argmin(q))
    s_hat = float(vs[b])
    if 0 < b < len(vs) - 1 and q[b] < min(q[b - 1], q[b + 1]):
        a2, a1, _ = np.polyfit(vs[b - 1 : b + 2], q[b - 1 : b + 2], 2)
        if a2 > 0:
            s_hat = float(np.clip(-a1 / (2 * a2), vs[b - 1], vs[b + 1]))
    r_hat, _, _ = _replay(spec, tr, kc * s_hat, rows)
    step = 0.01
    r2, _, _ = _replay(spec, tr, kc * (s_hat - step), rows)
    jac = (r2 - r_hat) / -step
    s2 = float(r_hat @ r_hat) / (len(r_hat) - 1)
    se = float(np.sqrt(s2 / (jac @ jac))) if jac @ jac > 0 else np.inf
    print(f"  train-chosen scale {s_hat:.3f} +- {se:.3f} (SSR {r_hat @ r_hat:.0f}; "
          f"d tip / d scale {np.sqrt(jac @ jac):.1f} mm)")  # fmt: skip
    sub_seg = np.repeat(np.arange(len(spec.segments)), [s.disks for s in spec.segments])
    e0 = np.linalg.norm(ssr[max(ssr)].reshape(-1, 3), axis=1)
    e1 = np.linalg.norm(r_hat.reshape(-1, 3), axis=1)
    for name, f in (("class", pattern_class), ("family", family)):
        cls = np.array([f(p) for p in tr.pattern[rows]])
        for c in sorted(set(cls)):
            m = cls == c
            if name == "family" and np.sum(e0[m] ** 2) == np.sum(e1[m] ** 2):
                continue
            print(f"    train {name} {c}: {e0[m].mean():.3f} -> {e1[m].mean():.3f} mm ({m.sum()} "
                  f"rows), SSR {np.sum(e0[m] ** 2):.0f} -> {np.sum(e1[m] ** 2):.0f}")  # fmt: skip
    base = None
    for sc in (np.inf, s_hat):
        st = {}
        t0 = time.process_time()
        _, tip, ok = _replay(spec, va, kc * sc, None, st)
        e = np.linalg.norm(tip - va.tip, axis=1) * 1e3
        line = f"  val at scale {sc:.3f}: {summary(e, va)}, ok {ok.mean():.3f}"
        inc = np.array(st["ratio"]) > 1.0
        line += ", rows in contact per segment " + "/".join(
            f"{np.mean(inc[:, sub_seg == j].any(axis=1)):.3f}" for j in range(len(spec.segments))
        )
        if base is not None:
            diff = e - base
            lo, hi = bootstrap_mean_interval(diff, va.pattern, seed=0)
            line += f"; change {diff.mean():+.3f} mm (95 % {lo:+.3f} to {hi:+.3f})"
        print(line + f" [{time.process_time() - t0:.1f} s CPU]", flush=True)
        base = e


def refit(robot: str, fitted: str, thickness: float, start: float, stride: int, max_nfev: int):
    """The 15 parameters and the kappa_c scale fitted together on every `stride`-th train row
    (`calibrate_hardware`'s bounds and scales, the backlash held; the scale in [0.2, 1.5],
    optimizer scale 0.1), from FITTED's values and the scale `start` (the 15-held optimum: from
    a scale with no row in contact the gradient is zero); val through the result, paired
    against FITTED without contact."""
    from scipy.optimize import least_squares

    from softrod.validate import HardwareParams, calibrated_robot
    from softrod.validate._hardware import DIFF_STEP, _bounds, _x_scale, initial_params

    spec, recs = load(robot, fitted)
    kc = sub_kappa_c(spec, thickness)
    tr, va = recs["train"], recs["val"]
    cols = spec.calibration.servo_columns
    x0 = fitted_params(robot, spec).to_vector()
    lo, hi = _bounds(initial_params(robot).to_vector())
    scale = _x_scale(3)
    free = np.ones(len(x0) + 1, dtype=bool)
    free[len(x0) - 1] = False  # backlash held (0 in the 15-parameter fit)
    x0, lo, hi, scale = np.r_[x0, start], np.r_[lo, 0.2], np.r_[hi, 1.5], np.r_[scale, 0.1]
    x0 = np.clip(x0, lo, hi)
    rows = np.arange(0, len(tr.t), stride)

    def model(x):
        return calibrated_robot(robot, HardwareParams.from_vector(x[:-1]), servo_columns=cols)

    def resid(xf):
        x = x0.copy()
        x[free] = xf
        return _replay(model(x), tr, kc * float(x[-1]), rows)[0]

    t0 = time.process_time()
    r0 = resid(x0[free])
    res = least_squares(resid, x0[free], bounds=(lo[free], hi[free]), x_scale=scale[free],
                        diff_step=DIFF_STEP, max_nfev=max_nfev, method="trf")  # fmt: skip
    x = x0.copy()
    x[free] = res.x
    s2 = float(res.fun @ res.fun) / (len(res.fun) - len(res.x))
    se = float(np.sqrt((np.linalg.pinv(res.jac.T @ res.jac) * s2)[-1, -1]))
    rms = lambda r: float(np.sqrt(np.mean(r.reshape(-1, 3) ** 2) * 3))  # noqa: E731
    print(f"{robot} refit of the 15 and the kappa_c scale on {len(rows)} train rows (every "
          f"{stride}th), max_nfev {max_nfev}, from scale {start}: nfev {res.nfev}, "
          f"{time.process_time() - t0:.0f} s CPU")  # fmt: skip
    print(f"  scale = {x[-1]:.3f} +- {se:.3f}; train RMSE {rms(r0):.2f} -> {rms(res.fun):.2f} mm")
    print(f"  params {HardwareParams.from_vector(x[:-1]).as_dict()}")
    e_old = np.linalg.norm(_replay(spec, va, kc * np.inf)[0].reshape(-1, 3), axis=1)
    for label, sc in (("with its scale", float(x[-1])), ("its scale taken out", np.inf)):
        st: dict = {}
        e = np.linalg.norm(_replay(model(x), va, kc * sc, None, st)[0].reshape(-1, 3), axis=1)
        diff = e - e_old
        lo_, hi_ = bootstrap_mean_interval(diff, va.pattern, seed=0)
        print(f"  val, refit {label}: {summary(e, va)}; rows in contact "
              f"{np.mean(np.array(st['ratio_max']) > 1):.3f}; against FITTED without contact "
              f"{diff.mean():+.3f} mm (95 % {lo_:+.3f} to {hi_:+.3f})", flush=True)  # fmt: skip


def main() -> None:
    args = sys.argv[1:]

    def opt(name: str, default, cast=float, many=False):
        if name not in args:
            return default
        vals = []
        while name in args:
            i = args.index(name)
            vals.append(cast(args[i + 1]))
            del args[i : i + 2]
        return vals if many else vals[0]

    global PENALTY_RATIO
    PENALTY_RATIO = opt("--penalty", PENALTY_RATIO)
    thickness = opt("--thickness", DISK_THICKNESS)
    scales = opt("--scale", [1.0], many=True)
    stride = opt("--stride", 8, int)
    max_nfev = opt("--max-nfev", 4, int)
    half = opt("--half", "", str)
    robot, fitted, what = args
    if what == "curvature":
        curvature(robot, fitted, thickness)
    elif what == "refit":
        refit(robot, fitted, thickness, scales[0], stride, max_nfev)
    elif what == "scan":
        scan(robot, fitted, thickness, scales, stride, half)
    elif what == "contact":
        contact(robot, fitted, thickness, scales, stride)
    else:
        raise SystemExit(f"unknown command {what!r}")


if __name__ == "__main__":
    main()
