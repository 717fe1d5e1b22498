"""The Newton kernel's last evaluation without sensitivities, the Jacobian it keeps for the
tip error estimate, and the result built without the dataclass `__init__` (docs/stability.md,
"Cost of a solve")."""

from __future__ import annotations

import numpy as np
import pytest

from softrod.description import find_robot, load_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._inputs import _problem, check_inputs
from softrod.rods._result import StaticResult, _built
from softrod.rods._shooting import _coarse_tip_error
from softrod.rods._static_kernels import (
    _BROYDEN_DEFER,
    _DEFERRED,
    _JACOBIAN_AT,
    _STEP_RTOL,
    _deferred_tip,
    _newton,
    _residual,
    _residual_value,
)

#: The estimate with Newton's fine-grid Jacobian against the coarse grid's own: the two
#: Jacobians differ by O(h^4) (and by one Newton step), which moves a ~1e-9 m estimate by
#: ~1e-5 of itself (bench: <= 2.4e-5); 1e-3 fails on a wrong row, column or scale.
ESTIMATE_RTOL = 1e-3


@pytest.fixture(scope="module")
def sms():
    return compile_model(load_robot(find_robot("softmanisim")))


def test_residual_without_jacobian_is_the_same_state(sms):
    """`_residual_value` (Newton's last evaluation) gives `_residual`'s residual and node
    arrays bit for bit: the sensitivities do not feed back into the state."""
    inp = check_inputs(sms, tensions=[1.5, 0.7, 0.0, 0.0], tip_force=[0.4, -0.3, -0.8])
    pb = _problem(sms, inp, 1.0)
    x = np.array([0.01, -0.02, 0.003])
    ny, n = 15 + sms.n_tendons, 3
    arrays = []
    for full in (True, False):
        Y, X = np.empty((sms.n_nodes, ny)), np.empty((sms.n_nodes, 6))
        z, r = np.empty(ny * (1 + n)), np.empty(n)
        args = (x, pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc, np.bool_(True))
        if full:
            assert _residual(*args, Y, X, z, r, np.empty((n, n)))
        else:
            assert _residual_value(*args, Y, X, z, r)
        arrays.append((Y, X, r))
    for a, b in zip(*arrays, strict=True):
        np.testing.assert_array_equal(a, b)


def test_newton_converges_to_the_same_answer(sms):
    """The kernel's answer (converged unknowns and node states) with its cheap last evaluation
    is that of one more full evaluation at the converged unknowns."""
    sol = solve_static(sms, tensions=[1.0, 0.8, 0.0, 0.0], tip_force=[0.5, 0.2, -0.6])
    pb = _problem(sms, sol.inputs, 1.0)
    ny = 15 + sms.n_tendons
    Y, X, counters = np.empty((sms.n_nodes, ny)), np.empty((sms.n_nodes, 6)), np.zeros(3)
    x = np.zeros(3)
    args = (pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc, 1e-10)
    assert _newton(x, *args, 30, Y, X, counters, 4.0) == 0
    Y0, X0 = Y.copy(), X.copy()
    _newton(x, *args, 0, Y, X, counters, 4.0)  # one full evaluation at x
    np.testing.assert_array_equal(Y0, Y)
    np.testing.assert_array_equal(X0, X)
    np.testing.assert_allclose(x, sol.base_moment, rtol=0, atol=1e-9 * sms.moment_scale)


def test_shared_load_arrays_stay_constant(sms):
    """The per-model load arrays every solve shares (`RodModel.kernel_constants`) are only
    read: after warm-started solves with and without point loads they are still zeros and
    ones, and a fresh model (its own arrays) gives the same answers bit for bit."""
    loads = [
        dict(tensions=[1.2, 0.4, 0.0, 0.0], tip_force=[0.3, 0.0, -0.5]),
        dict(tensions=[0.0, 1.0, 0.6, 0.0], point_loads=[(0.07, [0.0, 0.2, -0.3])]),
        dict(tensions=[0.5, 0.0, 0.0, 0.9], distributed_force=[1.0, 1.0, 1.0]),
    ]
    fresh = compile_model(load_robot(find_robot("softmanisim")))
    prev = prev_f = None
    for kw in loads:
        prev = solve_static(sms, guess=prev, **kw)
        prev_f = solve_static(fresh, guess=prev_f, **kw)
        np.testing.assert_array_equal(prev.positions, prev_f.positions)
        assert prev.success and prev.nit == prev_f.nit and prev.stable
    consts = sms.kernel_constants
    assert not consts.zero_nodes.any() and not consts.zero_tendons.any()
    assert np.all(consts.ones == 1.0) and not any(np.any(a) for a in consts.no_field[:3])


def test_newton_keeps_its_jacobian(sms):
    """With a long counters array `_newton` keeps the Jacobian of its last full evaluation
    (and the tip's sensitivities after it): that of a full evaluation near the answer."""
    inp = check_inputs(sms, tensions=[1.5, 0.7, 0.0, 0.0], tip_force=[0.4, -0.3, -0.8])
    pb = _problem(sms, inp, 1.0)
    n, ny = 3, 15 + sms.n_tendons
    Y, X = np.empty((sms.n_nodes, ny)), np.empty((sms.n_nodes, 6))
    counters, x = np.zeros(_JACOBIAN_AT + n * (n + 3)), np.zeros(n)
    args = (pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc, 1e-10)
    assert _newton(x, *args, 30, Y, X, counters, 4.0) == 0
    J, z = np.empty((n, n)), np.empty(ny * (1 + n))
    assert _residual(x, *args[:-1], np.bool_(True), Y, X, z, np.empty(n), J)
    kept = counters[_JACOBIAN_AT:].reshape(-1, n)
    # The Jacobian of the iterate before the answer: equal to ~ one Newton step (~1e-5 here).
    np.testing.assert_allclose(kept[:n], J, rtol=1e-4, atol=1e-6 * np.abs(J).max())
    tip_sens = np.array([[z[ny * (1 + d) + a] for d in range(n)] for a in range(3)])
    np.testing.assert_allclose(kept[n:], tip_sens, rtol=1e-4, atol=1e-6 * np.abs(tip_sens).max())


#: A deferred iterate's first-order tip against its evaluated tip, as a fraction of the length:
#: second order in a Newton step predicted to land below `_STEP_RTOL` (<= 1.0e-4 L measured on
#: the bench's continuation steps, docs/batch.md "Speed"; 1e-7 L here). A wrong row or a
#: missing step fails the test's other check (10x closer than the uncorrected tip, ~3e-4 L).
DEFERRED_TIP_TOL = 1e-3


@pytest.mark.parametrize("defer", [1.0, _BROYDEN_DEFER])
@pytest.mark.parametrize("lengths", [False, True])
def test_deferred_iterate_tip(sms, lengths, defer):
    """Continuation's intermediate steps take `_newton`'s predicted-converged iterate without
    evaluating it: its tip from `_deferred_tip` (the iterate before's tip plus its sensitivities
    times the step `_newton` writes into the long counters) is that of an evaluation at the
    iterate, and far closer to it than the uncorrected tip; the iterate meets the tolerance.
    Tension control (3 unknowns) and length control (the extensible variant, 3 + n_t); Newton's
    prediction and, from a secant predictor (`_BROYDEN_DEFER`), the first step value-only with
    Broyden's update and its linear prediction."""
    kw: dict = dict(tip_force=[0.4, -0.3, -0.8], tensions=[1.5, 0.7, 0.0, 0.0])
    model = sms
    if lengths:
        model = compile_model(load_robot(find_robot("softmanisim_2seg_extensible")))
        tau = np.zeros(model.n_tendons)
        tau[:2] = [1.5, 0.7]
        kw = dict(tip_force=[0.04, -0.03, -0.08], tensions=tau)
        pulled = solve_static(model, **kw)
        kw["lengths"] = pulled.tendon_length - 1e-4 * (tau > 0.0)
        del kw["tensions"]
    sol = solve_static(model, **kw)
    assert sol.success
    x = sol.base_moment
    if lengths:
        x = np.concatenate([x, sol.tendon_tension])
    # A few Newton steps away (from 0.8 Broyden's path converges without deferring on tension
    # control; from 0.6 both controls defer after a Broyden step).
    x = (0.6 if defer == _BROYDEN_DEFER else 0.8) * x
    pb = _problem(model, sol.inputs, 1.0)
    n, ny = x.size, 15 + model.n_tendons
    Y, X = np.empty((model.n_nodes, ny)), np.empty((model.n_nodes, 6))
    counters = np.zeros(_JACOBIAN_AT + n * (n + 4))
    counters[3] = defer
    args = (pb.length_mode, pb.tau_fixed, pb.base, pb.geo, pb.ld, pb.bc, _STEP_RTOL)
    assert _newton(x, *args, 30, Y, X, counters, 4.0) == _DEFERRED
    before = Y[-1, 0:3].copy()
    tip = np.empty(3)
    _deferred_tip(Y, counters, n, tip)
    evaluated = np.zeros(3)
    _newton(x, *args, 0, Y, X, evaluated, 4.0)  # one evaluation at the deferred iterate
    assert evaluated[2] <= _STEP_RTOL
    error = np.linalg.norm(tip - Y[-1, 0:3])
    assert error <= DEFERRED_TIP_TOL * model.total_length
    assert error < 0.1 * np.linalg.norm(before - Y[-1, 0:3])


@pytest.mark.parametrize("lengths", [False, True])
def test_estimate_with_newtons_jacobian(sms, lengths):
    """A solve's tip error estimate, corrected with Newton's kept Jacobian inside its last
    kernel call (`_newton_with_maps`), equals the estimate with the coarse grid's own
    Jacobian (`_coarse_tip_error`, three sensitivity directions) to `ESTIMATE_RTOL`, under
    tension control (SoftManiSim, 3 unknowns) and length control (its extensible variant with
    elastic tendons, 3 + n_t unknowns)."""
    kw: dict = dict(tip_force=[0.4, -0.3, -0.8])
    model = sms
    if lengths:
        model = compile_model(load_robot(find_robot("softmanisim_2seg_extensible")))
        kw["tip_force"] = [0.04, -0.03, -0.08]  # single shooting on this softer robot
        tau = np.zeros(model.n_tendons)
        tau[:2] = [1.5, 0.7]
        pulled = solve_static(model, tensions=tau, **kw)
        # Shorter commands than the loaded paths: the pulled tendons stay taut.
        kw["lengths"] = pulled.tendon_length - 1e-4 * (tau > 0.0)
    else:
        kw["tensions"] = [1.5, 0.7, 0.0, 0.0]
    sol = solve_static(model, **kw)
    # Single shooting's estimate (multiple shooting's tip_error is step doubling's).
    assert sol.success and sol.message == "converged"
    assert sol.tip_error is not None and sol.tip_error > 0.0
    x = sol.base_moment
    if lengths:
        x = np.concatenate([x, sol.tendon_tension])
    pb = _problem(model, sol.inputs, 1.0)
    own = _coarse_tip_error(model, sol.inputs, x, sol.tip_position, pb)
    assert own is not None
    assert abs(sol.tip_error - own) <= ESTIMATE_RTOL * own


def test_result_built_without_init_names_every_field(sms):
    """`_built` makes the same result as the dataclass constructor and refuses a missing
    field (a new field must be filled in by `_assemble`)."""
    sol = solve_static(sms, tensions=[1.0, 0.0, 0.0, 0.0])
    fields = {name: getattr(sol, name) for name in StaticResult.__dataclass_fields__}
    copy = _built(StaticResult, frozenset(fields), fields)
    assert copy.__dict__.keys() == fields.keys() and copy.success
    assert all(copy.__dict__[k] is v for k, v in fields.items())
    del fields["stable"]
    with pytest.raises(TypeError, match="stable"):
        _built(StaticResult, frozenset(StaticResult.__dataclass_fields__), fields)
