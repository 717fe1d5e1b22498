"""Random valid robots (1-10 segments, E 1e4-2e11 Pa, 1 mm-2 m, 0-30 tendons, both models) and
random loads through solve_static (issue 19 item 2): counts converged, failed, exceptions, "lies"
(success with a non-finite shape or a Kirchhoff tip beyond the robot's length) and slow solves.

    .venv/bin/python dev/static_property_probe.py SEED N

2026-11-26, seed 0, N 150: 146 ok, 4 failed, 0 exceptions, 0 lies, 3 solves of 38-218 s (heavy soft
robots whose multiple shooting fails after hundreds of Newton iterations). With the solve's time
budget (softrod.rods.DEFAULT_TIME_LIMIT = 10 s), seed 0: 145 ok, 5 failed (4 out of time), 0
lies, slowest 10.8 s; seed 1: 139 ok, 11 failed (6 out of time), 0 lies, slowest 10.3 s (load
average ~16). Convergence rate over the plausible domain (PLAUSIBLE_LOAD_NUMBER): 97/98 and
100/102 (docs/validation.md).
"""
import math, sys, time, json
import numpy as np
import softrod

def random_robot(rng):
    n_seg = int(rng.integers(1, 11))
    model = str(rng.choice(["kirchhoff", "cosserat"]))
    E = float(10 ** rng.uniform(4, math.log10(2e11)))
    L_total = float(10 ** rng.uniform(-3, math.log10(2.0)))
    radius = float(L_total * 10 ** rng.uniform(-3, -1))
    segs = []
    n_t_total = 0
    for k in range(n_seg):
        L = L_total / n_seg
        n_t = int(rng.integers(0, 4)) if n_t_total < 30 else 0
        n_t_total += n_t
        disk_r = radius * 5
        tendons = [{"offset": float(disk_r * rng.uniform(0.2, 1.0)), "angle_deg": float(rng.uniform(0, 360))} for _ in range(n_t)]
        segs.append({"length": L, "disks": int(rng.integers(1, 12)), "disk_radius": disk_r, "tendons": tendons})
    return {"name": "p", "model": model, "backbone": {"youngs_modulus": E, "poisson_ratio": 0.3, "density": float(rng.uniform(0, 8000)), "radius": radius}, "segments": segs}

def random_loads(rng, spec):
    E = spec.backbone.youngs_modulus; r = spec.backbone.radius; L = sum(s.length for s in spec.segments)
    EI = E * math.pi * r**4 / 4
    F0 = EI / L**2
    out = {}
    n = spec.n_tendons
    if n:
        d = max(t.offset for s in spec.segments for t in s.tendons)
        T0 = EI / (L * d)
        t = T0 * 10 ** rng.uniform(-3, 1, n) * (rng.random(n) < 0.5)
        out["tensions"] = t.tolist()
    if rng.random() < 0.7:
        out["tip_force"] = (F0 * 10 ** rng.uniform(-3, 2) * rng.normal(size=3)).tolist()
    if rng.random() < 0.3:
        out["tip_moment"] = (F0 * L * 10 ** rng.uniform(-3, 1) * rng.normal(size=3)).tolist()
    if rng.random() < 0.3:
        out["distributed_force"] = (F0 / L * 10 ** rng.uniform(-3, 2) * rng.normal(size=3)).tolist()
    if rng.random() < 0.3:
        out["gravity"] = [0, 0, -9.81]
    return out


def cases(seed, n):
    """The probe's (index, robot dict, spec or exception, loads) sequence for a seed."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        robot = random_robot(rng)
        try:
            spec = softrod.load_robot(robot)
        except Exception as e:
            yield i, robot, e, None
            continue
        yield i, robot, spec, random_loads(rng, spec)


def load_number(spec, loads):
    """The largest bending the loads could cause on the straight robot [rad]: |F| L^2 / EI,
    |M| L / EI, |q| L^3 / EI, the backbone weight w L^3 / EI and tau d L / EI per tendon."""
    E = spec.backbone.youngs_modulus; r = spec.backbone.radius
    L = sum(s.length for s in spec.segments)
    EI = E * math.pi * r**4 / 4
    out = [0.0]
    if "tip_force" in loads: out.append(np.linalg.norm(loads["tip_force"]) * L**2 / EI)
    if "tip_moment" in loads: out.append(np.linalg.norm(loads["tip_moment"]) * L / EI)
    if "distributed_force" in loads: out.append(np.linalg.norm(loads["distributed_force"]) * L**3 / EI)
    if "gravity" in loads: out.append(spec.backbone.density * math.pi * r**2 * 9.81 * L**3 / EI)
    if "tensions" in loads:
        d = [t.offset for s in spec.segments for t in s.tendons]
        out.append(max(t * di for t, di in zip(loads["tensions"], d)) * L / EI)
    return max(out)


#: The physically plausible domain of the convergence rate: loads that bend the robot by at
#: most this many radians (a full loop plus: beyond it real robots break or buckle away).
PLAUSIBLE_LOAD_NUMBER = 10.0

if __name__ == "__main__":
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    N = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    stats = {"ok": 0, "fail": 0, "exc": 0, "lie": 0, "slow": 0, "budget": 0}
    plaus = {"ok": 0, "n": 0}
    bad = []
    t_max = 0.0
    for i, robot, spec, loads in cases(seed, N):
        if isinstance(spec, Exception):
            stats.setdefault("desc_err", 0); stats["desc_err"] += 1; continue
        t0 = time.perf_counter()
        try:
            sol = softrod.solve_static(spec, **loads)
        except Exception as e:
            stats["exc"] += 1; bad.append(("exc", i, repr(e)[:200], robot, loads)); continue
        dt = time.perf_counter() - t0
        if i > 0: t_max = max(t_max, dt)
        if dt > 5 and i > 0: stats["slow"] += 1; bad.append(("slow", i, dt, sol.success, sol.message[:100], spec.model, len(spec.segments), spec.n_tendons))
        if "time budget" in sol.message: stats["budget"] += 1
        L = sum(s.length for s in spec.segments)
        lie = False
        if sol.success:
            finite = all(np.all(np.isfinite(getattr(sol, a))) for a in ("positions", "rotations"))
            reach = np.linalg.norm(sol.tip_position - np.asarray(spec.base.position))
            if not finite or (spec.model == "kirchhoff" and reach > L * (1 + 1e-6)):
                lie = True; stats["lie"] += 1; bad.append(("lie", i, float(reach / L), robot, loads))
            else:
                stats["ok"] += 1
        else:
            stats["fail"] += 1
            if not sol.message: bad.append(("nomsg", i))
        if load_number(spec, loads) <= PLAUSIBLE_LOAD_NUMBER:
            plaus["n"] += 1
            plaus["ok"] += bool(sol.success and not lie)
    stats["max_solve_s"] = round(t_max, 2)
    print(json.dumps(stats))
    print(f"convergence rate (load number <= {PLAUSIBLE_LOAD_NUMBER:g}): {plaus['ok']}/{plaus['n']}"
          f" = {100 * plaus['ok'] / max(plaus['n'], 1):.1f} %;"
          f" all cases: {stats['ok']}/{N} = {100 * stats['ok'] / N:.1f} %")
    for b in bad[:8]:
        print(json.dumps(b, default=str)[:600])
