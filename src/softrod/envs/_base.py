"""The shared shell of every softrod environment: a MuJoCo model, substepping, rendering, pickling.

A task subclasses `MujocoEnv` and supplies five pieces:

* `_build_spec()` -> `mujoco.MjSpec` (the scene; called at construction and after unpickling),
* `_bind()` (cache ids from `self.model` after compiling),
* `_reset_task()` (sample the episode from `self.np_random`; set `self.data`),
* `_apply_action(action)` (write `self.data.ctrl`), and
* `_evaluate()` -> `(observation, reward_terms, terminated, info)`.

The base sums the reward terms (each is reported in `info["reward_terms"]`), counts steps and
truncates at `episode_steps`, and reports a physics blow-up as a terminated episode with
`info["unstable"] = True` and the `unstable` reward term (-1) instead of raising.
"""

from __future__ import annotations

import copy
import re
from collections import deque
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import mujoco
import numpy as np

if TYPE_CHECKING:
    from softrod.mujoco import TendonFriction

__all__ = [
    "MujocoEnv",
    "Randomization",
    "UNSTABLE_PENALTY",
    "OBS_LIMIT",
    "OBS_MODES",
    "PIXEL_SIZE",
    "obs_box",
]

#: Reward added on the step where the simulation blows up (the episode then terminates).
UNSTABLE_PENALTY = -1.0
#: Bound of every observation component; observations are clipped to it (a blown-up simulation
#: must still return an observation inside the space).
OBS_LIMIT = 1.0e3
#: Observation modes of the environments that offer pixels: the state vector, or an RGB image.
OBS_MODES = ("state", "rgb")
#: Side of the square pixel observation [px] (the Atari/DrQ convention).
PIXEL_SIZE = 84
#: Full physics state saved when pickling (positions, velocities, controls, mocap, time, ...).
_STATE_SPEC = mujoco.mjtState.mjSTATE_INTEGRATION


def obs_box(n: int) -> gym.spaces.Box:
    """The observation space of n float32 components bounded by +-OBS_LIMIT."""
    return gym.spaces.Box(-OBS_LIMIT, OBS_LIMIT, (n,), dtype=np.float32)


def _clean(obs: np.ndarray) -> np.ndarray:
    obs = np.nan_to_num(obs, nan=0.0, posinf=OBS_LIMIT, neginf=-OBS_LIMIT)
    return np.clip(obs, -OBS_LIMIT, OBS_LIMIT).astype(np.float32)


#: Joints of a continuum robot's MuJoCo chain (`j3x`, `tdcr/j10z`): what randomisation touches.
_CHAIN_JOINT = re.compile(r"(^|/)j\d+[xyz]$")


@dataclass(frozen=True)
class Randomization:
    """Domain randomisation of the continuum robot (issue 17, item 6), drawn at every reset
    from the environment's `np_random`. A relative half-range r draws a factor uniform in
    [1 - r, 1 + r]. All zero (the default) is off: nothing is drawn or changed.

    Only the robot's chain (joints named `j<k><axis>`, their bodies and the tendon actuators)
    is perturbed; the task's objects (a switch's hinge friction, a Panda) keep their values.
    """

    modulus: float = 0.0
    """Backbone elastic modulus: one factor on every chain joint's stiffness (E I / ds)."""
    tendon_stiffness: float = 0.0
    """Tendon axial stiffness: one factor per tendon actuator (its position gain)."""
    disk_mass: float = 0.0
    """Link (disk) mass and inertia: one factor per chain body."""
    damping: float = 0.0
    """Joint damping of the chain: one factor on every chain joint."""
    joint_friction: float = 0.0
    """Dry joint friction: every chain joint's frictionloss uniform in [0, value] [N m]."""
    tendon_friction: float = 0.0
    """Tendon friction with memory (docs/friction.md: capstan law at every disk hole, stick
    band from the robot description): each tendon's coefficient mu uniform in [0, value] [-],
    applied by `softrod.mujoco.TendonFriction` before every substep."""
    observation_noise: float = 0.0
    """Std of Gaussian noise added to every state-observation component (its units)."""
    action_delay: int = 0
    """Largest action delay [steps]: each episode's delay is uniform in {0, ..., value}."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not value >= 0:
                raise ValueError(f"randomize.{f.name} must be >= 0, got {value}")
        for name in ("modulus", "tendon_stiffness", "disk_mass", "damping"):
            if getattr(self, name) >= 1:
                raise ValueError(f"randomize.{name} must be < 1, got {getattr(self, name)}")
        if int(self.action_delay) != self.action_delay:
            raise ValueError(f"randomize.action_delay must be an integer, got {self.action_delay}")

    @property
    def enabled(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    @classmethod
    def coerce(cls, value: Randomization | dict[str, Any] | None) -> Randomization:
        """None, a dict of the fields or an instance -> an instance (unknown keys refused)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise ValueError(f"randomize must be a dict or Randomization, got {value!r}")
        unknown = set(value) - {f.name for f in fields(cls)}
        if unknown:
            known = ", ".join(f.name for f in fields(cls))
            raise ValueError(f"unknown randomize options {sorted(unknown)}; known: {known}")
        return cls(**value)


def _pixel_renderer(model: mujoco.MjModel) -> mujoco.Renderer:
    """A PIXEL_SIZE renderer without shadows and multisampling: at 84 x 84 px they change
    little, and on a software GL they cost 10x the frame (1.35 s vs 0.13 s measured)."""
    quality = model.vis.quality
    saved = (quality.shadowsize, quality.offsamples)
    quality.shadowsize, quality.offsamples = 256, 0
    try:
        renderer = mujoco.Renderer(model, PIXEL_SIZE, PIXEL_SIZE)
    finally:
        quality.shadowsize, quality.offsamples = saved
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
    return renderer


class MujocoEnv(gym.Env[np.ndarray, np.ndarray]):
    """Base class of the softrod Gymnasium environments (see the module docstring).

    Parameters
    ----------
    episode_steps : steps per episode; the episode is truncated after this many.
    render_mode : None or "rgb_array".
    width, height : rendered image size [px].
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 20}  # noqa: RUF012
    #: Control period [s] (one `step`); subclasses set it and the substep count follows.
    control_period: float = 0.05
    #: Camera used by `render` (a camera name of the scene).
    camera: str = "main"

    def __init__(
        self,
        *,
        episode_steps: int,
        render_mode: str | None = None,
        width: int = 320,
        height: int = 240,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        if episode_steps < 1:
            raise ValueError(f"episode_steps must be >= 1, got {episode_steps}")
        if width < 16 or height < 16:
            raise ValueError(f"width and height must be >= 16 px, got {width} x {height}")
        self.render_mode = render_mode
        self.episode_steps = int(episode_steps)
        self.width, self.height = int(width), int(height)
        self._renderer: mujoco.Renderer | None = None
        self._pixel_renderer: mujoco.Renderer | None = None
        self.obs_mode = "state"
        self.obs_camera = self.camera
        self.randomize = Randomization()
        self.action_delay_steps = 0
        self._pending: deque[np.ndarray] = deque()
        self._dr_tendon_friction: TendonFriction | None = None  # randomize.tendon_friction
        self._step_count = 0
        self._compile()
        self.metadata = dict(self.metadata)
        self.metadata["render_fps"] = int(round(1.0 / self.control_period))

    # -- task hooks ---------------------------------------------------------------------------

    def _build_spec(self) -> mujoco.MjSpec:
        raise NotImplementedError

    def _bind(self) -> None:
        """Cache ids and constants of the compiled model (override)."""

    def _reset_task(self) -> None:
        raise NotImplementedError

    def _apply_action(self, action: np.ndarray) -> None:
        raise NotImplementedError

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        raise NotImplementedError

    def _before_substep(self) -> None:
        """Hook run before every physics substep (override, e.g. `MagneticField.apply`)."""

    def _after_substeps(self) -> None:
        """Hook run once per `step` after the physics (override, e.g. for event tracking)."""

    # -- model --------------------------------------------------------------------------------

    def _compile(self) -> None:
        spec = self._build_spec()
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self.n_substeps = max(1, int(round(self.control_period / self.model.opt.timestep)))
        self._bind()

    @property
    def dt(self) -> float:
        """Control period actually simulated [s] (substeps x timestep)."""
        return self.n_substeps * float(self.model.opt.timestep)

    # -- domain randomisation -----------------------------------------------------------------

    def _set_randomization(self, randomize: Randomization | dict[str, Any] | None) -> None:
        """Enable the randomisation options (see `Randomization`); call after compiling."""
        self.randomize = Randomization.coerce(randomize)
        if not self.randomize.enabled:
            return
        m = self.model
        names = [m.joint(i).name for i in range(m.njnt)]
        joints = np.array([i for i, n in enumerate(names) if _CHAIN_JOINT.search(n)], dtype=int)
        if joints.size == 0:
            raise ValueError("randomize needs a continuum chain (joints j<k><axis>) in the scene")
        tendon = int(mujoco.mjtTrn.mjTRN_TENDON)
        self._dr_joints = joints
        self._dr_dofs = m.jnt_dofadr[joints]
        self._dr_bodies = np.unique(m.jnt_bodyid[joints])
        self._dr_acts = np.flatnonzero(m.actuator_trntype == tendon)
        # Nominal values, restored before every draw.
        self._dr_nominal = {
            "stiffness": m.jnt_stiffness.copy(),
            "damping": m.dof_damping.copy(),
            "frictionloss": m.dof_frictionloss.copy(),
            "mass": m.body_mass.copy(),
            "inertia": m.body_inertia.copy(),
            "gain": m.actuator_gainprm.copy(),
            "bias": m.actuator_biasprm.copy(),
        }
        self._dr_factors: dict[str, np.ndarray] | None = None
        if self.randomize.tendon_friction > 0:
            from softrod.mujoco import TendonFriction

            chain = getattr(self, "chain", None)
            if chain is None or not chain.tendons:
                raise ValueError(
                    "randomize.tendon_friction needs a tendon-driven chain in the scene, got "
                    f"{self.randomize.tendon_friction} for {type(self).__name__}"
                )
            self._dr_tendon_friction = TendonFriction(m, chain, mu=0.0)

    def _draw_randomization(self) -> None:
        """Draw this episode's perturbation from `np_random` and write it into the model."""
        r, rng = self.randomize, self.np_random

        def factor(half: float, n: int) -> np.ndarray:
            return rng.uniform(1.0 - half, 1.0 + half, n) if half > 0 else np.ones(n)

        self._dr_factors = {
            "modulus": factor(r.modulus, 1),
            "tendon": factor(r.tendon_stiffness, self._dr_acts.size),
            "mass": factor(r.disk_mass, self._dr_bodies.size),
            "damping": factor(r.damping, 1),
            "friction": rng.uniform(0.0, r.joint_friction, self._dr_joints.size)
            if r.joint_friction > 0
            else np.zeros(0),
        }
        self.action_delay_steps = int(rng.integers(0, r.action_delay + 1)) if r.action_delay else 0
        # Drawn last, so the other options' draws are those of a run without it.
        if self._dr_tendon_friction is not None:
            hook = self._dr_tendon_friction
            hook.mu[:] = rng.uniform(0.0, r.tendon_friction, hook.n_tendons)
        self._apply_randomization()

    def _apply_randomization(self) -> None:
        """Write the nominal model values times the drawn factors."""
        if self._dr_factors is None:
            return
        m, nom, f = self.model, self._dr_nominal, self._dr_factors
        j, d, b, a = self._dr_joints, self._dr_dofs, self._dr_bodies, self._dr_acts
        m.jnt_stiffness[:] = nom["stiffness"]
        m.jnt_stiffness[j] *= f["modulus"][0]
        m.dof_damping[:] = nom["damping"]
        m.dof_damping[d] *= f["damping"][0]
        m.dof_frictionloss[:] = nom["frictionloss"]
        if f["friction"].size:
            m.dof_frictionloss[d] = f["friction"]
        m.body_mass[:] = nom["mass"]
        m.body_mass[b] *= f["mass"]
        m.body_inertia[:] = nom["inertia"]
        m.body_inertia[b] *= f["mass"][:, None]
        # A position actuator's force is kp (ctrl - length): gain kp, bias -kp.
        m.actuator_gainprm[:] = nom["gain"]
        m.actuator_biasprm[:] = nom["bias"]
        m.actuator_gainprm[a, 0] *= f["tendon"]
        m.actuator_biasprm[a, 1] *= f["tendon"]

    # -- pixel observations -------------------------------------------------------------------

    def _set_obs_mode(self, obs_mode: str, obs_camera: str | None) -> None:
        """Switch the observation to an RGB image (obs_mode "rgb"): (PIXEL_SIZE, PIXEL_SIZE, 3)
        uint8 from the scene camera `obs_camera` (default: the render camera); the state
        vector's space stays in `state_space`. "state" keeps the environment as it was."""
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
        camera = self.camera if obs_camera is None else str(obs_camera)
        if mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_CAMERA, camera) < 0:
            names = [self.model.camera(i).name for i in range(self.model.ncam)]
            raise ValueError(f"obs_camera must be a camera of the scene {names}, got {camera!r}")
        self.obs_mode, self.obs_camera = obs_mode, camera
        self.state_space = self.observation_space
        if obs_mode == "rgb":
            shape = (PIXEL_SIZE, PIXEL_SIZE, 3)
            self.observation_space = gym.spaces.Box(0, 255, shape, dtype=np.uint8)

    def _observe(self, obs: np.ndarray) -> np.ndarray:
        """The observation returned to the agent: the clean state vector or the camera image."""
        if self.obs_mode == "state":
            if self.randomize.observation_noise > 0:
                noise = self.np_random.normal(0.0, self.randomize.observation_noise, obs.shape)
                obs = obs + noise
            return _clean(obs)
        if self._pixel_renderer is None:
            self._pixel_renderer = _pixel_renderer(self.model)
        self._pixel_renderer.update_scene(self.data, camera=self.obs_camera)
        return self._pixel_renderer.render().copy()

    # -- Gymnasium API ------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if self.randomize.enabled:
            self._draw_randomization()
            self._pending = deque()
        mujoco.mj_resetData(self.model, self.data)
        if self._dr_tendon_friction is not None:
            # A new episode starts with slack tendons and no memory.
            self._dr_tendon_friction.reset()
        self._step_count = 0
        self._reset_task()
        mujoco.mj_forward(self.model, self.data)
        obs, _, _, info = self._evaluate()
        return self._observe(obs), info

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = np.asarray(action, dtype=np.float64).reshape(self.action_space.shape)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"action must be finite, got {a}")
        space: Any = self.action_space
        a = np.clip(a, space.low, space.high)
        if self.action_delay_steps > 0:
            # The command reaches the robot action_delay_steps steps late; until then the
            # previous command holds.
            self._pending.append(a)
            if len(self._pending) > self.action_delay_steps:
                self._apply_action(self._pending.popleft())
        else:
            self._apply_action(a)
        warn = self.data.warning[mujoco.mjtWarning.mjWARN_BADQACC]
        n_bad = warn.number
        for _ in range(self.n_substeps):
            self._before_substep()
            if self._dr_tendon_friction is not None:
                self._dr_tendon_friction.apply(self.model, self.data)
            mujoco.mj_step(self.model, self.data)
        # mj_step leaves positions, contacts and velocities of the state *before* its last
        # integration; recompute them so observations and rewards describe the current state
        # (and a pickled copy, which recomputes them on load, continues bit-identically).
        mujoco.mj_forward(self.model, self.data)
        unstable = warn.number > n_bad
        self._after_substeps()
        self._step_count += 1
        obs, terms, terminated, info = self._evaluate()
        if unstable:
            terms = dict(terms)
            terms["unstable"] = UNSTABLE_PENALTY
            terminated = True
            info["unstable"] = True
        info["reward_terms"] = terms
        reward = float(sum(terms.values()))
        truncated = self._step_count >= self.episode_steps and not terminated
        return self._observe(obs), reward, terminated, truncated, info

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode; pass render_mode='rgb_array'")
            return None
        if self._renderer is None:
            self._renderer = mujoco.Renderer(self.model, self.height, self.width)
        self._renderer.update_scene(self.data, camera=self.camera)
        return self._renderer.render().copy()

    def close(self) -> None:
        for name in ("_renderer", "_pixel_renderer"):
            renderer = getattr(self, name, None)
            if renderer is not None:
                renderer.close()
                setattr(self, name, None)

    # -- pickling: rebuild the model from the constructor arguments, restore the state -------

    def __getstate__(self) -> dict[str, Any]:
        skip = ("model", "data", "_renderer", "_pixel_renderer")
        state = {k: v for k, v in self.__dict__.items() if k not in skip}
        state = copy.copy(state)
        size = mujoco.mj_stateSize(self.model, _STATE_SPEC)
        buf = np.empty(size)
        mujoco.mj_getState(self.model, self.data, buf, _STATE_SPEC)
        state["_pickled_physics"] = buf
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        buf = state.pop("_pickled_physics")
        self.__dict__.update(state)
        self._renderer = None
        self._pixel_renderer = None
        self.__dict__.setdefault("obs_mode", "state")
        self.__dict__.setdefault("obs_camera", self.camera)
        self.__dict__.setdefault("randomize", Randomization())
        self.__dict__.setdefault("action_delay_steps", 0)
        self.__dict__.setdefault("_pending", deque())
        self.__dict__.setdefault("_dr_tendon_friction", None)
        self._compile()
        if self.randomize.enabled:
            # The recompiled model is nominal: write this episode's perturbation again.
            self._apply_randomization()
        mujoco.mj_setState(self.model, self.data, buf, _STATE_SPEC)
        mujoco.mj_forward(self.model, self.data)
