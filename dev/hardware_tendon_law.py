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
from softrod.validate._hardware import _calibration, replay_marker

sys.path.insert(0, "dev")
import hardware_rowprobe as rowprobe  # noqa: E402
from hardware_coupling import load  # noqa: E402

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
        self.t_max = 0.0

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
        self.t_max = max(self.t_max, float(np.max(sol.tendon_tension)))
        if done:
            self.tension = t
        else:
            self.guess = None
        tangent = np.asarray(sol.tip_rotation)[:, 2]
        return sol.tip_position, tangent, done, np.asarray(sol.tendon_tension), it + 1


def replay(spec, rec, b: float, rows=None, stats: dict | None = None):
    """Marker prediction (k, 3) [m] and success (k,) of the `rows` of a recording (default
    all), in time order through the tension play and the tendon law."""
    return rowprobe.replay(spec, rec, TendonLaw(spec, b), rows, stats)


def _err(spec, rec, b, rows=None, stats=None):
    return rowprobe.errors(spec, rec, TendonLaw(spec, b), rows, stats)


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


def val(spec, va, b: float) -> None:
    e0, _, _ = _err(spec, va, 0.0)
    st: dict = {}
    e, _, ok = _err(spec, va, b, None, st)
    rowprobe.val_report(va, e0, e, f"b {b:+.4f} 1/N (max T {st['solver'].t_max:.1f} N)", ok)


def scan(robot: str, fitted: str, stride: int, bs) -> None:
    spec, recs = load(robot, fitted)
    tr, va = recs["train"], recs["val"]
    rows = np.arange(0, len(tr.t), stride)
    best = (np.inf, 0.0)
    for b in bs:
        t0 = time.process_time()
        st: dict = {}
        e, r, ok = _err(spec, tr, b, rows, st)
        print(f"  b {b:+.4f} 1/N: train mean {e.mean():.3f} RMSE {rowprobe.rmse(r):.3f}"
              f" ok {ok.mean():.3f} iters median {np.median(st['iters']):.0f} max "
              f"{max(st['iters'])} [{time.process_time() - t0:.1f} s]", flush=True)  # fmt: skip
        if r @ r < best[0]:
            best = (r @ r, b)
    print(f"best on train: b {best[1]}")
    val(spec, va, best[1])


def refit(robot: str, fitted: str, stride: int, max_nfev: int, start: float, fit_on) -> None:
    """b [1/N] with the 15 and the play (`hardware_rowprobe.refit`; 1 + b T > 0 up to 25 N)."""
    rowprobe.refit(
        robot, fitted, names=("b",), start=(start,), lower=(-0.04,), upper=(1.0,),
        scale=(0.05,), make_solver=lambda spec, v: TendonLaw(spec, float(v[0])),
        stride=stride, max_nfev=max_nfev, fit_on=fit_on,
    )  # fmt: skip


def main() -> None:
    args = sys.argv[1:]
    stride = rowprobe.option(args, "--stride", 8, int)
    max_nfev = rowprobe.option(args, "--max-nfev", 100, int)
    bs = rowprobe.option(args, "--b", [0.0, -0.02, 0.02, 0.05, 0.1, 0.2], rowprobe.floats)
    fit_on = rowprobe.option(args, "--fit-on", None, str)
    start = rowprobe.option(args, "--start", 0.02, float)
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
        val(spec, recs["val"], float(rest[0]))
    else:
        raise SystemExit(f"unknown command {what!r}")


if __name__ == "__main__":
    main()
