"""Validation of the MuJoCo chain against independent truth (used by tests and `softrod.bench`).

* `static_errors`: the seed-002 static protocol (ALGORITHMS.md §C.3): random gravity direction,
  random mid-point and tip wrenches of fixed magnitude; MuJoCo equilibrium tip vs softrod's exact
  shooting solution.
* `tendon_tip`: tip under pure tendon tension (compare with `solve_static`, shooting and pcc).
* `free_oscillation`: first-mode frequency and damping after releasing a small tip load, vs
  `euler_bernoulli_frequency`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from softrod.description import RobotSpec, find_robot, load_robot
from softrod.mujoco import (
    ChainInfo,
    PointLoad,
    build_spec,
    chain_info,
    first_mode_frequency,
    static_equilibrium,
)
from softrod.rods import compile_model, solve_static

__all__ = [
    "MATERIALS",
    "StaticSample",
    "material_robot",
    "random_samples",
    "static_errors",
    "tendon_tip",
    "free_oscillation",
    "euler_bernoulli_frequency",
    "make_model",
]

#: The seed-002 validation rods (ALGORITHMS.md §C.3, Table 2), clamped at s = 0 and split in two
#: segments at L/2 where the mid wrench acts: `robot` is the shipped description's name
#: (softrod/data/robots), `force` [N] and `moment` [N m] the static load magnitudes (mid and tip).
MATERIALS: dict[str, dict[str, Any]] = {
    "spring_steel": {"robot": "spring_steel_rod", "force": 0.20, "moment": 0.08},
    "tpu": {"robot": "tpu_rod", "force": 0.30, "moment": 0.06},
}

#: Gravity magnitude of the protocol [m/s^2].
GRAVITY = 9.81


def material_robot(name: str) -> RobotSpec:
    """The seed-002 rod `name` ('spring_steel' or 'tpu') as a RobotSpec."""
    if name not in MATERIALS:
        raise ValueError(f"material must be one of {sorted(MATERIALS)}, got {name!r}")
    return load_robot(find_robot(MATERIALS[name]["robot"]))


@dataclass(frozen=True)
class StaticSample:
    """One static test: world-frame gravity [m/s^2], mid and tip force [N] and moment [N m]."""

    gravity: np.ndarray
    mid_force: np.ndarray
    mid_moment: np.ndarray
    tip_force: np.ndarray
    tip_moment: np.ndarray


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_samples(
    n: int, force: float, moment: float, rng: np.random.Generator
) -> list[StaticSample]:
    """`n` samples with uniformly random directions and the given magnitudes."""
    return [
        StaticSample(
            gravity=GRAVITY * _unit(rng),
            mid_force=force * _unit(rng),
            mid_moment=moment * _unit(rng),
            tip_force=force * _unit(rng),
            tip_moment=moment * _unit(rng),
        )
        for _ in range(n)
    ]


def reference_tips(robot: RobotSpec, samples: Sequence[StaticSample]) -> np.ndarray:
    """(n, 3) exact tip positions [m] from softrod's shooting solver."""
    L = robot.total_length
    model = compile_model(robot, extra_nodes=(L / 2,))
    out = np.empty((len(samples), 3))
    for i, smp in enumerate(samples):
        sol = solve_static(
            model,
            gravity=smp.gravity,
            tip_force=smp.tip_force,
            tip_moment=smp.tip_moment,
            point_loads=[(L / 2, smp.mid_force, smp.mid_moment)],
        )
        if not sol.success:
            raise RuntimeError(f"reference solve failed for sample {i}: {sol.message}")
        out[i] = sol.tip_position
    return out


def make_model(
    robot: RobotSpec | dict | str, links: int, **options: Any
) -> tuple[mujoco.MjModel, mujoco.MjData, ChainInfo]:
    """Compiled standalone model, its data and ChainInfo."""
    spec = build_spec(robot, links=links, **options)
    model = spec.compile()
    return model, mujoco.MjData(model), chain_info(robot, links=links, **options)


def mujoco_static_tips(
    robot: RobotSpec, samples: Sequence[StaticSample], links: int, **options: Any
) -> tuple[np.ndarray, int]:
    """(n, 3) MuJoCo equilibrium tips [m] and the number of failed equilibria."""
    model, data, info = make_model(robot, links, **options)
    L = robot.total_length
    tip_body, tip_point = info.body_point(model, L)
    mid_body, mid_point = info.body_point(model, L / 2)
    out = np.empty((len(samples), 3))
    failed = 0
    tip_site = model.site(info.tip_site).id
    for i, smp in enumerate(samples):
        model.opt.gravity[:] = smp.gravity
        loads = [
            PointLoad(tip_body, tip_point, smp.tip_force, smp.tip_moment),
            PointLoad(mid_body, mid_point, smp.mid_force, smp.mid_moment),
        ]
        res = static_equilibrium(model, data, loads)
        failed += not res.success
        out[i] = data.site_xpos[tip_site]
    return out, failed


def static_errors(
    material: str,
    links: Sequence[int],
    n_samples: int,
    rng: np.random.Generator,
    **options: Any,
) -> dict[int, np.ndarray]:
    """Tip errors as a fraction of the rod length, {N: (n_samples,)}, for the seed-002 protocol.

    Raises RuntimeError when a MuJoCo equilibrium fails (so an error is never silently small).
    """
    robot = material_robot(material)  # raises ValueError for an unknown material
    spec = MATERIALS[material]
    samples = random_samples(n_samples, spec["force"], spec["moment"], rng)
    ref = reference_tips(robot, samples)
    L = robot.total_length
    out: dict[int, np.ndarray] = {}
    for n in links:
        tips, failed = mujoco_static_tips(robot, samples, n, **options)
        if failed:
            raise RuntimeError(f"{failed} MuJoCo equilibria failed for {material} at N = {n}")
        out[int(n)] = np.linalg.norm(tips - ref, axis=1) / L
    return out


def tendon_tip(
    robot: RobotSpec | dict | str,
    tensions: Sequence[float],
    links: int,
    **options: Any,
) -> np.ndarray:
    """(3,) MuJoCo equilibrium tip [m] under tendon tensions [N], gravity off."""
    options = {"gravity": (0.0, 0.0, 0.0), **options}
    model, data, info = make_model(robot, links, **options)
    if len(tensions) != model.nu:
        raise ValueError(f"expected {model.nu} tensions, got {len(tensions)}")
    data.ctrl[:] = tensions
    res = static_equilibrium(model, data)
    if not res.success:
        raise RuntimeError(f"MuJoCo equilibrium failed: {res.message}")
    return data.site(info.tip_site).xpos.copy()


def euler_bernoulli_frequency(robot: RobotSpec | dict | str) -> float:
    """First cantilever bending frequency [Hz] of a uniform robot.

    f_1 = 1.8751^2 sqrt(EI / (rho A L^4)) / (2 pi).
    """
    robot = load_robot(robot)
    if any(s.backbone is not None or s.disk_mass > 0 for s in robot.segments):
        raise ValueError("euler_bernoulli_frequency needs a uniform backbone without disk mass")
    # The MuJoCo layer's omega_1 is this formula for a uniform backbone without disks.
    return first_mode_frequency(robot) / (2 * np.pi)


@dataclass(frozen=True)
class Oscillation:
    """Free-oscillation result: frequency [Hz], damping ratio, tip x history (t [s], x [m])."""

    frequency: float
    damping_ratio: float
    t: np.ndarray
    x: np.ndarray


def free_oscillation(
    robot: RobotSpec | dict | str,
    links: int,
    *,
    tip_force: float = 1e-3,
    duration: float = 4.0,
    **options: Any,
) -> Oscillation:
    """Release the tip from a small static deflection (force along x, gravity off) and measure.

    Frequency from the mean period between upward zero crossings of the tip displacement along
    the initial deflection, damping
    ratio from the logarithmic decrement of successive positive peaks.
    """
    options = {"gravity": (0.0, 0.0, 0.0), **options}
    model, data, info = make_model(robot, links, **options)
    robot = info.robot
    body, point = info.body_point(model, robot.total_length)
    site = model.site(info.tip_site).id
    rest = static_equilibrium(model, data)
    tip_rest = data.site_xpos[site].copy()
    load = PointLoad(body, point, np.array([tip_force, 0.0, 0.0]), np.zeros(3))
    res = static_equilibrium(model, data, [load], qpos0=rest.qpos)
    if not (rest.success and res.success):
        raise RuntimeError(f"pre-deflection failed: {rest.message}; {res.message}")
    direction = data.site_xpos[site] - tip_rest
    direction /= np.linalg.norm(direction)
    data.qvel[:] = 0.0
    data.time = 0.0
    n = int(round(duration / model.opt.timestep))
    t = np.empty(n)
    x = np.empty(n)
    for i in range(n):
        mujoco.mj_step(model, data)
        t[i] = data.time
        x[i] = (data.site_xpos[site] - tip_rest) @ direction
    up = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    if len(up) < 2:
        raise RuntimeError("fewer than two oscillation periods in the record")
    tc = t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])
    freq = 1.0 / float(np.mean(np.diff(tc)))
    peaks = [x[a:b].max() for a, b in zip(up[:-1], up[1:], strict=True)]
    decrement = float(np.mean(np.log(np.array(peaks[:-1]) / np.array(peaks[1:]))))
    zeta = decrement / np.sqrt(4 * np.pi**2 + decrement**2)
    return Oscillation(freq, float(zeta), t, x)
