"""`softrod bench mujoco`: accuracy and speed of the rigid-link chain (data plus one runner).

Prints `case.metric: value` lines and writes, under `out_dir`:
report.md (tables), results.json (every number), static_convergence.png (log-log tip error vs N)
and speed_accuracy.png (real-time factor beside accuracy).
"""

from __future__ import annotations

import json
import math
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from softrod.description import RobotSpec, find_robot, load_robot
from softrod.mujoco import build_spec, static_equilibrium
from softrod.rods import solve_static
from softrod.validate import CHAIN_MATERIALS as MATERIALS
from softrod.validate import (
    euler_bernoulli_frequency,
    free_oscillation,
    material_robot,
    static_errors,
    tendon_tip,
)

__all__ = [
    "TARGETS",
    "BenchConfig",
    "bench_units",
    "contact_spec",
    "plot_static",
    "run_mujoco_bench",
    "tdcr3_robot",
]

#: Issue-3 targets: static tip error at N = 50 [fraction of L], first-mode frequency error at
#: N = 50, real-time factors at 30 links (free, in contact).
TARGETS = {
    "static_mean_n50": 1e-3,
    "static_max_n50": 5e-3,
    "frequency_n50": 1e-2,
    "rtf_free_n30": 10.0,
    "rtf_contact_n30": 5.0,
}


def tdcr3_robot() -> RobotSpec:
    """The 3-segment, 9-tendon seed-002 TDCR (shipped `tdcr3`, ALGORITHMS.md §C.4)."""
    return load_robot(find_robot("tdcr3"))


#: Speed-case tensions [N]: segment 1 and 2 pull toward +x, bending the TDCR into the box.
SPEED_TENSIONS = (2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
#: Box the TDCR presses against in the contact case: half sizes and centre [m]. Its face at
#: x = 0.02 m stops the pulled TDCR (free tip x about 0.056 m) over several disks.
CONTACT_BOX = ((0.01, 0.03, 0.06), (0.03, 0.0, 0.14))
#: Samples of the TPU-with-slides variant of the static protocol.
SLIDES_SAMPLES = 100
#: Tension ramp time [s] (a step input can push links through a thin object in one step).
RAMP_TIME = 0.5
#: The tension pattern and gravity of the TDCR accuracy case (beside the speed numbers).
ACCURACY_TENSIONS = (2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def contact_spec(links: int, box: bool = True, **options: Any) -> mujoco.MjSpec:
    """The speed-case model: tdcr3 at `links`, optionally with the box it presses against."""
    spec = build_spec(tdcr3_robot(), links=links, **options)
    if box:
        half, centre = CONTACT_BOX
        spec.worldbody.add_geom(
            name="box",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=list(half),
            pos=list(centre),
            rgba=[0.5, 0.6, 0.7, 1.0],
            contype=1,
            conaffinity=(1 << 31) - 1,
        )
    return spec


@dataclass(frozen=True)
class BenchConfig:
    """What `run_mujoco_bench` measures; defaults are the full issue-3 protocol."""

    samples: int = 500
    static_links: tuple[int, ...] = (10, 25, 50, 100)
    speed_links: tuple[int, ...] = (20, 30, 50)
    dynamic_links: tuple[int, ...] = (10, 25, 50, 100)
    tendon_links: tuple[int, ...] = (10, 20, 40, 80)
    speed_seconds: float = 2.0
    speed_repeats: int = 3
    seed: int = 0

    @classmethod
    def quick(cls) -> BenchConfig:
        return cls(
            samples=20,
            static_links=(10, 25, 50),
            dynamic_links=(25, 50),
            tendon_links=(10, 20, 40),
            speed_seconds=0.5,
            speed_repeats=2,
        )


def _rtf(links: int, box: bool, seconds: float, repeats: int) -> tuple[float, float, int]:
    """Real-time factors of mj_step over `seconds` of simulation, best of `repeats`.

    Returns (RTF from this thread's CPU time, RTF from wall time, contacts at the end). The CPU
    time figure is the one checked: on a shared machine wall time also counts other processes.
    """
    model = contact_spec(links, box=box).compile()
    data = mujoco.MjData(model)
    # Ramp the tensions up over RAMP_TIME and settle: speed is measured in steady contact.
    while data.time < 2 * RAMP_TIME:
        data.ctrl[:] = np.asarray(SPEED_TENSIONS) * min(1.0, data.time / RAMP_TIME)
        mujoco.mj_step(model, data)
    n = max(1, int(round(seconds / model.opt.timestep)))
    best_cpu = best_wall = math.inf
    for _ in range(repeats):
        c0, w0 = time.thread_time(), time.perf_counter()
        for _ in range(n):
            mujoco.mj_step(model, data)
        best_cpu = min(best_cpu, time.thread_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    sim = n * model.opt.timestep
    return sim / max(best_cpu, 1e-9), sim / best_wall, int(data.ncon)


def _tdcr_accuracy(links: int, reference: np.ndarray) -> float:
    """Tip error [fraction of L] of tdcr3 under ACCURACY_TENSIONS and gravity vs shooting."""
    robot = tdcr3_robot()
    model = build_spec(robot, links=links).compile()
    data = mujoco.MjData(model)
    data.ctrl[:] = ACCURACY_TENSIONS
    res = static_equilibrium(model, data)
    if not res.success:
        raise RuntimeError(f"tdcr3 equilibrium failed at N = {links}: {res.message}")
    tip = data.site("tip").xpos
    return float(np.linalg.norm(tip - reference) / robot.total_length)


def _slope(ns: Sequence[int], values: Sequence[float]) -> float:
    return float(np.polyfit(np.log(ns), np.log(values), 1)[0])


def run_mujoco_bench(
    out_dir: Path,
    config: BenchConfig | None = None,
    emit: Callable[[str], None] = print,
    advance: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the benchmark, print `case.metric: value` lines through `emit`, write the report.

    `advance(description)` is called once per unit of work (for a progress bar); the number of
    units is `bench_units(config)`.
    """
    cfg = config or BenchConfig()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    step = advance or (lambda _desc: None)
    results: dict[str, Any] = {
        "config": cfg.__dict__,
        "machine": {
            "python": platform.python_version(),
            "mujoco": mujoco.__version__,
            "processor": platform.processor() or platform.machine(),
        },
        "targets": TARGETS,
    }

    def line(key: str, value: float | int | str) -> None:
        text = f"{value:.6g}" if isinstance(value, float) else str(value)
        emit(f"{key}: {text}")

    # Static protocol (§C.3).
    rng = np.random.default_rng(cfg.seed)
    static: dict[str, Any] = {}
    for material in MATERIALS:
        t0 = time.perf_counter()
        errs = static_errors(material, cfg.static_links, cfg.samples, rng)
        wall = time.perf_counter() - t0
        rows = {}
        for n, e in errs.items():
            rows[n] = {
                "mean": float(e.mean()),
                "p95": float(np.percentile(e, 95)),
                "max": float(e.max()),
            }
            for k, v in rows[n].items():
                line(f"static.{material}.n{n}.{k}_pct", 100 * v)
        slope = _slope(list(rows), [r["mean"] for r in rows.values()])
        line(f"static.{material}.slope", slope)
        static[material] = {"rows": rows, "slope": slope, "wall_s": wall}
        step(f"static {material}")
    results["static"] = static
    # The TPU floor above is shear and extension, which the Kirchhoff chain leaves out; the
    # chain with shear and axial slides (cosserat) converges at second order again.
    # 6 DOF per joint makes these equilibria ~5x dearer: at most SLIDES_SAMPLES samples.
    errs = static_errors(
        "tpu",
        cfg.static_links,
        min(cfg.samples, SLIDES_SAMPLES),
        np.random.default_rng(cfg.seed + 1),
        axial=True,
        shear=True,
    )
    rows = {
        n: {"mean": float(e.mean()), "p95": float(np.percentile(e, 95)), "max": float(e.max())}
        for n, e in errs.items()
    }
    for n, row in rows.items():
        line(f"static.tpu_slides.n{n}.mean_pct", 100 * row["mean"])
        line(f"static.tpu_slides.n{n}.max_pct", 100 * row["max"])
    slope = _slope(list(rows), [r["mean"] for r in rows.values()])
    line("static.tpu_slides.slope", slope)
    results["static_slides"] = {"tpu": {"rows": rows, "slope": slope}}
    step("static tpu + slides")

    # Tendons: single segment, pure tension bending 90 deg, vs shooting and constant curvature.
    bend = _tendon_bend_robot()
    T = _tendon_bend_tension(bend)
    ref = solve_static(bend, tensions=[T]).tip_position
    pcc = solve_static(bend, tensions=[T], method="pcc").tip_position
    L = bend.total_length
    tendon_rows = {}
    for n in cfg.tendon_links:
        tip = tendon_tip(bend, [T], n)
        tendon_rows[n] = {
            "vs_shooting": float(np.linalg.norm(tip - ref) / L),
            "vs_pcc": float(np.linalg.norm(tip - pcc) / L),
        }
        for k, v in tendon_rows[n].items():
            line(f"tendon.single.n{n}.{k}_pct", 100 * v)
    slope_t = _slope(list(tendon_rows), [r["vs_shooting"] for r in tendon_rows.values()])
    line("tendon.single.slope", slope_t)
    # Three segments, all tendon groups pulling (gravity off), vs shooting.
    tdcr = tdcr3_robot()
    tens = [1.0, 0.0, 0.0, 0.0, 0.8, 0.0, 0.0, 0.0, 0.6]
    ref3 = solve_static(tdcr, tensions=tens).tip_position
    multi = {}
    for n in (15, 30, 60):
        tip = tendon_tip(tdcr, tens, n)
        multi[n] = float(np.linalg.norm(tip - ref3) / tdcr.total_length)
        line(f"tendon.tdcr3.n{n}.vs_shooting_pct", 100 * multi[n])
    results["tendon"] = {
        "single": {
            "tension_N": T,
            "rows": tendon_rows,
            "slope": slope_t,
            "pcc_vs_shooting": float(np.linalg.norm(pcc - ref) / L),
        },
        "tdcr3": {"tensions_N": tens, "rows": multi},
    }
    step("tendons")

    # Dynamics: first-mode frequency after release, vs Euler-Bernoulli.
    dyn: dict[str, Any] = {}
    for material in MATERIALS:
        robot = material_robot(material)
        f_eb = euler_bernoulli_frequency(robot)
        rows = {}
        for n in cfg.dynamic_links:
            osc = free_oscillation(robot, n, duration=min(4.0, 12.0 / f_eb))
            rows[n] = {
                "frequency_hz": osc.frequency,
                "rel_error": osc.frequency / f_eb - 1,
                "damping_ratio": osc.damping_ratio,
            }
            line(f"dynamics.{material}.n{n}.freq_err_pct", 100 * rows[n]["rel_error"])
            line(f"dynamics.{material}.n{n}.damping_ratio", osc.damping_ratio)
        dyn[material] = {"euler_bernoulli_hz": f_eb, "rows": rows}
        step(f"dynamics {material}")
    results["dynamics"] = dyn

    # Speed beside accuracy: tdcr3, dt 2 ms, free and pressed against a box.
    tdcr_ref = solve_static(
        tdcr3_robot(), tensions=ACCURACY_TENSIONS, gravity=(0.0, 0.0, -9.81)
    ).tip_position
    speed = {}
    for n in cfg.speed_links:
        free, free_wall, _ = _rtf(n, False, cfg.speed_seconds, cfg.speed_repeats)
        contact, contact_wall, ncon = _rtf(n, True, cfg.speed_seconds, cfg.speed_repeats)
        acc = _tdcr_accuracy(n, tdcr_ref)
        speed[n] = {
            "rtf_free": free,
            "rtf_contact": contact,
            "rtf_free_wall": free_wall,
            "rtf_contact_wall": contact_wall,
            "contacts": ncon,
            "tdcr3_tip_error": acc,
        }
        line(f"speed.tdcr3.n{n}.rtf_free", free)
        line(f"speed.tdcr3.n{n}.rtf_contact", contact)
        line(f"speed.tdcr3.n{n}.rtf_free_wall", free_wall)
        line(f"speed.tdcr3.n{n}.rtf_contact_wall", contact_wall)
        line(f"speed.tdcr3.n{n}.contacts", ncon)
        line(f"speed.tdcr3.n{n}.tip_error_pct", 100 * acc)
        step(f"speed N={n}")
    results["speed"] = speed

    results["checks"] = _checks(results)
    for k, v in results["checks"].items():
        line(f"check.{k}", "pass" if v else "FAIL")
    (out_dir / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    _plot(results, out_dir)
    (out_dir / "report.md").write_text(_report(results))
    results["files"] = {
        "report": str(out_dir / "report.md"),
        "results": str(out_dir / "results.json"),
        "static_plot": str(out_dir / "static_convergence.png"),
        "speed_plot": str(out_dir / "speed_accuracy.png"),
    }
    return results


def bench_units(config: BenchConfig) -> int:
    """Units of work `run_mujoco_bench` reports through `advance`."""
    return 2 * len(MATERIALS) + 2 + len(config.speed_links)


def _tendon_bend_robot() -> RobotSpec:
    """One 0.1 m Kirchhoff segment, NiTi-like, one tendon at 4.5 mm (tendon check)."""
    return load_robot(
        {
            "name": "one_tendon",
            "backbone": {
                "youngs_modulus": 60e9,
                "poisson_ratio": 0.33,
                "density": 6450.0,
                "radius": 0.0005,
            },
            "segments": [
                {
                    "length": 0.1,
                    "disks": 10,
                    "disk_radius": 0.005,
                    "tendons": [{"offset": 0.0045, "angle_deg": 0.0}],
                }
            ],
        }
    )


def _tendon_bend_tension(robot: RobotSpec) -> float:
    """Tension [N] that bends the segment by 90 deg (constant curvature: kappa = T d / EI)."""
    bb = robot.backbone
    seg = robot.segments[0]
    kappa = (math.pi / 2) / seg.length
    return kappa * bb.youngs_modulus * bb.I / seg.tendons[0].offset


def _checks(r: dict[str, Any]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for material, data in r["static"].items():
        row = data["rows"].get(50)
        if row is not None:
            out[f"static_{material}_mean_n50"] = row["mean"] <= TARGETS["static_mean_n50"]
            out[f"static_{material}_max_n50"] = row["max"] <= TARGETS["static_max_n50"]
    for material, data in r["dynamics"].items():
        row = data["rows"].get(50)
        if row is not None:
            out[f"frequency_{material}_n50"] = abs(row["rel_error"]) <= TARGETS["frequency_n50"]
    row = r["speed"].get(30)
    if row is not None:
        out["rtf_free_n30"] = row["rtf_free"] >= TARGETS["rtf_free_n30"]
        out["rtf_contact_n30"] = row["rtf_contact"] >= TARGETS["rtf_contact_n30"]
    return out


def plot_static(
    static: dict[str, Any],
    path: Path,
    slides: dict[str, Any] | None = None,
    title: str = "MuJoCo chain vs exact rod (seed-002 static protocol)",
) -> Path:
    """Log-log tip error (mean, p95, max; % of length) vs N per material, with a slope -2 guide.

    static : {material: {"rows": {N: {"mean", "p95", "max"}}, "slope": float}}; slides : the same
    for the chain with shear/axial slides (drawn as a mean curve), optional.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    colors = {"spring_steel": "tab:blue", "tpu": "tab:orange"}
    for material, data in static.items():
        ns = np.array(sorted(data["rows"]))
        for key, style in (("mean", "-o"), ("p95", "--s"), ("max", ":^")):
            vals = np.array([100 * data["rows"][n][key] for n in ns])
            label = f"{material} {key}"
            if key == "mean":
                label += f" (slope {data['slope']:.2f})"
            ax.loglog(ns, vals, style, color=colors.get(material), ms=4, label=label)
    if slides is not None:
        for material, data in slides.items():
            ns = np.array(sorted(data["rows"]))
            ax.loglog(
                ns,
                [100 * data["rows"][n]["mean"] for n in ns],
                "-.d",
                color="tab:purple",
                ms=4,
                label=f"{material} + shear/axial slides mean (slope {data['slope']:.2f})",
            )
    first = next(iter(static.values()))["rows"]
    ns = np.array(sorted(first))
    start = 100 * first[int(ns[0])]["mean"]
    ax.loglog(ns, start * (ns / ns[0]) ** -2.0, color="0.5", lw=0.8, label="slope -2")
    ax.axhline(
        100 * TARGETS["static_mean_n50"],
        color="tab:green",
        lw=0.8,
        ls="-.",
        label="target: mean at N = 50",
    )
    ax.axhline(
        100 * TARGETS["static_max_n50"],
        color="tab:red",
        lw=0.8,
        ls="-.",
        label="target: max at N = 50",
    )
    ax.set_xlabel("links N")
    ax.set_ylabel("tip error [% of length]")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def _plot(r: dict[str, Any], out_dir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot_static(r["static"], out_dir / "static_convergence.png", r.get("static_slides"))
    fig, ax1 = plt.subplots(figsize=(6.4, 4.2))
    ns = sorted(r["speed"])
    ax1.plot(ns, [r["speed"][n]["rtf_free"] for n in ns], "-o", label="RTF free")
    ax1.plot(ns, [r["speed"][n]["rtf_contact"] for n in ns], "-s", label="RTF in contact")
    ax1.axhline(1.0, color="k", lw=0.8)
    ax1.set_xlabel("links N")
    ax1.set_ylabel("real-time factor (dt 2 ms, 1 thread)")
    ax2 = ax1.twinx()
    ax2.semilogy(
        ns,
        [100 * r["speed"][n]["tdcr3_tip_error"] for n in ns],
        "-^",
        color="tab:red",
        label="tdcr3 tip error",
    )
    ax2.set_ylabel("tdcr3 tip error [% of length]", color="tab:red")
    ax1.legend(loc="upper right", fontsize=8)
    ax1.set_title("tdcr3: speed beside accuracy")
    fig.tight_layout()
    fig.savefig(out_dir / "speed_accuracy.png", dpi=150)
    plt.close(fig)


def _report(r: dict[str, Any]) -> str:
    cfg = r["config"]
    out = ["# softrod bench mujoco", ""]
    out.append(
        f"MuJoCo {r['machine']['mujoco']}, Python {r['machine']['python']}, "
        f"{r['machine']['processor']}; one thread. Samples per material: {cfg['samples']}."
    )
    out += [
        "",
        "## Static (seed-002 protocol, ALGORITHMS.md §C.3)",
        "",
        "Random gravity direction (9.81 m/s^2), random mid-point and tip wrenches (steel "
        "0.2 N / 0.08 N m, TPU 0.3 N / 0.06 N m); MuJoCo equilibrium vs softrod's exact "
        "shooting solver. Tip error in % of the rod length.",
        "",
        "| material | N | mean | p95 | max |",
        "|---|---|---|---|---|",
    ]
    for material, data in r["static"].items():
        for n, row in data["rows"].items():
            out.append(
                f"| {material} | {n} | {100 * row['mean']:.4f} | {100 * row['p95']:.4f} "
                f"| {100 * row['max']:.4f} |"
            )
        out.append(f"| {material} | slope of mean | {data['slope']:.2f} | | |")
    slides = r["static_slides"]["tpu"]
    out += [
        "",
        "TPU with shear and axial slide joints (`axial=True, shear=True`): the Kirchhoff "
        "chain's floor above is the rod's shear and extension.",
        "",
        "| material | N | mean | p95 | max |",
        "|---|---|---|---|---|",
    ]
    for n, row in slides["rows"].items():
        out.append(
            f"| tpu + slides | {n} | {100 * row['mean']:.4f} | {100 * row['p95']:.4f} "
            f"| {100 * row['max']:.4f} |"
        )
    out.append(f"| tpu + slides | slope of mean | {slides['slope']:.2f} | | |")
    out += [
        "",
        "![static convergence](static_convergence.png)",
        "",
        "## Tendons",
        "",
        f"One 0.1 m segment bent 90 deg by one tendon "
        f"({r['tendon']['single']['tension_N']:.3g} N), gravity off:",
        "",
        "| N | vs shooting [%L] | vs constant curvature [%L] |",
        "|---|---|---|",
    ]
    for n, row in r["tendon"]["single"]["rows"].items():
        out.append(f"| {n} | {100 * row['vs_shooting']:.4f} | {100 * row['vs_pcc']:.4f} |")
    out.append(f"| slope | {r['tendon']['single']['slope']:.2f} | |")
    out += [
        "",
        "tdcr3, tensions " + str(r["tendon"]["tdcr3"]["tensions_N"]) + " N:",
        "",
        "| N | vs shooting [%L] |",
        "|---|---|",
    ]
    for n, v in r["tendon"]["tdcr3"]["rows"].items():
        out.append(f"| {n} | {100 * v:.4f} |")
    out += [
        "",
        "## Dynamics (free oscillation after release, dt 2 ms)",
        "",
        "| material | N | frequency [Hz] | Euler-Bernoulli [Hz] | error | damping ratio |",
        "|---|---|---|---|---|---|",
    ]
    for material, data in r["dynamics"].items():
        for n, row in data["rows"].items():
            out.append(
                f"| {material} | {n} | {row['frequency_hz']:.4f} | "
                f"{data['euler_bernoulli_hz']:.4f} | {100 * row['rel_error']:+.3f} % | "
                f"{row['damping_ratio']:.4f} |"
            )
    out += [
        "",
        "The damping ratio at dt = 2 ms is the discrete integrator's floor omega_1 dt/2; "
        "see docs/mujoco.md.",
        "",
        "## Speed beside accuracy (tdcr3, dt 2 ms, one thread)",
        "",
        "RTF = simulated time / this thread's CPU time (wall-clock RTF in brackets; on a "
        "shared machine it also counts other processes). Tip error: tdcr3 under tensions "
        f"{list(ACCURACY_TENSIONS)} N and gravity vs the exact rod.",
        "",
        "| N | RTF free | RTF in contact | contacts | tip error [%L] |",
        "|---|---|---|---|---|",
    ]
    for n, row in r["speed"].items():
        out.append(
            f"| {n} | {row['rtf_free']:.1f} ({row['rtf_free_wall']:.1f}) | "
            f"{row['rtf_contact']:.1f} ({row['rtf_contact_wall']:.1f}) | "
            f"{row['contacts']} | {100 * row['tdcr3_tip_error']:.4f} |"
        )
    out += [
        "",
        "![speed and accuracy](speed_accuracy.png)",
        "",
        "## Checks against issue-3 targets",
        "",
    ]
    for k, v in r["checks"].items():
        out.append(f"- {k}: {'pass' if v else 'FAIL'}")
    out.append("")
    return "\n".join(out)
