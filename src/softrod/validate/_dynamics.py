"""SoRoSim release time series (issue 9, dynamics).

Each file holds a rod at rest under gravity plus a mid and a tip wrench, released at t = 0, then
10 s of mid and tip motion at 200 Hz with SoRoSim's damping ratio. softrod reproduces it twice:

* `mujoco_release`: the N-link MuJoCo chain (damping_ratio from the file, discrete integrator,
  1 ms step), held by the same wrenches through a Newton equilibrium, then released;
* `lgvi_release`: softrod's variational integrator (issue 5) from the static solver's held
  shape, with mass-proportional viscous damping c = 2 zeta omega_1 rho A (modal ratio zeta in the
  first mode).

Metrics (`ReleaseComparison`): tip error over time in % of L (mean and max), dominant frequency
of the tip motion about its final position (FFT peak) and the decay (RMS amplitude of the last
2 s over the first 2 s) for reference and model.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from softrod.datasets import SorosimRelease, load_sorosim_release
from softrod.validate._sorosim import sorosim_robot

__all__ = [
    "ReleaseComparison",
    "compare_release",
    "effective_damping_ratio",
    "lgvi_release",
    "mujoco_release",
]

#: MuJoCo step for the releases [s]: 5 steps per 200 Hz sample; the first bending periods of the
#: rods are 0.4-1 s, so the discrete integrator's numerical damping (beta = dt) is < 0.01 zeta.
RELEASE_TIMESTEP = 1e-3
#: First-mode eigenvalue of a clamped-free beam, (beta_1 L)^2.
BETA1_SQ = 1.8751**2
#: Window [s] for the decay measure (start and end of the 10 s record).
DECAY_WINDOW = 2.0


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
    raise ValueError(f"damping must be 'file', 'fitted' or a number, got {damping!r}")


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
    material: str, index: int, links: int = 50, damping: str | float = "fitted"
) -> ReleaseComparison:
    """Hold, release and simulate one SoRoSim release with the MuJoCo chain.

    damping : "file" (the ratio in the file's first line), "fitted" (`effective_damping_ratio`
    of this very record) or a number (e.g. the ratio fitted on the material's other records)."""
    import mujoco

    from softrod.mujoco import PointLoad, static_equilibrium
    from softrod.mujoco._validate import make_model

    ref = load_sorosim_release(material, index, frame="mujoco")
    t0 = time.perf_counter()
    zeta = _zeta(ref, damping)
    model, data, info = make_model(
        sorosim_robot(material),
        links,
        damping_ratio=zeta,
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
    rotary_inertia_scale: float = 1.0,
    duration: float | None = None,
    damping: str | float = "fitted",
    elements: int | None = None,
) -> ReleaseComparison:
    """Hold with the static solver, release with softrod's LGVI (issue 5); `elements` as in
    `simulate_dynamic` (default 20)."""
    from softrod.dynamics import simulate_dynamic
    from softrod.rods import compile_model, solve_static

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
    zeta = _zeta(ref, damping)
    c = 2 * zeta * omega1 * bb.density * bb.A
    T = float(ref.t[-1]) if duration is None else duration
    sim = simulate_dynamic(
        robot,
        T + 1e-9,
        initial=held,
        gravity=ref.gravity,
        damping=c,
        rotary_inertia_scale=rotary_inertia_scale,
        elements=elements,
        sample_dt=float(ref.t[1] - ref.t[0]),
    )
    tip_sim = sim.positions[:, -1]
    tip = np.column_stack([np.interp(ref.t, sim.t, tip_sim[:, a]) for a in range(3)])
    if not sim.success:
        tip[ref.t > sim.t[-1]] = np.nan
    if duration is not None:
        keep = ref.t <= duration
        ref = _truncate(ref, keep)
        tip = tip[keep]
    return compare_release(ref, tip, f"lgvi-{_label(damping)}", time.perf_counter() - t0)


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
