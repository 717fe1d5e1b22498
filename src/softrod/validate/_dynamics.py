"""SoRoSim release time series (issue 9, dynamics).

Each file holds a rod at rest under gravity plus a mid and a tip wrench, released at t = 0, then
10 s of mid and tip motion at 200 Hz with SoRoSim's damping. softrod reproduces it twice:

* `mujoco_release`: the N-link MuJoCo chain (stiffness-proportional joint damping, discrete
  integrator, 1 ms step), held by the same wrenches through a Newton equilibrium, then released;
* `lgvi_release`: softrod's variational integrator (issue 5) from the static solver's held
  shape, with Kelvin-Voigt (strain-rate) damping or mass-proportional viscous damping
  c = 2 zeta omega_1 rho A (modal ratio zeta in the first mode).

Damping. SoRoSim's rods are Kelvin-Voigt: the cross-section damping matrix is a viscosity Eta
[Pa s] times the section's area moments (3 Eta I in bending, like E I in the stiffness), i.e.
damping = beta x stiffness, modal ratio zeta_n = beta omega_n / 2. The number in the files'
first line ("damping ratio") behaves as beta itself, in seconds (`SOROSIM_DAMPING`): the
records' first-mode ratio is the stated number times omega_1 / 2 (steel: 9.5-9.9 measured vs
9.8 predicted by the unloaded rod; TPU 6.1-7.7 vs omega_el^2 / (2 omega) = 6.1-7.4 with omega
the record's own, gravity-shifted frequency: Kelvin-Voigt damps only the elastic part of the
stiffness). `damping="sorosim"` uses this mapping, with nothing fitted to any record.

Metrics (`ReleaseComparison`): tip error over time in % of L (mean and max), dominant frequency
of the tip motion about its final position (FFT peak) and the decay (RMS amplitude of the last
2 s over the first 2 s) for reference and model.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from softrod.datasets import SorosimRelease, load_sorosim_release
from softrod.validate._records import RecordCache, cached, write_text_atomic
from softrod.validate._sorosim import sorosim_robot

__all__ = [
    "ReleaseComparison",
    "compare_release",
    "effective_damping_ratio",
    "lgvi_release",
    "mujoco_release",
    "release_study",
    "sorosim_damping_time",
]

#: MuJoCo step for the releases [s]: 5 steps per 200 Hz sample; the first bending periods of the
#: rods are 0.4-1 s, so the discrete integrator's numerical damping (beta = dt) is < 0.01 zeta.
RELEASE_TIMESTEP = 1e-3
#: First-mode eigenvalue of a clamped-free beam, (beta_1 L)^2.
BETA1_SQ = 1.8751**2
#: Window [s] for the decay measure (start and end of the 10 s record).
DECAY_WINDOW = 2.0
#: The "damping" options: the file's number as a first-mode ratio ("file"), the record's own
#: decay ("fitted", for diagnosis only), SoRoSim's Kelvin-Voigt model with beta = the file's
#: number in seconds ("sorosim"), or a first-mode ratio (a number).
SOROSIM_DAMPING = "sorosim"
#: Rotary-inertia factor of the LGVI per rod. The 0.8 mm steel rod's shear-rotation mode
#: limits the automatic step to 1.3e-7 s; x1000 lifts it to the axial limit 3.0e-6 s and lowers
#: the 20-element model's first two bending frequencies by 0.11 % and 0.75 % (`linear_modes`;
#: O(scale (r / L)^2), (r / L)^2 = 1.8e-6). TPU (r / L = 1/80) keeps the physical inertia: x10
#: would already cost 0.08 % / 0.6 % for a 2.7x longer step.
LGVI_ROTARY_INERTIA_SCALE = {"steel": 1000.0, "tpu": 1.0}
#: LGVI elements per rod in `release_study`. The error converges at about second order (TPU
#: release 1: 4.22 / 1.20 / 0.48 % of L mean at 10 / 20 / 40 elements); 40 puts every TPU
#: record under the 1 % target. Steel at 20 elements and x1000 rotary inertia (~25 s a record)
#: averages 0.44 % but releases 7, 9 and 10 (the largest swings) exceed 0.5 % by phase drift.
LGVI_ELEMENTS = {"steel": 20, "tpu": 40}
#: LGVI elements per rod when the step is not forced explicit ("implicit" or "auto", the CLI's
#: default): the implicit step at the physical rotary inertia puts every steel record under
#: 0.5 % at 40 elements (mean 0.14 %; 0.30 % and 8/10 at 20) in a few seconds a record; "auto"
#: keeps the TPU rod on the explicit step (same run as LGVI_ELEMENTS).
LGVI_IMPLICIT_ELEMENTS = {"steel": 40, "tpu": 40}
#: The accurate setting (`softrod validate sorosim --lgvi-fine`): steel at 40 elements and x100
#: rotary inertia puts every steel record under 0.5 % (mean 0.13 %) at ~100 s a record.
LGVI_FINE_ELEMENTS = {"steel": 40, "tpu": 40}
LGVI_FINE_ROTARY_INERTIA_SCALE = {"steel": 100.0, "tpu": 1.0}
#: SoRoSim release records per rod in the vendored data.
RELEASES = tuple(range(1, 11))


@dataclass(frozen=True)
class ReleaseComparison:
    """Model vs SoRoSim for one release. Errors in % of L, frequencies in Hz."""

    material: str
    index: int
    model: str
    mean_error_pct: float
    max_error_pct: float
    freq_ref: float
    freq_model: float
    decay_ref: float
    decay_model: float
    seconds: float
    t: np.ndarray
    tip_ref: np.ndarray
    tip_model: np.ndarray

    def summary(self) -> dict[str, float | str | int]:
        return {
            "material": self.material,
            "index": self.index,
            "model": self.model,
            "mean_error_pct": self.mean_error_pct,
            "max_error_pct": self.max_error_pct,
            "freq_ref_hz": self.freq_ref,
            "freq_model_hz": self.freq_model,
            "decay_ref": self.decay_ref,
            "decay_model": self.decay_model,
            "seconds": self.seconds,
        }


def _dominant_frequency(t: np.ndarray, x: np.ndarray) -> float:
    y = x - x[-int(len(x) * 0.2) :].mean(0)
    dt = float(t[1] - t[0])
    spec = np.zeros(len(t) // 2 + 1)
    for a in range(y.shape[1]):
        spec += np.abs(np.fft.rfft(y[:, a] * np.hanning(len(t)))) ** 2
    f = np.fft.rfftfreq(len(t), dt)
    spec[0] = 0.0
    return float(f[int(np.argmax(spec))])


def _decay(t: np.ndarray, x: np.ndarray) -> float:
    y = x - x[-int(len(x) * 0.2) :].mean(0)
    a = np.sqrt(np.mean(np.sum(y[t <= t[0] + DECAY_WINDOW] ** 2, axis=1)))
    b = np.sqrt(np.mean(np.sum(y[t >= t[-1] - DECAY_WINDOW] ** 2, axis=1)))
    return float(b / a)


def effective_damping_ratio(ref: SorosimRelease) -> float:
    """First-mode damping ratio the reference actually shows: log-linear fit of the 1-s envelope
    of the tip motion (about its final position), zeta = -slope / (2 pi f_dominant).

    The files' first line says 0.0041 (steel) / 0.003 (TPU); the records decay like 0.041 /
    0.021 (release 1): SoRoSim's damping parameter is not the first-mode ratio."""
    y = ref.tip_position - ref.tip_position[-int(len(ref.t) * 0.2) :].mean(0)
    a = np.linalg.norm(y, axis=1)
    starts = np.arange(float(ref.t[0]), float(ref.t[-1]) - 1.0 + 1e-9, 1.0)
    env = np.array([a[(ref.t >= s0) & (ref.t < s0 + 1.0)].max() for s0 in starts])
    slope = np.polyfit(starts + 0.5, np.log(env), 1)[0]
    return float(-slope / (2 * math.pi * _dominant_frequency(ref.t, ref.tip_position)))


def _zeta(ref: SorosimRelease, damping: str | float) -> float:
    if isinstance(damping, int | float):
        return float(damping)
    if damping == "file":
        return float(ref.damping_ratio)
    if damping == "fitted":
        return effective_damping_ratio(ref)
    raise ValueError(
        f"damping must be 'file', 'fitted', {SOROSIM_DAMPING!r} or a number, got {damping!r}"
    )


def sorosim_damping_time(ref: SorosimRelease) -> float:
    """SoRoSim's Kelvin-Voigt damping time beta [s] of a record: the file's first number (see
    the module docstring for the evidence)."""
    return float(ref.damping_ratio)


def _label(damping: str | float) -> str:
    return damping if isinstance(damping, str) else f"zeta{damping:.4f}"


def compare_release(
    ref: SorosimRelease, tip: np.ndarray, model: str, seconds: float
) -> ReleaseComparison:
    """Metrics of a model tip history (k, 3) sampled at ref.t."""
    err = np.linalg.norm(tip - ref.tip_position, axis=1) / ref.length * 100
    ok = np.isfinite(err)
    return ReleaseComparison(
        material=ref.material,
        index=ref.index,
        model=model,
        mean_error_pct=float(err[ok].mean()) if ok.all() else math.inf,
        max_error_pct=float(err[ok].max()) if ok.all() else math.inf,
        freq_ref=_dominant_frequency(ref.t, ref.tip_position),
        freq_model=_dominant_frequency(ref.t, tip) if ok.all() else math.nan,
        decay_ref=_decay(ref.t, ref.tip_position),
        decay_model=_decay(ref.t, tip) if ok.all() else math.nan,
        seconds=seconds,
        t=ref.t,
        tip_ref=ref.tip_position,
        tip_model=tip,
    )


def mujoco_release(
    material: str,
    index: int,
    links: int = 50,
    damping: str | float = "fitted",
    ref: SorosimRelease | None = None,
) -> ReleaseComparison:
    """Hold, release and simulate one SoRoSim release with the MuJoCo chain.

    ref : the record, already loaded (mujoco frame); default: loaded from material / index.

    damping : "file" (the ratio in the file's first line), "fitted" (`effective_damping_ratio`
    of this very record), "sorosim" (stiffness-proportional joint damping with beta = the
    file's number [s], `sorosim_damping_time`) or a number (a first-mode ratio, e.g. the ratio
    fitted on the material's other records)."""
    import mujoco

    from softrod.mujoco import PointLoad, static_equilibrium
    from softrod.validate._chain import make_model

    if ref is None:
        ref = load_sorosim_release(material, index, frame="mujoco")
    t0 = time.perf_counter()
    if damping == SOROSIM_DAMPING:
        damp = {"damping_time": sorosim_damping_time(ref)}
    else:
        damp = {"damping_ratio": _zeta(ref, damping)}
    model, data, info = make_model(
        sorosim_robot(material),
        links,
        **damp,
        timestep=RELEASE_TIMESTEP,
        gravity=tuple(float(g) for g in ref.gravity),
        contact=False,
    )
    L = ref.length
    tb, tp = info.body_point(model, L)
    mb, mp = info.body_point(model, 0.5 * L)
    loads = [
        PointLoad(tb, tp, ref.tip_force, ref.tip_moment),
        PointLoad(mb, mp, ref.mid_force, ref.mid_moment),
    ]
    res = static_equilibrium(model, data, loads)
    if not res.success:
        raise RuntimeError(f"holding equilibrium failed: {res.message}")
    site = model.site(info.tip_site).id
    data.qvel[:] = 0.0
    data.time = 0.0
    mujoco.mj_forward(model, data)
    tip = np.empty((len(ref.t), 3))
    for k, tk in enumerate(ref.t):
        while data.time < tk - 0.5 * RELEASE_TIMESTEP:
            mujoco.mj_step(model, data)
        tip[k] = data.site_xpos[site]
    return compare_release(ref, tip, f"mujoco-N{links}-{_label(damping)}", time.perf_counter() - t0)


def lgvi_release(
    material: str,
    index: int,
    rotary_inertia_scale: float | None = None,
    duration: float | None = None,
    damping: str | float = SOROSIM_DAMPING,
    elements: int | None = None,
    damping_model: str = "strain",
    ref: SorosimRelease | None = None,
    integrator: str = "explicit",
) -> ReleaseComparison:
    """Hold with the static solver, release with softrod's LGVI (issue 5); `elements` as in
    `simulate_dynamic` (default 20).

    damping : as in `mujoco_release`; "sorosim" is Kelvin-Voigt with beta = the file's number.
    damping_model : for a first-mode ratio zeta, "strain" (Kelvin-Voigt, beta = 2 zeta /
        omega_1, like the MuJoCo chain's joints) or "mass" (c = 2 zeta omega_1 rho A).
    rotary_inertia_scale : default `LGVI_ROTARY_INERTIA_SCALE` of the rod (explicit), 1 (the
        physical inertia) with the implicit step, whose step does not depend on it.
    ref : the record, already loaded (mujoco frame); default: loaded from material / index.
    integrator : `simulate_dynamic`'s ("explicit", "implicit" or "auto", docs/dynamics.md); the
        name of the comparison carries the step that ran ("-implicit")."""
    from softrod.dynamics import simulate_dynamic
    from softrod.rods import compile_model, solve_static

    if ref is None:
        ref = load_sorosim_release(material, index, frame="mujoco")
    robot = sorosim_robot(material)
    L = ref.length
    bb = robot.backbone
    t0 = time.perf_counter()
    rod = compile_model(robot, extra_nodes=(0.5 * L,))
    held = solve_static(
        rod,
        gravity=ref.gravity,
        tip_force=ref.tip_force,
        tip_moment=ref.tip_moment,
        point_loads=[(0.5 * L, ref.mid_force, ref.mid_moment)],
    )
    if not held.success:
        raise RuntimeError(f"holding equilibrium failed: {held.message}")
    omega1 = BETA1_SQ * math.sqrt(bb.youngs_modulus * bb.I / (bb.density * bb.A * L**4))
    if damping_model not in ("strain", "mass"):
        raise ValueError(f"damping_model must be 'strain' or 'mass', got {damping_model!r}")
    c, beta = 0.0, 0.0
    if damping == SOROSIM_DAMPING:
        beta = sorosim_damping_time(ref)
    elif damping_model == "strain":
        beta = 2 * _zeta(ref, damping) / omega1
    else:
        c = 2 * _zeta(ref, damping) * omega1 * bb.density * bb.A
    if rotary_inertia_scale is None:
        rotary_inertia_scale = (
            LGVI_ROTARY_INERTIA_SCALE.get(material, 1.0) if integrator == "explicit" else 1.0
        )
    T = float(ref.t[-1]) if duration is None else duration
    sim = simulate_dynamic(
        robot,
        T + 1e-9,
        initial=held,
        gravity=ref.gravity,
        damping=c,
        strain_damping=beta,
        rotary_inertia_scale=rotary_inertia_scale,
        elements=elements,
        sample_dt=float(ref.t[1] - ref.t[0]),
        integrator=integrator,
    )
    tip_sim = sim.positions[:, -1]
    tip = np.column_stack([np.interp(ref.t, sim.t, tip_sim[:, a]) for a in range(3)])
    if not sim.success:
        tip[ref.t > sim.t[-1]] = np.nan
    if duration is not None:
        keep = ref.t <= duration
        ref = _truncate(ref, keep)
        tip = tip[keep]
    name = f"lgvi-{_label(damping)}" + ("" if damping == SOROSIM_DAMPING else f"-{damping_model}")
    ran = sim.extra["integrator"]
    name += "" if ran == "explicit" else f"-{ran}"
    return compare_release(ref, tip, name, time.perf_counter() - t0)


def _truncate(ref: SorosimRelease, keep: np.ndarray) -> SorosimRelease:
    from dataclasses import replace

    return replace(
        ref,
        t=ref.t[keep],
        mid_position=ref.mid_position[keep],
        tip_position=ref.tip_position[keep],
        mid_euler=ref.mid_euler[keep],
        tip_euler=ref.tip_euler[keep],
    )


def _mujoco_row(mat: str, i: int, links: int, ref: SorosimRelease) -> dict[str, Any]:
    cmp = mujoco_release(mat, i, links=links, damping=SOROSIM_DAMPING, ref=ref)
    return {**cmp.summary(), "damping": SOROSIM_DAMPING}


def _lgvi_row(
    mat: str, i: int, ref: SorosimRelease, elements: int, inertia: float,
    integrator: str = "explicit",
) -> dict[str, Any]:  # fmt: skip
    cmp = lgvi_release(mat, i, ref=ref, damping=SOROSIM_DAMPING, elements=elements,
                       rotary_inertia_scale=inertia, integrator=integrator)  # fmt: skip
    return {**cmp.summary(), "damping": SOROSIM_DAMPING}


def release_study(
    out_dir: str | Path,
    materials: Sequence[str] = ("steel", "tpu"),
    releases: Sequence[int] = RELEASES,
    links: int = 50,
    lgvi_releases: Sequence[int] = RELEASES,
    lgvi_elements: dict[str, int] | None = None,
    lgvi_rotary_inertia_scale: dict[str, float] | None = None,
    cache: RecordCache | None = None,
    lgvi_integrator: str = "explicit",
) -> dict[str, Any]:
    """MuJoCo chain (`releases`) and LGVI (`lgvi_releases`) vs SoRoSim's release records, both
    with SoRoSim's Kelvin-Voigt damping (`damping="sorosim"`, nothing fitted to any record).
    lgvi_elements / lgvi_rotary_inertia_scale: per rod, default `LGVI_ELEMENTS` /
    `LGVI_ROTARY_INERTIA_SCALE` (explicit) or `LGVI_IMPLICIT_ELEMENTS` / 1 (implicit, auto).
    lgvi_integrator: "explicit", "implicit" or "auto" (`simulate_dynamic`'s `integrator`).

    Also one diagnostic MuJoCo run per rod with the file's number taken as the first-mode ratio
    (what it is not) and each record's effective first-mode ratio over the stated number.
    Writes sorosim_dynamics.md / .json / .png into out_dir; returns the JSON object with
    `summary` {material: {model: {releases, mean_error_pct (mean of the per-release means),
    worst_mean_error_pct, max_error_pct, freq_rel_error_pct}}}.

    cache : per-release summaries already computed (a resumed validation) and where new ones go;
    the first release of each model per rod is always run again (its curves are plotted).
    """
    from softrod.validate._studies import _plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    curves: dict[str, ReleaseComparison] = {}
    factors: dict[str, dict[int, float]] = {}
    for mat in materials:
        factors[mat] = {}
        # Each record is read once, for both models.
        refs = {
            i: load_sorosim_release(mat, i, frame="mujoco") for i in (*releases, *lgvi_releases)
        }
        for i in releases:
            ref = refs[i]
            factors[mat][i] = effective_damping_ratio(ref) / float(ref.damping_ratio)
            if i == releases[0]:
                cmp = mujoco_release(mat, i, links=links, damping=SOROSIM_DAMPING, ref=ref)
                rows.append({**cmp.summary(), "damping": SOROSIM_DAMPING})
                curves[f"{mat}/{i}/mujoco"] = cmp
                raw = mujoco_release(mat, i, links=links, damping="file", ref=ref)
                rows.append({**raw.summary(), "damping": "file (as zeta_1)"})
            else:
                key = f"{mat}/release-mujoco-N{links}/{i}"
                rows.append(cached(cache, key, _mujoco_row, mat, i, links, ref))
        default_elements = (
            LGVI_ELEMENTS if lgvi_integrator == "explicit" else LGVI_IMPLICIT_ELEMENTS
        )
        elements = (lgvi_elements or default_elements)[mat]
        if lgvi_rotary_inertia_scale is not None:
            inertia = lgvi_rotary_inertia_scale[mat]
        else:
            inertia = LGVI_ROTARY_INERTIA_SCALE[mat] if lgvi_integrator == "explicit" else 1.0
        for i in lgvi_releases:
            if i == lgvi_releases[0]:
                cmp = lgvi_release(
                    mat,
                    i,
                    ref=refs[i],
                    damping=SOROSIM_DAMPING,
                    elements=elements,
                    rotary_inertia_scale=inertia,
                    integrator=lgvi_integrator,
                )
                rows.append({**cmp.summary(), "damping": SOROSIM_DAMPING})
                curves[f"{mat}/{i}/lgvi"] = cmp
            else:
                # The explicit step's key is the one of earlier journals (resumable).
                tag = "" if lgvi_integrator == "explicit" else f"-{lgvi_integrator}"
                key = f"{mat}/release-lgvi-{elements}-{inertia!r}{tag}/{i}"
                rows.append(cached(cache, key, _lgvi_row, mat, i, refs[i], elements, inertia,
                                   lgvi_integrator))  # fmt: skip

    def agg(mat: str, prefix: str) -> dict[str, float]:
        sel = [
            r
            for r in rows
            if r["material"] == mat
            and str(r["model"]).startswith(prefix)
            and r["damping"] == SOROSIM_DAMPING
        ]
        if not sel:
            return {}
        return {
            "releases": len(sel),
            "mean_error_pct": float(np.mean([r["mean_error_pct"] for r in sel])),
            "worst_mean_error_pct": float(np.max([r["mean_error_pct"] for r in sel])),
            "max_error_pct": float(np.max([r["max_error_pct"] for r in sel])),
            "freq_rel_error_pct": float(
                np.mean([abs(r["freq_model_hz"] / r["freq_ref_hz"] - 1) * 100 for r in sel])
            ),
            "seconds": float(np.sum([r["seconds"] for r in sel])),
        }

    summary = {mat: {m: s for m in ("mujoco", "lgvi") if (s := agg(mat, m))} for mat in materials}
    obj = {"summary": summary, "effective_over_stated": factors, "rows": rows}

    plt = _plt()
    fig, axes = plt.subplots(len(curves), 1, figsize=(8, 2.6 * len(curves)), squeeze=False)
    for ax, (key, c) in zip(axes[:, 0], curves.items(), strict=True):
        a = int(np.argmax(np.ptp(c.tip_ref, axis=0)))
        ax.plot(c.t, c.tip_ref[:, a] * 1e3, "k-", lw=1, label="SoRoSim")
        ax.plot(c.t, c.tip_model[:, a] * 1e3, "r--", lw=1, label=c.model)
        ax.set_title(f"{key}: tip {'xyz'[a]} [mm]", fontsize=8)
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(out / "sorosim_dynamics.png", dpi=110)
    plt.close(fig)
    lines = [
        "# SoRoSim dynamics: releases",
        "",
        "Tip error over time in % of L (mean over the 10 s record and its max), dominant frequency"
        " [Hz], decay (RMS amplitude of the last 2 s / first 2 s) and wall time [s]. Damping"
        " 'sorosim': Kelvin-Voigt, beta = the file's number [s].",
        "",
        "| rod | release | model | damping | mean | max | f ref | f model | decay ref "
        "| decay model | wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['material']} | {r['index']} | {r['model']} | {r['damping']} | "
            f"{r['mean_error_pct']:.3f} | {r['max_error_pct']:.3f} | {r['freq_ref_hz']:.3f} | "
            f"{r['freq_model_hz']:.3f} | {r['decay_ref']:.4f} | {r['decay_model']:.4f} | "
            f"{r['seconds']:.1f} |"
        )
    lines += [
        "",
        "Effective first-mode damping ratio / stated number, per record: "
        + "; ".join(
            f"{m}: " + ", ".join(f"{z:.2f}" for z in zs.values()) for m, zs in factors.items()
        ),
        "",
        "![releases](sorosim_dynamics.png)",
    ]
    write_text_atomic(out / "sorosim_dynamics.md", "\n".join(lines) + "\n")
    write_text_atomic(out / "sorosim_dynamics.json", json.dumps(obj, indent=1))
    return obj
