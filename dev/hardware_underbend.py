"""The three-segment under-bend of the physical TDCRs: two physical candidates, each a
prototype around the unchanged static solver, fitted on train only, val replayed once at the
train-chosen value (issue 15; docs/validation.md, "The under-bend: bend-dependent stiffness
and hole clearance").

    PYTHONPATH=src python dev/hardware_underbend.py ROBOT FITTED.yaml CANDIDATE [--stride S]
        [--refit [--max-nfev N]]
    PYTHONPATH=src python dev/hardware_underbend.py ROBOT FITTED.yaml stiffening --mujoco C

FITTED is a `softrod hardware fit` description fitted on ROBOT's train file (its 15 parameters
are held). CANDIDATE:

- `stiffening`: a curvature-dependent bending stiffness of the backbone, the cubic
  moment-curvature law M = EI0 kappa (1 + c kappa^2) (c > 0 stiffening, c < 0 softening; from a
  modulus sigma = E eps (1 + b eps^2) on the round section, c = b R^2 / 2). The static solver
  takes one EI per segment, so each segment is cut into one sub-segment per disk interval
  (`split_segments`: same grid, same answers) and each row is solved as a fixed point: each
  interval's EI = EI0 (1 + c <kappa^2>), <.> the mean over the interval of the solved
  curvature, until EI changes by < FIX_TOL (the cubic law where the curvature is constant over
  a disk interval, as it nearly is under tendon loads alone).
- `clearance`: a hole clearance e [m]: in every disk a tendon passes, it lies e off its hole's
  centre toward the centre of curvature of that disk's segment (where its tension presses
  it), i.e. at r_i + e n_m, n_m = (u_y, -u_x) / max(|u|, KAPPA_SAT) in the body frame from the
  segment's mean solved curvature u (the shift fades in linearly below KAPPA_SAT, so the
  straight robot is unchanged). Written as the tendons' `holes` routing (docs/routing.md:
  moment arm and path length both follow the holes) and solved as a fixed point on the hole
  positions, until they move by < FIX_TOL x offset.

For each: a scan on every S-th train row (15 held), the least-squares optimum from a parabola
through the best scan point and its neighbours, its standard error from the 1-D Jacobian at the
optimum (rows treated as independent: a lower bound), then val (all rows) at that value:
mean / median / max, pulling / releasing, and the three-segment families, and the change
against 0 with a 95 % bootstrap interval over whole val patterns. `--refit`: the candidate and
the 15 fitted together (`refit`). `--mujoco C`: val through the MuJoCo chain with stiffening
c = C (`mujoco_stiffening`). Nothing is selected on val.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.description import load_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._shooting import _FINE_MODELS
from softrod.validate import bootstrap_mean_interval, motion_direction
from softrod.validate._hardware import replay_marker

sys.path.insert(0, "dev")
from hardware_coupling import family, load  # noqa: E402

#: Fixed-point stop: relative change of the segments' EI (stiffening) or hole shift change
#: over the tendon offset (clearance); 1e-7 moves the tip by far less than 1 um.
FIX_TOL = 1e-7
#: Fixed-point iterations per row before the row is declared failed.
FIX_MAX = 40
#: Curvature [1/m] above which the clearance shift is the whole e (below it, linear in |u|:
#: the direction toward the centre of curvature is undefined at the straight pose).
KAPPA_SAT = 2.0


def write_bending_stiffness(model, ei: np.ndarray) -> bool:
    """Write the bending stiffness `ei` (per sub-segment) [N m^2] into `model` and the refined
    grids the solver keeps for it (`_shooting._FINE_MODELS`, built from the description); True
    when one of them had another value (a solve before this used a stale EI)."""
    stale = False
    for m in (model, *_FINE_MODELS.get(model, {}).values()):
        stale |= not np.array_equal(m.K_bt[:, 0], ei)
        m.K_bt[:, 0] = ei
        m.K_bt[:, 1] = ei
        m.seg_par[:, 0] = ei
        m.seg_par[:, 1] = ei
    return stale


def _seg_mean(model, s: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(n_seg, ...) mean over each segment of a quantity given at the solution's arc lengths
    s (trapezoid; an interval belongs to the segment holding its midpoint)."""
    mid = 0.5 * (values[1:] + values[:-1])
    ds = np.diff(s)
    seg = np.searchsorted(model.seg_start, 0.5 * (s[1:] + s[:-1]), side="right") - 1
    out = np.zeros((len(model.seg_length),) + values.shape[1:])
    for j in range(len(model.seg_length)):
        m = (seg == j) & (ds > 0)
        out[j] = np.tensordot(ds[m], mid[m], axes=1) / ds[m].sum()
    return out


def split_segments(spec):
    """`spec` with every segment cut into one sub-segment per disk interval (same length
    fractions, one disk each, its tendons anchored on the last one): the same grid, tendons
    and answers (the straight tendons pass the sub-segments' disks as they passed the
    segment's), but one bending stiffness per disk interval for the fixed point."""
    raw = spec.model_dump()
    raw["calibration"] = None
    segs = []
    for seg in raw["segments"]:
        n = max(int(seg["disks"]), 1)
        for i in range(n):
            sub = {**seg, "length": seg["length"] / n, "disks": 1 if seg["disks"] else 0}
            sub["tendons"] = seg["tendons"] if i == n - 1 else []
            segs.append(sub)
    raw["segments"] = segs
    return load_robot(raw)


def stiffening_sequence(
    c: float, stats: dict | None = None, split: bool = True, recompile: bool = False
):
    """A `SequenceModel` (spec, lengths (T, n) [m], mu, band -> tips, tangents, ok) with the
    cubic moment-curvature law of coefficient c [m^2] (mu, band unused); split: one EI per disk
    interval (`split_segments`), else one per segment. recompile: each fixed-point iteration
    writes the stiffness as per-segment `backbone` overrides (E scaled, G held: GJ unchanged)
    and recompiles (slow: the solver's refined grids are rebuilt each time); default: EI is
    written into the compiled arrays of the model and of the refined grids the solver keeps
    for it (`set_ratio`), the same answers (checked against recompile, see `check`)."""

    def seq(spec, lengths, mu, band):
        base = split_segments(spec) if split else spec
        raw = base.model_dump()
        raw["calibration"] = None
        e0, g0 = base.backbone.youngs_modulus, base.backbone.G
        n_seg = len(raw["segments"])

        def compiled(ratio: np.ndarray):
            for sg, f in zip(raw["segments"], ratio, strict=True):
                sg["backbone"] = {"youngs_modulus": e0 * float(f), "shear_modulus": g0}
            return compile_model(load_robot(raw))

        if not recompile:
            model0 = compiled(np.ones(n_seg))
            ei0 = model0.K_bt[:, 0].copy()

            def set_ratio(model, ratio: np.ndarray) -> bool:
                return write_bending_stiffness(model, ei0 * ratio)

            def compiled(ratio: np.ndarray):  # noqa: F811
                set_ratio(model0, ratio)
                return model0

        ones = np.ones(n_seg)
        ratio = ones.copy()
        model = compiled(ratio)
        tips, tangents = np.empty((len(lengths), 3)), np.empty((len(lengths), 3))
        ok = np.empty(len(lengths), dtype=bool)
        guess = None
        iters = []
        for i, ell in enumerate(lengths):
            done = False
            for it in range(FIX_MAX):
                n_iter = it + 1
                sol = solve_static(model, lengths=ell, guess=guess, check_stability=False)
                if not sol.success:
                    break
                guess = sol
                s = np.asarray(sol.s)
                k2 = _seg_mean(model, s, np.sum(np.asarray(sol.curvature)[:, :2] ** 2, axis=1))
                new = 1.0 + c * k2
                if np.any(new <= 0.05):
                    break
                change = np.max(np.abs(new / ratio - 1.0))
                # A refined grid made during this solve starts at EI0: solve again.
                stale = False if recompile else set_ratio(model, ratio)
                if change < FIX_TOL and not stale:
                    done = True
                    break
                ratio = new
                model = compiled(ratio)
            ok[i] = done and sol.success
            if not ok[i]:
                guess = None
                ratio = ones.copy()
                model = compiled(ratio)
            iters.append(n_iter)
            tips[i] = sol.tip_position
            tangents[i] = np.asarray(sol.tip_rotation)[:, 2]
            if stats is not None:
                kap = np.linalg.norm(np.asarray(sol.curvature)[:, :2], axis=1)
                stats.setdefault("kmax", []).append(kap.max())
                stats.setdefault("ei_ratio", []).append(ratio.copy())
        if stats is not None:
            stats.setdefault("iters", []).extend(iters)
        return tips, tangents, ok

    return seq


def _with_holes(raw: dict, shift: np.ndarray) -> dict:
    """`raw` (a straight-tendon description dict) with every tendon's holes at its offset plus
    shift[m] (2,) [m] in the disks of segment m."""
    segs = raw["segments"]
    out = {**raw, "segments": []}
    for k, seg in enumerate(segs):
        tds = []
        for td in seg["tendons"]:
            a = np.radians(td["angle_deg"])
            r = td["offset"] * np.array([np.cos(a), np.sin(a)])
            holes = []
            for m in range(k + 1):
                holes += [tuple(float(v) for v in r + shift[m])] * int(segs[m]["disks"])
            tds.append({**td, "holes": holes, "offsets": None})
        out["segments"].append({**seg, "tendons": tds})
    return out


def clearance_sequence(e: float, stats: dict | None = None):
    """A `SequenceModel` with a hole clearance e [m] (see the module docstring)."""

    def seq(spec, lengths, mu, band):
        raw = spec.model_dump()
        raw["calibration"] = None
        n_seg = len(raw["segments"])
        r0 = float(raw["segments"][0]["tendons"][0]["offset"])
        shift = np.zeros((n_seg, 2))
        model = compile_model(load_robot(_with_holes(raw, shift)))
        tips, tangents = np.empty((len(lengths), 3)), np.empty((len(lengths), 3))
        ok = np.empty(len(lengths), dtype=bool)
        guess = None
        iters = []
        for i, ell in enumerate(lengths):
            done = False
            for it in range(FIX_MAX):
                n_iter = it + 1
                sol = solve_static(model, lengths=ell, guess=guess, check_stability=False)
                if not sol.success:
                    break
                guess = sol
                u = _seg_mean(model, np.asarray(sol.s), np.asarray(sol.curvature)[:, :2])
                norm = np.maximum(np.linalg.norm(u, axis=1), KAPPA_SAT)
                new = e * np.stack([u[:, 1], -u[:, 0]], axis=1) / norm[:, None]
                change = np.max(np.abs(new - shift)) / r0
                if change < FIX_TOL:
                    done = True
                    break
                shift = new
                model = compile_model(load_robot(_with_holes(raw, shift)))
            ok[i] = done and sol.success
            if not ok[i]:
                guess = None
                shift = np.zeros((n_seg, 2))
                model = compile_model(load_robot(_with_holes(raw, shift)))
            iters.append(n_iter)
            tips[i] = sol.tip_position
            tangents[i] = np.asarray(sol.tip_rotation)[:, 2]
        if stats is not None:
            stats.setdefault("iters", []).extend(iters)
        return tips, tangents, ok

    return seq


CANDIDATES = {
    # name: (sequence factory, scan values, unit for printing, finite-difference step)
    "stiffening": (stiffening_sequence, (0.0, -5e-4, 1e-3, 2e-3, 4e-3), "m^2", 5e-5),
    "clearance": (clearance_sequence, (0.0, -1e-4, 1e-4, 2e-4, 4e-4), "m", 1e-5),
}


def replay(spec, rec, make, value, rows=None, stats=None):
    tip, ok = replay_marker(
        spec, rec.displacement, rows=rows, t=rec.t, sequence_model=make(value, stats)
    )
    meas = rec.tip if rows is None else rec.tip[rows]
    return tip, meas, ok


def summary(e: np.ndarray, rec) -> str:
    d = motion_direction(rec.displacement)
    fam = np.array([family(p) for p in rec.pattern])
    parts = " ".join(
        f"{f.split(':')[1]} {e[fam == f].mean():.2f}" for f in sorted(set(fam)) if "three" in f
    )
    return (
        f"mean {e.mean():.2f} median {np.median(e):.2f} max {e.max():.2f} "
        f"pull/release {e[d > 0].mean():.2f}/{e[d < 0].mean():.2f} | {parts}"
    )


def fit(robot: str, fitted: str, what: str, stride: int) -> None:
    spec, recs = load(robot, fitted)
    tr, va = recs["train"], recs["val"]
    make, values, unit, h = CANDIDATES[what]
    rows = np.arange(0, len(tr.t), stride)
    print(f"{robot} {what}: train rows {len(rows)} of {len(tr.t)} (every {stride}th)")
    scan = {}
    for v in values:
        t0 = time.process_time()
        st: dict = {}
        tip, meas, ok = replay(spec, tr, make, v, rows, st)
        r = (tip - meas).ravel() * 1e3
        scan[v] = r
        e = np.linalg.norm(r.reshape(-1, 3), axis=1)
        print(f"  {what} {v:+.1e} {unit}: train mean {e.mean():.3f} mm SSR {r @ r:.0f}, ok "
              f"{ok.mean():.3f}, fixed-point iterations median {np.median(st['iters']):.0f} max "
              f"{max(st['iters'])} [{time.process_time() - t0:.1f} s CPU]", flush=True)  # fmt: skip
    vs = np.array(sorted(scan))
    ssr = np.array([scan[v] @ scan[v] for v in vs])
    i = int(np.clip(np.argmin(ssr), 1, len(vs) - 2))
    a, b, _ = np.polyfit(vs[i - 1 : i + 2], ssr[i - 1 : i + 2], 2)
    lo, hi = vs[0], vs[-1]
    v_hat = float(np.clip(-b / (2 * a), lo, hi)) if a > 0 else float(vs[np.argmin(ssr)])
    tip, meas, _ = replay(spec, tr, make, v_hat, rows)
    r_hat = (tip - meas).ravel() * 1e3
    tip2, _, _ = replay(spec, tr, make, v_hat + h, rows)
    jac = (tip2 - tip).ravel() * 1e3 / h
    s2 = float(r_hat @ r_hat) / (len(r_hat) - 1)
    se = float(np.sqrt(s2 / (jac @ jac)))
    e_tr = np.linalg.norm(r_hat.reshape(-1, 3), axis=1)
    e0 = np.linalg.norm(scan[0.0].reshape(-1, 3), axis=1)
    ssr0 = scan[0.0] @ scan[0.0]
    print(f"  fitted {what} = {v_hat:+.3e} +- {se:.1e} {unit}: train mean {e0.mean():.3f} -> "
          f"{e_tr.mean():.3f} mm (SSR {ssr0:.0f} -> {r_hat @ r_hat:.0f})")  # fmt: skip
    d = motion_direction(tr.displacement)[rows]
    print(f"  train pull/release {e0[d > 0].mean():.2f}/{e0[d < 0].mean():.2f} -> "
          f"{e_tr[d > 0].mean():.2f}/{e_tr[d < 0].mean():.2f}")  # fmt: skip
    val_report(spec, va, make, what, unit, v_hat, se)


def val_report(spec, va, make, what, unit, v_hat, se) -> np.ndarray:
    """val at 0, at the train-fitted value and at +- one standard error; the paired change
    against 0 with its 95 % bootstrap interval over whole val patterns (2000, seed 0)."""
    errs = {}
    for v in (0.0, v_hat, v_hat - se, v_hat + se):
        st: dict = {}
        t0 = time.process_time()
        tip, meas, ok = replay(spec, va, make, v, None, st)
        e = np.linalg.norm(tip - meas, axis=1) * 1e3
        errs[v] = e
        print(f"  val at {what} {v:+.3e}: {summary(e, va)}, ok {ok.mean():.3f} "
              f"[{time.process_time() - t0:.1f} s CPU]", flush=True)  # fmt: skip
        if "kmax" in st:
            kmax = np.array(st["kmax"])
            ratio = np.array(st["ei_ratio"])
            print(f"    max |kappa| {kmax.max():.1f} 1/m (surface strain "
                  f"{kmax.max() * spec.backbone.radius * 100:.2f} %); EI / EI0 over the disk "
                  f"intervals min {ratio.min():.3f} max {ratio.max():.3f}")  # fmt: skip
    diff = errs[v_hat] - errs[0.0]
    lo, hi = bootstrap_mean_interval(diff, va.pattern, seed=0)
    lo_se = errs[v_hat - se].mean() - errs[0.0].mean()
    hi_se = errs[v_hat + se].mean() - errs[0.0].mean()
    print(f"  val change at {v_hat:+.3e} {unit}: {diff.mean():+.3f} mm (95 % {lo:+.3f} to "
          f"{hi:+.3f}, whole val patterns); at -+1 SE {lo_se:+.3f} / {hi_se:+.3f} mm")  # fmt: skip
    return errs[v_hat]


def fitted_params(robot: str, spec):
    """FITTED's 15 parameters, read back from its description (as `hardware_coupling.refit`)."""
    import math

    from softrod.validate import HardwareParams
    from softrod.validate._hardware import hardware_robot

    shipped = hardware_robot(robot)
    cal = spec.calibration
    pre = np.reshape(cal.pretension, (len(spec.segments), -1))
    return HardwareParams(
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


#: Joint refit: bounds and optimizer scale of the candidate's parameter (stiffening c [m^2]:
#: EI stays > 0 up to |kappa| = 25 1/m; clearance e [m]: the hole's plausible play).
REFIT = {"stiffening": (-1.5e-3, 5e-3, 5e-4), "clearance": (-3e-4, 5e-4, 1e-4)}


def refit(robot: str, fitted: str, what: str, stride: int, max_nfev: int) -> None:
    """The 15 parameters and the candidate's one fitted together on every `stride`-th train
    row (bounds and scales of `calibrate_hardware`; the backlash held), from FITTED's values
    and 0; standard errors from the Jacobian at the optimum (s^2 (J^T J)^-1)."""
    from scipy.optimize import least_squares

    from softrod.validate import HardwareParams, calibrated_robot
    from softrod.validate._hardware import DIFF_STEP, _bounds, _x_scale, initial_params

    spec, recs = load(robot, fitted)
    tr, va = recs["train"], recs["val"]
    make, _, unit, _ = CANDIDATES[what]
    cols = spec.calibration.servo_columns
    p0 = fitted_params(robot, spec)
    x0 = p0.to_vector()
    lo, hi = _bounds(initial_params(robot).to_vector())
    scale = _x_scale(3)
    free = np.ones(len(x0) + 1, dtype=bool)
    free[len(x0) - 1] = False  # backlash held (0 in the 15-parameter fit)
    c_lo, c_hi, c_scale = REFIT[what]
    x0, lo, hi, scale = np.r_[x0, 0.0], np.r_[lo, c_lo], np.r_[hi, c_hi], np.r_[scale, c_scale]
    x0 = np.clip(x0, lo, hi)
    rows = np.arange(0, len(tr.t), stride)

    def model(x):
        return calibrated_robot(robot, HardwareParams.from_vector(x[:-1]), servo_columns=cols)

    def resid(xf):
        x = x0.copy()
        x[free] = xf
        tip, _ = replay_marker(model(x), tr.displacement, rows=rows, t=tr.t,
                               sequence_model=make(float(x[-1])))  # fmt: skip
        return (tip - tr.tip[rows]).ravel() * 1e3

    t0 = time.process_time()
    r0 = resid(x0[free])
    res = least_squares(resid, x0[free], bounds=(lo[free], hi[free]), x_scale=scale[free],
                        diff_step=DIFF_STEP, max_nfev=max_nfev, method="trf")  # fmt: skip
    x = x0.copy()
    x[free] = res.x
    s2 = float(res.fun @ res.fun) / (len(res.fun) - len(res.x))
    cov = np.linalg.pinv(res.jac.T @ res.jac) * s2
    se = float(np.sqrt(cov[-1, -1]))
    rms = lambda r: float(np.sqrt(np.mean(r.reshape(-1, 3) ** 2) * 3))  # noqa: E731
    print(
        f"{robot} {what} refit with the 15 on {len(rows)} train rows (every {stride}th), "
        f"max_nfev {max_nfev}: nfev {res.nfev}, {time.process_time() - t0:.0f} s CPU"
    )
    print(
        f"  {what} = {x[-1]:+.3e} +- {se:.1e} {unit}; train RMSE {rms(r0):.2f} -> "
        f"{rms(res.fun):.2f} mm, mean {np.linalg.norm(res.fun.reshape(-1, 3), axis=1).mean():.3f}"
    )
    p = HardwareParams.from_vector(x[:-1])
    print(f"  params {p.as_dict()}")
    e_new = val_report(model(x), va, make, what, unit, float(x[-1]), se)
    tip, _ = replay_marker(spec, va.displacement, t=va.t)
    e_old = np.linalg.norm(tip - va.tip, axis=1) * 1e3
    diff = e_new - e_old
    lo, hi = bootstrap_mean_interval(diff, va.pattern, seed=0)
    print(f"  val against FITTED (the 15-parameter fit, {e_old.mean():.2f} mm): "
          f"{diff.mean():+.3f} mm (95 % {lo:+.3f} to {hi:+.3f}, whole val patterns)")  # fmt: skip


def mujoco_stiffening(robot: str, fitted: str, c: float, links: int = 30) -> None:
    """val through the MuJoCo chain (`links` links, as `replay --model mujoco`) with the cubic
    law: per row a fixed point on each link joint's bending stiffness, k = k0 (1 + c kappa^2),
    kappa^2 = (theta_x^2 + theta_y^2) / h^2 from its two bending hinges (h = EI0 / k0, the
    element the joint stands for: the pointwise law, no segment mean); c = 0 is the shipped
    chain's replay."""
    import mujoco

    from softrod.mujoco import static_equilibrium
    from softrod.validate._chain import make_model
    from softrod.validate._hardware import (
        _calibration,
        _commanded,
        _tracker_pose,
        lag,
        play,
    )

    spec, recs = load(robot, fitted)
    va = recs["val"]
    cal = _calibration(spec)
    assert cal.backlash_per_tension == 0.0, "the tension play is not in this prototype"
    d = va.displacement
    if cal.has_lag:
        d = lag(d, va.t, cal.lag_time_constant, cal.lag_fraction)
    d = play(d, cal.backlash)
    model, data, info = make_model(
        spec, links, tendon_control="length", gravity=(0.0, 0.0, 0.0), contact=False
    )
    mujoco.mj_forward(model, data)
    rest = np.array([data.ten_length[model.tendon(t).id] for t in info.tendons])
    lengths = _commanded(spec, cal, rest, d)
    names = [model.joint(j).name for j in range(model.njnt)]
    jx = np.array([j for j, n in enumerate(names) if n.endswith("x") and n[-2].isdigit()])
    jy = np.array([names.index(names[j][:-1] + "y") for j in jx])
    k0 = model.jnt_stiffness.copy()
    h = spec.backbone.youngs_modulus * spec.backbone.I / k0[jx]
    site = model.site(info.tip_site).id
    tips, tangents = np.empty((len(lengths), 3)), np.empty((len(lengths), 3))
    ok = np.empty(len(lengths), dtype=bool)
    q = model.qpos0.copy()
    iters = []
    t0 = time.process_time()
    for i, ell in enumerate(lengths):
        data.ctrl[:] = ell
        done = False
        for it in range(FIX_MAX):
            n_iter = it + 1
            res = static_equilibrium(model, data, qpos0=q)
            if not res.success:
                break
            q = res.qpos.copy()
            th2 = q[model.jnt_qposadr[jx]] ** 2 + q[model.jnt_qposadr[jy]] ** 2
            ratio = 1.0 + c * th2 / h**2
            new = k0[jx] * ratio
            change = np.max(np.abs(new / model.jnt_stiffness[jx] - 1.0))
            model.jnt_stiffness[jx] = new
            model.jnt_stiffness[jy] = new
            if change < FIX_TOL:
                done = True
                break
        iters.append(n_iter)
        ok[i] = done
        if not done:
            q = model.qpos0.copy()
            model.jnt_stiffness[:] = k0
        tips[i] = data.site_xpos[site]
        tangents[i] = data.site_xmat[site].reshape(3, 3)[:, 2]
    rot, trans = _tracker_pose(cal)
    marker = (tips + cal.marker_offset * tangents) @ rot.T + trans[None, :]
    e = np.linalg.norm(marker - va.tip, axis=1) * 1e3
    print(f"{robot} MuJoCo N = {links}, stiffening {c:+.3e} m^2: val {summary(e, va)}, ok "
          f"{ok.mean():.3f}, fixed-point iterations median {np.median(iters):.0f} "
          f"[{time.process_time() - t0:.0f} s CPU]", flush=True)  # fmt: skip


def main() -> None:
    args = sys.argv[1:]
    stride = 8
    if "--stride" in args:
        i = args.index("--stride")
        stride = int(args[i + 1])
        del args[i : i + 2]
    max_nfev = 4
    if "--max-nfev" in args:
        i = args.index("--max-nfev")
        max_nfev = int(args[i + 1])
        del args[i : i + 2]
    if "--mujoco" in args:
        args.remove("--mujoco")
        robot, fitted, what, value = args
        assert what == "stiffening", "the MuJoCo prototype is the stiffening one"
        mujoco_stiffening(robot, fitted, float(value))
        return
    if "--refit" in args:
        args.remove("--refit")
        robot, fitted, what = args
        refit(robot, fitted, what, stride, max_nfev)
        return
    robot, fitted, what = args
    fit(robot, fitted, what, stride)


if __name__ == "__main__":
    main()
