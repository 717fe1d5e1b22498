"""Wrong-branch probe (issue 19 item 0): default solves vs a 200-step warm-started ramp of the same
loads on 2-3 segment tdcr3 robots (F L^2/EI 4-50, tendons up to 2.5 N, gravity, distributed load).

    .venv/bin/python dev/wrong_branch_probe.py SEED N

Prints how many default solves succeeded and how many landed > 1 mm from the ramped answer
(2026-11-26, seed 1, N 100: 100 succeeded, 3 on another branch, 118-210 mm away).
"""
import sys, math, json, time
sys.path.insert(0, "tests")
import numpy as np
import softrod
from reference.robots import tdcr3_dict

rng = np.random.default_rng(int(sys.argv[1]))
N = int(sys.argv[2])
bad = []; n_succ = 0
for i in range(N):
    d = tdcr3_dict(str(rng.choice(["kirchhoff", "cosserat"])))
    nseg = int(rng.integers(2, 4)); d["segments"] = d["segments"][:nseg]
    spec = softrod.load_robot(d)
    L = 0.062 * nseg; EI = 60e9 * math.pi * 0.0005**4 / 4
    F = rng.uniform(4, 50) * EI / L**2
    loads = dict(
        tensions=(rng.uniform(0, 2.5, spec.n_tendons) * (rng.random(spec.n_tendons) < 0.6)).tolist(),
        tip_force=(F * rng.normal(size=3) / math.sqrt(3)).tolist(),
        gravity=[0, 0, -9.81],
        distributed_force=(rng.normal(size=3) * 0.5 * EI / L**3).tolist(),
    )
    t0 = time.perf_counter()
    a = softrod.solve_static(spec, **loads)
    ta = time.perf_counter() - t0
    # gradual loading: 200-step ramp via warm-started continuation
    g = None
    for k in range(1, 201):
        lam = k / 200
        lk = {key: (np.asarray(v) * lam).tolist() for key, v in loads.items()}
        g = softrod.solve_static(spec, guess=g, **lk)
        if not g.success: break
    if a.success: n_succ += 1
    if a.success and g is not None and g.success:
        dist = float(np.linalg.norm(a.tip_position - g.tip_position))
        if dist > 1e-3:
            bad.append((i, dist, ta))
print(json.dumps({"n": N, "default_success": n_succ, "wrong_branch": len(bad)}))
for b in bad: print(b)
