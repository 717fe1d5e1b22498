"""Wrong-branch probe (issue 19 item 0): default solves vs a 200-step warm-started ramp of the same
loads on 2-3 segment tdcr3 robots (F L^2/EI 4-50, tendons up to 2.5 N, gravity, distributed load).

    .venv/bin/python dev/wrong_branch_probe.py SEED N [--ramps RAMPS.npz] [--dump OUT.npz]

Prints how many default solves succeeded, how many landed > 1 mm from the ramped answer
(2026-11-26, seed 1, N 100: 100 succeeded, 3 on another branch, 118-210 mm away) and the total
Newton iterations and evaluations of the default solves. `--ramps` keeps the ramps' tips in a
file (computed and saved when it does not exist, read when it does: the ramps take most of
the time, and their small warm steps never continue); `--dump` saves every default solve's
tip, success flag, stability verdict and iteration count (compare two source trees with
`python dev/wrong_branch_probe.py --diff A.npz B.npz`).
"""
import sys, math, json, time, os
sys.path.insert(0, "tests")
import numpy as np


def _diff(a_path, b_path):
    a, b = np.load(a_path), np.load(b_path)
    ok = a["success"] & b["success"]
    move = np.linalg.norm(a["tip"][ok] - b["tip"][ok], axis=1).max(initial=0.0)
    print(json.dumps({
        "max_tip_move_m": float(move),
        "success_changed": np.flatnonzero(a["success"] != b["success"]).tolist(),
        "stable_changed": np.flatnonzero(a["stable"] != b["stable"]).tolist(),
        "nit": [int(a["nit"].sum()), int(b["nit"].sum())],
        "nfev": [int(a["nfev"].sum()), int(b["nfev"].sum())],
    }))


def main():
    if sys.argv[1] == "--diff":
        return _diff(sys.argv[2], sys.argv[3])
    import softrod
    from reference.robots import tdcr3_dict

    args = sys.argv[1:]
    opt = {args[i]: args[i + 1] for i in range(len(args)) if args[i].startswith("--")}
    rng = np.random.default_rng(int(args[0]))
    N = int(args[1])
    ramps_path = opt.get("--ramps")
    known = dict(np.load(ramps_path)) if ramps_path and os.path.exists(ramps_path) else None
    ramp_tips = np.full((N, 3), np.nan)
    out = {k: [] for k in ("tip", "success", "stable", "nit", "nfev")}
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
        out["tip"].append(a.tip_position); out["success"].append(a.success)
        out["stable"].append(-1 if a.stable is None else int(a.stable))
        out["nit"].append(a.nit); out["nfev"].append(a.nfev)
        if known is not None:
            ramp_tips[i] = known["tips"][i]
        else:
            # gradual loading: 200-step ramp via warm-started continuation
            g = None
            for k in range(1, 201):
                lam = k / 200
                lk = {key: (np.asarray(v) * lam).tolist() for key, v in loads.items()}
                g = softrod.solve_static(spec, guess=g, **lk)
                if not g.success: break
            if g is not None and g.success:
                ramp_tips[i] = g.tip_position
        if a.success: n_succ += 1
        if a.success and np.all(np.isfinite(ramp_tips[i])):
            dist = float(np.linalg.norm(a.tip_position - ramp_tips[i]))
            if dist > 1e-3:
                bad.append((i, dist, ta))
    if ramps_path and known is None:
        np.savez(ramps_path, tips=ramp_tips)
    if "--dump" in opt:
        np.savez(opt["--dump"], **{k: np.array(v) for k, v in out.items()})
    print(json.dumps({"n": N, "default_success": n_succ, "wrong_branch": len(bad),
                      "nit": int(sum(out["nit"])), "nfev": int(sum(out["nfev"]))}))
    for b in bad: print(b)


main()
