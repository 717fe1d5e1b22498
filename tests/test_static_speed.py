"""The Newton kernel's last evaluation without
sensitivities (docs/stability.md, "Cost of a solve")."""

from __future__ import annotations

import numpy as np
import pytest

from softrod.description import find_robot, load_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._inputs import _problem, check_inputs
from softrod.rods._static_kernels import _newton, _residual, _residual_value


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
