"""Magnets in the exact static solver (issue 20): dipole torques (R m) x B inside the Newton
sensitivities, gradient forces (grad B)^T R m by a fixed point on the shape."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

import softrod
from reference.robots import rod_dict
from softrod.cli import main
from softrod.description import DescriptionError, load_robot
from softrod.dynamics import MagneticField, simulate_dynamic
from softrod.mujoco import MagneticField as ChainField
from softrod.mujoco import build_spec, chain_info, settle
from softrod.rods import compile_model, solve_static, tip_jacobian
from softrod.rods._stability import is_stable

#: Closed-form tip tolerance [m] (issue 20).
TIP_TOL = 1e-9
#: Cross-model tolerance at rest, as a fraction of L (issue 20).
CROSS_TOL_L = 1e-3
#: 64 RK4 steps put the closed-form cases' discretisation error near 1e-11 m.
STEPS = 64

L = 0.2
E = 1.0e6
RADIUS = 0.005
AREA = math.pi * RADIUS**2
EI = E * math.pi * RADIUS**4 / 4


def _rod(youngs_modulus: float = E, model: str = "kirchhoff", **seg_extra) -> softrod.RobotSpec:
    segment = {"length": L, "disks": 2, "disk_radius": 0.01, **seg_extra}
    return load_robot(
        rod_dict(
            "magnetic_rod", [segment], youngs_modulus=youngs_modulus, radius=RADIUS, model=model
        )
    )


def _tip_dipole_closed_form(lmb_ei: float) -> np.ndarray:
    """Tangent tip dipole in a perpendicular (+x) field: constant curvature with
    theta_tip = (L m B / EI) cos(theta_tip)."""
    theta = brentq(lambda t: t - lmb_ei * math.cos(t), 0.0, math.pi / 2, xtol=1e-15)
    kappa = theta / L
    return np.array([(1 - math.cos(theta)) / kappa, 0.0, math.sin(theta) / kappa])


def _magnetization_closed_form(mu_b: float) -> np.ndarray:
    """Tangent magnetization (dipole density mu [A m]) in a perpendicular (+x) field B:
    EI theta'' = -mu B cos(theta), theta(0) = 0, theta'(L) = 0. The first integral
    theta'^2 = c (sin theta_L - sin theta), c = 2 mu B / EI, with u^2 = sin theta_L - sin theta,
    gives L = (2 / sqrt c) int_0^sqrt(sin theta_L) du / cos(theta), and the tip
    x = (2 / sqrt c) int (sin theta / cos theta) du, z = 2 sqrt(sin theta_L / c)."""
    c = 2.0 * mu_b / EI

    def integral(theta_l: float, f) -> float:
        def g(u: float) -> float:
            sin_t = math.sin(theta_l) - u * u
            return f(sin_t) / math.sqrt(1.0 - sin_t * sin_t)

        return 2.0 / math.sqrt(c) * quad(g, 0.0, math.sqrt(math.sin(theta_l)), epsabs=0.0,
                                         epsrel=1e-13, limit=200)[0]  # fmt: skip

    theta_l = brentq(lambda t: integral(t, lambda s: 1.0) - L, 1e-9, 1.5, xtol=1e-15)
    x = integral(theta_l, lambda s: s)
    return np.array([x, 0.0, 2.0 * math.sqrt(math.sin(theta_l) / c)])


@pytest.mark.parametrize("lmb_ei", [0.5, 1.0, 2.0])
def test_tip_dipole_in_perpendicular_field_gives_the_closed_form(lmb_ei):
    m = 0.01
    B = lmb_ei * EI / (L * m)
    sol = solve_static(_rod(magnets=[{"s": L, "moment": [0.0, 0.0, m]}]), field=[B, 0, 0],
                       steps=STEPS)  # fmt: skip
    assert sol.success and sol.stable
    assert np.linalg.norm(sol.tip_position - _tip_dipole_closed_form(lmb_ei)) < TIP_TOL
    # Constant curvature: the moment m B cos(theta_tip) is carried along the whole rod.
    kappa = np.linalg.norm(sol.curvature, axis=1)
    np.testing.assert_allclose(kappa, kappa[-1], rtol=1e-9)


def test_magnetized_cantilever_matches_the_closed_form():
    magnetization = 2.0e3  # [A/m] along the tangent
    B = 0.05
    mu_b = magnetization * AREA * B  # mu B [N m / m]
    robot = _rod(magnetization=[0.0, 0.0, magnetization])
    sol = solve_static(robot, field=[B, 0.0, 0.0], steps=STEPS)
    assert sol.success and sol.stable
    expected = _magnetization_closed_form(mu_b)
    assert expected[0] > 0.2 * L  # a real bend
    assert np.linalg.norm(sol.tip_position - expected) < TIP_TOL


def test_gradient_force_equals_the_same_point_force():
    """A magnet in a field gradient feels (grad B)^T R m: the answer equals the solve with
    that force given as a point load at the solved orientation."""
    m = np.array([0.0, 0.004, 0.01])
    robot = _rod(magnets=[{"s": 0.6 * L, "moment": m.tolist()}, {"s": L, "moment": m.tolist()}])
    grad = np.array([[0.0, 0.02, 0.3], [0.02, -0.1, 0.0], [0.3, 0.0, 0.1]])
    field = np.array([0.01, 0.0, 0.0])
    sol = solve_static(robot, field=field, field_gradient=grad, steps=STEPS)
    assert sol.success and sol.stable is None and "stability not checked" in sol.message
    model = compile_model(robot, steps=STEPS)
    at = [int(np.argmin(np.abs(sol.s - s))) for s in model.magnet_s]
    forces = [grad.T @ sol.rotations[k] @ m for k in at]
    assert np.linalg.norm(forces[1]) > 1e-3  # comparable to the weight-free bending loads
    same = solve_static(
        robot,
        field=field,
        point_loads=[(s, f) for s, f in zip(model.magnet_s, forces, strict=True)],
        steps=STEPS,
    )
    assert np.linalg.norm(sol.positions - same.positions, axis=1).max() < TIP_TOL
    # The gradient matters: without it the tip is elsewhere.
    plain = solve_static(robot, field=field, steps=STEPS)
    assert np.linalg.norm(plain.tip_position - sol.tip_position) > 1e-3 * L


def test_magnetic_cantilever_under_gravity_static_vs_mujoco_vs_lgvi():
    """Static solver vs the MuJoCo chain at N = 50 at rest vs LGVI run to rest (issue 20).
    Cosserat, as LGVI's rod is extensible; LGVI at 40 elements (its O(1/N^2) error is 0.06 %
    L at 20 and 0.015 % L at 40 here)."""
    robot = _rod(
        youngs_modulus=5.0e6,
        model="cosserat",
        magnets=[{"s": L, "moment": [0.0, 0.0, 0.05]}],
        magnetization=[0.0, 0.0, 1.0e3],
    )
    gravity = np.array([-9.81, 0.0, 0.0])
    B = np.array([0.03, 0.0, 0.01])
    static = softrod.solve_static(robot, field=B, gravity=gravity)
    assert static.success and static.stable
    # The field matters against gravity.
    assert static.tip_position[0] > softrod.solve_static(robot, gravity=gravity).tip_position[0]
    chain = build_spec(robot, links=50, gravity=tuple(gravity)).compile()
    data = mujoco.MjData(chain)
    hook = ChainField(chain, chain_info(robot, links=50, gravity=tuple(gravity)), field=B)
    settle(chain, data, damping_time=0.3, qvel_tol=1e-7, before_step=hook.apply)
    assert np.linalg.norm(data.site("tip").xpos - static.tip_position) < CROSS_TOL_L * L
    res = simulate_dynamic(
        robot,
        2.0,
        field=MagneticField(uniform=B),
        gravity=gravity,
        damping=1.0,
        elements=40,
        sample_dt=0.01,
    )
    assert res.success
    tip = res.positions[:, -1]
    moved = np.linalg.norm(tip[-1] - tip[np.searchsorted(res.t, res.t[-1] - 0.2)])
    assert moved < 1e-5 * L
    assert np.linalg.norm(tip[-1] - static.tip_position) < CROSS_TOL_L * L


def test_newton_stays_quadratic_with_magnetic_torques():
    """The torques are in the sensitivities: under the same weight, a magnet bending the rod
    as far as a tendon needs at most two Newton iterations more (issue 20)."""
    m, offset, E_stiff = 0.01, 0.004, 5.0e6
    EI_stiff = E_stiff * math.pi * RADIUS**4 / 4
    gravity = [0.0, -9.81, 0.0]
    for lmb_ei in (1.0, 2.0):
        theta = brentq(lambda t, b=lmb_ei: t - b * math.cos(t), 0.0, math.pi / 2)
        robot = _rod(E_stiff, magnets=[{"s": L, "moment": [0.0, 0.0, m]}])
        magnet = solve_static(robot, field=[lmb_ei * EI_stiff / (L * m), 0, 0], gravity=gravity)
        robot = _rod(E_stiff, tendons=[{"offset": offset, "angle_deg": 0.0}])
        tendon = solve_static(robot, [theta * EI_stiff / (L * offset)], gravity=gravity)
        assert magnet.success and tendon.success and magnet.message == "converged"
        assert magnet.nit <= tendon.nit + 2
    # Without the weight both bend to the same constant-curvature arc.
    magnet = solve_static(_rod(magnets=[{"s": L, "moment": [0.0, 0.0, m]}]),
                          field=[EI / (L * m), 0, 0])  # fmt: skip
    theta = brentq(lambda t: t - math.cos(t), 0.0, math.pi / 2)
    tendon = solve_static(
        _rod(tendons=[{"offset": offset, "angle_deg": 0.0}]), [theta * EI / (L * offset)]
    )
    assert np.linalg.norm(magnet.tip_position - tendon.tip_position) < 1e-9


def test_dipole_against_the_field_buckles_at_the_closed_form():
    """A tangent tip dipole against the field: the straight rod is stable for L m B / EI < 1
    and unstable above (second variation EI/L - m B on theta(s) = theta_L s / L)."""
    m = 0.01
    robot = _rod(magnets=[{"s": L, "moment": [0.0, 0.0, m]}])
    model = compile_model(robot)
    for lmb_ei, stable in ((0.9, True), (1.1, False)):
        B = lmb_ei * EI / (L * m)
        straight = solve_static(model, field=[0.0, 0.0, -B], check_stability=False)
        np.testing.assert_allclose(straight.tip_position, [0.0, 0.0, L], atol=1e-14)
        assert is_stable(model, straight) is stable
    # Above it the solver returns the stable, bent equilibrium.
    bent = solve_static(model, field=[0.0, 0.0, -1.1 * EI / (L * m)])
    assert bent.success and bent.stable
    assert np.linalg.norm(bent.tip_position[:2]) > 0.1 * L


def test_tip_jacobian_field_columns_match_finite_differences():
    robot = _rod(
        tendons=[{"offset": 0.004, "angle_deg": 30.0}],
        magnets=[{"s": L / 2, "moment": [0.0, 0.003, 0.01]}],
        magnetization=[0.0, 1e2, 4e2],
    )
    B = np.array([0.02, -0.01, 0.01])
    sol = solve_static(robot, [0.05], field=B)
    J = tip_jacobian(robot, sol, field=True)
    assert J.shape == (3, 4)
    np.testing.assert_array_equal(J[:, :1], tip_jacobian(robot, sol))
    h = 1e-7
    for j in range(3):
        dB = h * np.eye(3)[j]
        plus = solve_static(robot, [0.05], field=B + dB, rtol=1e-13).tip_position
        minus = solve_static(robot, [0.05], field=B - dB, rtol=1e-13).tip_position
        fd = (plus - minus) / (2 * h)
        assert np.abs(J[:, 1 + j] - fd).max() < 1e-6 * np.abs(fd).max()
    # Length control: the tensions move with the field too.
    data = robot.to_dict()
    data["segments"][0]["tendons"][0]["stiffness"] = 2e3
    elastic = load_robot(data)
    lengths = [L - 2e-4]
    sol = solve_static(elastic, lengths=lengths, field=B)
    assert sol.success and sol.tendon_tension[0] > 0
    J = tip_jacobian(elastic, sol, field=True)
    for j in range(3):
        dB = h * np.eye(3)[j]
        plus = solve_static(elastic, lengths=lengths, field=B + dB, rtol=1e-13).tip_position
        minus = solve_static(elastic, lengths=lengths, field=B - dB, rtol=1e-13).tip_position
        fd = (plus - minus) / (2 * h)
        assert np.abs(J[:, 1 + j] - fd).max() < 1e-6 * np.abs(fd).max()


def _field_fd(robot, B: np.ndarray, h: float, **kw) -> np.ndarray:
    """Central differences d tip / d B (3, 3) of tightly solved `solve_static`."""
    out = np.empty((3, 3))
    for j in range(3):
        dB = h * np.eye(3)[j]
        plus = solve_static(robot, field=B + dB, rtol=1e-13, **kw).tip_position
        minus = solve_static(robot, field=B - dB, rtol=1e-13, **kw).tip_position
        out[:, j] = (plus - minus) / (2 * h)
    return out


def test_tip_jacobian_field_columns_with_chambers_and_with_a_gradient():
    """Where the field directions cannot ride the sensitivity shot (chambers: internal
    tendons; a gradient: forces held at the shape by a fixed point), the columns are
    Richardson-extrapolated differences of warm-started solves; vs central differences."""
    B = np.array([0.02, -0.01, 0.01])
    magnets = [{"s": L / 2, "moment": [0.0, 0.003, 0.01]}]
    robot = _rod(
        tendons=[{"offset": 0.004, "angle_deg": 30.0}],
        chambers=[{"area": 1e-4, "offset": 0.004, "angle_deg": 90.0}],
        magnets=magnets,
    )
    sol = solve_static(robot, [0.05], pressures=[3e3], field=B)
    J = tip_jacobian(robot, sol, pressures=True, field=True)
    assert J.shape == (3, 5)
    np.testing.assert_array_equal(J[:, :2], tip_jacobian(robot, sol, pressures=True))
    fd = _field_fd(robot, B, 1e-7, tensions=[0.05], pressures=[3e3])
    assert np.abs(J[:, 2:] - fd).max() < 1e-6 * np.abs(fd).max()
    # A field gradient (today's ValueError): the fixed point differentiated by differences.
    robot = _rod(tendons=[{"offset": 0.004, "angle_deg": 30.0}], magnets=magnets)
    G = 0.1 * np.eye(3)
    sol = solve_static(robot, [0.05], field=B, field_gradient=G)
    J = tip_jacobian(robot, sol, field=True)
    fd = _field_fd(robot, B, 1e-6, tensions=[0.05], field_gradient=G)
    assert np.abs(J[:, 1:] - fd).max() < 1e-6 * np.abs(fd).max()


def test_no_field_leaves_a_magnetic_robot_as_without_magnets():
    plain = solve_static(_rod(), gravity=[-9.81, 0, 0])
    magnetic = solve_static(
        _rod(magnets=[{"s": L, "moment": [0.0, 0.0, 0.01]}], magnetization=[0, 0, 1e3]),
        gravity=[-9.81, 0, 0],
    )
    assert np.linalg.norm(plain.tip_position - magnetic.tip_position) < 1e-12
    # A field on a robot without dipoles changes nothing.
    np.testing.assert_array_equal(
        solve_static(_rod(), gravity=[-9.81, 0, 0], field=[1, 2, 3]).tip_position,
        plain.tip_position,
    )


def test_bad_field_inputs_name_the_field():
    robot = _rod(magnets=[{"s": L, "moment": [0.0, 0.0, 0.01]}])
    with pytest.raises(DescriptionError, match=r"field\[1\] must be finite"):
        solve_static(robot, field=[0.0, math.nan, 0.0])
    with pytest.raises(DescriptionError, match="field must have 3 values"):
        solve_static(robot, field=[0.0, 1.0])
    with pytest.raises(DescriptionError, match=r"field_gradient must have shape \(3, 3\)"):
        solve_static(robot, field_gradient=np.zeros(9))


def test_cli_solve_takes_a_field(tmp_path, capsys):
    path = tmp_path / "rod.yaml"
    path.write_text(_rod(magnets=[{"s": L, "moment": [0.0, 0.0, 0.01]}]).to_yaml())
    B = EI / (L * 0.01)
    assert main(["solve", str(path), "--field", f"{B},0,0", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["success"]
    assert np.linalg.norm(np.array(out["tip_position"]) - _tip_dipole_closed_form(1.0)) < 1e-7
    assert main(["solve", str(path), "--field", "0,nan,0"]) == 2
    assert "--field: value 2 of '0,nan,0' must be finite" in capsys.readouterr().err
    assert main(["solve", str(path), "--field-gradient", "1,2,3"]) == 2
    assert "--field-gradient" in capsys.readouterr().err
    grad = "0,0,0.1, 0,0,0, 0.1,0,0".replace(" ", "")
    assert main(["solve", str(path), "--field", "0.01,0,0", "--field-gradient", grad]) == 0
