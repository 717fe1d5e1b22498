"""`simulate_dynamic`: the Lie-group variational integrator of seed 004 (ALGORITHMS.md E.2-E.4).

The façade: a model (`build_lgvi_model`, or a robot built with the discretisation options),
the loads (`DynamicLoads`), the initial state and the stepping options in, a `DynamicResult`
out. Inputs live in `_inputs`, the linearisation and the stable step in `_modes`, the stepping
loop in `_integrate` and the kernels in `_lgvi_kernels`.
"""

from __future__ import annotations

import math
import time
from dataclasses import fields
from typing import Any

import numpy as np

from softrod.description import RobotSpec
from softrod.dynamics._inputs import DynamicLoads, _resolve, _RunInputs, _start_state
from softrod.dynamics._integrate import (
    _STATUS_MESSAGES,
    IMPLICIT_DAMPING,
    INTEGRATORS,
    STATUS_OK,
    _auto_integrator,
    _choose_dt,
    _integrate,
    _section_frames,
)
from softrod.dynamics._model import LGVIModel, build_lgvi_model
from softrod.dynamics._modes import DEFAULT_DT_SAFETY, linear_modes, stable_time_step
from softrod.dynamics._result import DynamicResult, DynamicState
from softrod.rods import RodModel, StaticResult

__all__ = [
    "DEFAULT_DT_SAFETY",
    "DEFAULT_SAMPLE_DT",
    "DynamicLoads",
    "DynamicResult",
    "DynamicState",
    "linear_modes",
    "simulate_dynamic",
    "stable_time_step",
]

#: Default output sampling period [s] (rounded to a whole number of steps).
DEFAULT_SAMPLE_DT = 1e-3

#: What `simulate_dynamic` accepts as its model: an `LGVIModel` or what `build_lgvi_model` takes.
ModelLike = LGVIModel | RodModel | RobotSpec | dict | str

#: Keywords of the flat call that are `build_lgvi_model` options and `DynamicLoads` fields.
_MODEL_OPTIONS = ("elements", "shear_eval", "clamp", "magnets", "frequency_correction",
                  "frequency_target", "rotary_inertia_scale")  # fmt: skip
_LOAD_OPTIONS = tuple(f.name for f in fields(DynamicLoads))


def _model_and_loads(
    model: Any, loads: DynamicLoads | None, options: dict[str, Any]
) -> tuple[LGVIModel, DynamicLoads]:
    """Map the flat keyword call (`robot=`, discretisation options, loads) onto the objects."""
    robot = options.pop("robot", None)
    if robot is not None:
        if model is not None:
            raise TypeError("simulate_dynamic() got both model and robot")
        model = robot
    if model is None:
        raise TypeError("simulate_dynamic() missing required argument: 'model'")
    unknown = sorted(set(options) - set(_MODEL_OPTIONS) - set(_LOAD_OPTIONS))
    if unknown:
        raise TypeError(f"simulate_dynamic() got an unexpected keyword argument {unknown[0]!r}")
    model_kw = {k: options[k] for k in _MODEL_OPTIONS if k in options}
    load_kw = {k: options[k] for k in _LOAD_OPTIONS if k in options}
    # The discretisation first (as before the split: its errors come first).
    if isinstance(model, LGVIModel):
        given = sorted(k for k, v in model_kw.items() if v is not None)
        if given:
            raise ValueError(
                f"{given[0]} is a discretisation option: pass it to build_lgvi_model, not with "
                "a built LGVIModel"
            )
        lgvi = model
    else:
        lgvi = build_lgvi_model(model, **model_kw)
    if loads is None:
        return lgvi, DynamicLoads(**load_kw)
    if not isinstance(loads, DynamicLoads):
        raise ValueError(f"loads must be a DynamicLoads, got {type(loads).__name__}")
    given = sorted(k for k, v in load_kw.items() if v is not None)
    if given:
        raise ValueError(f"{given[0]} given both as a keyword and in loads; pass it once")
    return lgvi, loads


def _setup(
    robot: Any, tensions: Any, tip_force: Any, distributed_force: Any, gravity: Any,
    magnets: Any, field: Any, damping: Any, angular_damping: Any, tip_moment: Any,
    base_motion: Any, elements: Any, shear_eval: str, clamp: str, frequency_correction: Any,
    frequency_target: Any, rotary_inertia_scale: float, strain_damping: Any = None,
) -> _RunInputs:  # fmt: skip
    """The flat argument list (the damping filter's) as checked run inputs."""
    model = build_lgvi_model(robot, elements, shear_eval, clamp, magnets,
                             rotary_inertia_scale=rotary_inertia_scale,
                             frequency_correction=frequency_correction,
                             frequency_target=frequency_target)  # fmt: skip
    loads = DynamicLoads(
        tensions=tensions, tip_force=tip_force, tip_moment=tip_moment,
        distributed_force=distributed_force, gravity=gravity, field=field,
        base_motion=base_motion, damping=damping, angular_damping=angular_damping,
        strain_damping=strain_damping,
    )  # fmt: skip
    return _resolve(model, loads)


def simulate_dynamic(
    model: ModelLike | None = None,
    duration: float | None = None,
    *,
    loads: DynamicLoads | None = None,
    dt: float | None = None,
    initial: StaticResult | DynamicResult | DynamicState | None = None,
    sample_dt: float | None = None,
    dt_safety: float = DEFAULT_DT_SAFETY,
    max_steps: int = 200_000_000,
    integrator: str = "auto",
    implicit_damping: float = IMPLICIT_DAMPING,
    **options: Any,
) -> DynamicResult:
    """Simulate a rod robot with the discrete variational Lie-group integrator (seed 004).

    Parameters
    ----------
    model : an `LGVIModel` (`build_lgvi_model`, built once and reused), or a RobotSpec, dict,
        path or compiled RodModel, discretised with the options below.
    duration : simulated time [s].
    loads : `DynamicLoads` (tensions, tip and distributed forces, gravity, magnetic field,
        base motion, damping); default none.
    dt : time step [s]; default: automatic, `dt_safety` * 2 / omega_max of the linearised model
        at the initial state (`stable_time_step`) for the explicit step, `implicit_time_step`
        for the implicit one.
    initial : None (rest shape, at rest), a StaticResult (released at rest from that shape), a
        DynamicResult / DynamicState (continue from its final state).
    sample_dt : output period [s] (default 1 ms, at least one step).
    dt_safety : fraction of the linear stability limit used by the automatic step.
    max_steps : refuse runs longer than this many steps.
    integrator : "auto" (default: "implicit" when its automatic step is at least
        `AUTO_STEP_RATIO` (1000) times the explicit one at the initial state, i.e. stiff
        slender rods such as spring steel and NiTi, else "explicit"), "explicit" (ALGORITHMS.md
        E.3, step limited by the fastest mode) or "implicit" (variational, the elastic energy
        in the strains of both ends of the step, solved by Newton with a banded matrix; step
        from the lowest bending modes, `implicit_time_step`; `dt_safety` unused).
        docs/dynamics.md "Implicit step"; `extra["integrator"]` says which one ran.
    implicit_damping : numerical Kelvin-Voigt damping of the implicit step, in steps (beta =
        implicit_damping x dt, added to `strain_damping`; default `IMPLICIT_DAMPING`, 0: the
        purely variational step); > 0 removes the modes faster than the step.
    **options : the flat form, kept for existing calls: each `DynamicLoads` field as a keyword
        (tensions, tip_force, tip_moment, distributed_force, gravity, field, base_motion,
        damping, angular_damping, strain_damping; not together with `loads`), each
        `build_lgvi_model` option (elements, shear_eval, clamp, magnets,
        frequency_correction, frequency_target, rotary_inertia_scale; not with a built
        LGVIModel), and `robot=` for `model`.

    Notes
    -----
    strain_damping : Kelvin-Voigt (strain-rate) damping time beta [s]: every discrete strain
        (shear-stretch, bending-torsion) carries a viscous stress beta x its elastic stiffness x
        its rate, i.e. the stiffness-proportional damping matrix beta B^T W B (zero on rigid
        motions; modal ratio zeta_n = beta omega_n / 2, so higher modes are damped more).
        Integrated implicitly (backward Euler on the dissipation), so it does not shorten the
        step. Adds to `damping` / `angular_damping`.

    Returns
    -------
    DynamicResult; a diverging run returns success=False with the samples up to the failure.

    >>> model = build_lgvi_model(robot, elements=20)  # doctest: +SKIP
    >>> loads = DynamicLoads(gravity=[0, 0, -9.81])  # doctest: +SKIP
    >>> res = simulate_dynamic(model, 1.0, loads=loads)  # doctest: +SKIP
    """

    t_wall = time.perf_counter()
    if duration is None:
        raise TypeError("simulate_dynamic() missing required argument: 'duration'")
    if not (isinstance(duration, int | float) and duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be > 0 [s], got {duration!r}")
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    if not (implicit_damping >= 0 and math.isfinite(implicit_damping)):
        raise ValueError(f"implicit_damping must be >= 0, got {implicit_damping!r}")
    su = _resolve(*_model_and_loads(model, loads, options))
    model = su.model
    # The stepper and the step (automatic: linearised at the initial shape, loads at the start).
    start = _start_state(su, initial, 1.0)
    if integrator == "auto":
        integrator = _auto_integrator(su, start, dt_safety)
    dt, auto_dt = _choose_dt(su, dt, start, dt_safety, integrator)
    n_steps = int(math.ceil(duration / dt - 1e-9))
    if n_steps > max_steps:
        raise ValueError(
            f"{n_steps} steps of {dt:.3g} s exceed max_steps={max_steps}; raise it or pass dt"
        )
    if sample_dt is None:
        sample_dt = DEFAULT_SAMPLE_DT
    if not (sample_dt > 0 and math.isfinite(sample_dt)):
        raise ValueError(f"sample_dt must be > 0 [s], got {sample_dt!r}")
    every = max(1, int(round(sample_dt / dt)))
    state = _start_state(su, initial, dt)
    t0 = state[4]
    stats: dict[str, Any] = {}
    status, done, rec_p, rec_O, rec_E, _ = _integrate(
        su, state, dt, n_steps, every, integrator=integrator, stats=stats,
        numerical_damping=implicit_damping,
    )  # fmt: skip
    p, p_prev, O, fr, _ = state

    # Trim to the samples taken.
    n_rec = rec_E.shape[0]
    t_all = t0 + np.arange(n_rec) * every * dt
    ok_rows = np.flatnonzero(np.isfinite(rec_E))
    n_ok = int(ok_rows[-1] + 1) if ok_rows.size else 0
    if status == STATUS_OK:
        message = _STATUS_MESSAGES[status]
    else:
        message = f"{_STATUS_MESSAGES[status]} at t = {t0 + done * dt:.6g} s (dt = {dt:.3g} s)"
    t_out = t_all[:n_ok]
    frames = rec_O[:n_ok]
    if su.base.varies:
        base_R = np.array([su.base.at(float(tq))[1] for tq in t_out]).reshape(-1, 3, 3)
    else:
        base_R = np.broadcast_to(model.rod.base_rotation, (n_ok, 3, 3))
    rotations = _section_frames(model, frames, base_R)
    final = DynamicState(
        t=t0 + done * dt, dt=dt, positions=p.copy(), prev_positions=p_prev.copy(),
        frames=O.copy(), cayley=fr.copy(),
    )  # fmt: skip
    return DynamicResult(
        success=status == STATUS_OK,
        status=int(status),
        message=message,
        t=t_out,
        positions=rec_p[:n_ok],
        rotations=rotations,
        frames=frames,
        energy=rec_E[:n_ok],
        node_s=model.node_s.copy(),
        dt=dt,
        n_steps=int(min(done, n_steps)),
        stiffness_scale=model.stiffness_scale,
        wall_time=time.perf_counter() - t_wall,
        model=model,
        final_state=final,
        extra={"auto_dt": auto_dt, "sample_every": every, "integrator": integrator, **stats},
    )
