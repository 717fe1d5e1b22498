"""Exact shooting sensitivities (`shooting_eval`) and input Jacobians (`tip_jacobian`) against
finite differences.

Step choices. `shooting_eval` differentiates the discrete RK4 map exactly, so a difference
quotient of the same map converges to it with no discretization mismatch:
* base moment M0: central differences with h = 1e-5 x moment_scale. Truncation ~h^2 f''' is
  ~1e-10 relative, round-off ~eps/h ~1e-11 relative (measured optimum: 3e-11 relative).
* tensions: tensions must stay >= 0 and several are exactly 0, so a one-sided second-order
  formula (-3 f(0) + 4 f(h) - f(2h)) / 2h with h = 1e-4 N (error ~1e-10 relative).
* `tip_jacobian` is compared with differences of full solves at rtol=1e-12, whose tip noise
  is ~1e-13 m: tension steps 1e-3 N (one-sided, second order, truncation ~1e-8 relative),
  commanded-length steps 1e-7 m (central; the smallest tendon stretch is 1.5e-5 m, so no
  tendon changes between taut and slack inside the stencil).
"""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from reference.robots import soft_rod_dict, tdcr3_dict
from softrod.rods import compile_model, shooting_eval, tip_jacobian

#: Analytic vs central/second-order differences of the same discrete map (see module doc).
FD_RTOL = 1e-7
#: Analytic vs differences of converged solves (solver noise / step ~1e-7 relative at the
#: 1e-7 m length step, truncation ~1e-8 at the 1e-3 N tension step).
SOLVE_FD_RTOL = 1e-6
#: A mismatch this large in relative terms is what a wrong sign or a missing term produces;
#: guards that the checks are sensitive (the Jacobians are far from zero).
MIN_JACOBIAN_NORM = 1e-3

M0_STEP_REL = 1e-5
TENSION_STEP = 1e-4  # [N]
SOLVE_TENSION_STEP = 1e-3  # [N]
SOLVE_LENGTH_STEP = 1e-7  # [m]
SOLVE_RTOL = 1e-12  # below ~2e-13 the length-control residual hits its round-off floor

LOADS = {
    "tip_force": [0.05, -0.1, 0.02],
    "tip_moment": [0.002, 0.0, -0.001],
    "distributed_force": [0.0, 0.3, 0.0],
    "gravity": [0.0, 0.0, -9.81],
}
TENSIONS = np.array([2.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.3, 0.0, 1.0])
ROBOTS = {
    "tdcr3_kirchhoff": lambda: tdcr3_dict("kirchhoff"),
    "tdcr3_cosserat": lambda: tdcr3_dict("cosserat"),
}


def _rel_err(approx: np.ndarray, exact: np.ndarray) -> float:
    return float(np.abs(approx - exact).max() / np.abs(exact).max())


def _central(f, x: np.ndarray, h: float) -> np.ndarray:
    cols = []
    for k in range(x.shape[0]):
        e = np.zeros_like(x)
        e[k] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


def _forward2(f, x: np.ndarray, h: float) -> np.ndarray:
    f0 = f(x)
    cols = []
    for k in range(x.shape[0]):
        e = np.zeros_like(x)
        e[k] = h
        cols.append((-3 * f0 + 4 * f(x + e) - f(x + 2 * e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.fixture(params=sorted(ROBOTS))
def robot(request):
    return ROBOTS[request.param]()


def test_shooting_eval_tension_control(robot):
    """Moment rows and tip/length sensitivities at an unconverged x (M0 off equilibrium)."""
    sol = softrod.solve_static(robot, TENSIONS, **LOADS)
    m_scale = compile_model(robot).moment_scale
    x = sol.base_moment + 0.05 * m_scale * np.array([1.0, -2.0, 0.5])
    ev = shooting_eval(robot, x, TENSIONS, **LOADS)

    def at_x(x_):
        return shooting_eval(robot, x_, TENSIONS, **LOADS)

    h = M0_STEP_REL * m_scale
    assert np.abs(ev.jacobian).max() > MIN_JACOBIAN_NORM
    assert _rel_err(_central(lambda x_: at_x(x_).residual, x, h), ev.jacobian) < FD_RTOL
    assert _rel_err(_central(lambda x_: at_x(x_).tip_position, x, h), ev.d_tip_d_M0) < FD_RTOL
    assert _rel_err(_central(lambda x_: at_x(x_).tendon_length, x, h), ev.d_length_d_M0) < FD_RTOL

    def at_tau(tau):
        return shooting_eval(robot, x, tau, **LOADS)

    fd_tip = _forward2(lambda t: at_tau(t).tip_position, TENSIONS, TENSION_STEP)
    fd_res = _forward2(lambda t: at_tau(t).residual, TENSIONS, TENSION_STEP)
    fd_len = _forward2(lambda t: at_tau(t).tendon_length, TENSIONS, TENSION_STEP)
    assert _rel_err(fd_tip, ev.d_tip_d_tension) < FD_RTOL
    assert _rel_err(fd_res * m_scale, ev.d_moment_d_tension) < FD_RTOL
    assert _rel_err(fd_len, ev.d_length_d_tension) < FD_RTOL


def _length_command(robot) -> np.ndarray:
    """Commanded lengths from a tension solve: taut tendons stretched by tau / k, the zero-
    tension ones 1 mm slack (far from the kink of max(0, .))."""
    sol = softrod.solve_static(robot, TENSIONS, rtol=SOLVE_RTOL, **LOADS)
    k = 2.0e4
    lengths = sol.tendon_length - TENSIONS / k
    lengths[TENSIONS == 0] += 1e-3
    return lengths


def test_shooting_eval_length_control(robot):
    """Full Jacobian (moment rows and tension rows) with tensions as unknowns."""
    lengths = _length_command(robot)
    sol = softrod.solve_static(robot, lengths=lengths, **LOADS)
    x = np.concatenate([sol.base_moment, sol.tendon_tension])
    x[3:] += 0.1  # off equilibrium; taut tendons stay taut, slack ones slack
    ev = shooting_eval(robot, x, lengths=lengths, **LOADS)
    m_scale = compile_model(robot).moment_scale
    steps = np.concatenate([np.full(3, M0_STEP_REL * m_scale), np.full(9, TENSION_STEP)])
    fd = np.empty_like(ev.jacobian)
    for k in range(x.shape[0]):
        e = np.zeros_like(x)
        e[k] = steps[k]
        r_p = shooting_eval(robot, x + e, lengths=lengths, **LOADS).residual
        r_m = shooting_eval(robot, x - e, lengths=lengths, **LOADS).residual
        fd[:, k] = (r_p - r_m) / (2 * steps[k])
    # Row blocks separately: moment rows and tension rows have different scales.
    assert _rel_err(fd[:3], ev.jacobian[:3]) < FD_RTOL
    assert _rel_err(fd[3:], ev.jacobian[3:]) < FD_RTOL


def test_tip_jacobian_tension_control(robot):
    sol = softrod.solve_static(robot, TENSIONS, rtol=SOLVE_RTOL, **LOADS)
    J = tip_jacobian(robot, sol)
    assert J.shape == (3, 9)

    def tip(tau):
        out = softrod.solve_static(robot, tau, rtol=SOLVE_RTOL, guess=sol, **LOADS)
        assert out.success
        return out.tip_position

    fd = _forward2(tip, TENSIONS, SOLVE_TENSION_STEP)
    assert np.abs(J).max() > MIN_JACOBIAN_NORM
    assert _rel_err(fd, J) < SOLVE_FD_RTOL


def test_tip_jacobian_length_control(robot):
    lengths = _length_command(robot)
    sol = softrod.solve_static(robot, lengths=lengths, rtol=SOLVE_RTOL, **LOADS)
    J = tip_jacobian(robot, sol)

    def tip(L):
        out = softrod.solve_static(robot, lengths=L, rtol=SOLVE_RTOL, guess=sol, **LOADS)
        assert out.success
        return out.tip_position

    fd = _central(tip, lengths, SOLVE_LENGTH_STEP)
    assert np.abs(J).max() > MIN_JACOBIAN_NORM
    assert _rel_err(fd, J) < SOLVE_FD_RTOL
    # Slack tendons do not move the tip.
    np.testing.assert_array_equal(J[:, TENSIONS == 0], 0.0)


def test_tip_jacobian_soft_rod_cosserat():
    """Shear, extension, precurvature and a stiffer second segment."""
    robot = soft_rod_dict("cosserat")
    tau = np.array([2.0, 0.5, 1.2, 1.5, 0.8])
    loads = {"tip_force": [0.02, -0.03, 0.01], "gravity": [0.0, -9.81, 0.0]}
    sol = softrod.solve_static(robot, tau, rtol=SOLVE_RTOL, **loads)
    J = tip_jacobian(robot, sol)
    fd = _central(
        lambda t: softrod.solve_static(robot, t, rtol=SOLVE_RTOL, guess=sol, **loads).tip_position,
        tau,
        SOLVE_TENSION_STEP,
    )
    assert _rel_err(fd, J) < SOLVE_FD_RTOL


def test_tip_jacobian_needs_converged_result(tdcr3):
    failed = softrod.solve_static(tdcr3, tip_force=[1e6, 0.0, 0.0])
    assert not failed.success
    with pytest.raises(ValueError, match="converged"):
        tip_jacobian(tdcr3, failed)
