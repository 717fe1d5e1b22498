"""`make_batched`: many worlds of one softrod environment stepped together with MuJoCo Warp.

One host (CPU) environment gives the MuJoCo model and its bookkeeping; `mujoco_warp.put_model`
copies the model to the device and every world keeps its own task state (target, commands,
trajectory) in device arrays. One `step` is, for all worlds at once: action kernel -> the
environment's physics substeps (`mujoco_warp.step`, with a per-substep kernel where the task
applies loads) -> a forward pass (contact-free models with `lean`: only what the observation
reads) -> observation / reward / success kernel. On CUDA the step is captured once as a CUDA
graph and replayed. `lean` (default) and `direct_solve` (opt-in): see `BatchedEnv`.

Contract (a `gymnasium.vector.VectorEnv`, tensors are torch tensors on the device, shared with
the Warp arrays without copies): `reset(seed=)` -> (obs (n, n_obs) float32, info); `step(actions
(n, n_act))` -> (obs, reward (n,) float32, terminated (n,) bool, truncated (n,) bool, info) with
`info["success"]` (n,) bool, `info["distance"]` (n,) [m], `info["unstable"]` (n,) bool and
`info["overflow"]` (n,) bool. Every
world has the same horizon (the host environment's `episode_steps`) and starts together, so the
worlds truncate together; auto-reset is Gymnasium's SAME_STEP mode: the step that ends an
episode returns the first observation of the next one, and the last one in `info["final_obs"]`
(with `info["final_info"]`). The tasks terminate only when a world is unstable, the counterpart
of the CPU envs' `unstable` (MuJoCo C's bad-acceleration warning, which MuJoCo Warp does not
raise): its state, reward or distance is non-finite or its state beyond MuJoCo's 1e10. Such a
world gets the reward `UNSTABLE_PENALTY`, `terminated` and `info["unstable"]` True, and is reset
alone with a new task (the others continue; it then runs to the shared horizon, a shorter
episode). A world whose contacts or constraint rows overflowed MuJoCo Warp's buffers in the
step (its physics then dropped contacts: MuJoCo Warp's per-world `Data.overflow` capacity bits,
or more rows than `njmax`) is treated the same way, with `info["overflow"]` True: reward
`UNSTABLE_PENALTY`, terminated, reset alone; `overflow_steps()` counts such world-steps.
Observations are always finite (NaN -> 0, clipped to +-OBS_LIMIT, as the CPU envs').

Batched (matching the CPU env step for step, `compare_with_cpu`): see `BATCHED_ENV_IDS`; the
others and why are in `UNBATCHED_ENV_IDS`.

Optional: needs the `warp` extra (`pip install softrod[warp]`) and torch.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from softrod.envs._base import UNSTABLE_PENALTY

__all__ = [
    "BATCHED_ENV_IDS",
    "UNBATCHED_ENV_IDS",
    "BatchedEnv",
    "compare_with_cpu",
    "make_batched",
]

#: Environments `make_batched` runs (MuJoCo Warp, cross-checked against the CPU env).
BATCHED_ENV_IDS = (
    "softrod/Reach-v0",
    "softrod/ReachObstacle-v0",
    "softrod/TrackTrajectory-v1",
    "softrod/PlanarReach-v0",
    "softrod/MagneticNavigate-v0",
)
#: The other registered environments and why `make_batched` does not run them (yet).
UNBATCHED_ENV_IDS = {
    "softrod/SnakeLocomotion-v1": "free base on passive wheels: the forward-progress reward and "
    "the wheels' anisotropic friction are not ported to kernels",
    "softrod/InHandRotate-v1": "cube pose tracking, drop detection and force-controlled tendons "
    "are not ported to kernels",
    "softrod/PushCube-v1": "the quadruped's neck controller and the cube/target events are not "
    "ported to kernels",
    "softrod/WholeBodyGrasp-v0": "a staged task (wrap, lift, bin) with host-side event tracking "
    "and the Panda's joint controller; not ported to kernels",
    "softrod/FlipSwitch-v0": "a staged task (switch latch, retreat) with host-side event "
    "tracking and the Panda's joint controller; not ported to kernels",
}


def import_warp() -> tuple[Any, Any]:
    """Warp and MuJoCo Warp (`wp`, `mjw`), Warp's log quieted to warnings before it
    initializes; ImportError naming the `softrod[warp]` extra when either is missing."""
    try:
        import warp as wp

        # Keep stdout to the benchmark's `case.metric: value` lines: no banner, no compile log
        # (set before mujoco_warp is imported, which initializes Warp).
        wp.config.log_level = wp.LOG_WARNING
        import mujoco_warp as mjw
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ImportError(
            "batched environments need MuJoCo Warp: pip install 'softrod[warp]' "
            f"(mujoco-warp, warp-lang); import failed: {exc}"
        ) from None
    return wp, mjw


def _full_id(env_id: str) -> str:
    return env_id if env_id.startswith("softrod/") else f"softrod/{env_id}"


def make_batched(
    env_id: str, num_envs: int, device: str | None = None, **env_kwargs: Any
) -> BatchedEnv:
    """`num_envs` worlds of `env_id` (`Reach-v0` or `softrod/Reach-v0`) on the Warp `device`
    ("cuda:0", "cpu"; None: Warp's default); `env_kwargs` go to the host environment (its task
    settings are every world's). Raises ValueError for an environment it cannot run (the
    reason is in `UNBATCHED_ENV_IDS`)."""
    full = _full_id(env_id)
    if full in UNBATCHED_ENV_IDS:
        raise ValueError(f"{full} is not batched: {UNBATCHED_ENV_IDS[full]}")
    if full not in BATCHED_ENV_IDS:
        raise ValueError(f"unknown environment {env_id!r}; batched: {', '.join(BATCHED_ENV_IDS)}")
    return BatchedEnv(full, num_envs, device=device, **env_kwargs)


#: The MuJoCo Warp `Data` fields a step reads from the previous one: MuJoCo's integration state
#: (`mjSTATE_INTEGRATION`: time, physics, user inputs, warm start) and the sleep counters. Every
#: other field is recomputed by the next `mjw.forward` (`BatchedEnv.state_dict`).
_DATA_STATE_FIELDS = (
    "time",
    "qpos",
    "qvel",
    "act",
    "history",
    "plastic",
    "qacc_warmstart",
    "ctrl",
    "qfrc_applied",
    "xfrc_applied",
    "eq_active",
    "mocap_pos",
    "mocap_quat",
    "userdata",
    "tree_asleep",
)


class BatchedEnv(gym.vector.VectorEnv):  # type: ignore[type-arg]
    """`num_envs` worlds of one softrod environment on a Warp device (see the module).

    Attributes: `host` (the CPU env the model and settings come from), `device` (Warp
    device), `torch_device`, `episode_steps`, and the Warp arrays `obs`, `reward`, `distance`,
    `success` (int32), `action` (all with a leading world axis; `warp.to_torch` shares them).
    `contact_free` (True when no contact can occur, see `lean`), `constraint_free` (True when
    no constraint row can exist: `contact_free` and no equality, limit or friction loss).
    nconmax, njmax : MuJoCo Warp's contact / constraint capacity per world (None: its default;
        1 with `lean` and `constraint_free`, where no row is ever written; with `lean` and
        contacts, `_capacity`: every geom pair that may touch x `CONTACTS_PER_PAIR` contacts x
        their rows, plus limit, friction-loss and equality rows, e.g. ReachObstacle 58 / 232).
        The attributes `nconmax`, `njmax` hold the sizes used. A world that overflows them
        is flagged and reset (`info["overflow"]`, see the module), never silently kept.
    lean : True (default): what cannot change a result is not run on the device, and the
        results are bit-for-bit those of MuJoCo Warp's defaults (tested). Contacts are switched
        off (`DisableBit.CONTACT`) where `contact_free` proves none possible (every collision
        pair's bounding spheres stay apart for any joint angles), a model with contacts gets
        buffers sized from its pairs (`_capacity`), a `constraint_free` model gets
        1-row contact/constraint buffers (none is ever written; MuJoCo Warp's kernels loop over
        the capacity), and after the substeps a contact-free step computes only what the
        observation reads (kinematics, subtree COM, body velocities: the same kernels) instead of
        a whole `mjw.forward` with its solves. False: MuJoCo Warp's defaults (the configuration
        before `lean`, kept for paired benchmarks).
    direct_solve : False (default). True, in a `constraint_free` model only: MuJoCo Warp's
        `opt.run_qacc_smooth = False` (experimental there): the step skips the iterative
        effective-metric solve for qacc_smooth (PCG, 7-14 iterations of 6 launches each on
        Reach, measured) and the Newton solver's first step solves the same linear system
        directly (dense Cholesky). Not bit-for-bit: float32 rounding moves (largest
        difference to lean over 25 steps: 6.0e-5 Reach, 1.3e-3 TrackTrajectory observation
        components), within the CPU cross-checks' tolerances but further from MuJoCo C on
        TrackTrajectory (observations 1.3e-3 vs 9.6e-5), hence opt-in.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012
        "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP
    }

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        device: str | None = None,
        nconmax: int | None = None,
        njmax: int | None = None,
        lean: bool = True,
        direct_solve: bool = False,
        **env_kwargs: Any,
    ) -> None:
        import softrod.envs  # noqa: F401  (registers the ids)

        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        wp, mjw = import_warp()
        import torch

        self._wp, self._mjw, self._torch = wp, mjw, torch
        wp.init()
        self.device = wp.get_device(device)
        self.torch_device = wp.device_to_torch(self.device)
        self.env_id = _full_id(env_id)
        host: Any = gym.make(self.env_id, disable_env_checker=True, **env_kwargs).unwrapped
        # One model serves every world, so per-episode robot perturbations (and the tendon
        # friction hook, a host-side force) would be silently dropped: refuse them.
        randomize = getattr(host, "randomize", None)
        if randomize is not None and randomize.enabled:
            host.close()
            raise ValueError(
                f"randomize is not batched (one model for all worlds), got {randomize}; "
                "use the CPU environment"
            )
        host.reset(seed=0)
        self.host = host
        self.num_envs = int(num_envs)
        self.single_observation_space = host.observation_space
        self.single_action_space = host.action_space
        self.observation_space = gym.vector.utils.batch_space(host.observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(host.action_space, num_envs)
        self._task = _task_for(self.env_id, host)
        from softrod.envs import _batched_kernels

        self._k = _batched_kernels
        self._rng = np.random.default_rng()
        self._rand_calls = 0
        n, f32 = self.num_envs, wp.float32
        n_obs = int(np.prod(host.observation_space.shape))
        n_act = int(np.prod(host.action_space.shape))
        m = host.model
        self.lean = bool(lean)
        self.contact_free = self.lean and _contacts_impossible(m, host.data)
        self.constraint_free = self.contact_free and _no_constraint_rows(m)
        if self.constraint_free:
            # No row is ever written: the smallest buffers (0 would take MuJoCo Warp's
            # solver-less path, not bit-for-bit the same).
            nconmax = 1 if nconmax is None else nconmax
            njmax = 1 if njmax is None else njmax
        elif self.lean:
            # Contacts possible: capacity for every pair that may touch (`_capacity`).
            capacity = _capacity(m, host.data)
            if capacity is not None:
                nconmax = capacity[0] if nconmax is None else nconmax
                njmax = capacity[1] if njmax is None else njmax
        with wp.ScopedDevice(self.device):
            self.model = mjw.put_model(m)
            if self.contact_free:
                self.model.opt.disableflags |= int(mjw.DisableBit.CONTACT)
            if self.constraint_free and direct_solve:
                self.model.opt.run_qacc_smooth = False
            self.data = mjw.put_data(m, host.data, nworld=n, nconmax=nconmax, njmax=njmax)
            self.obs = wp.zeros((n, n_obs), dtype=f32)
            self.action = wp.zeros((n, n_act), dtype=f32)
            self.reward = wp.zeros(n, dtype=f32)
            self.distance = wp.zeros(n, dtype=f32)
            self.success = wp.zeros(n, dtype=wp.int32)
            self.clock = wp.zeros(1, dtype=wp.int32)
            self.unstable = wp.zeros(n, dtype=wp.int32)
            self.overflowed = wp.zeros(n, dtype=wp.int32)
            self.overflow_count = wp.zeros(1, dtype=wp.int32)
            self._task.allocate(self)
        to_t = wp.to_torch
        self._obs_t, self._action_t = to_t(self.obs), to_t(self.action)
        self._reward_t, self._distance_t = to_t(self.reward), to_t(self.distance)
        self._success_t, self._unstable_t = to_t(self.success), to_t(self.unstable)
        self._overflowed_t = to_t(self.overflowed)
        self.nconmax, self.njmax = int(self.data.naconmax) // n, int(self.data.njmax)
        # MuJoCo Warp's capacity bits (not its solver-iteration bits, which are no overflow).
        ov = mjw.OverflowType
        self._overflow_mask = int(ov.ALL & ~(ov.ITERATIONS | ov.LS_ITERATIONS))
        self._false = torch.zeros(n, dtype=torch.bool, device=self.torch_device)
        self._true = torch.ones(n, dtype=torch.bool, device=self.torch_device)
        self._step_count = 0
        self._graph: Any = None
        self.task_params: dict[str, np.ndarray] = {}

    @property
    def episode_steps(self) -> int:
        return int(self.host.episode_steps)

    @property
    def n_substeps(self) -> int:
        return int(self.host.n_substeps)

    # -- Gymnasium vector API -----------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every world; draws every world's task from a Generator seeded with `seed`
        (an int; None keeps the current stream). Returns (obs, info) as torch tensors."""
        if isinstance(seed, list | tuple):
            seed = seed[0]
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        params = (options or {}).get("task_params")
        self._reset_worlds(params)
        return self._obs_t, self._info()

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """One control step of every world; `actions` (num_envs, n_act) in the action box (a
        torch tensor, numpy array or Warp array). Returns torch tensors (see the module)."""
        wp, torch = self._wp, self._torch
        if isinstance(actions, wp.array):
            src = actions
        else:
            t = torch.as_tensor(actions, dtype=torch.float32, device=self.torch_device)
            src = wp.from_torch(t.detach().contiguous(), dtype=wp.float32)
        if tuple(src.shape) != tuple(self.action.shape):
            raise ValueError(f"action must have shape {self.action.shape}, got {src.shape}")
        wp.copy(self.action, src)
        self._advance()
        self._step_count += 1
        unstable = self._unstable_t.bool()
        overflow = self._overflowed_t.bool()
        # Unstable or overflowed (its contacts/constraints cut off): terminated and reset.
        failed = unstable | overflow
        reward = torch.where(failed, UNSTABLE_PENALTY, self._reward_t)
        info = self._info()
        info["success"] &= ~failed
        info["unstable"] = unstable
        info["overflow"] = overflow
        horizon = self._step_count >= self.episode_steps
        # One small device -> host read per step: failed worlds are rare, so branch on it.
        any_failed = bool(failed.any())
        if not horizon and not any_failed:
            return self._obs_t, reward, self._false, self._false, info
        # SAME_STEP auto-reset: keep the last observation and info, start the next episodes.
        info["final_obs"] = self._obs_t.clone()
        info["final_info"] = {k: v.clone() for k, v in info.items() if k != "final_obs"}
        if horizon:
            self._reset_worlds(None)
        else:
            self._reset_unstable(failed)
        info.update(self._info())
        info["unstable"] = unstable
        info["overflow"] = overflow
        truncated = ~failed if horizon else self._false
        return self._obs_t, reward, failed, truncated, info

    def random_actions(self) -> None:
        """Fill `self.action` with seeded uniform actions in [-1, 1] on the device."""
        self._wp.launch(
            self._k.random_actions,
            dim=self.action.shape,
            inputs=[self._rand_calls],
            outputs=[self.action],
            device=self.device,
        )
        self._rand_calls += 1

    def step_random(self) -> None:
        """A step with `random_actions`, no tensors returned (for throughput measurements);
        resets every world at the horizon like `step`."""
        self.random_actions()
        self._advance()
        self._step_count += 1
        if self._step_count >= self.episode_steps:
            self._reset_worlds(None)

    def overflow(self) -> bool:
        """True when a world ran out of contact or constraint capacity (its results that step
        unreliable) in any step since the env was made (`overflow_steps`), or now."""
        flags = getattr(self.data, "overflow", None)
        now = flags is not None and np.any((flags.numpy() & self._overflow_mask) != 0)
        return bool(now or self.overflow_steps() > 0)

    def overflow_steps(self) -> int:
        """World-steps that overflowed since the env was made (`info["overflow"]`)."""
        return int(self.overflow_count.numpy()[0])

    def close(self, **kwargs: Any) -> None:
        self.host.close()

    # -- checkpoints ----------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything the worlds' continuation depends on, for `load_state_dict` (a resumed
        training run continues bit for bit): the MuJoCo Warp state of every world
        (`_DATA_STATE_FIELDS`), the task arrays (curvature commands, targets, error sums,
        contact counts, fields), the outputs of the last step (obs, reward, distance, success,
        unstable, overflowed), the episode clock and step counter, every world's task
        parameters and the state of the Generator that draws the next tasks.

        Returns a dict: `env_id`, `num_envs`, `step_count` and `rand_calls` (ints), `rng` (the
        numpy bit generator's state), `task_params` ({name: array (num_envs, ...)}), `arrays`
        ({name: torch tensor, a copy on `torch_device`, leading world axis except `clock` (1,)}).
        """
        arrays = {name: self._wp.to_torch(a).clone() for name, a in self._saved_arrays().items()}
        return {
            "env_id": self.env_id,
            "num_envs": self.num_envs,
            "step_count": self._step_count,
            "rand_calls": self._rand_calls,
            "rng": self._rng.bit_generator.state,
            "task_params": {k: np.array(v, copy=True) for k, v in self.task_params.items()},
            "arrays": arrays,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a `state_dict` of a BatchedEnv of the same environment, settings and
        `num_envs` (arrays may be torch tensors on any device or numpy arrays), in place (a
        captured CUDA graph keeps working); derived quantities (frames, contacts) are recomputed
        by a forward pass. ValueError naming the field for another environment or shape. A
        checkpoint from before the overflow flag (no `overflowed` array) restores it as zeros."""
        wp, torch = self._wp, self._torch
        for key, mine in (("env_id", self.env_id), ("num_envs", self.num_envs)):
            if state.get(key) != mine:
                raise ValueError(f"state[{key!r}] must be {mine!r}, got {state.get(key)!r}")
        targets = self._saved_arrays()
        given = dict(state["arrays"])
        # Checkpoints written before the overflow flag existed: no world flagged.
        given.setdefault("overflowed", torch.zeros(self.num_envs, dtype=torch.int32))
        if set(given) != set(targets):
            diff = sorted(set(given) ^ set(targets))
            raise ValueError(f"state['arrays'] must name {sorted(targets)}, differs in {diff}")
        views = {name: wp.to_torch(a) for name, a in targets.items()}
        for name, view in views.items():
            value = torch.as_tensor(given[name])
            if tuple(value.shape) != tuple(view.shape):
                raise ValueError(
                    f"state['arrays'][{name!r}] must have shape {tuple(view.shape)}, "
                    f"got {tuple(value.shape)}"
                )
        for name, view in views.items():
            view.copy_(torch.as_tensor(given[name]).to(device=view.device, dtype=view.dtype))
        rng = np.random.default_rng()
        rng.bit_generator.state = state["rng"]
        self._rng = rng
        self.task_params = {k: np.array(v, copy=True) for k, v in state["task_params"].items()}
        self._step_count = int(state["step_count"])
        self._rand_calls = int(state["rand_calls"])
        # As after a step: the derived quantities of the restored state (a step recomputes them
        # from the state before it reads them).
        with wp.ScopedDevice(self.device):
            self._mjw.forward(self.model, self.data)

    def _saved_arrays(self) -> dict[str, Any]:
        """The Warp arrays `state_dict` saves, by name (empty ones left out)."""
        out = {f"data.{f}": getattr(self.data, f, None) for f in _DATA_STATE_FIELDS}
        out |= {f"task.{k}": a for k, a in self._task.saved_arrays(self).items()}
        out |= {
            "obs": self.obs,
            "action": self.action,
            "reward": self.reward,
            "distance": self.distance,
            "success": self.success,
            "unstable": self.unstable,
            "overflowed": self.overflowed,
            "clock": self.clock,
        }
        return {k: a for k, a in out.items() if a is not None and a.size > 0}

    # -- internals ----------------------------------------------------------------------------

    def _info(self) -> dict[str, Any]:
        return {"success": self._success_t.bool(), "distance": self._distance_t.clone()}

    def _reset_worlds(self, params: dict[str, np.ndarray] | None) -> None:
        wp, mjw = self._wp, self._mjw
        if params is None:
            params = self._task.sample(self._rng, self.num_envs)
        self.task_params = params
        with wp.ScopedDevice(self.device):
            mjw.reset_data(self.model, self.data)
            self.clock.zero_()
            self._task.reset(self, params)
            mjw.forward(self.model, self.data)
            self._task.evaluate(self)
            self.unstable.zero_()
            self.overflowed.zero_()
        self._step_count = 0

    def _reset_unstable(self, mask: Any) -> None:
        """Reset the worlds of the bool tensor `mask` (n,) (unstable or overflowed) with new
        tasks; the others keep their state (their task arrays and outputs are restored after
        the shared kernels)."""
        wp, mjw = self._wp, self._mjw
        rows = mask.nonzero().flatten().cpu().numpy()
        new = self._task.sample(self._rng, self.num_envs)
        params = {k: np.array(v, copy=True) for k, v in self.task_params.items()}
        for k, v in params.items():
            v[rows] = new[k][rows]
        self.task_params = params
        keep = ~mask
        state = [wp.to_torch(a) for a in self._task.state_arrays(self)]
        outputs = [self._obs_t, self._reward_t, self._distance_t, self._success_t]
        outputs += [wp.to_torch(a) for a in self._task.eval_arrays(self)]
        with wp.ScopedDevice(self.device):
            saved = [t.clone() for t in state]
            self._unstable_t.copy_(mask)  # the reset mask (cleared below)
            mjw.reset_data(self.model, self.data, reset=self.unstable)
            # `reset` writes every world's task arrays: put the continuing worlds' back.
            self._task.reset(self, params)
            for t, s in zip(state, saved, strict=True):
                t[keep] = s[keep]
            mjw.forward(self.model, self.data)
            saved = [t.clone() for t in outputs]
            self._task.evaluate(self)
            for t, s in zip(outputs, saved, strict=True):
                t[keep] = s[keep]
            self.unstable.zero_()
            self.overflowed.zero_()

    def _advance(self) -> None:
        wp = self._wp
        with wp.ScopedDevice(self.device):
            if self._graph is not None:
                wp.capture_launch(self._graph)
                return
            # The first step runs (and compiles) every kernel; on CUDA the step is then
            # captured once as a graph (recorded, not run), and later steps replay it.
            self._step_body()
            if self.device.is_cuda:
                with wp.ScopedCapture() as cap:
                    self._step_body()
                self._graph = cap.graph

    def _step_body(self) -> None:
        wp, mjw = self._wp, self._mjw
        self._task.apply_action(self)
        for _ in range(self.n_substeps):
            if self.lean and self._task.substep_loads:
                # Loads at the substep's own frames: MuJoCo Warp's step in its two halves
                # (position and velocity stages; then forces, solve, integration), the same
                # kernels as kinematics + step with the kinematics run once instead of twice.
                mjw.step1(self.model, self.data)
                self._task.apply_loads(self)
                mjw.step2(self.model, self.data)
            else:
                self._task.before_substep(self)
                mjw.step(self.model, self.data)
        # As the CPU envs: observe the state after the last integration, not before it.
        if self.contact_free:
            # What the observation kernels read (frames, subtree COM, body velocities), by the
            # same kernels as mjw.forward's; its dynamics the next mjw.step recomputes from the
            # state anyway (no contacts to count: contact_free).
            mjw.kinematics(self.model, self.data)
            mjw.com_pos(self.model, self.data)
            mjw.com_vel(self.model, self.data)
        else:
            mjw.forward(self.model, self.data)
        wp.launch(self._k.tick, dim=1, outputs=[self.clock])
        self._task.evaluate(self)
        d = self.data
        wp.launch(
            self._k.check_unstable,
            dim=self.num_envs,
            inputs=[d.qpos, d.qvel, self.reward, self.distance],
            outputs=[self.unstable],
        )
        if not self.constraint_free:
            wp.launch(
                self._k.check_overflow,
                dim=self.num_envs,
                inputs=[d.nefc, self.njmax, self._overflow_mask],
                outputs=[d.overflow, self.overflowed, self.overflow_count],
            )


def _contacts_impossible(m: Any, d: Any) -> bool:
    """True when no geom pair MuJoCo would test can touch, for any joint angles (no
    `_contact_pairs`); see there."""
    return _contact_pairs(m, d) == []


def _contact_pairs(m: Any, d: Any) -> list[tuple[int, int]] | None:
    """The geom pairs (g1, g2) that may touch, for any joint angles; a pair is left out only
    when proven apart: every pair is
    a static geom (welded to the world, not mocap) and a geom on a chain of hinge/ball joints
    with pivots at the body origins (`jnt_pos` 0) hanging from a static body, and the moving
    geom's bounding sphere, however the chain bends, stays clear of the static geom (a plane's
    half-space or a bounding sphere) by more than both margins. `d`: the host data after
    `mj_forward` (static frames). Kept, the safe answer, for anything else (explicit pairs,
    moving-moving pairs, slide/free joints, height fields). None with flexes (not
    enumerated)."""
    import mujoco

    if m.nflex > 0:
        return None
    pairs = [(int(a), int(b)) for a, b in zip(m.pair_geom1, m.pair_geom2, strict=True)]
    # Contacts the model would test: contype/conaffinity compatible, different weld bodies,
    # not parent-child (unless that filter is off), not excluded.
    filter_parent = not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
    excluded = {
        (int(s), int(t))
        for s, t in zip(m.exclude_signature >> 16, m.exclude_signature & 0xFFFF, strict=True)
    }
    static = (m.body_weldid == 0) & (m.body_mocapid < 0)
    # Reach of every moving body's origin from its chain's anchor (the first moving body's
    # origin, fixed while its pivots sit at the origin), and that anchor.
    reach = np.zeros(m.nbody)
    anchor = np.full(m.nbody, -1)  # -1: no bound (mocap, free or slide joints, offset pivots)
    for b in range(1, m.nbody):
        if static[b]:
            continue
        p = int(m.body_parentid[b])
        n_jnt, adr = int(m.body_jntnum[b]), int(m.body_jntadr[b])
        types = m.jnt_type[adr : adr + n_jnt]
        hinged = not np.any(
            (types == mujoco.mjtJoint.mjJNT_FREE) | (types == mujoco.mjtJoint.mjJNT_SLIDE)
        ) and not np.any(m.jnt_pos[adr : adr + n_jnt] != 0.0)
        if m.body_mocapid[b] >= 0 or not hinged:
            continue
        if static[p]:
            anchor[b], reach[b] = b, 0.0
        elif anchor[p] >= 0:
            anchor[b] = anchor[p]
            reach[b] = reach[p] + float(np.linalg.norm(m.body_pos[b]))
    for g1 in range(m.ngeom):
        for g2 in range(g1 + 1, m.ngeom):
            b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
            w1, w2 = int(m.body_weldid[b1]), int(m.body_weldid[b2])
            if w1 == w2:
                continue
            if not (
                (m.geom_contype[g1] & m.geom_conaffinity[g2])
                or (m.geom_contype[g2] & m.geom_conaffinity[g1])
            ):
                continue
            if (
                filter_parent
                and (
                    int(m.body_weldid[m.body_parentid[w1]]) == w2
                    or int(m.body_weldid[m.body_parentid[w2]]) == w1
                )
                and w1 != 0
                and w2 != 0
            ):
                continue
            if (
                (min(b1, b2), max(b1, b2)) in excluded
                or (b1, b2) in excluded
                or (b2, b1) in excluded
            ):
                continue
            if static[b1] == static[b2]:
                pairs.append((g1, g2))  # both moving (both static: one weld body): no bound
                continue
            gs, gm = (g1, g2) if static[b1] else (g2, g1)
            bm = int(m.geom_bodyid[gm])
            if anchor[bm] < 0 or m.geom_type[gm] in (
                mujoco.mjtGeom.mjGEOM_PLANE,
                mujoco.mjtGeom.mjGEOM_HFIELD,
            ):
                pairs.append((g1, g2))
                continue
            center = d.xpos[anchor[bm]]
            radius = reach[bm] + float(np.linalg.norm(m.geom_pos[gm])) + float(m.geom_rbound[gm])
            radius += float(m.geom_margin[gs] + m.geom_margin[gm])
            if m.geom_type[gs] == mujoco.mjtGeom.mjGEOM_PLANE:
                normal = d.geom_xmat[gs].reshape(3, 3)[:, 2]
                clearance = float(np.dot(center - d.geom_xpos[gs], normal))
            elif m.geom_type[gs] == mujoco.mjtGeom.mjGEOM_HFIELD or m.geom_rbound[gs] <= 0:
                pairs.append((g1, g2))
                continue
            else:
                clearance = float(np.linalg.norm(center - d.geom_xpos[gs]) - m.geom_rbound[gs])
            if not clearance > radius:
                pairs.append((g1, g2))
    return pairs


#: Contacts one candidate pair is counted for in `_capacity` [CHOICE]: primitive pairs touch at
#: one point except parallel capsules (two) and MuJoCo Warp's multi-contact convex pairs, so
#: this is a sizing rule, not a proof; measured on ReachObstacle-v0 (58 pairs): at most 21
#: contacts / 84 rows in a world (docs/learning.md), 2.8x below the capacity. Overflows beyond
#: it are flagged per world (`info["overflow"]`), never silent.
CONTACTS_PER_PAIR = 1


def _capacity(m: Any, d: Any) -> tuple[int, int] | None:
    """(nconmax, njmax) for a model with contacts: every geom pair that may touch
    (`_contact_pairs`) x `CONTACTS_PER_PAIR` contacts, each with its rows (condim 1: 1;
    pyramidal cone: 2 (condim - 1); elliptic: condim), plus one row per limited joint, limited
    tendon and friction-loss dof/tendon, and the equality rows (connect 3, weld 6, else 1).
    None where the pairs are not enumerated (flexes: MuJoCo Warp's defaults)."""
    import mujoco

    pairs = _contact_pairs(m, d)
    if pairs is None:
        return None
    elliptic = m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    rows = 0
    for g1, g2 in pairs:
        condim = int(max(m.geom_condim[g1], m.geom_condim[g2]))
        rows += 1 if condim == 1 else (condim if elliptic else 2 * (condim - 1))
    n_con = CONTACTS_PER_PAIR * len(pairs)
    rows *= CONTACTS_PER_PAIR
    rows += int(np.count_nonzero(m.jnt_limited)) + int(np.count_nonzero(m.tendon_limited))
    rows += int(np.count_nonzero(m.dof_frictionloss > 0))
    rows += int(np.count_nonzero(m.tendon_frictionloss > 0))
    eq_rows = {int(mujoco.mjtEq.mjEQ_CONNECT): 3, int(mujoco.mjtEq.mjEQ_WELD): 6}
    rows += sum(eq_rows.get(int(t), 1) for t in m.eq_type)
    return max(n_con, 1), max(rows, 1)


def _no_constraint_rows(m: Any) -> bool:
    """True when a contact-free model has no other constraint row: no equality, joint or
    tendon limit, or friction loss."""
    return bool(
        m.neq == 0
        and not np.any(m.jnt_limited)
        and not np.any(m.tendon_limited)
        and not np.any(m.dof_frictionloss > 0)
        and not np.any(m.tendon_frictionloss > 0)
        and m.nflex == 0
    )


def _mocap_defaults(m: Any, n: int) -> np.ndarray:
    """(n, nmocap, 3) mocap positions as the model places them [m]."""
    mocap = np.zeros((n, m.nmocap, 3), dtype=np.float32)
    for b in np.flatnonzero(m.body_mocapid >= 0):
        mocap[:, m.body_mocapid[b]] = m.body_pos[b]
    return mocap


class _ReachTask:
    """Reach, ReachObstacle, PlanarReach, TrackTrajectory: curvature-rate control of a hanging
    tendon robot, targets as mocap markers (`softrod.envs._reach_core`)."""

    def __init__(self, env_id: str, host: Any) -> None:
        from softrod.envs.reach_v0 import Z_BAND

        self.env_id, self.host = env_id, host
        name = env_id.removeprefix("softrod/")
        self.planar = name == "PlanarReach-v0"
        self.track = name == "TrackTrajectory-v1"
        self.obstacle = name == "ReachObstacle-v0"
        self.use_bounds = name in ("Reach-v0", "ReachObstacle-v0")
        self.reach_gain = 500.0 if self.track else 50.0
        self.error_gain = float(getattr(host, "error_gain", 0.0)) if self.use_bounds else 0.0
        self.precision_weight = (
            float(getattr(host, "precision_weight", 0.0)) if self.use_bounds else 0.0
        )
        self.precision_scale = float(getattr(host, "precision_scale", 1.0))
        if self.use_bounds and float(getattr(host, "action_weight", 0.0)) > 0:
            raise ValueError("make_batched: Reach's action_weight > 0 is not batched")
        self.z_band = Z_BAND
        m = host.model
        self.tip_body = int(m.site_bodyid[host._tip_site])
        self.tip_root = int(m.body_rootid[self.tip_body])

    def allocate(self, env: BatchedEnv) -> None:
        wp, host, n = env._wp, self.host, env.num_envs
        f32 = wp.float32
        self.kappa = wp.zeros((n, host.n_commands), dtype=f32)
        self.length_map = wp.array(host.length_map.astype(np.float32), dtype=f32)
        self.rest = wp.array(host.rest_lengths.astype(np.float32), dtype=f32)
        self.act_ids = wp.array(host._act_ids.astype(np.int32), dtype=wp.int32)
        self.end_body = wp.array(host._end_body.astype(np.int32), dtype=wp.int32)
        self.end_local = wp.array(host._end_local.astype(np.float32), dtype=wp.vec3)
        self.contacts = wp.zeros(n, dtype=wp.int32)
        m = host.model
        geom_class = np.zeros(m.ngeom, dtype=np.int32)
        geom_class[np.isin(m.geom_bodyid, list(host._robot_bodies))] = 1
        if self.obstacle:
            geom_class[list(host._bar)] = 2
        self.geom_class = wp.array(geom_class, dtype=wp.int32)
        self.error_sum = wp.zeros(n, dtype=f32)
        self.path_id = wp.zeros(n, dtype=wp.int32)
        self.center = wp.zeros(n, dtype=wp.vec3)
        if self.track:
            from softrod.control import make_trajectory
            from softrod.envs.track_trajectory_v1 import TRAJECTORY_NAMES

            paths, vels = [], []
            for name in TRAJECTORY_NAMES:
                _, x, v = make_trajectory(
                    name, np.zeros(3), dt=host.dt, loops=1.0, scale=host.scale, period=host.period
                )
                paths.append(x)
                vels.append(v)
            self.path = wp.array(np.array(paths, dtype=np.float32), dtype=f32)
            self.path_vel = wp.array(np.array(vels, dtype=np.float32), dtype=f32)
        else:
            self.path = wp.zeros((1, 1, 3), dtype=f32)
            self.path_vel = wp.zeros((1, 1, 3), dtype=f32)

    def sample(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        """Every world's task, drawn as the CPU env's `_reset_task` draws one episode's."""
        host = self.host
        if self.planar:
            from softrod.envs.planar_reach_v0 import TARGET_KAPPA_FRACTION

            k = rng.uniform(-1.0, 1.0, (n, host.n_commands)) * (
                TARGET_KAPPA_FRACTION * host.kappa_max
            )
            x, z = _pcc_planar_tips(k, host._lengths)
            base = np.asarray(host.robot.base.position)
            target = np.stack([base[0] + x, np.zeros(n), base[2] - z], axis=1)
            return {"target": target}
        if self.track:
            from softrod.envs.track_trajectory_v1 import (
                CENTER_HIGH,
                CENTER_LOW,
                TRAJECTORY_NAMES,
            )

            if host.trajectory is None:
                path_id = rng.integers(len(TRAJECTORY_NAMES), size=n)
            else:
                path_id = np.full(n, TRAJECTORY_NAMES.index(host.trajectory))
            center = rng.uniform(CENTER_LOW, CENTER_HIGH, size=(n, 3))
            return {"path_id": path_id, "center": center}
        from softrod.envs.reach_v0 import TARGET_HIGH, TARGET_LOW

        return {"target": rng.uniform(TARGET_LOW, TARGET_HIGH, size=(n, 3))}

    def to_cpu(self, env: Any, params: dict[str, np.ndarray], i: int) -> None:
        """Give the CPU env `env` (just reset) world i's task."""
        if self.track:
            from softrod.control import make_trajectory
            from softrod.envs.track_trajectory_v1 import TRAJECTORY_NAMES

            env._name = TRAJECTORY_NAMES[int(params["path_id"][i])]
            _, env._path, env._path_vel = make_trajectory(
                env._name,
                params["center"][i],
                dt=env.dt,
                loops=1.0,
                scale=env.scale,
                period=env.period,
            )
            env._error_sum, env._error_steps = 0.0, 0
            env._move_target()
        else:
            env._set_target(params["target"][i])

    def reset(self, env: BatchedEnv, params: dict[str, np.ndarray]) -> None:
        wp, host, m, n = env._wp, self.host, self.host.model, env.num_envs
        mocap = _mocap_defaults(m, n)
        if self.track:
            self.path_id.assign(params["path_id"].astype(np.int32))
            self.center.assign(params["center"].astype(np.float32))
        else:
            mocap[:, host._target_mocap] = params["target"]
        ctrl = np.zeros((n, m.nu), dtype=np.float32)
        ctrl[:, host._act_ids] = host.rest_lengths
        self.kappa.zero_()
        self.error_sum.zero_()
        env.data.ctrl.assign(ctrl)
        env.data.mocap_pos.assign(mocap)
        if self.track:
            wp.launch(
                env._k.move_target,
                dim=n,
                inputs=[
                    env.clock,
                    host.hold_steps,
                    self.path,
                    self.path_id,
                    self.center,
                    int(host._target_mocap),
                ],
                outputs=[env.data.mocap_pos],
            )

    def state_arrays(self, env: BatchedEnv) -> list[Any]:
        """The per-world arrays `reset` writes (leading world axis)."""
        d = env.data
        return [self.kappa, self.error_sum, self.path_id, self.center, d.ctrl, d.mocap_pos]

    def eval_arrays(self, env: BatchedEnv) -> list[Any]:
        """The per-world arrays `evaluate` writes besides the env's outputs."""
        return [self.error_sum, self.contacts]

    def saved_arrays(self, env: BatchedEnv) -> dict[str, Any]:
        """The task's per-world arrays a checkpoint keeps (`BatchedEnv.state_dict`)."""
        return {
            "kappa": self.kappa,
            "error_sum": self.error_sum,
            "path_id": self.path_id,
            "center": self.center,
            "contacts": self.contacts,
        }

    def apply_action(self, env: BatchedEnv) -> None:
        host = self.host
        env._wp.launch(
            env._k.curvature_action,
            dim=env.num_envs,
            inputs=[
                env.action,
                host.kappa_rate,
                host.kappa_max,
                self.length_map,
                self.rest,
                self.act_ids,
            ],
            outputs=[self.kappa, env.data.ctrl],
        )

    #: No loads applied per substep (`apply_loads`, `before_substep` do nothing).
    substep_loads = False

    def before_substep(self, env: BatchedEnv) -> None:
        pass

    def apply_loads(self, env: BatchedEnv) -> None:
        pass

    def evaluate(self, env: BatchedEnv) -> None:
        wp, d, host, k = env._wp, env.data, self.host, env._k
        if self.obstacle:
            self.contacts.zero_()
            wp.launch(
                k.count_contacts,
                dim=d.naconmax,
                inputs=[
                    d.nacon,
                    d.contact.geom,
                    d.contact.worldid,
                    d.contact.type,
                    self.geom_class,
                ],
                outputs=[self.contacts],
            )
        if self.track:
            wp.launch(
                k.move_target,
                dim=env.num_envs,
                inputs=[
                    env.clock,
                    host.hold_steps,
                    self.path,
                    self.path_id,
                    self.center,
                    int(host._target_mocap),
                ],
                outputs=[d.mocap_pos],
            )
        from softrod.envs.reach_obstacle_v0 import OBSTACLE_PENALTY

        wp.launch(
            k.observe_reach,
            dim=env.num_envs,
            inputs=[
                d.xpos,
                d.xmat,
                d.site_xpos,
                d.cvel,
                d.subtree_com,
                self.end_body,
                self.end_local,
                int(host._tip_site),
                self.tip_body,
                self.tip_root,
                d.mocap_pos,
                int(host._target_mocap),
                self.kappa,
                host.kappa_max,
                int(self.planar),
                self.error_gain,
                self.reach_gain,
                host.distance_weight,
                int(self.use_bounds),
                float(self.z_band[0]),
                float(self.z_band[1]),
                self.precision_weight,
                self.precision_scale,
                self.contacts,
                OBSTACLE_PENALTY if self.obstacle else 0.0,
                host.success_radius,
                env.clock,
                int(self.track),
                int(getattr(host, "hold_steps", 0)),
                host.episode_steps,
                self.path_vel,
                self.path_id,
                self.error_sum,
            ],
            outputs=[env.obs, env.reward, env.distance, env.success],
        )


def _pcc_planar_tips(kappa: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`planar_reach_v0.pcc_planar_tip` for a batch: kappa (n, n_seg) [1/m] -> (x, z) (n,)."""
    n = kappa.shape[0]
    x, z, theta = np.zeros(n), np.zeros(n), np.zeros(n)
    for j, length in enumerate(lengths):
        k = kappa[:, j]
        phi = k * length
        small = np.abs(k) < 1e-9
        k_safe = np.where(small, 1.0, k)
        dx = np.where(small, 0.0, (1.0 - np.cos(phi)) / k_safe)
        dz = np.where(small, length, np.sin(phi) / k_safe)
        x += np.cos(theta) * dx + np.sin(theta) * dz
        z += -np.sin(theta) * dx + np.cos(theta) * dz
        theta += phi
    return x, z


class _MagneticTask:
    """MagneticNavigate: the action steers a uniform field; torques m x B on the tip dipoles
    before every substep (`softrod.mujoco.MagneticField` with a zero gradient)."""

    def __init__(self, env_id: str, host: Any) -> None:
        self.env_id, self.host = env_id, host
        mag = host.magnetic
        if np.any(mag.field_gradient):
            raise ValueError("make_batched: field gradients are not batched")

    def allocate(self, env: BatchedEnv) -> None:
        wp, mag, n = env._wp, self.host.magnetic, env.num_envs
        self.field = wp.zeros(n, dtype=wp.vec3)
        self.dipole_body = wp.array(np.asarray(mag.dipole_body, dtype=np.int32), dtype=wp.int32)
        self.dipole_moment = wp.array(
            np.asarray(mag.dipole_moment, dtype=np.float32).reshape(-1, 3), dtype=wp.vec3
        )
        self.n_dipoles = len(mag.dipole_body)

    def sample(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        from softrod.envs.magnetic_navigate_v0 import BASE, THETA_RANGE

        theta = rng.uniform(*THETA_RANGE, size=n)
        azimuth = rng.uniform(0.0, 2.0 * math.pi, size=n)
        r = self.host.robot.total_length / theta
        radial = np.stack([np.cos(azimuth), np.sin(azimuth), np.zeros(n)], axis=1)
        target = (
            np.asarray(BASE)
            + (r * (1.0 - np.cos(theta)))[:, None] * radial
            + (r * np.sin(theta))[:, None] * np.array([0.0, 0.0, 1.0])
        )
        return {"target": target}

    def to_cpu(self, env: Any, params: dict[str, np.ndarray], i: int) -> None:
        env.target = np.asarray(params["target"][i], dtype=float).copy()
        env.data.mocap_pos[env._target_mocap] = env.target

    def reset(self, env: BatchedEnv, params: dict[str, np.ndarray]) -> None:
        m, n = self.host.model, env.num_envs
        mocap = _mocap_defaults(m, n)
        mocap[:, self.host._target_mocap] = params["target"]
        env.data.mocap_pos.assign(mocap)
        self.field.zero_()

    def state_arrays(self, env: BatchedEnv) -> list[Any]:
        """The per-world arrays `reset` writes (leading world axis)."""
        return [self.field, env.data.mocap_pos]

    def eval_arrays(self, env: BatchedEnv) -> list[Any]:
        """The per-world arrays `evaluate` writes besides the env's outputs."""
        return []

    def saved_arrays(self, env: BatchedEnv) -> dict[str, Any]:
        """The task's per-world arrays a checkpoint keeps (`BatchedEnv.state_dict`)."""
        return {"field": self.field}

    def apply_action(self, env: BatchedEnv) -> None:
        env._wp.launch(
            env._k.field_action,
            dim=env.num_envs,
            inputs=[env.action, self.host.field_strength],
            outputs=[self.field],
        )

    #: Torques applied per substep: `apply_loads` after the substep's kinematics (lean, between
    #: `mjw.step1` and `mjw.step2`) or `before_substep` (kinematics, then the loads).
    substep_loads = True

    def before_substep(self, env: BatchedEnv) -> None:
        # Torques at the current orientation (the data's frames are those before the last
        # integration until kinematics runs again).
        env._mjw.kinematics(env.model, env.data)
        self.apply_loads(env)

    def apply_loads(self, env: BatchedEnv) -> None:
        """Torques m x B on the dipoles at the data's current frames (xmat)."""
        env._wp.launch(
            env._k.dipole_torques,
            dim=(env.num_envs, self.n_dipoles),
            inputs=[env.data.xmat, self.dipole_body, self.dipole_moment, self.field],
            outputs=[env.data.xfrc_applied],
        )

    def evaluate(self, env: BatchedEnv) -> None:
        d, host = env.data, self.host
        env._wp.launch(
            env._k.observe_magnetic,
            dim=env.num_envs,
            inputs=[
                d.site_xpos,
                d.site_xmat,
                int(host._tip_site),
                d.mocap_pos,
                int(host._target_mocap),
                self.field,
                host.field_strength,
                host.distance_weight,
                host.success_radius,
            ],
            outputs=[env.obs, env.reward, env.distance, env.success],
        )


def _task_for(env_id: str, host: Any) -> Any:
    if env_id == "softrod/MagneticNavigate-v0":
        return _MagneticTask(env_id, host)
    return _ReachTask(env_id, host)


def compare_with_cpu(
    env_id: str,
    n_worlds: int = 3,
    *,
    steps: int = 20,
    device: str | None = None,
    seed: int = 0,
    action_seed: int | None = None,
    actions: np.ndarray | None = None,
    lean: bool = True,
    **env_kwargs: Any,
) -> dict[str, float]:
    """Cross-model check: `n_worlds` batched worlds of `env_id` against as many CPU envs
    (MuJoCo C, float64) given the same tasks (drawn with `seed`), stepped with the same uniform
    random actions (drawn with `action_seed`, default seed + 1) for `steps` control steps
    (a horizon reached within them compares the auto-reset's final observation); `actions`
    (steps, n_worlds, n_act) replaces the random ones; `lean` goes to `make_batched`.

    Returns the largest absolute differences: `reset_obs_error` (observation after reset),
    `obs_error` (every observation component, every step and world), `tip_error_m` (the
    distance, as |d_batch - d_cpu|) [m], `reward_error`, and `success_mismatch`,
    `truncated_mismatch` (counts of world-steps where the flags differ), `cpu_contact_steps`
    (world-steps where the CPU env reported contacts, ReachObstacle), `overflow` (1.0 when the
    batch reported it).
    """
    import mujoco

    batch = make_batched(env_id, n_worlds, device=device, lean=lean, **env_kwargs)
    obs0, _ = batch.reset(seed=seed)
    obs0 = obs0.cpu().numpy()
    params = batch.task_params
    envs, reset_err = [], 0.0
    for i in range(n_worlds):
        env: Any = gym.make(batch.env_id, disable_env_checker=True, **env_kwargs).unwrapped
        env.reset(seed=0)
        batch._task.to_cpu(env, params, i)
        mujoco.mj_forward(env.model, env.data)
        o, *_ = env._evaluate()
        reset_err = max(reset_err, float(np.abs(o - obs0[i]).max()))
        envs.append(env)
    a_seed = seed + 1 if action_seed is None else action_seed
    n_act = int(np.prod(batch.single_action_space.shape or (0,)))
    if actions is None:
        actions = np.random.default_rng(a_seed).uniform(-1, 1, (steps, n_worlds, n_act))
    actions = np.asarray(actions, dtype=np.float32)
    if actions.shape != (steps, n_worlds, n_act):
        raise ValueError(f"actions must have shape {(steps, n_worlds, n_act)}, got {actions.shape}")
    obs_err = dist_err = reward_err = 0.0
    success_mis = trunc_mis = contacts = 0
    for k in range(steps):
        obs, reward, _, trunc, info = batch.step(actions[k])
        final = info.get("final_info", info)
        obs = info.get("final_obs", obs).cpu().numpy()
        reward, trunc = reward.cpu().numpy(), trunc.cpu().numpy()
        succ, dist = final["success"].cpu().numpy(), final["distance"].cpu().numpy()
        for i, env in enumerate(envs):
            o, r, _, tr, inf = env.step(actions[k, i])
            obs_err = max(obs_err, float(np.abs(obs[i] - o).max()))
            dist_err = max(dist_err, abs(float(dist[i]) - inf["distance"]))
            reward_err = max(reward_err, abs(float(reward[i]) - float(r)))
            success_mis += int(bool(succ[i]) != bool(inf["success"]))
            contacts += int(inf.get("contacts", 0) > 0)
            trunc_mis += int(bool(trunc[i]) != bool(tr))
            if tr:
                # The batch started its next episodes: give the CPU env the same task.
                env.reset(seed=0)
                batch._task.to_cpu(env, batch.task_params, i)
                mujoco.mj_forward(env.model, env.data)
    return {
        "reset_obs_error": reset_err,
        "obs_error": obs_err,
        "tip_error_m": dist_err,
        "reward_error": reward_err,
        "success_mismatch": float(success_mis),
        "truncated_mismatch": float(trunc_mis),
        "cpu_contact_steps": float(contacts),
        "overflow": float(batch.overflow()),
    }
