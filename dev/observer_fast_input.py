"""The observer on fast inputs (issue 19 item 4): the SoftManiSim robot, tensions 0-3 N at
1 Hz, a 0.5-1 N tip force rotating at 1 Hz, sampled at 100 Hz; tip error against converged
shooting and the time per step for max_updates = 1 (the paper) and a few more.

    PYTHONPATH=src .venv/bin/python dev/observer_fast_input.py [SECONDS] [REPEATS] [--floor]
        [--profile]
    .venv/bin/python dev/observer_fast_input.py [SECONDS] [REPEATS] --paired OTHER_SRC

`--paired` runs `PAIRED` (the paper's update and the bounded fast path through
`QuasiStaticSim.step`, the same through `softrod.rods.ObserverLoop`, and the fast path with
`ObserverLoop(tip_only=True)`, each where the softrod has it) in two warmed-up worker
processes, one with OTHER_SRC (e.g. /work/main/src) and one with this tree's src, in turn:
CPU time per step (median, mean, p95) and the tip errors (max, median).

2026-11-27 10:45 UTC (`... 3 3 --paired /work/main/src`, load average ~6; the current numbers,
docs/validation.md "The observer on fast inputs"): `QuasiStaticSim.step` with the fast path
(now through `ObserverLoop`) 0.136-0.137 ms CPU median against main's 0.160-0.162 ms, 4.79e-6
m; `ObserverLoop(tip_only=True, defect_every=5)` with predictor_stride 4 0.080 ms, 5.4e-6 m.
Older runs below.

The configs (`CONFIGS`) run in turn within each repeat, so their times are paired under the
same machine load; under `PYTHONPATH=<main's src>` the configs main lacks are skipped.

Measured 2026-11-26 (`... 3 3`, load average ~10 on the shared 2 cores, before / after the
observer became one kernel call per step, same shell run): max_updates=2 step_ms_min 0.332 /
0.288, medians 0.40-0.66 / 0.35-0.56 ms (noise from other jobs); max_updates=1 min 0.239 /
0.246; errors unchanged (max_updates=2: max 4.1e-7 m, median 6e-12 m after 5 steps). The
integrations alone set a floor: the kernel takes 0.108 ms (1 update) and 0.171 ms (2 updates:
two integrations with sensitivities and the zero-lag one) at best here, so the issue's 0.15 ms
with 2 updates is not reached; of the rest, `check_inputs` and `_inputs._loads_at` are ~30 %
of a step (profiled).

Measured 2026-11-26 20:00 UTC (`... 3 3`, load average ~15): max_updates=2 medians 0.67-0.81 ms,
min 0.318 ms, error max 4.1e-7 m; floor block: plain integration 0.067 ms, with sensitivities
0.085 ms, kernel 0.150 (1 update) / 0.233 ms (2), whole two-update step 0.353 ms at best. A
Broyden-corrected second update (1 sensitivity + 2 plain integrations) left 1.4e-5 m; carrying
the Broyden Jacobian across steps drifted (1.6e-2 m): not kept (docs/validation.md).

2026-11-27 02:15-02:19 UTC (`... 3 3`, load average 11-13, main's src and this one in turn):
`ObserverGains(max_updates=3, rtol=1e-4, broyden=True)` (extra updates only where needed, each
one plain integration with a Broyden-corrected Jacobian, within a step) max error 4.8e-6 m,
step medians 1.1 times the single update's within a repeat (two fresh updates: 1.3 times);
the absolute medians (0.28-0.83 ms for every config) are the machine's load, not a cost
(docs/validation.md "The observer on fast inputs").

2026-11-27 07:42-07:48 UTC (`... 1 3 --paired /work/main/src` and `... 0.5 1 --profile`, load
average ~19-20): the fast path through `ObserverLoop` 0.19-0.26 ms CPU median per step (main's
`QuasiStaticSim.step` 0.34-0.61 ms), best 0.134 ms; its Python 0.009-0.015 ms of a 0.17 ms
step, the kernel the rest (docs/validation.md "A stateful observer loop").
"""

import json
import sys

import numpy as np

import softrod
from softrod.bench import example_robot_path
from softrod.rods import ObserverGains
from softrod.sim import QuasiStaticSim


def fast_inputs(n: int, dt: float = 0.01) -> dict[str, np.ndarray]:
    """Tensions 1.5 (1 + sin(2 pi t + k pi / 2)) [N] (antagonists in antiphase) and a tip force
    of magnitude 0.75 + 0.25 sin(pi t) [N] rotating about z at 1 Hz, tilted 30 deg down."""
    t = np.arange(n) * dt
    tens = 1.5 * (1.0 + np.sin(2 * np.pi * t[:, None] + 0.5 * np.pi * np.arange(4)))
    mag = 0.75 + 0.25 * np.sin(np.pi * t)
    el = np.deg2rad(-30.0)
    d = np.column_stack(
        [
            np.cos(el) * np.cos(2 * np.pi * t),
            np.cos(el) * np.sin(2 * np.pi * t),
            np.full(n, np.sin(el)),
        ]
    )
    return dict(tensions=tens, tip_force=mag[:, None] * d)


def floor(model: softrod.RodModel, inputs: dict[str, np.ndarray], reps: int = 300) -> dict:
    """What one observer step cannot go below here: the best time of one plain integration and
    of one with the base-moment sensitivities at a state of the run, of the one-call kernel
    (`_observer_steps`) for 1 and 2 updates, and of the Python around it (`check_inputs`,
    `_problem`, the whole `QuasiStaticSim.step`) [ms]."""
    import time

    from softrod.rods._inputs import _problem, check_inputs
    from softrod.rods._observer import _observer_steps, _x_scale
    from softrod.rods._static_kernels import _evaluate

    def best(fn) -> float:
        fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return round(min(times) * 1e3, 4)

    k = 40
    kw = {key: v[k] for key, v in inputs.items()}
    sim = QuasiStaticSim(model, "observer", gains=ObserverGains(max_updates=2))
    sim.run({key: v[:k] for key, v in inputs.items()})
    state = sim._obs
    inp = check_inputs(model, **kw)
    pb = _problem(model, inp)
    n = pb.n_unknowns
    ny = 15 + model.n_tendons
    Y, X = np.empty((model.n_nodes, ny)), np.empty((model.n_nodes, 6))
    x = state.x_scaled * _x_scale(model, n)
    out: dict = {}
    for nd, name in ((0, "integration_plain_ms"), (n, "integration_with_sensitivities_ms")):
        z = np.empty(ny * (1 + nd))
        out[name] = best(
            lambda z=z, nd=nd: _evaluate(
                x[:3].copy(), pb.tau_fixed, nd, pb.base, pb.geo, pb.ld, True, Y, X, z
            )
        )
    for m in (1, 2):
        args = (
            x,
            _x_scale(model, n),
            state.P,
            True,
            state.positions,
            state.load_moment,
            (pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc),
            model.node_s,
            (0.01, 1e2, 1e10, 0.5),
            m,
            1e-10,
            False,
            True,
            1,
            np.zeros(n),
            Y,
            X,
            np.empty(n),
            np.empty((n, n)),
            np.empty(model.n_tendons),
            np.empty(3),
            np.empty(n),
            np.empty(2),
        )
        out[f"kernel_{m}_updates_ms"] = best(lambda args=args: _observer_steps(*args))
    out["check_inputs_ms"] = best(lambda: check_inputs(model, **kw))
    out["problem_ms"] = best(lambda: _problem(model, inp))

    def step() -> None:
        sim._obs = state
        sim.step(**kw)

    out["sim_step_2_updates_ms"] = best(step)
    return out


def profile(model: softrod.RodModel, inputs: dict[str, np.ndarray], reps: int = 400) -> dict:
    """Where one step's time goes, for the Broyden config (3 updates, rtol 1e-4) on the full
    grid and with `predictor_stride=5`, at steps 40-42 of the run: the one-call kernel for 1
    and 3 updates, `observer_update` and the whole `QuasiStaticSim.step`, and the Python
    parts (`check_inputs`, `_problem`) [ms]: best of `reps` calls."""
    import time

    from softrod.rods import observer_update
    from softrod.rods._inputs import _problem, check_inputs
    from softrod.rods._observer import _observer_steps, _x_scale

    def best(fn) -> float:
        fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return round(min(times) * 1e3, 4)

    out: dict = {}
    for k in (40, 41, 42):
        kw = {key: v[k] for key, v in inputs.items()}
        inp = check_inputs(model, **kw)
        pb = _problem(model, inp)
        n = pb.n_unknowns
        if k == 40:
            out["check_inputs_ms"] = best(lambda kw=kw: check_inputs(model, **kw))
            out["problem_ms"] = best(lambda inp=inp: _problem(model, inp))
        for stride in (1, 5):
            gains = ObserverGains(max_updates=3, rtol=1e-4, broyden=True, predictor_stride=stride)
            sim = QuasiStaticSim(model, "observer", gains=gains, record_shape=False)
            sim.run({key: v[:k] for key, v in inputs.items()})
            state = sim._obs
            assert state is not None and state.positions is not None
            ny = 15 + model.n_tendons
            for m in (1, 3):
                args = (
                    state.x_scaled * _x_scale(model, n),
                    _x_scale(model, n),
                    state.P,
                    True,
                    state.positions,
                    state.load_moment,
                    (pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc),
                    model.node_s,
                    (0.01, 1e2, 1e10, 0.5),
                    m,
                    1e-4,
                    True,
                    True,
                    stride,
                    state.defect if state.defect is not None else np.zeros(n),
                    np.empty((model.n_nodes, ny)),
                    np.empty((model.n_nodes, 6)),
                    np.empty(n),
                    np.empty((n, n)),
                    np.empty(model.n_tendons),
                    np.empty(3),
                    np.empty(n),
                    np.empty(2),
                )
                out[f"step{k}_stride{stride}_kernel_{m}_updates_ms"] = best(
                    lambda args=args: _observer_steps(*args)
                )
            out[f"step{k}_stride{stride}_observer_update_ms"] = best(
                lambda inp=inp, state=state, gains=gains: observer_update(model, inp, state, gains)
            )

            def step(sim=sim, state=state, kw=kw) -> None:
                sim._obs, sim._tip = state, None
                sim.step(**kw)

            out[f"step{k}_stride{stride}_sim_step_ms"] = best(step)
            out |= _loop_profile(model, gains, state, kw, reps, f"step{k}_stride{stride}_")
    return out


def _loop_profile(model, gains, state, kw, reps: int, prefix: str) -> dict:
    """`ObserverLoop.step` from `state` with the inputs kw, its one kernel call
    (`_loop_step`) and its Python alone (the kernel swapped for an empty one) [ms]: best of
    `reps` calls, the state restored before each (outside the timing)."""
    import time

    try:
        import softrod.rods._observer_fast as fast
    except ImportError:
        return {}
    from numba import njit

    loop = fast.ObserverLoop(model, gains, state=state)
    saved = tuple(a.copy() for a in loop._st)
    n_t = model.n_tendons
    Y, X, tau = np.empty((model.n_nodes, 15 + n_t)), np.empty((model.n_nodes, 6)), np.empty(n_t)

    @njit
    def empty_kernel(const, work, u, st, Y, X, tau_out, info_out):
        info_out[0] = 0.0
        info_out[1] = 0.0

    def best(fn) -> float:
        times = []
        for _ in range(reps + 1):
            for a, b in zip(loop._st, saved, strict=True):
                a[...] = b
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return round(min(times[1:]) * 1e3, 4)

    out = {
        prefix + "loop_step_ms": best(lambda: loop.step(**kw)),
        prefix + "loop_kernel_ms": best(
            lambda: fast._loop_step(
                loop._const, loop._work, loop._u, loop._st, Y, X, tau, loop._info
            )
        ),
    }
    kernel = fast._loop_step
    fast._loop_step = empty_kernel
    try:
        out[prefix + "loop_python_ms"] = best(lambda: loop.step(**kw))
    finally:
        fast._loop_step = kernel
    return out


#: (max_updates, rtol, broyden) compared: the paper's single update, up to two updates with
#: fresh sensitivities (until issue 19's Broyden option), and up to three updates taken only
#: where the residual after one exceeds 1e-4 (tip error <= 0.066 m per unit of scaled residual
#: on this robot, so <= 7e-6 m), with Broyden-corrected Jacobians.
CONFIGS = [(1, 1e-10, False, 1), (2, 1e-10, False, 1), (3, 1e-4, True, 1), (3, 1e-4, True, 5)]


def run_config(model, inputs, shoot_tips, config) -> dict | None:
    """One observer run of a config: tip errors after 5 steps [m], wall and CPU (thread) time
    per step [ms]; None where this softrod has no such option (main before `broyden`)."""
    import time

    m, rtol, broyden, stride = config
    extra = ({"broyden": True} if broyden else {}) | (
        {"predictor_stride": stride} if stride > 1 else {}
    )
    try:
        gains = ObserverGains(max_updates=m, rtol=rtol, **extra)
    except TypeError:
        return None
    sim = QuasiStaticSim(model, "observer", gains=gains, record_shape=False)
    n = shoot_tips.shape[0]
    tips, wall, cpu = np.empty((n, 3)), np.empty(n), np.empty(n)
    for k in range(n):
        kw = {key: v[k] for key, v in inputs.items()}
        t0, c0 = time.perf_counter(), time.thread_time()
        tips[k] = sim.step(**kw)[0]
        cpu[k], wall[k] = time.thread_time() - c0, time.perf_counter() - t0
    return _summary(tips, shoot_tips, wall, cpu)


def run_loop_config(model, inputs, shoot_tips, config, **options) -> dict | None:
    """`run_config` through `softrod.rods.ObserverLoop` (the stateful observer: inputs into
    preallocated arrays, one kernel call per step) with `options` (e.g. tip_only); None where
    this softrod has no ObserverLoop or not these options."""
    import time

    try:
        from softrod.rods import ObserverLoop
    except ImportError:
        return None
    m, rtol, broyden, stride = config
    gains = ObserverGains(max_updates=m, rtol=rtol, broyden=broyden, predictor_stride=stride)
    try:
        loop = ObserverLoop(model, gains, **options)
    except TypeError:
        return None
    n = shoot_tips.shape[0]
    tips, wall, cpu = np.empty((n, 3)), np.empty(n), np.empty(n)
    for k in range(n):
        kw = {key: v[k] for key, v in inputs.items()}
        t0, c0 = time.perf_counter(), time.thread_time()
        tips[k] = loop.step(**kw)[0][-1, :3]
        cpu[k], wall[k] = time.thread_time() - c0, time.perf_counter() - t0
    return _summary(tips, shoot_tips, wall, cpu)


def _summary(tips, shoot_tips, wall, cpu) -> dict:
    err = np.linalg.norm(tips - shoot_tips, axis=1)[5:]
    return {
        "err_max_m": float(err.max()),
        "err_median_m": float(np.median(err)),
        "wall_ms_median": float(np.median(wall) * 1e3),
        "cpu_ms_median": float(np.median(cpu) * 1e3),
        "cpu_ms_mean": float(np.mean(cpu) * 1e3),
        "cpu_ms_p95": float(np.percentile(cpu, 95) * 1e3),
        "wall_ms_min": float(np.min(wall) * 1e3),
        "wall_ms_p95": float(np.percentile(wall, 95) * 1e3),
    }


def run_tip_config(model, inputs, shoot_tips, config) -> dict | None:
    """`run_loop_config` with `tip_only=True, defect_every=TIP_DEFECT_EVERY` (the observer on
    the predictor grid, a full-grid refresh every few steps); None where this softrod has
    no such option."""
    return run_loop_config(
        model, inputs, shoot_tips, config, tip_only=True, defect_every=TIP_DEFECT_EVERY
    )


#: `ObserverLoop(tip_only=True)`'s full-grid refresh interval in `PAIRED` [steps].
TIP_DEFECT_EVERY = 5

#: What `--paired` runs in each softrod: QuasiStaticSim.step with the paper's update and the
#: bounded fast path, the same two through ObserverLoop, and the fast path with
#: `tip_only=True` (the observer on the predictor grid, stride 4, a full-grid refresh every
#: `TIP_DEFECT_EVERY` steps) where the softrod has it.
PAIRED = [
    ("sim", (1, 1e-10, False, 1)),
    ("sim", (3, 1e-4, True, 5)),
    ("loop", (1, 1e-10, False, 1)),
    ("loop", (3, 1e-4, True, 5)),
    ("tip", (3, 1e-4, True, 4)),
]


def worker(seconds: float) -> None:
    """`--worker`: warm up, then per line on stdin run every `PAIRED` config once and print
    one JSON line of results (`--paired` drives one worker per softrod source tree)."""
    model = softrod.compile_model(example_robot_path("softmanisim"))
    inputs = fast_inputs(int(round(seconds * 100)))
    shoot = QuasiStaticSim(model, "shooting", record_shape=False).run(inputs).tip_position
    run = {"sim": run_config, "loop": run_loop_config, "tip": run_tip_config}
    for kind, config in PAIRED:  # JIT
        run[kind](model, {k: v[:8] for k, v in inputs.items()}, np.zeros((8, 3)), config)
    print(json.dumps({"softrod": softrod.__file__}), flush=True)
    for _ in sys.stdin:
        found = {
            f"{kind} {config}": run[kind](model, inputs, shoot, config) for kind, config in PAIRED
        }
        print(json.dumps(found), flush=True)


def paired(seconds: float, repeats: int, other_src: str) -> dict:
    """Main's (or any) softrod at `other_src` and this one, each in a warmed-up worker
    process, run in turn `repeats` times: CPU time per step of each `PAIRED` config [ms]."""
    import os
    import subprocess
    from pathlib import Path

    here = str(Path(__file__).resolve().parents[1] / "src")
    procs = {}
    for name, src in (("other", other_src), ("this", here)):
        env = dict(os.environ, PYTHONPATH=src)
        procs[name] = subprocess.Popen(
            [sys.executable, __file__, str(seconds), "1", "--worker"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    out: dict = {}
    for name, p in procs.items():
        out[f"{name} softrod"] = json.loads(p.stdout.readline())["softrod"]
    for _ in range(repeats):
        for name, p in procs.items():
            p.stdin.write("run\n")
            p.stdin.flush()
            for key, found in json.loads(p.stdout.readline()).items():
                if found is not None:
                    out.setdefault(f"{name}: {key}", []).append(found)
    for p in procs.values():
        p.stdin.close()
        p.wait()
    table = {}
    for key, found in out.items():
        if not isinstance(found, list):
            table[key] = found
            continue
        table[key] = {
            "err_max_m (after 5 steps)": found[-1]["err_max_m"],
            "err_median_m": found[-1]["err_median_m"],
            "cpu_ms_median (per repeat)": [round(f["cpu_ms_median"], 4) for f in found],
            "cpu_ms_mean (per repeat)": [round(f["cpu_ms_mean"], 4) for f in found],
            "cpu_ms_p95 (per repeat)": [round(f["cpu_ms_p95"], 4) for f in found],
            "wall_ms_min": round(min(f["wall_ms_min"] for f in found), 4),
        }
    return table


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if "--worker" in sys.argv:
        worker(seconds)
        sys.exit(0)
    if "--paired" in sys.argv:
        other = sys.argv[sys.argv.index("--paired") + 1]
        print(json.dumps(paired(seconds, repeats, other), indent=1))
        sys.exit(0)
    model = softrod.compile_model(example_robot_path("softmanisim"))
    inputs = fast_inputs(int(round(seconds * 100)))
    for config in CONFIGS:  # JIT
        run_config(model, {k: v[:8] for k, v in inputs.items()}, np.zeros((8, 3)), config)
    shoot = QuasiStaticSim(model, "shooting", record_shape=False).run(inputs)
    out: dict = {"steps": len(shoot.t), "shooting_converged": bool(shoot.converged.all())}
    # The configs in turn within each repeat (paired under the same machine load).
    runs: dict = {}
    for _ in range(repeats):
        for config in CONFIGS:
            found = run_config(model, inputs, shoot.tip_position, config)
            if found is not None:
                runs.setdefault(config, []).append(found)
    for (m, rtol, broyden, stride), found in runs.items():
        out[f"max_updates={m} rtol={rtol:g} broyden={broyden} predictor_stride={stride}"] = {
            "err_max_m (after 5 steps)": found[-1]["err_max_m"],
            "err_median_m": found[-1]["err_median_m"],
            "wall_ms_median (per repeat)": [round(f["wall_ms_median"], 4) for f in found],
            "cpu_ms_median (per repeat)": [round(f["cpu_ms_median"], 4) for f in found],
            "wall_ms_min": round(min(f["wall_ms_min"] for f in found), 4),
            "wall_ms_p95 (per repeat)": [round(f.get("wall_ms_p95", np.nan), 4) for f in found],
        }
    if "--floor" in sys.argv:
        out["floor (best of 300 calls)"] = floor(model, inputs)
    if "--profile" in sys.argv:
        out["profile (best of 400 calls)"] = profile(model, inputs)
    print(json.dumps(out, indent=1))
