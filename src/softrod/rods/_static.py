"""`solve_static`: equilibrium of a described robot under tendon and external loads.

The façade: it checks the arguments, compiles the model, builds the `StaticLoads` and hands
them to a method from the registry (`_methods.METHODS`). The jobs live beside it: inputs
(`_inputs`), the result (`_result`), the methods (`_shooting`, `_pcc`, `_observer`), the
sensitivities (`_sensitivity`) and the stability test (`_stability`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from softrod.description import RobotSpec
from softrod.rods._budget import budgeted
from softrod.rods._chamber_lengths import solve_lengths_with_chambers
from softrod.rods._inputs import (
    StaticLoads,
    _with_chambers,
    add_actuator_moments,
    check_inputs,
    with_moment_inputs,
)
from softrod.rods._methods import METHODS
from softrod.rods._model import RodModel, as_model
from softrod.rods._pcc import _with_model_error
from softrod.rods._result import StaticResult
from softrod.rods._shooting import recording_maps
from softrod.rods._stability import stable_equilibrium

__all__ = ["DEFAULT_MAX_ITER", "DEFAULT_RTOL", "solve_static"]

#: Default tolerance on the boundary residual, scaled by the moment that bends the softest
#: segment 1 rad over the robot's length: 1e-10 keeps tip errors at ~1e-10 of the length,
#: well above the round-off floor (~1e-13) of the residual for the shipped robots.
DEFAULT_RTOL = 1e-10
#: Newton iterations per (sub)problem before load continuation takes over.
DEFAULT_MAX_ITER = 30
#: The gradient-force fixed point stops when the tip moves less than this fraction of the
#: length between two solves (it contracts by ~ |grad B| |m| L^2 / EI per solve), or less than
#: `rtol` L where that is larger: each solve's tip is only known to ~rtol L, so a smaller move
#: cannot be told from the solves' own error (a 0.1 m catheter stalled 6e-12 m short at the
#: default rtol and was reported failed although its shape was right).
_FIXED_POINT_TOL = 1e-12
_FIXED_POINT_MAX_ITER = 50
#: The options (`**options`) each method takes.
_METHOD_OPTIONS = {
    "shooting": {"intervals", "error_estimate", "tol"},
    "observer": {"error_estimate", "tol"},
    "pcc": {"model_error"},
}


def solve_static(
    robot: RodModel | RobotSpec,
    tensions: Sequence[float] | np.ndarray | None = None,
    *,
    lengths: Sequence[float] | np.ndarray | None = None,
    tip_force: Sequence[float] | np.ndarray | None = None,
    tip_moment: Sequence[float] | np.ndarray | None = None,
    distributed_force: Sequence[float] | np.ndarray | None = None,
    gravity: Sequence[float] | np.ndarray | None = None,
    point_loads: Sequence[Any] | None = None,
    pressures: Sequence[float] | np.ndarray | None = None,
    field: Sequence[float] | np.ndarray | None = None,
    field_gradient: Sequence[Sequence[float]] | np.ndarray | None = None,
    moments: Sequence[float] | np.ndarray | None = None,
    method: str = "shooting",
    guess: StaticResult | None = None,
    rtol: float = DEFAULT_RTOL,
    max_iter: int = DEFAULT_MAX_ITER,
    steps: int | None = None,
    check_stability: bool = True,
    **options: Any,
) -> StaticResult:
    """Static equilibrium of a continuum robot.

    Parameters
    ----------
    robot : a compiled `RodModel` (fastest in loops) or a RobotSpec (`softrod.solve_static`
        also takes a dict or a path to YAML/JSON).
    tensions : (n_t,) tendon tensions [N], >= 0, ordered segment by segment.
    lengths : (n_t,) commanded tendon lengths [m] for elastic pull-only tendons (each needs
        `stiffness`); tensions are solved for. Give tensions or lengths, not both.
    tip_force, tip_moment : (3,) world-frame load at the distal end [N], [N m].
    distributed_force : (3,) uniform world-frame load per unit length [N/m].
    gravity : (3,) [m/s^2]; adds the weight of backbone and disks.
    point_loads : [(s, force (3,), moment (3,) optional), ...] world-frame point loads at arc
        length s in (0, L] [m, N, N m].
    pressures : (n_c,) chamber gauge pressures [Pa], one per `segments[i].chambers` entry,
        segment by segment (docs/actuators.md); within `pressure_range` where given. With
        `lengths`, the length law is solved around the tension-control solve (method
        "shooting"; `stable` is None, as for any length control).
    field : (3,) uniform world-frame magnetic field B [T] on the robot's dipoles
        (`segments[i].magnets`, `magnetization`): torques (R m) x B and (R M A) x B per unit
        length, exact in the Newton sensitivities (docs/actuators.md, "Magnets in statics").
    field_gradient : (3, 3) constant gradient dB_i/dx_j [T/m]: forces (grad B)^T R m, resolved
        by a fixed point on the shape (the stability test is then not run: `stable` None).
    moments : (n_moments,) moment-actuator inputs [-], one per `segments[i].moment_actuators`
        entry, segment by segment: the uniform internal body moment tau m over the segment
        (docs/actuators.md, "Moment actuators").
    method : "shooting" (Newton shooting, exact), "observer" (one SoftManiSim observer update
        from the state carried by `guess`; repeat with guess=previous to converge or to track
        a time-varying input) or "pcc" (constant curvature, load-free).
    guess : a previous result of the same robot to warm-start from.
    rtol : tolerance on the scaled boundary residual (see `DEFAULT_RTOL`).
    max_iter : Newton iterations before load continuation takes over.
    steps : integration steps along the backbone (default from the model).
    check_stability : test the equilibrium's stability (the sign of the energy's second
        variation, docs/stability.md) and set `result.stable`; an unstable equilibrium is
        replaced by the stable one reached by loading with a small imperfection along the
        unstable mode (said in `message`), or returned with success=False when none is
        reached. On by default (a success is a stable equilibrium); False skips it (six
        sensitivity directions in Newton's last evaluation, or one more integration with six
        where Newton's last step was not predicted; ~15 % of a warm-started solve).
    **options : method options. shooting: `intervals` (int) forces multiple shooting over
        that many intervals; by default single shooting is used and multiple shooting takes
        over when the external load's bending angle exceeds `_MULTI_SHOOT_ANGLE`;
        `error_estimate` (default True) fills `tip_error` [m] (one integration on a grid of
        twice the step, Richardson); `tol` [m] refines the grid until the estimate meets it
        (without it, the message says when the estimate exceeds 1e-6 of the length; heavy
        multiple-shooting solves are refined to that); `error_estimate=False` skips both.
        observer: `error_estimate` (default True) fills `tip_error` [m] (the update's
        distance from the grid's equilibrium plus the grid's discretisation error, about one
        integration with sensitivities on a grid of twice the step, one more on the model's
        grid when the residual exceeds rtol); the grid is not refined, the message says when
        the estimate exceeds `tol` [m] (default 1e-6 of the length). pcc: `tip_error` is 0.0
        (closed form); `model_error=True` also solves with method "shooting" and sets
        `model_error` [m], the tips' distance (the constant-curvature model's error).

    Returns
    -------
    StaticResult with `success`, `status`, `message`; a failed solve says so and returns the
    equilibrium at the largest fraction of the load it reached (`load_scale`).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    if not (isinstance(rtol, int | float) and rtol > 0 and math.isfinite(rtol)):
        raise ValueError(f"rtol must be a positive number, got {rtol!r}")
    if not (isinstance(max_iter, int) and max_iter >= 0):
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    nodes = tuple(float(p[0]) for p in point_loads) if point_loads else ()
    model = as_model(robot, steps, nodes)
    inp = check_inputs(
        model,
        tensions,
        lengths,
        tip_force,
        tip_moment,
        distributed_force,
        gravity,
        point_loads,
        pressures,
        field,
        field_gradient,
        moments,
    )
    # Moment actuators are the model's rest curvature (`RodModel.with_moments`).
    model = with_moment_inputs(model, inp)
    allowed = _METHOD_OPTIONS.get(method, set())
    unknown = set(options) - allowed
    if unknown and method != "shooting":
        raise ValueError(
            f"method {method!r} takes no options {sorted(unknown)}, got {sorted(options)} "
            f"(its options: {sorted(allowed)})"
        )
    if unknown:
        raise ValueError(f"unknown option {sorted(unknown)[0]!r} for method {method!r}")
    if not isinstance(options.get("model_error", False), bool):
        raise ValueError(f"model_error must be True or False, got {options['model_error']!r}")
    if not isinstance(check_stability, bool):
        raise ValueError(f"check_stability must be True or False, got {check_stability!r}")
    # One deadline for the whole solve: the stable-branch search, the gradient fixed point and
    # the length law re-solve inside it (each nested solve once started its own).
    result = _solve_budgeted(
        model, inp, guess, method, float(rtol), max_iter, check_stability, options
    )
    return add_actuator_moments(model, result)


def _solve_within_budget(
    model: RodModel,
    inp: StaticLoads,
    guess: StaticResult | None,
    method: str,
    rtol: float,
    max_iter: int,
    check_stability: bool,
    options: dict[str, Any],
) -> StaticResult:
    """`solve_static` after its checks: the method's solve, the stability test and any
    stable-branch search, under one time budget (`_budget.budgeted`)."""
    solver = METHODS[method]
    if method == "pcc" and options.get("model_error", False):
        # The model error: against solve_static's default answer to the same inputs.
        result = _solve_within_budget(model, inp, guess, "pcc", rtol, max_iter, check_stability, {})
        reference = _solve_within_budget(model, inp, None, "shooting", rtol, max_iter, True, {})
        return _with_model_error(result, reference)
    if inp.lengths is not None and inp.pressures is not None and np.any(inp.pressures != 0.0):
        # Length control with pressurised chambers: the length law around tension control.
        if method != "shooting":
            raise ValueError(
                f"pressures with length control need method 'shooting', got {method!r}"
            )
        return solve_lengths_with_chambers(
            model,
            inp,
            guess,
            lambda km, loads, start: solver(km, loads, start, float(rtol), max_iter, **options),
            float(rtol),
        )
    # Chambers run as internal tendons of a kernel model (stability included); the result
    # shows the robot's own tendons only.
    kmodel, kinp = _with_chambers(model, inp)
    n_t = model.n_tendons
    if kmodel is not model and guess is not None and guess.tendon_tension.shape == (n_t,):
        internal = np.zeros(kmodel.n_tendons - n_t)
        if guess.inputs.pressures is not None and guess.inputs.lengths is None:
            forces = model.chamber_forces(guess.inputs.pressures)
            internal = guess.load_scale * (model.chamber_map @ forces)
        guess = dataclasses.replace(
            guess, tendon_tension=np.concatenate([guess.tendon_tension, internal])
        )

    # model_error=False: nothing to add (True is handled above).
    if "model_error" in options:
        options = {k: v for k, v in options.items() if k != "model_error"}

    def solve(loads: StaticLoads, start: StaticResult | None) -> StaticResult:
        return solver(kmodel, loads, start, float(rtol), max_iter, **options)

    if kmodel.is_magnetic and kinp.field_gradient.any():
        # Gradient forces depend on the shape: held at it, re-solved until the tip settles.
        result = _gradient_fixed_point(kmodel, kinp, guess, solve, float(rtol))
        if check_stability:
            note = (
                "; stability not checked: the field gradient's forces on the dipoles follow "
                "the shape, which the second variation does not include"
            )
            result = dataclasses.replace(result, stable=None, message=result.message + note)
    else:
        # With the check on, the solve builds the test's maps in its last evaluation.
        with recording_maps(check_stability):
            result = solve(kinp, guess)
        if check_stability:
            result = stable_equilibrium(kmodel, kinp, result, solve)
    if kmodel is model:
        return result
    return dataclasses.replace(
        result,
        tendon_tension=result.tendon_tension[:n_t].copy(),
        tendon_length=result.tendon_length[:n_t].copy(),
        inputs=inp,
    )


#: `_solve_within_budget` under the solve's deadline (wrapped once, not per solve).
_solve_budgeted = budgeted(_solve_within_budget)


def _held_forces(
    model: RodModel, inp: StaticLoads, shape: StaticResult | None
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Gradient forces on the dipoles held at a shape (`StaticLoads.magnet_forces`): the
    point dipoles' (grad B)^T R m (n_m, 3) [N], and (grad B)^T R (n, 3, 3) at the shape's nodes
    for the magnetized backbone. `shape` None: the straight robot in its base frame."""
    G = inp.field_gradient
    if shape is None:
        s = model.node_s
        rot = np.repeat(model.base_rotation[None], s.size, axis=0)
    else:
        s, rot = shape.s, shape.rotations
    at = [int(np.argmin(np.abs(s - s_m))) for s_m in model.magnet_s]
    point = np.array(
        [G.T @ rot[k] @ m for k, m in zip(at, model.magnet_moment, strict=True)]
    ).reshape(-1, 3)
    return point, (np.asarray(s, dtype=float), np.einsum("ji,njk->nik", G, rot))


def _gradient_fixed_point(
    model: RodModel,
    inp: StaticLoads,
    guess: StaticResult | None,
    solve: Callable[[StaticLoads, StaticResult | None], StaticResult],
    rtol: float = DEFAULT_RTOL,
) -> StaticResult:
    """Solve with the gradient forces held at the last shape (`_held_forces`; the first from
    `guess` or the straight robot), warm-started, until the tip moves less than
    max(`_FIXED_POINT_TOL`, rtol) L. The torques follow the shape exactly inside each solve."""
    held = dataclasses.replace(inp, magnet_forces=_held_forces(model, inp, guess))
    result = solve(held, guess)
    nit, nfev = result.nit, result.nfev
    tol = max(_FIXED_POINT_TOL, rtol) * model.total_length
    move = np.inf
    for _ in range(_FIXED_POINT_MAX_ITER):
        if not result.success:
            return result
        held = dataclasses.replace(inp, magnet_forces=_held_forces(model, inp, result))
        new = solve(held, result)
        nit, nfev = nit + new.nit, nfev + new.nfev
        move = float(np.linalg.norm(new.tip_position - result.tip_position))
        result = dataclasses.replace(new, nit=nit, nfev=nfev)
        if new.success and move <= tol:
            return result
    return dataclasses.replace(
        result,
        success=False,
        message=f"{result.message}; the gradient forces' fixed point did not settle in "
        f"{_FIXED_POINT_MAX_ITER} solves (tip still moving {move:.2e} m)",
    )
