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
from softrod.validate._hardware import _calibration, _commanded, replay_marker

sys.path.insert(0, "dev")
import hardware_rowprobe as rowprobe  # noqa: E402
from hardware_coupling import load  # noqa: E402
from hardware_underbend import _seg_mean, split_segments  # noqa: E402

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
    """Marker prediction (k, 3) [m] and success (k,) of the `rows` of a recording (default
    all), in time order through the tension play and the backbone play."""
    return rowprobe.replay(spec, rec, BackbonePlay(spec, alpha, width), rows, stats)


def _err(spec, rec, alpha, width, rows=None, stats=None):
    return rowprobe.errors(spec, rec, BackbonePlay(spec, alpha, width), rows, stats)


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
          f"{e0.mean():.3f} mm, RMSE {rowprobe.rmse(r0):.3f}", flush=True)  # fmt: skip
    best = (r0 @ r0, 0.0, 1.0)
    for a in alphas:
        for w in widths:
            t0 = time.process_time()
            st: dict = {}
            e, r, ok = _err(spec, tr, a, w, rows, st)
            p_max = float(np.max(np.linalg.norm(st["solver"].p, axis=1)))
            print(f"  alpha {a:.2f} width {w:6.2f} 1/m: train mean {e.mean():.3f} RMSE "
                  f"{rowprobe.rmse(r):.3f} ok {ok.mean():.3f} iters median "
                  f"{np.median(st['iters']):.0f} max {max(st['iters'])} |p| {p_max:.1f} "
                  f"[{time.process_time() - t0:.1f} s]", flush=True)  # fmt: skip
            if r @ r < best[0]:
                best = (r @ r, a, w)
    _, a, w = best
    print(f"best on train: alpha {a} width {w}")
    val(spec, va, a, w)


def val(spec, va, a: float, w: float) -> None:
    e0, _, _ = _err(spec, va, 0.0, 1.0)
    e, _, ok = _err(spec, va, a, w)
    rowprobe.val_report(va, e0, e, f"alpha {a:.3f} width {w:.3f}", ok)


def refit(robot: str, fitted: str, stride: int, max_nfev: int, start, save, fit_on) -> None:
    """alpha [-] and width [1/m] with the 15 and the play (`hardware_rowprobe.refit`)."""
    rowprobe.refit(
        robot, fitted, names=("alpha", "width"), start=start, lower=(0.0, 0.05),
        upper=(0.95, 30.0), scale=(0.1, 1.0),
        make_solver=lambda spec, v: BackbonePlay(spec, float(v[0]), max(float(v[1]), 0.05)),
        stride=stride, max_nfev=max_nfev, fit_on=fit_on, save=save,
    )  # fmt: skip


def main() -> None:
    args = sys.argv[1:]
    stride = rowprobe.option(args, "--stride", 8, int)
    max_nfev = rowprobe.option(args, "--max-nfev", 100, int)
    alphas = rowprobe.option(args, "--alpha", [0.1, 0.25, 0.5, 0.75], rowprobe.floats)
    widths = rowprobe.option(args, "--width", [0.5, 1.0, 2.0, 4.0, 8.0], rowprobe.floats)
    fit_on = rowprobe.option(args, "--fit-on", None, str)
    start = rowprobe.option(args, "--start", [0.3, 2.0], rowprobe.floats)
    save = rowprobe.option(args, "--save", None, str)
    robot, fitted, what, *rest = args
    if what == "check":
        check(robot, fitted)
    elif what == "scan":
        scan(robot, fitted, stride, alphas, widths)
    elif what == "refit":
        refit(robot, fitted, stride, max_nfev, start, save, fit_on)
    elif what == "val":
        spec, recs = load(robot, fitted)
        val(spec, recs["val"], float(rest[0]), float(rest[1]))
    else:
        raise SystemExit(f"unknown command {what!r}")


if __name__ == "__main__":
    main()
