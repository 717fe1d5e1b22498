"""The rods contract (issue 14 item 1): checked `StaticLoads`, results that carry their inputs
and typed warm-start state, `tip_jacobian(model, result)`, one method registry, and `so3`.

Independent truth: closed-form rotations (a quarter turn about z), MuJoCo's own quaternion
routines (the convention `so3` promises to follow), and the solver's own cold solves (a warm
start read from `result.warm` must reach the same equilibrium).
"""

from __future__ import annotations

import dataclasses
import math

import mujoco
import numpy as np
import pytest

import softrod
from softrod.rods import (
    METHODS,
    StaticLoads,
    WarmStart,
    check_inputs,
    so3,
    tip_jacobian,
)

#: so3 against closed forms / MuJoCo: a few ulps of the unit-size entries.
ROT_TOL = 1e-14
#: A warm-started solve converges to the cold solve's equilibrium to the solver tolerance:
#: tip agreement well under 1e-9 m on the 0.2 m robot.
WARM_TIP_TOL_M = 1e-9

TENSIONS = np.array([1.0, 0.0, 0.3, 0.0, 2.0, 0.0, 0.5, 0.0, 0.0])
LOADS = {"tip_force": [0.1, -0.2, 0.05], "gravity": [0.0, 0.0, -9.81]}


@pytest.fixture(scope="module")
def model() -> softrod.RodModel:
    from reference.robots import tdcr3_dict

    return softrod.compile_model(tdcr3_dict())


def _random_rotations(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(14)
    out = [np.eye(3), so3.exp([0.0, 0.0, math.pi]), so3.exp([math.pi - 1e-9, 0.0, 0.0])]
    for _ in range(n):
        q = rng.normal(size=4)
        out.append(so3.quat_to_matrix(q))
    return out


# ---------------------------------------------------------------------------------------------
# so3


def test_so3_closed_forms():
    v = np.array([0.3, -1.2, 0.7])
    w = np.array([-0.4, 0.5, 2.0])
    np.testing.assert_allclose(so3.hat(v) @ w, np.cross(v, w), atol=ROT_TOL)
    np.testing.assert_array_equal(so3.vee(so3.hat(v)), v)
    # A quarter turn about z takes x to y.
    Rz = so3.exp([0.0, 0.0, math.pi / 2])
    np.testing.assert_allclose(Rz @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=ROT_TOL)
    q = so3.quat_from_axis_angle([0.0, 0.0, 2.0], math.pi / 2)
    np.testing.assert_allclose(q, [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)])
    np.testing.assert_allclose(so3.quat_to_matrix(q), Rz, atol=ROT_TOL)
    np.testing.assert_array_equal(so3.exp(np.zeros(3)), np.eye(3))
    np.testing.assert_array_equal(so3.log(np.eye(3)), np.zeros(3))
    with pytest.raises(ValueError, match="axis"):
        so3.quat_from_axis_angle([0.0, 0.0, 0.0], 1.0)
    # hat works on stacks of vectors.
    stack = np.stack([v, w])
    np.testing.assert_array_equal(so3.hat(stack)[1], so3.hat(w))


def test_so3_quaternion_algebra_matches_mujoco():
    rng = np.random.default_rng(7)
    for _ in range(20):
        axis, angle = rng.normal(size=3), float(rng.uniform(-4.0, 4.0))
        q_mj = np.empty(4)
        mujoco.mju_axisAngle2Quat(q_mj, axis / np.linalg.norm(axis), angle)
        q = so3.quat_from_axis_angle(axis, angle)
        np.testing.assert_allclose(q, q_mj, atol=ROT_TOL)
        qa, qb = rng.normal(size=4), rng.normal(size=4)
        ab = np.empty(4)
        mujoco.mju_mulQuat(ab, qa, qb)
        np.testing.assert_allclose(so3.quat_multiply(qa, qb), ab, atol=ROT_TOL * 10)
        # The product composes rotations: R(qa qb) = R(qa) R(qb).
        np.testing.assert_allclose(
            so3.quat_to_matrix(so3.quat_multiply(qa, qb)),
            so3.quat_to_matrix(qa) @ so3.quat_to_matrix(qb),
            atol=ROT_TOL * 10,
        )


def test_so3_round_trips_and_mujoco_convention():
    for R in _random_rotations(50):
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-14)
        np.testing.assert_allclose(so3.exp(so3.log(R)), R, atol=1e-12)
        q = so3.matrix_to_quat(R)
        assert q[0] >= 0.0
        np.testing.assert_allclose(so3.quat_to_matrix(q), R, atol=ROT_TOL * 10)
        # MuJoCo's (w, x, y, z) order and sign choice up to the global sign of q.
        q_mj = np.empty(4)
        mujoco.mju_mat2Quat(q_mj, R.ravel())
        np.testing.assert_allclose(q * np.sign(q @ q_mj), q_mj, atol=1e-12)
        m_mj = np.empty(9)
        mujoco.mju_quat2Mat(m_mj, q)
        np.testing.assert_allclose(so3.quat_to_matrix(q), m_mj.reshape(3, 3), atol=ROT_TOL)
        # log gives the angle in [0, pi].
        assert np.linalg.norm(so3.log(R)) <= math.pi + 1e-12


# ---------------------------------------------------------------------------------------------
# StaticLoads


def test_check_inputs_builds_static_loads(model):
    loads = check_inputs(model, TENSIONS, **LOADS, point_loads=[(0.05, [0.0, 0.1, 0.0])])
    assert isinstance(loads, StaticLoads)
    np.testing.assert_array_equal(loads.tensions, TENSIONS)
    assert loads.lengths is None
    np.testing.assert_array_equal(loads.tip_moment, np.zeros(3))
    assert loads.has_external_load
    s, force, moment = loads.point_loads[0]
    assert s == 0.05 and force.tolist() == [0.0, 0.1, 0.0] and moment.tolist() == [0, 0, 0]
    # Unloaded robot under tension control: zero tensions, no external load.
    empty = check_inputs(model)
    np.testing.assert_array_equal(empty.tensions, np.zeros(model.n_tendons))
    assert not empty.has_external_load
    with pytest.raises(dataclasses.FrozenInstanceError):
        loads.tensions = None  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tensions": [1.0] * 8}, "tensions must have 9 values"),
        ({"tensions": [-1.0] + [0.0] * 8}, r"tensions\[0\] must be >= 0"),
        ({"tensions": [0.0] * 9, "lengths": [0.1] * 9}, "not both"),
        ({"tip_force": [1.0, 2.0]}, "tip_force must have 3 components"),
        ({"gravity": [0.0, 0.0, math.nan]}, "gravity must be finite"),
        ({"point_loads": [(-0.1, [0, 0, 1.0])]}, r"point_loads\[0\].s must be in"),
    ],
)
def test_check_inputs_names_the_bad_field(model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_inputs(model, **kwargs)


# ---------------------------------------------------------------------------------------------
# StaticResult: inputs and warm state


def test_result_carries_inputs_and_typed_warm_state(model):
    sol = softrod.solve_static(model, TENSIONS, **LOADS)
    assert sol.success
    assert not hasattr(sol, "extra")
    assert isinstance(sol.inputs, StaticLoads)
    np.testing.assert_array_equal(sol.inputs.tensions, TENSIONS)
    np.testing.assert_array_equal(sol.inputs.tip_force, LOADS["tip_force"])
    assert isinstance(sol.warm, WarmStart)
    n = model.n_nodes
    assert sol.warm.total_moment.shape == (n, 3)
    assert sol.warm.load_moments.shape == (n, 3)
    np.testing.assert_array_equal(sol.warm.total_moment[0], sol.base_moment)
    assert sol.warm.balanced_loads is not None and sol.warm.observer is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.warm = None  # type: ignore[misc]
    # pcc has no warm state; the observer carries its own.
    pcc = softrod.solve_static(model, TENSIONS, method="pcc")
    assert pcc.warm is None and pcc.inputs.tensions is not None
    obs = softrod.solve_static(model, TENSIONS, method="observer", **LOADS)
    assert obs.warm is not None and obs.warm.observer is not None
    assert obs.warm.balanced_loads is None


def test_warm_start_reads_result_warm(model):
    cold = softrod.solve_static(model, 1.1 * TENSIONS, **LOADS)
    first = softrod.solve_static(model, TENSIONS, **LOADS)
    warm = softrod.solve_static(model, 1.1 * TENSIONS, guess=first, **LOADS)
    assert warm.success and warm.nfev <= cold.nfev
    np.testing.assert_allclose(warm.tip_position, cold.tip_position, atol=WARM_TIP_TOL_M)
    # Multiple shooting marches from the guess's balanced loads.
    ms = softrod.solve_static(model, TENSIONS, intervals=3, **LOADS)
    ms2 = softrod.solve_static(model, 1.1 * TENSIONS, intervals=3, guess=ms, **LOADS)
    assert ms2.success
    np.testing.assert_allclose(ms2.tip_position, cold.tip_position, atol=WARM_TIP_TOL_M)
    assert ms2.warm is not None and ms2.warm.balanced_loads is not None
    np.testing.assert_array_equal(ms2.warm.balanced_loads.tensions, 1.1 * TENSIONS)


def test_tip_jacobian_takes_model_and_result(model):
    sol = softrod.solve_static(model, TENSIONS, **LOADS)
    J = tip_jacobian(model, sol)
    assert J.shape == (3, model.n_tendons)
    # The loads come from the result: another load gives another Jacobian.
    other = softrod.solve_static(model, TENSIONS, tip_force=[0.0, 0.0, 0.0])
    assert np.abs(tip_jacobian(model, other) - J).max() > 1e-6
    # A model on another grid is refused.
    coarse = softrod.compile_model(model.spec, steps=8)
    with pytest.raises(ValueError, match="nodes"):
        tip_jacobian(coarse, sol)


# ---------------------------------------------------------------------------------------------
# Registry and public names


def test_method_registry_is_explicit():
    import softrod.rods._observer as observer

    assert list(METHODS) == ["shooting", "pcc", "observer"]
    # The observer is listed by the registry, it does not register itself on import.
    assert not hasattr(observer, "METHODS")
    assert METHODS["observer"] is observer._solve_observer
