"""The probe's failures over the plausible domain (dev/static_property_probe.py, issue 19),
rerunnable one by one.

    PYTHONPATH=src python dev/snap_cases.py            # solve the listed cases, one line each
    PYTHONPATH=src python dev/snap_cases.py SEED INDEX # one case of the probe, with details
    PYTHONPATH=src python dev/snap_cases.py SEED N --scan  # list the plausible failures of a seed
    PYTHONPATH=src python dev/snap_cases.py SEED N --scan --load-number-only  # the old domain
    PYTHONPATH=src python dev/snap_cases.py SEED INDEX --fold  # the fold: eigenvalue, det J
    PYTHONPATH=src python dev/snap_cases.py SEED INDEX --balance  # is the answer balanced?
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from static_property_probe import (  # noqa: E402
    PLAUSIBLE_LOAD_NUMBER,
    cases,
    fold_number,
    load_number,
    plausible,
    refused_dead_moment,
)

import softrod  # noqa: E402

#: (seed, index) of the probe's load paths that stop early (seeds 0 and 1, N = 150): not folds
#: of the load path; 139, 108 and 110 stop where a tendon folds back (no equilibrium of the
#: tendon model beyond); 130's section Newton, cold-started at the base, cycled at 54.5 % of
#: the load (a solver failure: with its step limit it now goes on to a real fold at 62.6 %,
#: docs/validation.md). All four are outside the restated plausible domain (fold number > 1).
FAILURES: list[tuple[int, int]] = [(0, 139), (1, 108), (1, 110), (1, 130)]


def case(seed: int, index: int):
    """(robot spec, loads) of probe case `index` of `seed`."""
    for i, _robot, spec, loads in cases(seed, index + 1):
        if i == index:
            return spec, loads
    raise IndexError(index)


def solve(seed: int, index: int, verbose: bool = False) -> softrod.rods.StaticResult:
    spec, loads = case(seed, index)
    t0 = time.perf_counter()
    sol = softrod.solve_static(spec, **loads)
    dt = time.perf_counter() - t0
    L = sum(s.length for s in spec.segments)
    print(
        f"seed {seed} case {index}: success={sol.success} stable={sol.stable} "
        f"load number {load_number(spec, loads):.2f} tip/L {np.round(sol.tip_position / L, 4)} "
        f"{dt:.1f} s: {sol.message}",
        flush=True,
    )
    if verbose:
        shape = f"{len(spec.segments)} segments, {spec.n_tendons} tendons, L {L:.4g} m"
        print(f"  model {spec.model}, {shape}")
        print(f"  model {spec.model}, {shape}")
        print(f"  loads {loads}")
    return sol


def fold_evidence(seed: int, index: int) -> None:
    """Where the path from rest stops (fraction lam of the load): the lowest eigenvalue of the
    energy's second variation (`_stability.unstable_modes`, on the equilibria at fractions
    approaching lam, warm-started) and the determinant of the shooting Jacobian
    (`shooting_eval`): both go to zero at a fold, like sqrt(lam - fraction)."""
    from softrod.rods import compile_model, shooting_eval
    from softrod.rods._stability import stability_maps, unstable_modes

    spec, loads = case(seed, index)
    model = compile_model(spec)
    sol = softrod.solve_static(model, check_stability=False, **loads)
    lam = sol.load_scale
    print(f"seed {seed} case {index}: path stops at {lam:.5f} ({sol.message[:60]})")
    prev = None
    for gap in (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 0.0):
        f = lam * (1.0 - gap)
        scaled = {k: np.asarray(v) * f if k != "gravity" else v for k, v in loads.items()}
        if "gravity" in loads:
            scaled["gravity"] = np.asarray(loads["gravity"]) * f
        r = softrod.solve_static(model, guess=prev, check_stability=False, error_estimate=False,
                                 **scaled)  # fmt: skip
        if not r.success:
            print(f"  fraction {f:.5f}: {r.message[:80]}")
            continue
        prev = r
        maps = stability_maps(model, r)
        w = unstable_modes(maps)[0][0] if maps is not None else np.nan
        J = shooting_eval(model, r.base_moment, **scaled).jacobian
        print(f"  fraction {f:.5f}: lowest eigenvalue {w:.4e}, det J {np.linalg.det(J):.4e}")


def section_balance(seed: int, index: int) -> None:
    """Is the default answer an equilibrium of every section? The moment balance
    K_bt (u - u*) + sum_i tau_i r_i x w_i / |w_i| = R^T M at each node, over the moment scale
    (nodes at segment ends are attributed to the distal segment here and show O(1) values on
    real equilibria too: a handful per robot)."""
    from softrod.rods import compile_model

    spec, loads = case(seed, index)
    model = compile_model(spec)
    r = softrod.solve_static(model, **loads)
    u = r.curvature
    v = r.strain if r.strain is not None else np.tile([0.0, 0.0, 1.0], (len(u), 1))
    ends = np.cumsum(model.seg_length)
    node_seg = np.searchsorted(ends, r.s, side="left").clip(0, len(ends) - 1)
    Mb = np.einsum("kba,kb->ka", r.rotations, r.warm.total_moment)
    res = np.empty(len(r.s))
    for k in range(len(r.s)):
        j = node_seg[k]
        m = model.K_bt[j] * (u[k] - model.u_star[j])
        for t in range(model.n_tendons):
            if model.tendon_seg[t] >= j and r.tendon_tension[t] != 0.0:
                w = v[k] + np.cross(u[k], model.tendon_r[t])
                m = m + r.tendon_tension[t] * np.cross(model.tendon_r[t], w / np.linalg.norm(w))
        res[k] = np.linalg.norm(m - Mb[k]) / model.moment_scale
    print(
        f"seed {seed} case {index}: success={r.success}; section balance residual / moment "
        f"scale: median {np.median(res):.2g}, nodes above 1e-6: {(res > 1e-6).sum()} of {res.size}"
    )


if __name__ == "__main__":
    if "--scan" in sys.argv:
        # The stated plausible domain (static_property_probe.plausible); dead tip moments
        # refused as unstable are counted apart (static_property_probe.refused_dead_moment).
        seed, n = int(sys.argv[1]), int(sys.argv[2])
        drawn = plausible_n = failed = budget = refused = 0
        slowest = (0.0, -1)
        for i, _robot, spec, loads in cases(seed, n):
            if isinstance(spec, Exception):
                continue
            drawn += 1
            if "--load-number-only" in sys.argv:  # the domain before issue 19's restatement
                if load_number(spec, loads) > PLAUSIBLE_LOAD_NUMBER:
                    continue
            elif not plausible(spec, loads):
                continue
            plausible_n += 1
            t0 = time.perf_counter()
            sol = softrod.solve_static(spec, **loads)
            dt = time.perf_counter() - t0
            if plausible_n > 1:  # the first solve of a process loads the compiled kernels
                slowest = max(slowest, (dt, i))
            if sol.success:
                continue
            budget += "time budget" in sol.message
            if refused_dead_moment(loads, sol):
                refused += 1
                print(f"REFUSED seed {seed} case {i} ({dt:.1f} s): {sol.message}", flush=True)
                continue
            failed += 1
            print(
                f"FAIL seed {seed} case {i} ({dt:.1f} s; load number "
                f"{load_number(spec, loads):.2f}, fold number {fold_number(spec, loads):.2f}): "
                f"{sol.message}",
                flush=True,
            )
        counted = plausible_n - refused
        print(
            f"seed {seed}: {drawn} valid robots drawn, {plausible_n} in the plausible domain, "
            f"{refused} dead tip moments refused as unstable (apart); {counted - failed}/"
            f"{counted} converged ({100 * (counted - failed) / max(counted, 1):.1f} %), "
            f"{budget} out of time; slowest solve {slowest[0]:.1f} s (case {slowest[1]}); "
            f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
            flush=True,
        )
    elif "--balance" in sys.argv:
        section_balance(int(sys.argv[1]), int(sys.argv[2]))
    elif "--fold" in sys.argv:
        fold_evidence(int(sys.argv[1]), int(sys.argv[2]))
    elif len(sys.argv) >= 3:
        solve(int(sys.argv[1]), int(sys.argv[2]), verbose=True)
    else:
        for seed, index in FAILURES:
            solve(seed, index)
