"""Residual histories of continuation's intermediate steps under Newton and its cheaper variants.

Usage: PYTHONPATH=src python dev/continuation_steps.py [B]

Follows the continued items among `softrod bench static-batch`'s first B SoftManiSim loads
(default 200) from rest with `_batch_kernels._follow`'s rule (secant predictor, the tip check
`_tip_step_use`, `_next_load_step`; plain Newton steps, no step bound, no line search) and, at
every step's predictor, records the scaled residual after each iteration of
  N: Newton (a full evaluation with 3 sensitivity directions per iterate),
  C0: chord iterations with the Jacobian of the step's first iterate (value-only after it),
  Cp: chord iterations with the previous step's last Jacobian (value-only from the start),
  B: Broyden's update of the first iterate's Jacobian (value-only after it),
each until `_STEP_RTOL`, and the residual at a quadratic (3-point Lagrange) predictor against
the secant's. Prints the evaluations each took and an estimated cost per step from the
per-evaluation costs below (Newton: the last evaluation value-only, as `_newton`'s
predicted-converged step makes it). Issue 16 (session 14): why chord / Broyden iterations do not
make continuation cheaper (docs/batch.md "Speed").
"""

from __future__ import annotations

import collections
import sys

import numpy as np

from softrod.bench._static import _softmanisim_inputs, example_robot_path
from softrod.description import load_robot
from softrod.rods import _batch, compile_model
from softrod.rods import _batch_kernels as K
from softrod.rods._static_kernels import (
    _STEP_RTOL,
    _next_load_step,
    _residual,
    _residual_value,
    _tip_step_use,
)

#: One evaluation's CPU time [us] with 3 sensitivity directions and value-only (docs/batch.md).
FULL_US, VALUE_US = 37.0, 23.0

B = int(sys.argv[1]) if len(sys.argv) > 1 else 200
model = compile_model(load_robot(example_robot_path("softmanisim")))
items = _softmanisim_inputs(B, np.random.default_rng(0))
tau = np.array([kw["tensions"] for kw in items])
F = np.array([kw["tip_force"] for kw in items])
loads = {"tip_force": F, "tip_moment": None, "distributed_force": items[0]["distributed_force"]}
arr = _batch._model_arrays(model, False)
mp = K._model_par(arr)
forces = _batch._forces(_batch._check_loads(model, tau, None, {**loads, "gravity": None}))
n_t = tau.shape[1]
za, zf = np.zeros(n_t), np.zeros((4, 3))
Y = np.empty((model.n_nodes, 15 + n_t))
X = np.empty((model.n_nodes, 6))
geo, base, scales = mp[0], mp[1], mp[8]
z = np.empty((15 + n_t) * 4)


def res(x, act, force, full):
    """Scaled residual (3,) at x and, when `full`, its Jacobian; Y holds the shape."""
    ld = K._item_ld(geo, mp[2], force, n_t)
    bc = (force[1].copy(), np.zeros(n_t), mp[4], scales[0], scales[1])
    r, J = np.empty(3), np.empty((3, 3))
    args = (False, act.copy(), base, geo, ld, bc, np.bool_(True), Y, X, z, r)
    ok = _residual(x, *args, J) if full else _residual_value(x, *args)
    return (r, J) if ok else (np.full(3, np.inf), J)


def quasi(x, act, force, J, first_full, broyden):
    """Residual norms of chord (or Broyden) iterations from x with J."""
    r, J0 = res(x, act, force, first_full)
    J = J0.copy() if first_full else J.copy()
    hist = [np.abs(r).max()]
    for _ in range(12):
        if hist[-1] <= _STEP_RTOL:
            break
        dx = np.linalg.solve(J, -r)
        x = x + dx
        r_new, _ = res(x, act, force, False)
        if broyden:
            J += np.outer(r_new - r - J @ dx, dx) / (dx @ dx)
        r = r_new
        hist.append(np.abs(r).max())
    return hist


rows = []
pred = []
steps = rejected = 0
for i in range(B):
    if K._direct_ok(za, zf, tau[i], forces[i], False, mp):
        continue
    _, bending = K._path_angles(za, zf, tau[i], forces[i], False, mp)
    dmu, mu, mu_prev, mu_pp = K._FIRST_STEP_ANGLE / bending, 0.0, 0.0, 0.0
    dmu_max = max(dmu, 0.5)
    x_mu, x_prev, x_pp = np.zeros(3), np.zeros(3), np.zeros(3)
    n_prev = 0
    res(x_mu, za, zf, True)
    tip_mu, tip_prev, used = Y[-1, :3].copy(), np.zeros(3), np.zeros(2)
    J_prev = None
    while mu < 1.0:
        trial = min(1.0, mu + dmu)
        ratio = (trial - mu) / (mu - mu_prev) if n_prev and mu > mu_prev else 0.0
        x = x_mu + (x_mu - x_prev) * ratio if n_prev else x_mu.copy()
        act, force = (1 - trial) * za + trial * tau[i], (1 - trial) * zf + trial * forces[i]
        r, J = res(x, act, force, True)
        newton = [np.abs(r).max()]
        xn = x.copy()
        for _ in range(12):
            if newton[-1] <= _STEP_RTOL:
                break
            xn = xn + np.linalg.solve(J, -r)
            r, J = res(xn, act, force, True)
            newton.append(np.abs(r).max())
        if n_prev >= 2:
            t, a0, a1, a2 = trial, mu_pp, mu_prev, mu
            xq = (
                (t - a1) * (t - a2) / ((a0 - a1) * (a0 - a2)) * x_pp
                + (t - a0) * (t - a2) / ((a1 - a0) * (a1 - a2)) * x_prev
                + (t - a0) * (t - a1) / ((a2 - a0) * (a2 - a1)) * x_mu
            )
            pred.append((newton[0], np.abs(res(xq, act, force, False)[0]).max()))
        c0 = quasi(x, act, force, None, True, False)
        cp = quasi(x, act, force, J_prev, False, False) if J_prev is not None else None
        br = quasi(x, act, force, None, True, True)
        rows.append((trial, newton, c0, cp, br))
        res(xn, act, force, True)
        ok = _tip_step_use(Y[-1, :3], tip_mu, tip_prev, n_prev > 0, ratio, scales[2], used)
        st = 0 if ok and newton[-1] <= _STEP_RTOL else 5
        steps += 1
        dmu = _next_load_step(dmu, used, st, dmu_max)
        if st == 0:
            x_pp, mu_pp = x_prev, mu_prev
            x_prev, tip_prev, mu_prev = x_mu, tip_mu, mu
            x_mu, mu, tip_mu, J_prev = xn, trial, Y[-1, :3].copy(), J
            n_prev += 1
        else:
            rejected += 1


def cost(h, first_full):
    """Estimated CPU time [us] of a chord or Broyden history (the first evaluation full when
    `first_full`, the others value-only)."""
    return (FULL_US if first_full else VALUE_US) + VALUE_US * (len(h) - 1)


def newton_cost(h):
    """Estimated CPU time [us] of a Newton history: full evaluations, the last value-only
    after two or more (`_newton`'s predicted-converged step)."""
    return FULL_US * len(h) if len(h) <= 2 else FULL_US * (len(h) - 1) + VALUE_US


print(f"{steps} steps ({rejected} rejected by the tip check) of the continued items of B = {B}")
for name, k, price in (
    ("Newton", 1, newton_cost),
    ("chord, first iterate's J", 2, lambda h: cost(h, True)),
    ("chord, previous step's J", 3, lambda h: cost(h, False)),
    ("Broyden from the first iterate's J", 4, lambda h: cost(h, True)),
):
    hs = [row[k] for row in rows if row[k] is not None]
    counts = sorted(collections.Counter(len(h) for h in hs).items())
    print(
        f"{name}: {np.mean([len(h) for h in hs]):.2f} evaluations per step "
        f"(count: steps {counts}), ~{np.mean([price(h) for h in hs]):.0f} us per step"
    )
q = np.array(pred)
print(
    f"predictor residual, median over {len(q)} steps: secant {np.median(q[:, 0]):.1e}, "
    f"quadratic {np.median(q[:, 1]):.1e} (ratio {np.median(q[:, 1] / q[:, 0]):.2f}); "
    f"quadratic within 2e-3: {100 * np.mean(q[:, 1] <= 2e-3):.0f} %"
)
print("first steps (residual after each iteration): N | C0 | Cp | B")
for row in rows[:8]:
    f = " ".join
    print(
        f"mu {row[0]:.3f}: "
        + " | ".join(f(f"{v:.0e}" for v in h) if h is not None else "-" for h in row[1:])
    )
