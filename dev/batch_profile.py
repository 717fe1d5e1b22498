"""Where a batched static item's time goes (softrod bench static-batch's SoftManiSim loads).

Usage: PYTHONPATH=src python dev/batch_profile.py [B]
Prints, for one thread, CPU time per item of: the whole batch (stability on / off), and of
the kernel phases called item by item from Python (direct Newton and continuation, each with
and without the tip error estimate of the target's Newton call; one evaluation; the stability
test when it integrates its own maps), with how many items take each path and evaluations,
and continuation's steps per continued item (first, later and the target's: steps, tip-check
rejections, evaluations), replayed from Python with the batch's kernels.
"""

from __future__ import annotations

import sys
import time

import numba
import numpy as np

from softrod.bench._static import _softmanisim_inputs, example_robot_path
from softrod.description import load_robot
from softrod.rods import _batch, compile_model, solve_static_batch
from softrod.rods import _batch_kernels as K

numba.set_num_threads(1)
B = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
model = compile_model(load_robot(example_robot_path("softmanisim")))
items = _softmanisim_inputs(B, np.random.default_rng(0))
tau = np.array([kw["tensions"] for kw in items])
F = np.array([kw["tip_force"] for kw in items])
dist = items[0]["distributed_force"]


def batch(check: bool):
    return solve_static_batch(
        model, tensions=tau, tip_force=F, distributed_force=dist, threads=1, check_stability=check
    )


batch(True)
for check in (True, False):
    c0 = time.process_time()
    res = batch(check)
    dt = time.process_time() - c0
    print(f"batch check_stability={check}: {1e6 * dt / B:.0f} us CPU per item")
print(f"iterations mean {res.iterations.mean():.2f}, failed {res.n_failed}")

arr = _batch._model_arrays(model, False)
mp = K._model_par(arr)
node_s, npm, straight, scales = mp[0][0], mp[2], mp[3], mp[8]
cs, cseg, cidx, cratio = arr[18:22]
coarse = (cs, cseg, cidx, cratio)
forces = _batch._forces(
    _batch._check_loads(
        model,
        tau,
        None,
        {"tip_force": F, "tip_moment": None, "distributed_force": dist, "gravity": None},
    )
)
n_t = tau.shape[1]
zero_act, zero_force = np.zeros(n_t), np.zeros((4, 3))
direct = np.array(
    [K._direct_ok(zero_act, zero_force, tau[i], forces[i], False, mp) for i in range(B)]
)
print(f"direct items {direct.sum()} / {B}")
Y = np.empty((model.n_nodes, 15 + n_t))
X = np.empty((model.n_nodes, 6))
rest_tip = K._rest_tip(False, arr, 3, 1e-10)
nan_tip = np.full(3, np.nan)


nodes = np.empty(model.n_nodes, dtype=np.int64)
maps = np.empty((model.n_nodes - 1, 6, 6))
n_unk = 3
n_counters = K._JACOBIAN_AT + n_unk * (n_unk + 4)


def final_of(i, estimate=True):
    """`_solve_item`'s `final` tuple of item i (maps built when predicted converged, the tip
    error estimate in the target's Newton call when `estimate`)."""
    ld = K._item_ld(mp[0], npm, forces[i], n_t)
    geo_c, ld_c = K._coarse_problem(mp[0], ld, coarse)
    return (ld, True, nodes, maps, geo_c, ld_c, estimate, np.empty(3))


def follow(i, x, counters, tip, estimate=True):
    _, bending = K._path_angles(zero_act, zero_force, tau[i], forces[i], False, mp)
    return K._follow(
        zero_act, zero_force, tau[i], forces[i], np.zeros(3), tip, K._FIRST_STEP_ANGLE / bending,
        False, mp, 1e-10, Y, X, counters, final_of(i, estimate), x,
    )  # fmt: skip


def direct_solve(i, x, counters, estimate=True):
    return K._target_newton(
        x, tau[i], forces[i][1], np.int64(100), 4.0, False, mp, 1e-10, Y, X, counters,
        final_of(i, estimate),
    )  # fmt: skip


# Compile (or load) every phase's entry before timing it.
first = int(np.flatnonzero(~direct)[0])
follow(first, np.zeros(3), np.zeros(n_counters), rest_tip)
direct_solve(0, np.zeros(3), np.zeros(n_counters))
K._run(np.zeros(3), tau[0], forces[0], np.int64(0), np.inf, False, mp, 1e-10, Y, X, np.zeros(4))
for estimate in (True, False):
    t_direct = t_follow = 0.0
    it_direct = it_follow = 0.0
    xs = np.empty((B, 3))
    for i in range(B):
        moment = np.empty(3)
        K._load_angle(mp[0], npm, straight, forces[i], scales[0], scales[2], moment)
        x = moment.copy()
        counters = np.zeros(n_counters)
        c0 = time.process_time()
        if direct[i]:
            direct_solve(i, x, counters, estimate)
            t_direct += time.process_time() - c0
            it_direct += counters[1]
        else:
            follow(i, x, counters, rest_tip, estimate)
            t_follow += time.process_time() - c0
            it_follow += counters[1]
        xs[i] = x
    nd, nf = max(direct.sum(), 1), max((~direct).sum(), 1)
    what = "with" if estimate else "without"
    print(f"{what} the tip error estimate (maps of the last evaluation in both):")
    print(f"  direct Newton: {1e6 * t_direct / nd:.0f} us, {it_direct / nd:.1f} evaluations")
    print(f"  continuation: {1e6 * t_follow / nf:.0f} us, {it_follow / nf:.1f} evaluations")
c0 = time.process_time()
for i in range(B):
    K._run(
        xs[i].copy(), tau[i], forces[i], np.int64(0), np.inf, False, mp, 1e-10, Y, X, np.zeros(4)
    )
print(f"one evaluation (3 directions) + call: {1e6 * (time.process_time() - c0) / B:.0f} us")
ld = K._item_ld(mp[0], npm, forces[0], n_t)
K._grouped_stable(Y, tau[0], mp[0], ld, nodes, maps, np.int64(0))
t_stab = 0.0
for i in range(B):
    K._run(
        xs[i].copy(), tau[i], forces[i], np.int64(0), np.inf, False, mp, 1e-10, Y, X, np.zeros(4)
    )
    ld = K._item_ld(mp[0], npm, forces[i], n_t)
    c0 = time.process_time()
    K._grouped_stable(Y, tau[i], mp[0], ld, nodes, maps, np.int64(0))
    t_stab += time.process_time() - c0
print(f"stability test with its own maps (grouped checkpoints): {1e6 * t_stab / B:.0f} us per item")

# Continuation's steps, item by item (`_batch_kernels._follow`'s rule replayed from Python with
# its kernels: `_run` with the deferred last iterate, `_deferred_tip`, `_tip_step_use`,
# `_next_load_step`): steps per continued item, how many the tip check rejected (the first
# step, without a secant, only by the move bound), and the evaluations of each kind of step.
from softrod.rods._static_kernels import (  # noqa: E402
    _BROYDEN_DEFER,
    _DEFERRED,
    _STEP_RTOL,
    _deferred_tip,
    _next_load_step,
    _tip_step_use,
)

L = scales[2]
n_cont = 0
kinds = {"first": [0, 0, 0], "later": [0, 0, 0], "target": [0, 0, 0]}  # steps, rejected, evals
for i in np.flatnonzero(~direct):
    n_cont += 1
    _, bending = K._path_angles(zero_act, zero_force, tau[i], forces[i], False, mp)
    dmu = K._FIRST_STEP_ANGLE / bending
    dmu_max = max(dmu, 0.5)
    mu = mu_prev = 0.0
    x_mu, x_prev, has_prev = np.zeros(3), np.zeros(3), False
    tip_mu, tip_prev, used, tip = rest_tip.copy(), np.zeros(3), np.zeros(2), np.empty(3)
    while mu < 1.0:
        trial = min(1.0, mu + dmu)
        ratio = (trial - mu) / (mu - mu_prev) if has_prev and mu > mu_prev else 0.0
        x = x_mu + (x_mu - x_prev) * ratio if has_prev else x_mu.copy()
        act, force = trial * tau[i], trial * forces[i]
        at_target = trial >= 1.0
        counters = np.zeros(n_counters)
        counters[3] = 0.0 if at_target else (_BROYDEN_DEFER if has_prev else 1.0)
        tol = 1e-10 if at_target else max(1e-10, _STEP_RTOL)
        st = K._run(x, act, force, np.int64(12), 1.0, False, mp, tol, Y, X, counters)
        if st == _DEFERRED:
            st = 0
            _deferred_tip(Y, counters, 3, tip)
        else:
            tip[:] = Y[-1, 0:3]
        kind = "target" if at_target else ("later" if has_prev else "first")
        if st == 0 and not _tip_step_use(tip, tip_mu, tip_prev, has_prev, ratio, L, used):
            st = 5
        kinds[kind][0] += 1
        kinds[kind][1] += st != 0
        kinds[kind][2] += int(counters[1])
        dmu = _next_load_step(dmu, used, st, dmu_max)
        if st == 0:
            x_prev, tip_prev, mu_prev, has_prev = x_mu, tip_mu, mu, True
            x_mu, tip_mu, mu = x, tip.copy(), trial
        elif dmu < K._MIN_LOAD_STEP:
            break
print(f"continuation steps per continued item ({n_cont} items; first step at "
      f"{K._FIRST_STEP_ANGLE} rad of bending, the target's step without the maps):")  # fmt: skip
for kind, (steps, rejected, evals) in kinds.items():
    print(f"  {kind}: {steps / n_cont:.2f} steps, {rejected / n_cont:.2f} rejected, "
          f"{evals / n_cont:.2f} evaluations")  # fmt: skip
