"""SoMo's actuation trajectories (`trajectory.yaml`, "interp" type) on the MuJoCo chain, and how
closely the chain follows them: per sample, the chain's tip against the exact static solve for
the same instantaneous input (quasi-static tracking; the difference is lag and dynamics)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from softrod.description import RobotSpec, load_robot
from softrod.somo._import import SomoImport

__all__ = [
    "ChainTracking",
    "SomoTrajectory",
    "follow_trajectory",
    "read_somo_trajectory",
    "uniform_moment_twin",
]


@dataclass(frozen=True)
class SomoTrajectory:
    """times (k,) [s] of the setpoints; inputs (k, n) SoMo torques per setpoint, in SoMo's
    column order (act0_ax0, act0_ax1, act1_ax0, ...), which is `import_somo`'s `moments` order
    (its `pressures` order with actuation "chambers").
    Between setpoints the input is linear in time (SoMo's "interp", `interp_type: linear`)."""

    times: np.ndarray
    inputs: np.ndarray

    def at(self, t: float) -> np.ndarray:
        """Inputs (n,) at time t [s] (held at the ends)."""
        return np.array([np.interp(t, self.times, col) for col in self.inputs.T])

    @property
    def duration(self) -> float:
        return float(self.times[-1])


def read_somo_trajectory(source: str | Path | Mapping[str, Any]) -> SomoTrajectory:
    """SoMo's `trajectory.yaml` (or its dict): the `prefix` then `main` setpoints
    [time, u_0, u_1, ...] of an "interp" trajectory with linear interpolation. Raises
    ValueError naming the field for another type or ragged rows."""
    data = source if isinstance(source, Mapping) else yaml.safe_load(Path(source).read_text())
    kind = data.get("settings", {}).get("traj_type")
    config = data.get("config", {})
    if kind != "interp" or config.get("interp_type", "linear") != "linear":
        raise ValueError(
            f"settings.traj_type must be 'interp' with config.interp_type 'linear', got "
            f"{kind!r} / {config.get('interp_type')!r}"
        )
    rows = list(config["setpoints"].get("prefix") or []) + list(config["setpoints"]["main"])
    if len({len(r) for r in rows}) != 1:
        raise ValueError("config.setpoints rows must all have [time, u_0, ..., u_n-1]")
    points = np.asarray(rows, dtype=float)
    if np.any(np.diff(points[:, 0]) <= 0):
        raise ValueError(f"config.setpoints times must increase, got {points[:, 0].tolist()}")
    return SomoTrajectory(points[:, 0], points[:, 1:])


@dataclass(frozen=True)
class ChainTracking:
    """Samples of a chain run: t (k,) [s]; tip_chain, tip_static (k, 3) [m] (MuJoCo chain and
    the exact static solve at the same inputs); tip_error (k,) [m]; angle_error (k,) [rad]
    (between the tip frames); length [m]; unstable_at [s] (MuJoCo's bad-acceleration warning,
    the run stopped) or None; steps; wall_time_s."""

    t: np.ndarray
    tip_chain: np.ndarray
    tip_static: np.ndarray
    tip_error: np.ndarray
    angle_error: np.ndarray
    length: float
    unstable_at: float | None
    steps: int
    wall_time_s: float

    def summary(self) -> dict[str, Any]:
        """mean / max tip error relative to the length, mean / max tip angle error [rad]."""
        return {
            "samples": int(self.t.shape[0]),
            "tip_error_mean_rel": float(self.tip_error.mean() / self.length),
            "tip_error_max_rel": float(self.tip_error.max() / self.length),
            "angle_error_mean_rad": float(self.angle_error.mean()),
            "angle_error_max_rad": float(self.angle_error.max()),
            "unstable_at": self.unstable_at,
            "steps": self.steps,
            "wall_time_s": self.wall_time_s,
        }


def uniform_moment_twin(robot: RobotSpec) -> tuple[RobotSpec, np.ndarray]:
    """(twin, order): `robot` with every chamber replaced by the moment actuator of its
    small-bend moment A d (sin a, -cos a, 0) per Pa, SoMo's uniform torque whatever the
    curvature (a chamber line folds back where the curvature radius reaches its offset, so the
    exact solver has no equilibrium past that; the MuJoCo chain's chamber tendon is this
    uniform moment at every angle). twin's `moments` input is `inputs[order]` for inputs =
    pressures then the robot's own moment inputs. For a robot without chambers (`import_somo`'s
    default) the twin is the robot itself and order the identity; it is for hand-written
    chamber robots and imports with actuation "chambers"."""
    if robot.n_pressures == 0:
        return robot, np.arange(robot.n_moments, dtype=int)
    segments, order = [], []
    n_c = robot.n_pressures
    k_c = k_m = 0
    for seg in robot.segments:
        acts = []
        for c in seg.chambers:
            a = math.radians(c.angle_deg)
            m = c.area * c.offset * np.array([math.sin(a), -math.cos(a), 0.0])
            acts.append({"moment": m.tolist()})
            order.append(k_c)
            k_c += 1
        for act in seg.moment_actuators:
            acts.append({"moment": list(act.moment)})
            order.append(n_c + k_m)
            k_m += 1
        segments.append(seg.model_copy(update={"chambers": [], "moment_actuators": []})
                        .model_dump() | {"moment_actuators": acts})  # fmt: skip
    twin = load_robot(robot.model_dump() | {"segments": segments})
    return twin, np.array(order, dtype=int)


def _input_columns(imported: SomoImport) -> np.ndarray:
    """Index into (pressures, moments) of each trajectory column: SoMo's driven axes in
    (actuator, axis) order; without the import's maps, the pressures then the moments."""
    robot = imported.robot
    by_axis = {**imported.pressure_of_axis}
    by_axis |= {key: robot.n_pressures + k for key, k in imported.moment_of_axis.items()}
    if not by_axis:
        return np.arange(robot.n_pressures + robot.n_moments, dtype=int)
    return np.array([by_axis[key] for key in sorted(by_axis)], dtype=int)


def follow_trajectory(
    imported: SomoImport,
    trajectory: SomoTrajectory,
    *,
    t_end: float | None = None,
    timestep: float = 2e-3,
    links: int | None = None,
    sample_dt: float = 0.5,
    options: Mapping[str, Any] | None = None,
    on_step: Any = None,
) -> ChainTracking:
    """Run the imported robot's MuJoCo chain (no gravity) along `trajectory` from rest at t = 0
    to t_end [s] (default its end) and compare its tip every `sample_dt` [s] with the exact
    static solve (`solve_static`, shooting) at the same inputs, SoMo's torques as uniform moments
    (the import's moment actuators; chambers through `uniform_moment_twin`).

    links : chain links (default SoMo's own, sum(imported.n_links)); options : more
    `build_spec` options (e.g. damping_ratio); on_step(model, data) : called after each step
    (a renderer). The columns of the trajectory are SoMo's torques on the driven axes in
    (actuator, axis) order (`SomoImport.moment_of_axis`, or `pressure_of_axis` for chambers).
    """
    import mujoco

    from softrod.mujoco import build_spec
    from softrod.rods import as_model, solve_static

    robot = imported.robot
    columns = _input_columns(imported)
    if trajectory.inputs.shape[1] != columns.size:
        raise ValueError(
            f"trajectory has {trajectory.inputs.shape[1]} input columns, the robot "
            f"{columns.size} driven SoMo axes"
        )
    n_p, n_m = robot.n_pressures, robot.n_moments
    n_links = links or sum(imported.n_links)
    spec = build_spec(robot, links=n_links, gravity=(0.0, 0.0, 0.0), timestep=timestep,
                      **dict(options or {}))  # fmt: skip
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    # ctrl index of each input (pressures, then moments).
    names = [f"pressure_{k}" for k in range(n_p)] + [f"moment_{k}" for k in range(n_m)]
    ctrl = np.array([model.actuator(name).id for name in names], dtype=int)

    def inputs(t: float) -> np.ndarray:
        u = np.zeros(n_p + n_m)
        u[columns] = trajectory.at(t)
        return u

    # The reference: SoMo's uniform torques as moment actuators (`uniform_moment_twin`).
    twin, order = uniform_moment_twin(robot)
    rod = as_model(twin)
    t_stop = trajectory.duration if t_end is None else float(t_end)
    samples = np.arange(0.0, t_stop + 1e-9, sample_dt)
    rows: list[tuple[float, np.ndarray, np.ndarray, float]] = []
    unstable = None
    guess = None
    start = time.perf_counter()
    steps = 0
    for ts in samples:
        # Step until the sample time; the input is interpolated at each step's start.
        while data.time < ts - 0.5 * timestep:
            data.ctrl[ctrl] = inputs(data.time)
            mujoco.mj_step(model, data)
            steps += 1
            if on_step is not None:
                on_step(model, data)
            if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:
                unstable = float(data.time)
                break
        if unstable is not None:
            break
        u = inputs(float(data.time))
        sol = solve_static(rod, moments=u[order], guess=guess, check_stability=False)
        if not sol.success:
            raise RuntimeError(f"static solve failed at t = {data.time:.3f} s: {sol.message}")
        guess = sol
        site = data.site("tip")
        R = site.xmat.reshape(3, 3)
        cos = 0.5 * (np.trace(sol.tip_rotation.T @ R) - 1.0)
        angle = float(np.arccos(np.clip(cos, -1.0, 1.0)))
        rows.append((float(data.time), site.xpos.copy(), sol.tip_position.copy(), angle))
    wall = time.perf_counter() - start
    t = np.array([r[0] for r in rows])
    chain = np.array([r[1] for r in rows]).reshape(-1, 3)
    static = np.array([r[2] for r in rows]).reshape(-1, 3)
    return ChainTracking(
        t, chain, static, np.linalg.norm(chain - static, axis=1),
        np.array([r[3] for r in rows]), robot.total_length, unstable, steps, wall,
    )  # fmt: skip
