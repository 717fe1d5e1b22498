"""Forward models for calibration: predicted tip positions for measured inputs.

A `ModelState` is everything a fit may change: the robot description, a common tendon
pretension [N] and the MuJoCo options. Two forward models map it and the measured inputs to tip
positions:

* `StaticTipModel`: `softrod.solve_static` (Cosserat/Kirchhoff shooting), one equilibrium per row.
  Smooth in every parameter, so least squares fits it well.
* `MujocoTipModel`: the MuJoCo rigid-link chain (`softrod.mujoco.build_spec`), either one static
  equilibrium per row or, for data with `time` and `trajectory` columns, rollouts from rest with
  the inputs held between samples (seed 002 §4.2 fits the hardware this way).

Pretension T_pre [N] is the tension each tendon carries at zero commanded pull: under tension
control it is added to every input, under length control every commanded length is shortened by
T_pre / k (k: the tendon's stiffness).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from softrod.description import RobotSpec
from softrod.rods import StaticResult, compile_model, solve_static
from softrod.sysid._data import Measurements

__all__ = [
    "ModelState",
    "TipModel",
    "StaticTipModel",
    "MujocoTipModel",
    "effective_inputs",
    "FAILED_TIP_ERROR",
]

#: Residual [m] assigned to a row whose model evaluation failed outright (non-finite tip):
#: larger than any plausible tip error of a centimetre-to-metre robot, so the fit moves away.
FAILED_TIP_ERROR = 1.0


@dataclass(frozen=True)
class ModelState:
    """The parameters a calibration may change.

    robot : the description. pretension : common tendon pretension [N].
    mujoco : `softrod.mujoco.MujocoOptions` fields (dict) for MuJoCo forward models.
    """

    robot: RobotSpec
    pretension: float = 0.0
    mujoco: dict[str, Any] = field(default_factory=dict)

    def replace(self, **changes: Any) -> ModelState:
        return replace(self, **changes)


def effective_inputs(state: ModelState, data: Measurements) -> np.ndarray:
    """(m, n_t) tendon inputs with the pretension applied (tensions [N] or lengths [m])."""
    if state.pretension == 0.0:
        return data.inputs
    if data.input_kind == "tension":
        return data.inputs + state.pretension
    stiffness = np.array(
        [t.stiffness if t.stiffness is not None else np.nan for _, t in state.robot.tendon_list()]
    )
    if np.any(np.isnan(stiffness)):
        i = int(np.flatnonzero(np.isnan(stiffness))[0])
        raise ValueError(
            f"pretension under length control needs every tendon's stiffness; tendon {i} has none"
        )
    return data.inputs - state.pretension / stiffness


class TipModel(Protocol):
    """Predicts the tip position of every measurement row."""

    name: str

    def predict(self, state: ModelState, data: Measurements) -> tuple[np.ndarray, int]:
        """(tip positions (m, 3) [m], number of rows whose evaluation failed)."""
        ...


class StaticTipModel:
    """Static equilibria by `softrod.solve_static`, warm-started row by row from the last call.

    method : solver method ("shooting" or "pcc"); gravity : (3,) [m/s^2] or None.
    """

    name = "static"

    def __init__(self, method: str = "shooting", gravity: Any = None) -> None:
        self.method = method
        self.gravity = None if gravity is None else np.asarray(gravity, dtype=float)
        self._guess: list[StaticResult | None] = []
        self._topology: tuple[int, ...] | None = None

    def predict(self, state: ModelState, data: Measurements) -> tuple[np.ndarray, int]:
        robot = state.robot
        topology = (robot.n_segments, robot.n_tendons, data.n_samples)
        if topology != self._topology:
            self._guess = [None] * data.n_samples
            self._topology = topology
        model = compile_model(robot)
        inputs = effective_inputs(state, data)
        tips = np.empty((data.n_samples, 3))
        failed = 0
        key = "tensions" if data.input_kind == "tension" else "lengths"
        for i in range(data.n_samples):
            kwargs: dict[str, Any] = {key: inputs[i]}
            if np.any(data.tip_force[i]):
                kwargs["tip_force"] = data.tip_force[i]
            guess = self._guess[i] if self.method == "shooting" else None
            try:
                res = solve_static(
                    model, gravity=self.gravity, method=self.method, guess=guess, **kwargs
                )
            except ValueError:
                tips[i] = np.nan
                failed += 1
                continue
            if not res.success:
                failed += 1
            else:
                self._guess[i] = res
            tips[i] = res.tip_position
        return tips, failed


class MujocoTipModel:
    """Tip positions from the MuJoCo rigid-link chain of the robot.

    options : MujocoOptions fields (links, damping_ratio, timestep, ...); the state's `mujoco`
        dict overrides them. Tendon control follows the data: tensions drive `tension_<k>`
        motors, lengths drive pull-only `length_<k>` position actuators (gain = tendon stiffness).
    mode : "auto" (rollouts when the data has time/trajectory columns, else equilibria),
        "equilibrium" or "rollout".
    """

    name = "mujoco"

    def __init__(self, options: dict[str, Any] | None = None, mode: str = "auto") -> None:
        if mode not in ("auto", "equilibrium", "rollout"):
            raise ValueError(f"mode must be auto, equilibrium or rollout, got {mode!r}")
        self.options = dict(options or {})
        self.mode = mode

    def predict(self, state: ModelState, data: Measurements) -> tuple[np.ndarray, int]:
        from softrod.sysid._mujoco import equilibrium_tips, rollout_tips

        opts = {**self.options, **state.mujoco}
        opts["tendon_control"] = "force" if data.input_kind == "tension" else "length"
        inputs = effective_inputs(state, data)
        rollout = self.mode == "rollout" or (self.mode == "auto" and data.is_trajectory)
        if rollout:
            if not data.is_trajectory:
                raise ValueError("mode 'rollout' needs data with 'time' and 'trajectory' columns")
            return rollout_tips(state.robot, opts, inputs, data)
        return equilibrium_tips(state.robot, opts, inputs, data)
