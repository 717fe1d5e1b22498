"""Dynamics runs to play on the page and live MuJoCo scenes, without any web library.

`run_dynamics(twin, engine, kind)` runs LGVI (`softrod.dynamics`) or the MuJoCo chain from the
twin's current state (release, tendon step, magnet field) and returns a `Playback`: frames the
page plays with a timeline. `SceneTwin` holds a MuJoCo scene (arm + soft robot + objects),
the controls its sliders set, and the geometry the page draws.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from softrod.rods import solve_static
from softrod.web._twin import GRAVITY, ModelView, RobotTwin

__all__ = [
    "MAGNET_FIELD",
    "RUN_ENGINES",
    "RUN_KINDS",
    "Playback",
    "SceneTwin",
    "is_magnetic",
    "run_dynamics",
]

#: Engines of a page run: the Lie-group variational integrator and the MuJoCo chain.
RUN_ENGINES = ("lgvi", "mujoco")
#: What a run does: release from the current static shape (inputs off), step the current
#: tendon tensions from rest, or switch a uniform field on (magnetic robots).
RUN_KINDS = ("release", "tendon step", "magnet field")
#: Default run length [s] and frames per second of the recorded playback.
RUN_DURATION = 0.3
RUN_FPS = 100.0
#: LGVI elements of a page run: tdcr3 runs 0.3 s in about 2 s with the implicit step.
LGVI_ELEMENTS = 20
#: Kelvin-Voigt damping time of a page run [s]: the ringing stays visible and decays.
STRAIN_DAMPING = 2e-3
#: Field of a "magnet field" run [T]: 20 mT along world +x, across the straight rod.
MAGNET_FIELD = (0.02, 0.0, 0.0)
#: Range of a scene slider whose actuator gives no range of its own (`_ctrl_ranges`): a tendon
#: tension of 0 to 5 N.
DEFAULT_CTRL_MAX = 5.0
#: A scene control follows its slider over at least this time for the full range [s]: a
#: slider jump applied as a step made the tdcr box-press chain diverge (5 N in one step).
CTRL_RAMP_TIME = 0.25


@dataclass(frozen=True)
class Playback:
    """A recorded motion: t (k,) [s], positions (k, n, 3) [m], rotations (k, n, 3, 3) or None;
    engine ("lgvi" / "mujoco"), kind (RUN_KINDS), success and message of the run, wall_time
    [s] it took."""

    engine: str
    kind: str
    t: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray | None
    success: bool
    message: str
    wall_time: float
    arc_length: np.ndarray | None = None

    @property
    def n_frames(self) -> int:
        return int(self.t.shape[0])

    def index_at(self, t: float) -> int:
        """The frame shown at time t [s] (the last one at or before t)."""
        return int(np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, self.n_frames - 1))

    def view(self, i: int) -> ModelView:
        """Frame i as a `ModelView` (drawn like a static shape)."""
        pos = self.positions[i]
        return ModelView(
            name=self.engine,
            success=self.success,
            message=self.message,
            positions=pos,
            rotations=None if self.rotations is None else self.rotations[i],
            tip_position=pos[-1].copy(),
            solve_time=0.0,
            tendon_tension=np.zeros(0),
            arc_length=self.arc_length,
        )


def is_magnetic(twin: RobotTwin) -> bool:
    """Whether the robot carries magnets or a magnetized backbone (a "magnet field" run)."""
    return any(
        seg.magnets or (seg.magnetization is not None and any(seg.magnetization))
        for seg in twin.spec.segments
    )


def run_dynamics(
    twin: RobotTwin,
    engine: str = "lgvi",
    kind: str = "release",
    duration: float = RUN_DURATION,
    fps: float = RUN_FPS,
) -> Playback:
    """Run `engine` (RUN_ENGINES) for `duration` [s] from the twin's state and record frames
    at `fps` [1/s]. kind : "release" (the current static shape let go with the tendon and tip
    inputs off; gravity as set), "tendon step" (from rest, the current tensions and tip loads
    switched on at t = 0) or "magnet field" (from rest, MAGNET_FIELD switched on; magnetic
    robots only)."""
    if engine not in RUN_ENGINES:
        raise ValueError(f"engine must be one of {RUN_ENGINES}, got {engine!r}")
    if kind not in RUN_KINDS:
        raise ValueError(f"kind must be one of {RUN_KINDS}, got {kind!r}")
    if not (np.isfinite(duration) and 0.0 < duration <= 10.0):
        raise ValueError(f"duration must be in (0, 10] s, got {duration}")
    if kind == "magnet field" and not is_magnetic(twin):
        raise ValueError(f"{twin.spec.name} has no magnets: a magnet field run needs some")
    t0 = time.perf_counter()
    if engine == "lgvi":
        return _run_lgvi(twin, kind, duration, fps, t0)
    return _run_chain(twin, kind, duration, fps, t0)


def _tensions(twin: RobotTwin) -> np.ndarray:
    # Under length control the tensions are the exact solve's answer at the commanded lengths.
    if twin.control == "length":
        view = twin.last.views.get("exact") if twin.last else None
        if view is None or not view.success:
            raise ValueError("solve the commanded lengths first (no converged exact shape)")
        return view.tendon_tension.copy()
    return twin.tensions.copy()


def _run_lgvi(twin: RobotTwin, kind: str, duration: float, fps: float, t0: float) -> Playback:
    from softrod.dynamics import DynamicLoads, MagneticField, build_lgvi_model, simulate_dynamic

    gravity = GRAVITY if twin.gravity else None
    initial = None
    if kind == "release":
        start = solve_static(twin.model, **twin._rod_loads())
        if not start.success:
            raise ValueError(f"the current static shape did not converge: {start.message}")
        initial = start
        loads = DynamicLoads(gravity=gravity, strain_damping=STRAIN_DAMPING)
    elif kind == "tendon step":
        loads = DynamicLoads(
            tensions=_tensions(twin),
            tip_force=twin.tip_force.copy(),
            tip_moment=twin.tip_moment.copy(),
            gravity=gravity,
            strain_damping=STRAIN_DAMPING,
        )
    else:
        field = MagneticField(uniform=np.array(MAGNET_FIELD))
        loads = DynamicLoads(field=field, gravity=gravity, strain_damping=STRAIN_DAMPING)
    model = build_lgvi_model(twin.spec, elements=LGVI_ELEMENTS)
    res = simulate_dynamic(
        model, duration, loads=loads, initial=initial, sample_dt=1.0 / fps, integrator="implicit"
    )
    return Playback(
        engine="lgvi",
        kind=kind,
        t=res.t,
        positions=res.positions,
        rotations=res.rotations,
        success=bool(res.success),
        message=res.message,
        wall_time=time.perf_counter() - t0,
        arc_length=res.node_s,
    )


def _run_chain(twin: RobotTwin, kind: str, duration: float, fps: float, t0: float) -> Playback:
    import mujoco

    from softrod.mujoco import (
        MagneticField,
        PointLoad,
        apply_loads,
        build_spec,
        chain_info,
        static_equilibrium,
    )

    model = build_spec(twin.spec, links=twin.links).compile()
    data = mujoco.MjData(model)
    info = chain_info(twin.spec, links=twin.links)
    bodies = [model.body(b).id for b in info.link_bodies]
    tip = model.site(info.tip_site).id
    model.opt.gravity[:] = GRAVITY if twin.gravity else (0.0, 0.0, 0.0)
    n_t = twin.n_tendons
    loads: list[PointLoad] = []
    field = None
    if kind == "release":
        data.ctrl[:n_t] = _tensions(twin)
        start = static_equilibrium(model, data)
        if not start.success:
            raise ValueError(f"the chain's static shape did not converge: {start.message}")
        data.ctrl[:n_t] = 0.0
    elif kind == "tendon step":
        data.ctrl[:n_t] = _tensions(twin)
        if np.any(twin.tip_force) or np.any(twin.tip_moment):
            body, point = info.body_point(model, twin.spec.total_length)
            loads = [PointLoad(body, point, twin.tip_force, twin.tip_moment)]
    else:
        field = MagneticField(model, info, field=MAGNET_FIELD)
    data.qvel[:] = 0.0
    mujoco.mj_forward(model, data)
    every = max(1, int(round(1.0 / (fps * model.opt.timestep))))
    n_frames = int(np.floor(duration / (every * model.opt.timestep))) + 1
    t = np.empty(n_frames)
    positions = np.empty((n_frames, len(bodies) + 1, 3))
    rotations = np.empty((n_frames, len(bodies) + 1, 3, 3))
    ok = True
    for k in range(n_frames):
        if k:
            for _ in range(every):
                if loads:
                    # Point loads follow the tip: recompute them at this step's pose.
                    mujoco.mj_kinematics(model, data)
                    data.xfrc_applied[:] = 0.0
                    apply_loads(model, data, loads)
                if field is not None:
                    field.apply(model, data)
                mujoco.mj_step(model, data)
            mujoco.mj_kinematics(model, data)
        t[k] = data.time
        positions[k] = np.vstack([data.xpos[bodies], data.site_xpos[tip][None, :]])
        rotations[k] = np.concatenate(
            [data.xmat[bodies].reshape(-1, 3, 3), data.site_xmat[tip].reshape(1, 3, 3)]
        )
        if not np.all(np.isfinite(positions[k])):
            ok = False
            t, positions, rotations = t[:k], positions[:k], rotations[:k]
            break
    return Playback(
        engine="mujoco",
        kind=kind,
        t=t - t[0] if len(t) else t,
        positions=positions,
        rotations=rotations,
        success=ok,
        message="completed" if ok else f"the chain diverged at t = {data.time:.4g} s",
        wall_time=time.perf_counter() - t0,
    )


# -- live MuJoCo scenes -------------------------------------------------------------------------


@dataclass(frozen=True)
class GeomMesh:
    """One drawn MuJoCo geom: its id, vertices (m, 3) [m] in the geom frame, faces (f, 3)
    int32, colour (3,) RGB 0-255 and opacity; moving : False for geoms welded to the world."""

    geom: int
    vertices: np.ndarray
    faces: np.ndarray
    color: tuple[int, int, int]
    opacity: float
    moving: bool


class SceneTwin:
    """A MuJoCo scene (a scene YAML: soft robots, rigid arms, objects; or a robot alone) and
    the controls the page's sliders set (no web library involved).

    The scene's keyframes still drive its magnetic field; the sliders own `data.ctrl`.
    """

    def __init__(self, path: str | Path, links: int | None = None) -> None:
        from softrod.scene import load_scene_or_robot

        self.scene = load_scene_or_robot(str(path), links=links)
        self.model = self.scene.model
        self.data = self.scene.data
        self.name = self.scene.spec_source.name
        import mujoco

        mujoco.mj_forward(self.model, self.data)
        # Slider range per actuator from the scene's own limits (`_ctrl_ranges`).
        rng = _ctrl_ranges(self.model)
        self.ctrl_range = rng
        self.ctrl = np.clip(self.data.ctrl.copy(), rng[:, 0], rng[:, 1])
        self.applied = self.ctrl.copy()
        self.resets = 0
        self.actuator_names = [
            self.model.actuator(i).name or f"actuator {i}" for i in range(self.model.nu)
        ]

    @property
    def time(self) -> float:
        return float(self.data.time)

    def set_control(self, i: int, value: float) -> None:
        """Actuator i's control (tension [N], joint target [rad], ...), clipped to its range."""
        if not 0 <= i < self.model.nu:
            raise ValueError(f"actuator index must be in [0, {self.model.nu}), got {i}")
        if not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value):
            raise ValueError(f"control {i} must be a finite number, got {value!r}")
        self.ctrl[i] = float(np.clip(value, *self.ctrl_range[i]))

    def step(self, seconds: float) -> None:
        """Advance the simulation by `seconds` [s] of simulated time with the slider controls."""
        import mujoco

        dt = self.model.opt.timestep
        n = max(1, int(round(seconds / dt)))
        rate = (self.ctrl_range[:, 1] - self.ctrl_range[:, 0]) * dt / CTRL_RAMP_TIME
        bad = int(mujoco.mjtWarning.mjWARN_BADQACC)
        for _ in range(n):
            # The keyframes put the field on; the sliders then override their controls,
            # ramped toward the slider values.
            self.scene.apply_keyframes(self.data.time)
            self.applied += np.clip(self.ctrl - self.applied, -rate, rate)
            self.data.ctrl[:] = self.applied
            warnings = self.data.warning[bad].number
            mujoco.mj_step(self.model, self.data)
            if self.data.warning[bad].number > warnings:
                self.resets += 1  # MuJoCo reset the diverged state; the readout says so
                break
        mujoco.mj_kinematics(self.model, self.data)

    def reset(self) -> None:
        """Back to the scene's initial state (controls kept)."""
        import mujoco

        mujoco.mj_resetData(self.model, self.data)
        self.applied = np.clip(self.data.ctrl.copy(), *self.ctrl_range.T)
        mujoco.mj_forward(self.model, self.data)

    def geom_meshes(self) -> list[GeomMesh]:
        """The visible geoms (groups 0-2, not transparent, not planes) as meshes."""
        out = []
        m = self.model
        for g in range(m.ngeom):
            rgba = m.geom_rgba[g]
            if m.geom_group[g] > 2 or rgba[3] == 0.0:
                continue
            mesh = _geom_mesh(m, g)
            if mesh is None:
                continue
            # Geoms on bodies welded to the world never move: their pose is sent once.
            body = m.geom_bodyid[g]
            moving = bool(m.body_weldid[body] != 0 or m.body_mocapid[body] >= 0)
            color = tuple(int(255 * c) for c in rgba[:3])
            out.append(GeomMesh(g, mesh[0], mesh[1], color, float(rgba[3]), moving))  # type: ignore[arg-type]
        return out

    def geom_poses(self, geoms: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """World positions (k, 3) [m] and orientations (k, 4) wxyz of the given geoms."""
        import mujoco

        idx = np.asarray(geoms, dtype=int)
        quat = np.empty((len(idx), 4))
        for k, g in enumerate(idx):
            mujoco.mju_mat2Quat(quat[k], self.data.geom_xmat[g])
        return self.data.geom_xpos[idx].copy(), quat

    def extent(self) -> float:
        """A length [m] that frames the scene (the model's extent)."""
        return float(max(self.model.stat.extent, 0.05))


def _ctrl_ranges(model: Any) -> np.ndarray:
    """Slider range (nu, 2) of each actuator's control, from the scene's own limits, first found:

    1. its `ctrlrange` (when `ctrllimited`);
    2. a position servo (fixed gain kp, affine bias -kp q) on a limited joint: the joint's range;
    3. a motor (fixed gain g, no bias) with a `forcerange`: forcerange / g;
    4. else 0 to DEFAULT_CTRL_MAX (a tendon tension [N]).
    """
    import mujoco

    out = np.tile([0.0, DEFAULT_CTRL_MAX], (model.nu, 1))
    fixed, none, affine = (
        int(mujoco.mjtGain.mjGAIN_FIXED),
        int(mujoco.mjtBias.mjBIAS_NONE),
        int(mujoco.mjtBias.mjBIAS_AFFINE),
    )
    for i in range(model.nu):
        gain = float(model.actuator_gainprm[i, 0])
        fixed_gain = int(model.actuator_gaintype[i]) == fixed and gain != 0.0
        bias = int(model.actuator_biastype[i])
        joint = int(model.actuator_trnid[i, 0])
        on_joint = int(model.actuator_trntype[i]) == int(mujoco.mjtTrn.mjTRN_JOINT)
        if model.actuator_ctrllimited[i]:
            out[i] = model.actuator_ctrlrange[i]
        elif (
            fixed_gain
            and bias == affine
            and model.actuator_biasprm[i, 1] == -gain
            and on_joint
            and model.jnt_limited[joint]
        ):
            out[i] = model.jnt_range[joint]
        elif fixed_gain and bias == none and model.actuator_forcelimited[i]:
            out[i] = np.sort(model.actuator_forcerange[i] / gain)
    return out


def _geom_mesh(m: Any, g: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Vertices (k, 3) and faces (f, 3) of geom g in its own frame (None: not drawn)."""
    import mujoco
    import trimesh

    gt = int(m.geom_type[g])
    size = m.geom_size[g]
    T = mujoco.mjtGeom
    if gt == T.mjGEOM_SPHERE:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=size[0])
    elif gt == T.mjGEOM_CAPSULE:
        mesh = trimesh.creation.capsule(height=2 * size[1], radius=size[0], count=[10, 10])
    elif gt == T.mjGEOM_CYLINDER:
        mesh = trimesh.creation.cylinder(radius=size[0], height=2 * size[1], sections=16)
    elif gt == T.mjGEOM_BOX:
        mesh = trimesh.creation.box(extents=2 * size)
    elif gt == T.mjGEOM_ELLIPSOID:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        mesh.apply_scale(size)
    elif gt == T.mjGEOM_MESH:
        i = int(m.geom_dataid[g])
        v0, nv = int(m.mesh_vertadr[i]), int(m.mesh_vertnum[i])
        f0, nf = int(m.mesh_faceadr[i]), int(m.mesh_facenum[i])
        return m.mesh_vert[v0 : v0 + nv].astype(float), m.mesh_face[f0 : f0 + nf].astype(np.int32)
    else:
        return None  # planes (the page draws a grid), height fields, lines
    return np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces, dtype=np.int32)
