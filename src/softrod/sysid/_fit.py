"""Calibration: fit description fields (and pretension, MuJoCo options) to measured tip data.

The fitted parameters minimize the sum of squared tip errors over all rows,

    min_theta  sum_i || tip_model(theta; inputs_i) - tip_measured_i ||^2,

by bounded least squares (`scipy.optimize.least_squares`, trust-region reflective, finite-difference
Jacobian) or by Bayesian optimization (`optuna`'s TPE sampler) for objectives that are not smooth,
such as MuJoCo rollouts with contact; a Bayesian search is polished by least squares by default.

Standard errors come from the Jacobian J of the residuals at the optimum,
cov = s^2 (J^T J)^-1 with s^2 = SSR / (3 m - p), the usual Gauss-Newton estimate for independent
equal-variance measurement noise.

Checkpoints: with `checkpoint=PATH`, every model evaluation (parameters and residuals) and every
optimizer iteration (parameters, cost) is appended to a journal (`softrod._jobs.Journal`, JSON
Lines, fsync'ed per line). `resume=True` replays the journal: the optimizer is started again from
the same point with the same seed and is served the recorded evaluations while its requests
match them, so it retraces the same trajectory without solving anything, then carries on
evaluating the model. The static model's warm starts (`StaticTipModel`) are rebuilt first: each
is a cold solve at parameters the journal names, so the model is in the state the uninterrupted
run left it in, and the resumed fit is identical to an uninterrupted one (same evaluations,
same values to the last bit). Models without `prime` (MuJoCo) are deterministic.

Parameter names (see `softrod.description.with_fields`): description paths or bare names
(`youngs_modulus`, `segments.0.tendons.*.offset`), `pretension` (common tendon pretension [N]),
and `mujoco.<option>` (or a bare MujocoOptions field name such as `damping_ratio`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from scipy.optimize import least_squares

from softrod._jobs import Journal
from softrod.description import RobotSpec, load_robot, resolve_fields, with_fields
from softrod.sysid._data import Measurements
from softrod.sysid._models import (
    FAILED_TIP_ERROR,
    ModelState,
    MujocoTipModel,
    StaticTipModel,
    TipModel,
)

__all__ = [
    "FitParameter",
    "FittedParameter",
    "CalibrationResult",
    "calibrate",
    "fit_parameters",
    "predict_tips",
    "rmse",
    "MUJOCO_FIELDS",
]

#: Default bounds of a positive field: [x0 / factor, x0 * factor]. Material constants and
#: stiffnesses of real robots are known to well within a factor of 20 before calibration.
POSITIVE_BOUND_FACTOR = 20.0
#: Default half-width of the bounds of an angle field [deg].
ANGLE_BOUND_DEG = 90.0
#: Default bounds of the pretension [N] when its initial value is 0.
PRETENSION_BOUNDS = (0.0, 10.0)
#: Relative finite-difference step of the least-squares Jacobian (in scaled parameters). The
#: shooting solver converges to ~1e-10 relative; a 1e-6 step keeps that noise at 1e-4 of the
#: derivative while the truncation error stays ~1e-6.
DIFF_STEP = 1e-6
#: Least-squares stopping tolerances on the cost and the scaled step.
FTOL = 1e-10
XTOL = 1e-10
#: MujocoOptions fields a fit may change (continuous ones).
#: A fitted parameter whose standard error exceeds this fraction of its value is reported as not
#: identified (stderr NaN): its 1-sigma interval spans zero to twice the value, so the data do
#: not determine it (e.g. a tendon offset beside the modulus from tendon data alone, where only
#: offset / E matters to first order and finite-difference noise keeps J^T J barely invertible).
UNIDENTIFIED_RELATIVE_STDERR = 1.0
#: Measured tips farther from the base than this many robot lengths cannot come from the robot
#: (an inextensible rod reaches at most one length; extension adds percent): most likely the
#: data are in millimetres. Refused with a message instead of "calibrating" to a wrong robot.
MAX_REACH_FACTOR = 1.5

MUJOCO_FIELDS = ("damping_ratio", "damping_time", "friction", "timestep")
#: Fields whose values may be negative or zero (no default positive bounds).
_SIGNED = {"angle_deg", "position", "quaternion", "precurvature", "extension_range"}


@dataclass(frozen=True)
class FitParameter:
    """One fitted quantity.

    name : as given (`youngs_modulus`). key : its last name. paths : the fields it sets (one
    value for all: a tied parameter). initial : start value. lower, upper : bounds (may be inf).
    scale : the optimizer works on value / scale.
    """

    name: str
    key: str
    paths: tuple[str, ...]
    initial: float
    lower: float
    upper: float
    scale: float
    log: bool = False


@dataclass(frozen=True)
class FittedParameter:
    """A fitted value with its standard error (NaN when the Jacobian is singular)."""

    name: str
    key: str
    paths: tuple[str, ...]
    initial: float
    value: float
    stderr: float
    lower: float
    upper: float

    @property
    def at_bound(self) -> bool:
        tol = 1e-9 * max(abs(self.value), 1.0)
        return bool(abs(self.value - self.lower) <= tol or abs(self.value - self.upper) <= tol)


@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """Outcome of `calibrate`.

    parameters : the fitted parameters in the order given. state : the calibrated robot,
    pretension and MuJoCo options. rmse_before, rmse_after : root mean square tip distance [m]
    over all rows before and after. residuals : (m, 3) tip errors after [m]. n_failed : rows
    whose model evaluation failed at the optimum.
    """

    success: bool
    message: str
    method: str
    model: str
    parameters: tuple[FittedParameter, ...]
    state: ModelState
    rmse_before: float
    rmse_after: float
    residuals: np.ndarray
    n_samples: int
    nfev: int
    n_failed: int
    elapsed: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def robot(self) -> RobotSpec:
        return self.state.robot

    def values(self) -> dict[str, float]:
        """Fitted values keyed by last name and by every full path."""
        out: dict[str, float] = {}
        for p in self.parameters:
            out[p.key] = p.value
            for path in p.paths:
                out[path] = p.value
        return out

    def stderrs(self) -> dict[str, float]:
        """Standard errors keyed like `values`."""
        out: dict[str, float] = {}
        for p in self.parameters:
            out[p.key] = p.stderr
            for path in p.paths:
                out[path] = p.stderr
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (NaN standard errors become None)."""

        def clean(v: float) -> float | None:
            return None if not math.isfinite(v) else float(v)

        return {
            "success": self.success,
            "message": self.message,
            "method": self.method,
            "model": self.model,
            "fitted": {k: clean(v) for k, v in self.values().items()},
            "stderr": {k: clean(v) for k, v in self.stderrs().items()},
            "parameters": [
                {
                    "name": p.name,
                    "key": p.key,
                    "paths": list(p.paths),
                    "initial": p.initial,
                    "value": p.value,
                    "stderr": clean(p.stderr),
                    "bounds": [clean(p.lower), clean(p.upper)],
                    "at_bound": p.at_bound,
                }
                for p in self.parameters
            ],
            "rmse_before": self.rmse_before,
            "rmse_after": self.rmse_after,
            "n_samples": self.n_samples,
            "n_failed": self.n_failed,
            "nfev": self.nfev,
            "elapsed_s": self.elapsed,
            "pretension": self.state.pretension,
            "mujoco": dict(self.state.mujoco),
            **self.extra,
        }


# ---------------------------------------------------------------------------------------------
# Parameters


def _mujoco_field(name: str) -> str | None:
    if name.startswith("mujoco."):
        return name.split(".", 1)[1]
    return name if name in MUJOCO_FIELDS else None


def _initial_mujoco(field_name: str, state: ModelState, model: TipModel) -> float:
    opts = {**getattr(model, "options", {}), **state.mujoco}
    if field_name in opts and opts[field_name] is not None:
        return float(opts[field_name])
    from softrod.mujoco import MujocoOptions

    default = getattr(MujocoOptions(), field_name, None)
    if default is None:
        raise ValueError(f"mujoco.{field_name} has no value to start from; give it first")
    return float(default)


def fit_parameters(
    names: Sequence[str],
    state: ModelState,
    model: TipModel | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    initial: Mapping[str, float] | None = None,
) -> list[FitParameter]:
    """Resolve parameter names to `FitParameter`s with default or given bounds.

    Raises ValueError naming the parameter when a name matches nothing, appears twice, or the
    initial value is outside its bounds.
    """
    bounds = dict(bounds or {})
    initial = dict(initial or {})
    if not names:
        raise ValueError("give at least one parameter to fit")
    out: list[FitParameter] = []
    seen: set[str] = set()
    for raw in names:
        name = str(raw).strip()
        if not name:
            raise ValueError("a parameter name is empty")
        mj = _mujoco_field(name)
        if name == "pretension":
            paths: tuple[str, ...] = ("pretension",)
            x0 = float(initial.get(name, state.pretension))
            lo, hi = PRETENSION_BOUNDS if x0 == 0 else (0.0, x0 * POSITIVE_BOUND_FACTOR)
            positive = False
        elif mj is not None:
            if mj not in MUJOCO_FIELDS:
                raise ValueError(
                    f"mujoco.{mj} cannot be fitted (fittable options: {', '.join(MUJOCO_FIELDS)})"
                )
            paths = (f"mujoco.{mj}",)
            x0 = float(initial.get(name, _initial_mujoco(mj, state, model)))  # type: ignore[arg-type]
            positive = True
            lo, hi = x0 / POSITIVE_BOUND_FACTOR, x0 * POSITIVE_BOUND_FACTOR
        else:
            paths = resolve_fields(state.robot, name)
            values = [float(_get(state.robot, p)) for p in paths]
            x0 = float(initial.get(name, values[0]))
            leaf = paths[0].split(".")
            signed = any(part in _SIGNED for part in leaf)
            positive = not signed and x0 > 0
            if "angle_deg" in leaf:
                lo, hi = x0 - ANGLE_BOUND_DEG, x0 + ANGLE_BOUND_DEG
            elif positive:
                lo, hi = x0 / POSITIVE_BOUND_FACTOR, x0 * POSITIVE_BOUND_FACTOR
            else:
                lo, hi = -math.inf, math.inf
            if leaf[-1] == "offset" and leaf[0] == "segments":
                # A tendon must stay within the disks that guide it (segments 0..k).
                hi = min([hi] + [_offset_limit(state.robot, int(pp.split(".")[1])) for pp in paths])
        if name in bounds:
            lo, hi = (float(b) for b in bounds[name])
            if not lo < hi:
                raise ValueError(f"bounds of {name} must satisfy lower < upper, got [{lo}, {hi}]")
        if not lo <= x0 <= hi:
            raise ValueError(
                f"initial value of {name} ({x0:g}) is outside its bounds [{lo:g}, {hi:g}]"
            )
        overlap = seen.intersection(paths)
        if overlap:
            raise ValueError(f"parameter {name} sets {sorted(overlap)[0]}, which is already fitted")
        seen.update(paths)
        if x0 != 0:
            scale = abs(x0)
        elif math.isfinite(hi - lo):
            scale = (hi - lo) / 2
        else:
            scale = 1.0
        key = name.rsplit(".", 1)[-1] if "*" not in name else paths[0].rsplit(".", 1)[-1]
        out.append(
            FitParameter(
                name=name,
                key=key,
                paths=paths,
                initial=x0,
                lower=lo,
                upper=hi,
                scale=scale,
                log=positive and lo > 0 and hi / lo >= 10,
            )
        )
    keys = [p.key for p in out]
    if len(set(keys)) != len(keys):
        # Two parameters with one last name (e.g. two tendon offsets): key them by name instead.
        out = [
            FitParameter(p.name, p.name, p.paths, p.initial, p.lower, p.upper, p.scale, p.log)
            for p in out
        ]
    return out


def _offset_limit(robot: RobotSpec, k: int) -> float:
    """Largest tendon offset [m] the disks of segments 0..k can hold."""
    radii = [s.disk_radius for s in robot.segments[: k + 1] if s.disk_radius is not None]
    return min(radii) if radii else math.inf


def _get(robot: RobotSpec, path: str) -> Any:
    from softrod.description import get_field

    return get_field(robot, path)


def apply_values(
    state: ModelState, params: Sequence[FitParameter], values: np.ndarray
) -> ModelState:
    """The state with each parameter set to its value (description re-validated)."""
    robot_values: dict[str, float] = {}
    mujoco_opts = dict(state.mujoco)
    pretension = state.pretension
    for p, v in zip(params, values, strict=True):
        for path in p.paths:
            if path == "pretension":
                pretension = float(v)
            elif path.startswith("mujoco."):
                mujoco_opts[path.split(".", 1)[1]] = float(v)
            else:
                robot_values[path] = float(v)
    robot = with_fields(state.robot, robot_values) if robot_values else state.robot
    return ModelState(robot=robot, pretension=pretension, mujoco=mujoco_opts)


# ---------------------------------------------------------------------------------------------
# Objective


def rmse(residuals: np.ndarray) -> float:
    """Root mean square of the 3-D tip distances: sqrt(mean_i |r_i|^2) [m]."""
    r = np.asarray(residuals, dtype=float).reshape(-1, 3)
    return float(np.sqrt(np.mean(np.sum(r * r, axis=1))))


def predict_tips(
    robot: RobotSpec | dict | str,
    data: Measurements,
    *,
    model: Literal["static", "mujoco"] | TipModel = "static",
    pretension: float = 0.0,
    mujoco: Mapping[str, Any] | None = None,
    gravity: Any = None,
) -> np.ndarray:
    """Model tip positions (m, 3) [m] for the inputs of `data` (e.g. to make synthetic data).

    Raises ValueError when any row fails to evaluate.
    """
    tip_model = _make_model(model, gravity=gravity, mujoco=mujoco, mode="auto")
    state = ModelState(load_robot(robot), float(pretension), dict(mujoco or {}))
    tips, failed = tip_model.predict(state, data)
    if failed:
        raise ValueError(f"{failed} of {data.n_samples} rows failed to evaluate")
    return tips


def _make_model(
    model: str | TipModel,
    *,
    gravity: Any = None,
    mujoco: Mapping[str, Any] | None = None,
    mode: str = "auto",
    solver: str = "shooting",
) -> TipModel:
    if not isinstance(model, str):
        return model
    if model == "static":
        return StaticTipModel(method=solver, gravity=gravity)
    if model == "mujoco":
        opts = dict(mujoco or {})
        if gravity is not None:
            opts["gravity"] = tuple(float(g) for g in gravity)
        return MujocoTipModel(opts, mode=mode)
    raise ValueError(f"model must be 'static' or 'mujoco', got {model!r}")


class _Objective:
    """Residuals (3 m,) [m] of a parameter vector in scaled units; counts evaluations.

    journal : where each evaluation is recorded (None: not recorded). Its records from an
    earlier run are replayed in order while the requested parameters match them bit for bit.
    """

    def __init__(self, state, params, model, data, journal: Journal | None = None) -> None:
        self.state, self.params, self.model, self.data = state, params, model, data
        self.scale = np.array([p.scale for p in params])
        self.nfev = 0
        self.last_failed = 0
        self.journal = journal
        self.replay = [r for r in journal.records if "theta" in r] if journal else []
        self.n_replayed = 0
        # Row -> parameters of its last cold solve (the warm start it carries; see
        # StaticTipModel), kept through a replay so the model's warm starts can be rebuilt.
        self.anchor: dict[int, list[float]] = {}
        self.rebuilt = False

    def values(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=float) * self.scale

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        if self.replay:
            # The optimizer is deterministic: the same requests in the same order until the
            # journal ends; the first mismatch ends the replay (the rest is stale).
            rec = self.replay.pop(0)
            if np.array_equal(np.asarray(rec["theta"], dtype=float), theta):
                self.nfev += 1
                self.n_replayed += 1
                self.last_failed = int(rec["failed"])
                self.anchor.update(dict.fromkeys(rec.get("cold", []), rec["theta"]))
                return np.asarray(rec["r"], dtype=float)
            self.replay.clear()
        if self.n_replayed and not self.rebuilt:
            self._rebuild_warm_starts()
        r = self._evaluate(theta)
        cold = list(getattr(self.model, "cold_rows", []))
        self.anchor.update(dict.fromkeys(cold, theta.tolist()))
        if self.journal is not None:
            self.journal.append(
                {"theta": theta.tolist(), "r": r.tolist(), "failed": self.last_failed, "cold": cold}
            )
        return r

    def _rebuild_warm_starts(self) -> None:
        """After a replay: the model's warm starts as the uninterrupted run left them."""
        prime = getattr(self.model, "prime", None)
        by_theta: dict[tuple[float, ...], list[int]] = {}
        for row, th in self.anchor.items():
            by_theta.setdefault(tuple(th), []).append(row)
        if prime is not None:
            for at, rows in by_theta.items():
                state = apply_values(self.state, self.params, self.values(np.array(at)))
                prime(state, self.data, sorted(rows))
        self.rebuilt = True

    def iteration(self, intermediate_result: Any) -> None:
        """least_squares callback (SciPy picks the form by this argument's name): a small
        checkpoint record per optimizer iteration."""
        result = intermediate_result
        if self.journal is not None and not self.replay:
            self.journal.append(
                {
                    "iteration": int(getattr(result, "nit", 0)),
                    "x": (np.asarray(result.x, dtype=float) * self.scale).tolist(),
                    "cost": float(result.cost),
                    "nfev": self.nfev,
                }
            )

    def _evaluate(self, theta: np.ndarray) -> np.ndarray:
        self.nfev += 1
        try:
            state = apply_values(self.state, self.params, self.values(theta))
        except ValueError:
            # An invalid description (e.g. a tendon offset beyond its disk): far from the data.
            self.last_failed = self.data.n_samples
            if hasattr(self.model, "cold_rows"):
                self.model.cold_rows = []
            return np.full(3 * self.data.n_samples, FAILED_TIP_ERROR)
        tips, failed = self.model.predict(state, self.data)
        self.last_failed = failed
        r = tips - self.data.tip_position
        r[~np.isfinite(r)] = FAILED_TIP_ERROR
        return r.reshape(-1)


def _stderr(jac: np.ndarray, r: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Gauss-Newton standard errors of the parameters (physical units); NaN when singular."""
    n_obs, n_par = jac.shape
    dof = n_obs - n_par
    if dof <= 0:
        return np.full(n_par, np.nan)
    s2 = float(r @ r) / dof
    jtj = jac.T @ jac
    try:
        cond = np.linalg.cond(jtj)
        if not np.isfinite(cond) or cond > 1e14:
            return np.full(n_par, np.nan)
        cov = s2 * np.linalg.inv(jtj)
    except np.linalg.LinAlgError:
        return np.full(n_par, np.nan)
    return np.sqrt(np.clip(np.diag(cov), 0.0, None)) * scale


def _fd_jacobian(obj: _Objective, theta: np.ndarray, r0: np.ndarray, lo, hi) -> np.ndarray:
    jac = np.empty((r0.size, theta.size))
    for j in range(theta.size):
        h = DIFF_STEP * max(1.0, abs(theta[j]))
        step = h if theta[j] + h <= hi[j] else -h
        t = theta.copy()
        t[j] += step
        jac[:, j] = (obj.residuals(t) - r0) / step
    return jac


def _bayes(
    obj: _Objective,
    params: Sequence[FitParameter],
    n_trials: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, dict[str, Any]]:
    try:
        import optuna
    except ImportError:
        raise ValueError(
            "method 'bayes' needs optuna (pip install 'softrod[dist]' or pip install optuna)"
        ) from None
    for p in params:
        if not (math.isfinite(p.lower) and math.isfinite(p.upper)):
            raise ValueError(f"method 'bayes' needs finite bounds for {p.name}; give --bounds")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=int(rng.integers(2**31 - 1)))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    study.enqueue_trial({p.name: p.initial for p in params})

    def objective(trial: Any) -> float:
        theta = np.array(
            [trial.suggest_float(p.name, p.lower, p.upper, log=p.log) / p.scale for p in params]
        )
        r = obj.residuals(theta)
        return float(0.5 * r @ r)

    study.optimize(objective, n_trials=n_trials)
    best = np.array([study.best_params[p.name] / p.scale for p in params])
    return best, {"n_trials": n_trials, "best_trial": study.best_trial.number}


def calibrate(
    robot: RobotSpec | dict | str,
    data: Measurements,
    fit: Sequence[str] | str,
    *,
    method: Literal["least_squares", "bayes"] = "least_squares",
    model: Literal["static", "mujoco"] | TipModel = "static",
    bounds: Mapping[str, tuple[float, float]] | None = None,
    initial: Mapping[str, float] | None = None,
    pretension: float = 0.0,
    mujoco: Mapping[str, Any] | None = None,
    mujoco_mode: Literal["auto", "equilibrium", "rollout"] = "auto",
    gravity: Any = None,
    solver: str = "shooting",
    n_trials: int = 40,
    refine: bool = True,
    max_nfev: int | None = None,
    rng: np.random.Generator | None = None,
    checkpoint: str | Path | None = None,
    resume: bool = False,
) -> CalibrationResult:
    """Fit description fields (and pretension / MuJoCo options) to measured tip positions.

    Parameters
    ----------
    robot : the description to start from (its values are the initial guesses).
    data : `Measurements` (see `read_measurements`).
    fit : parameter names, a list or a comma-separated string (module docstring).
    method : "least_squares" (bounded TRF) or "bayes" (optuna TPE, `n_trials` trials, then
        least squares from the best trial when `refine`).
    model : "static" (`solve_static`), "mujoco" (rigid-link chain) or a `TipModel`.
    bounds, initial : per parameter name; defaults in `fit_parameters`.
    pretension : initial common tendon pretension [N]; mujoco : MujocoOptions fields.
    mujoco_mode : "auto" (rollouts for data with time/trajectory), "equilibrium", "rollout".
    gravity : (3,) [m/s^2] for the static model (MuJoCo uses its option `gravity`).
    solver : static method ("shooting" or "pcc").
    rng : source of the Bayesian search's randomness (default: seed 0).
    checkpoint : journal file (JSON Lines) of every evaluation and iteration (module docstring);
        None: none. resume : continue the journal at `checkpoint` (it must belong to this very
        calibration: same robot, data, options and seed) instead of starting it afresh.

    Returns
    -------
    CalibrationResult with the fitted values, standard errors, RMSE before/after.
    """
    t_start = time.perf_counter()
    spec = load_robot(robot)
    if isinstance(fit, str):
        fit = [f for f in (s.strip() for s in fit.split(",")) if f]
    if method not in ("least_squares", "bayes"):
        raise ValueError(f"method must be 'least_squares' or 'bayes', got {method!r}")
    if data.n_tendons != spec.n_tendons:
        raise ValueError(
            f"data has {data.n_tendons} tendon inputs, the robot {spec.n_tendons} tendons"
        )
    if n_trials < 1:
        raise ValueError(f"n_trials must be >= 1, got {n_trials}")
    rng = np.random.default_rng(0) if rng is None else rng
    tip_model = _make_model(model, gravity=gravity, mujoco=mujoco, mode=mujoco_mode, solver=solver)
    # Tips the robot cannot reach mean wrong units, not a robot to fit.
    offsets = data.tip_position - np.asarray(spec.base.position)
    reach = float(np.max(np.linalg.norm(offsets, axis=1)))
    length = sum(seg.length for seg in spec.segments)
    if reach > MAX_REACH_FACTOR * length:
        raise ValueError(
            f"measured tips lie up to {reach:.4g} m from the base of a {length:.4g} m robot; "
            "tip positions must be in metres (data in mm? divide by 1000)"
        )
    state = ModelState(spec, float(pretension), dict(mujoco or {}) if model != "static" else {})
    params = fit_parameters(fit, state, tip_model, bounds, initial)
    journal = None
    if checkpoint is not None:
        config = {
            "robot": spec.to_dict(),
            "data": [data.inputs, data.input_kind, data.tip_position, data.tip_force],
            "trajectory": [data.time, data.trajectory],
            "fit": [(p.name, p.paths, p.initial, p.lower, p.upper) for p in params],
            "options": [method, tip_model.name, pretension, dict(mujoco or {}), mujoco_mode],
            "static": [None if gravity is None else list(np.ravel(gravity)), solver],
            "search": [n_trials, refine, max_nfev, rng.bit_generator.state],
        }
        journal = Journal(checkpoint, "calibration", config, resume=resume)
    try:
        return _calibrate(
            t_start,
            spec,
            data,
            state,
            params,
            tip_model,
            journal,
            method,
            n_trials,
            refine,
            max_nfev,
            rng,
        )
    finally:
        if journal is not None:
            journal.close()


def _calibrate(
    t_start: float,
    spec: RobotSpec,
    data: Measurements,
    state: ModelState,
    params: list[FitParameter],
    tip_model: TipModel,
    journal: Journal | None,
    method: str,
    n_trials: int,
    refine: bool,
    max_nfev: int | None,
    rng: np.random.Generator,
) -> CalibrationResult:
    obj = _Objective(state, params, tip_model, data, journal)
    theta0 = np.array([p.initial / p.scale for p in params])
    lo = np.array([p.lower / p.scale for p in params])
    hi = np.array([p.upper / p.scale for p in params])

    r0 = obj.residuals(theta0)
    rmse_before = rmse(r0)
    extra: dict[str, Any] = {}
    success, message = True, ""
    theta, jac = theta0, None
    if method == "bayes":
        theta, extra = _bayes(obj, params, n_trials, rng)
        message = f"Bayesian search: best of {n_trials} trials"
    if method == "least_squares" or refine:
        res = least_squares(
            obj.residuals,
            theta,
            bounds=(lo, hi),
            method="trf",
            diff_step=DIFF_STEP,
            x_scale=1.0,
            ftol=FTOL,
            xtol=XTOL,
            max_nfev=max_nfev,
            callback=obj.iteration,
        )
        theta, jac = res.x, res.jac
        success = bool(res.success)
        message = (message + "; " if message else "") + f"least squares: {res.message}"
    r = obj.residuals(theta)
    n_failed = obj.last_failed
    if jac is None:
        jac = _fd_jacobian(obj, theta, r, lo, hi)
    scale = np.array([p.scale for p in params])
    se = _stderr(np.asarray(jac), r, scale)
    # Positive quantities (moduli, offsets, ...) whose error bar dwarfs them are not identified.
    for k, (p, v) in enumerate(zip(params, theta * scale, strict=True)):
        ref = max(abs(float(v)), abs(p.initial))
        if p.key not in _SIGNED and ref > 0 and se[k] > UNIDENTIFIED_RELATIVE_STDERR * ref:
            se[k] = np.nan
    if np.any(np.isnan(se)):
        message += (
            "; standard errors undefined: the parameters are not separately identifiable from "
            "these data (J^T J singular, or a standard error above "
            f"{UNIDENTIFIED_RELATIVE_STDERR:.0%} of the value)"
        )
    values = theta * scale
    final = apply_values(state, params, values)
    fitted = tuple(
        FittedParameter(p.name, p.key, p.paths, p.initial, float(v), float(s), p.lower, p.upper)
        for p, v, s in zip(params, values, se, strict=True)
    )
    if n_failed:
        success = False
        message += f"; {n_failed} rows failed to evaluate at the optimum"
    if journal is not None and journal.resumed:
        extra = {**extra, "resumed_evaluations": obj.n_replayed}
    return CalibrationResult(
        success=success,
        message=message,
        method=method,
        model=tip_model.name,
        parameters=fitted,
        state=final,
        rmse_before=rmse_before,
        rmse_after=rmse(r),
        residuals=r.reshape(-1, 3),
        n_samples=data.n_samples,
        nfev=obj.nfev,
        n_failed=n_failed,
        elapsed=time.perf_counter() - t_start,
        extra=extra,
    )
