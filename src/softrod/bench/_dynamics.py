"""`softrod bench dynamics`: speed and accuracy of the LGVI on the release test, with PyElastica.

Release test: a cantilever held by a small tip force (static solution), released undamped, no
gravity. Cases: the TPU rod (0.4 m, soft) and the spring-steel rod (0.6 m), 20 elements, the
automatic step. Metrics: real-time factor (simulated / wall seconds, one thread, after JIT),
first-mode frequency error against Euler-Bernoulli, relative energy drift, the time per step
with Kelvin-Voigt damping (`strain_damping`), and for the steel rod the step and first-mode shift
with x1000 rotary inertia; the TPU rod and issue 21's steel_seed002 case also run with the
implicit step (`integrator="implicit"`). PyElastica (an optional external reference, `pip install
pyelastica`) runs the same rod, same elements and the same step; its clamp fixes the first
element's directors, i.e. shortens the rod by half an element, which raises its frequency by
about (1 - 1/(2N))^-2 (5 % at N = 20).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from softrod.description import RobotSpec, find_robot, load_robot
from softrod.dynamics import IMPLICIT_DAMPING, euler_bernoulli_f1, oscillation, simulate_dynamic
from softrod.rods import solve_static

__all__ = ["IMPLICIT_CASES", "RELEASE_CASES", "run_dynamics_bench"]


def _shipped(name: str) -> RobotSpec:
    """A seed-002 validation rod from its shipped description (softrod/data/robots), as one
    uniform segment of its total length: the shipped split at L/2 serves the MuJoCo protocol's
    mid wrench, and a node there would change the release's static start (steel: 6th digit)."""
    spec = load_robot(find_robot(name))
    data = spec.to_dict()
    data["segments"] = [{**data["segments"][0], "length": spec.total_length}]
    return load_robot(data)


#: The seed-002 validation rods (ALGORITHMS.md §C.3): TPU 0.4 m, spring steel 0.6 m.
TPU_ROD = _shipped("tpu_rod")
STEEL_ROD = _shipped("spring_steel_rod")

#: Kelvin-Voigt damping time [s] of the per-step cost measurement (SoRoSim's TPU records' value;
#: the cost does not depend on it) and the fraction of each case's duration it runs for.
BENCH_STRAIN_DAMPING = 3e-3
STRAIN_DAMPING_FRACTION = 0.1
#: Rotary-inertia factor of the steel case's second run (the default of the SoRoSim release
#: study, `softrod.validate._dynamics.LGVI_ROTARY_INERTIA_SCALE`): step and first-mode shift.
STEEL_ROTARY_INERTIA_SCALE = 1000.0

#: name -> (robot, tip force [N] for the initial deflection, simulated seconds for accuracy,
#: simulated seconds for PyElastica's speed). "steel_seed002" is issue 21's target: seed 002's
#: steel rod released from a 11 mm (1.8 % L) tip deflection, undamped, over 2 s.
RELEASE_CASES = {
    "tpu_rod": (TPU_ROD, 0.05, 2.0, 1.2),
    "steel_rod": (STEEL_ROD, 0.01, 0.8, 0.002),
    "steel_seed002": (STEEL_ROD, 0.01, 2.0, 0.002),
}


#: Cases also run with `integrator="implicit"` (issue 21): keys `lgvi.<case>.implicit.*` (default
#: numerical damping, `IMPLICIT_DAMPING`) and `lgvi.<case>.implicit_undamped.*`
#: (implicit_damping=0; the same run, not repeated, while the default is 0);
#: `lgvi.<case>.auto_implicit` is 1 where `integrator="auto"` (the default) takes the implicit step.
IMPLICIT_CASES = ("tpu_rod", "steel_seed002")
#: Issue 21's tendon robots in dynamics: the tip tendon (input 6, anchored at the tip of
#: segment 3) stepped to 2 N from the straight rest, Kelvin-Voigt beta = 2 ms, 30 elements,
#: 2 s at the default (auto) step: the runs dev/tendon_step_mujoco.py compares with the chain.
TENDON_STEP_ROBOTS = ("tdcr3", "ftdcr_v4")
TENDON_STEP = (6, 2.0, 2e-3, 30, 2.0)


def _section(robot: RobotSpec) -> tuple[float, float, float, float, float]:
    """E [Pa], G [Pa], density [kg/m^3], radius [m] and length [m] of a uniform round rod."""
    bb = robot.backbone
    E, nu, rho, r = bb.youngs_modulus, bb.poisson_ratio, bb.density, bb.radius
    if nu is None or r is None:
        raise ValueError(f"{robot.name}: the release test needs poisson_ratio and radius")
    L = sum(s.length for s in robot.segments)
    return E, E / (2 * (1 + nu)), rho, r, L


def _pyelastica_release(robot: RobotSpec, static, n_el: int, dt: float, duration: float):
    """(t, tip x, wall seconds) of PyElastica on the same release; raises ImportError."""
    import elastica as ea

    E, G, rho, r, L = _section(robot)

    class _Sim(ea.BaseSystemCollection, ea.Constraints):
        pass

    sim = _Sim()
    rod = ea.CosseratRod.straight_rod(
        n_el, np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), L, r, rho,
        youngs_modulus=E, shear_modulus=G,
    )  # fmt: skip
    sim.append(rod)
    sim.constrain(rod).using(
        ea.OneEndFixedBC, constrained_position_idx=(0,), constrained_director_idx=(0,)
    )
    sim.finalize()
    # Initial shape: static positions at its nodes, frames at its element midpoints.
    s_nodes = np.linspace(0, L, n_el + 1)
    s_mid = 0.5 * (s_nodes[1:] + s_nodes[:-1])
    for c in range(3):
        rod.position_collection[c] = np.interp(s_nodes, static.s, static.positions[:, c])
    for k, sm in enumerate(s_mid):
        i = int(np.clip(np.searchsorted(static.s, sm) - 1, 0, static.s.size - 1))
        rod.director_collection[:, :, k] = static.rotations[i].T
    stepper = ea.PositionVerlet()
    n = int(math.ceil(duration / dt))
    every = max(1, int(round(1e-3 / dt)))
    ts, xs = [0.0], [float(rod.position_collection[0, -1])]
    t = 0.0
    for _ in range(3):  # JIT warm-up on a copy of the state
        stepper.step(sim, t, 1e-12)
    t0 = time.perf_counter()
    for i in range(n):
        t = stepper.step(sim, t, dt)
        if (i + 1) % every == 0:
            ts.append(t)
            xs.append(float(rod.position_collection[0, -1]))
    return np.array(ts), np.array(xs), time.perf_counter() - t0


def run_dynamics_bench(elements: int = 20, pyelastica: bool = True) -> dict[str, float]:
    """Run the release benchmark; returns {"case.metric": value}."""
    out: dict[str, float] = {}
    simulate_dynamic(TPU_ROD, 1e-3, integrator="explicit")  # JIT warm-up
    simulate_dynamic(TPU_ROD, 1e-2, integrator="implicit")
    for name, (robot, force, dur, dur_pe) in RELEASE_CASES.items():
        E, G, rho, r, L = _section(robot)
        EI = E * math.pi * r**4 / 4
        rho_A = rho * math.pi * r**2
        f_eb = euler_bernoulli_f1(EI, rho_A, L)
        st = solve_static(load_robot(robot), tip_force=[force, 0.0, 0.0])
        res = simulate_dynamic(robot, dur, initial=st, elements=elements, integrator="explicit")
        f, _ = oscillation(res.t, res.tip_position[:, 0], center=0.0)
        drift = float(np.max(np.abs(res.energy - res.energy[0])) / abs(res.energy[0]))
        key = f"lgvi.{name}"
        out[f"{key}.elements"] = float(elements)
        out[f"{key}.dt_s"] = res.dt
        out[f"{key}.real_time_factor"] = res.real_time_factor
        out[f"{key}.us_per_step"] = res.wall_time / res.n_steps * 1e6
        out[f"{key}.f1_hz"] = f
        out[f"{key}.f1_euler_bernoulli_hz"] = f_eb
        out[f"{key}.f1_rel_error"] = f / f_eb - 1
        out[f"{key}.energy_drift_rel"] = drift
        if name in IMPLICIT_CASES:
            # Issue 21: the stepper that "auto" takes, and the implicit step on the same
            # release with its default settings and undamped (the purely variational step).
            auto = simulate_dynamic(robot, 1e-3, initial=st, elements=elements)
            out[f"{key}.auto_implicit"] = float(auto.extra["integrator"] == "implicit")
            imp = None
            for label, damping in (("implicit", IMPLICIT_DAMPING), ("implicit_undamped", 0.0)):
                if imp is not None and damping == IMPLICIT_DAMPING:
                    # The default is the undamped step: the same run, keys copied.
                    for k in [k for k in out if k.startswith(f"{key}.implicit.")]:
                        out[k.replace(".implicit.", f".{label}.")] = out[k]
                    continue
                imp = simulate_dynamic(
                    robot,
                    dur,
                    initial=st,
                    elements=elements,
                    integrator="implicit",
                    implicit_damping=damping,
                )
                f_i, _ = oscillation(imp.t, imp.tip_position[:, 0], center=0.0)
                e_i = imp.energy
                ikey = f"{key}.{label}"
                out[f"{ikey}.dt_s"] = imp.dt
                out[f"{ikey}.real_time_factor"] = imp.real_time_factor
                out[f"{ikey}.us_per_step"] = imp.wall_time / imp.n_steps * 1e6
                out[f"{ikey}.newton_iterations_per_step"] = (
                    imp.extra["newton_iterations"] / imp.n_steps
                )
                out[f"{ikey}.f1_rel_error"] = f_i / f_eb - 1
                out[f"{ikey}.energy_drift_rel"] = float(np.max(np.abs(e_i - e_i[0])) / abs(e_i[0]))
            # CPU seconds of this process: the one-thread rate even on a shared machine.
            t0, c0 = time.perf_counter(), time.process_time()
            simulate_dynamic(robot, dur, initial=st, elements=elements)
            out[f"{key}.auto.real_time_factor"] = dur / (time.perf_counter() - t0)
            out[f"{key}.auto.cpu_real_time_factor"] = dur / (time.process_time() - c0)
        # The same release with Kelvin-Voigt damping: the cost of the implicit solve per step.
        damped = simulate_dynamic(
            robot,
            STRAIN_DAMPING_FRACTION * dur,
            initial=st,
            elements=elements,
            strain_damping=BENCH_STRAIN_DAMPING,
            integrator="explicit",
        )
        out[f"{key}.strain_damping_us_per_step"] = damped.wall_time / damped.n_steps * 1e6
        if name == "steel_rod":
            # Heavier rotary inertia lengthens the step of the thin steel rod (shear-rotation
            # mode) at a small cost in the bending frequency.
            heavy = simulate_dynamic(
                robot,
                dur,
                initial=st,
                elements=elements,
                rotary_inertia_scale=STEEL_ROTARY_INERTIA_SCALE,
                integrator="explicit",
            )
            f_h, _ = oscillation(heavy.t, heavy.tip_position[:, 0], center=0.0)
            hkey = f"{key}.rotary_x{STEEL_ROTARY_INERTIA_SCALE:.0f}"
            out[f"{hkey}.dt_s"] = heavy.dt
            out[f"{hkey}.f1_shift_rel"] = f_h / f - 1
        if not pyelastica:
            continue
        try:
            t_pe, x_pe, wall = _pyelastica_release(robot, st, elements, res.dt, dur_pe)
        except ImportError:
            out["pyelastica.available"] = 0.0
            continue
        out["pyelastica.available"] = 1.0
        pkey = f"pyelastica.{name}"
        out[f"{pkey}.real_time_factor"] = float(t_pe[-1] / wall)
        out[f"{pkey}.us_per_step"] = wall / int(math.ceil(dur_pe / res.dt)) * 1e6
        out[f"{pkey}.lgvi_speedup_x"] = res.real_time_factor / out[f"{pkey}.real_time_factor"]
        if dur_pe >= 0.2:
            try:
                f_pe, _ = oscillation(t_pe, x_pe, center=0.0)
                out[f"{pkey}.f1_rel_error"] = f_pe / f_eb - 1
            except ValueError:
                pass
    out.update(_tendon_step_cases())
    return out


def _tendon_step_cases() -> dict[str, float]:
    """tdcr3 and ftdcr_v4 under a tip-tendon step at the default (auto) step: real time
    factor by the wall clock and by this process's CPU time (one thread)."""
    tendon, tension, beta, n_el, dur = TENDON_STEP
    out: dict[str, float] = {}
    for name in TENDON_STEP_ROBOTS:
        robot = load_robot(find_robot(name))
        tensions = np.zeros(sum(len(s.tendons) for s in robot.segments))
        tensions[tendon] = tension
        kw: dict[str, Any] = dict(
            tensions=tensions, strain_damping=beta, elements=n_el, sample_dt=1e-2
        )
        simulate_dynamic(robot, 0.01, **kw)  # warm: numba's cache, the step's setup
        t0, c0 = time.perf_counter(), time.process_time()
        res = simulate_dynamic(robot, dur, **kw)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        key = f"lgvi.tendon_step.{name}"
        out[f"{key}.success"] = float(res.success)
        out[f"{key}.implicit"] = float(res.extra["integrator"] == "implicit")
        out[f"{key}.dt_s"] = res.dt
        out[f"{key}.real_time_factor"] = dur / wall
        out[f"{key}.cpu_real_time_factor"] = dur / cpu
    return out
