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

from softrod.description import RobotSpec, numeric_fields
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

#: Largest relative change of any description value (or of the pretension) between a row's
#: previous solution and this call for which that solution is used as the warm start. Within it
#: the previous equilibrium is a close predictor (the solver moves along the parameter change
#: from there); beyond it a warm start could follow a different branch than the cold solve from
#: rest, so the row starts cold. Measured on tdcr3 with tip loads and gravity (40 rows): warm
#: starts make a model call 4.5x faster for finite-difference steps (1e-6), 2.8x for a 1 %
#: change and 1.5x for 30 %; they change tips by <= 1.3e-11 m.
WARM_START_MAX_CHANGE = 0.1

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
    """Static equilibria by `softrod.solve_static`, warm-started row by row.

    Each row's warm start is its equilibrium solved from rest (cold) at the last parameters
    that needed a cold solve; it is used while no description value or the pretension has moved
    by more than `WARM_START_MAX_CHANGE` from there, else the row is solved cold again and that
    solution becomes its warm start. So every answer is the from-rest equilibrium or one reached
    from it by a small parameter change, and it depends only on the parameters of this call and
    of the cold solves before it (`cold_rows` lists this call's; `prime` redoes them), which
    lets a resumed calibration rebuild the warm starts exactly.

    method : solver method ("shooting" or "pcc"); gravity : (3,) [m/s^2] or None.
    """

    name = "static"

    def __init__(self, method: str = "shooting", gravity: Any = None) -> None:
        self.method = method
        self.gravity = None if gravity is None else np.asarray(gravity, dtype=float)
        self._guess: list[StaticResult | None] = []
        self._topology: tuple[int, ...] | None = None
        self._solved_at: list[np.ndarray | None] = []
        #: Rows the last `predict` solved cold (their warm starts were replaced).
        self.cold_rows: list[int] = []

    def predict(self, state: ModelState, data: Measurements) -> tuple[np.ndarray, int]:
        return self._solve(state, data, range(data.n_samples), cold=False)

    def prime(self, state: ModelState, data: Measurements, rows: Any) -> None:
        """Solve `rows` cold at `state` and keep them as those rows' warm starts."""
        self._solve(state, data, rows, cold=True)

    def _solve(
        self, state: ModelState, data: Measurements, rows: Any, cold: bool
    ) -> tuple[np.ndarray, int]:
        robot = state.robot
        values = np.array([*numeric_fields(robot).values(), state.pretension])
        topology = (robot.n_segments, robot.n_tendons, data.n_samples, len(values))
        if topology != self._topology:
            self._guess = [None] * data.n_samples
            self._solved_at = [None] * data.n_samples
            self._topology = topology
        model = compile_model(robot)
        inputs = effective_inputs(state, data)
        tips = np.full((data.n_samples, 3), np.nan)
        failed = 0
        self.cold_rows = []
        key = "tensions" if data.input_kind == "tension" else "lengths"
        for i in rows:
            kwargs: dict[str, Any] = {key: inputs[i]}
            if np.any(data.tip_force[i]):
                kwargs["tip_force"] = data.tip_force[i]
            guess = self._guess[i] if self.method == "shooting" and not cold else None
            at = self._solved_at[i]
            if guess is not None and (at is None or not _close(values, at)):
                guess = None
            try:
                res = solve_static(
                    model, gravity=self.gravity, method=self.method, guess=guess, **kwargs
                )
            except ValueError:
                failed += 1
                continue
            if not res.success:
                failed += 1
            elif guess is None:
                self._guess[i] = res
                self._solved_at[i] = values
                self.cold_rows.append(int(i))
            tips[i] = res.tip_position
        return tips, failed


def _close(values: np.ndarray, ref: np.ndarray) -> bool:
    """Every value within `WARM_START_MAX_CHANGE` (relative) of its reference."""
    change = np.abs(values - ref)
    return bool(np.all(change <= WARM_START_MAX_CHANGE * np.abs(ref)))


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
