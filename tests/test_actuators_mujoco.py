"""Chambers and magnets on the MuJoCo chain (issue 20) against closed forms at N = 50."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from scipy.optimize import brentq

from softrod.description import DescriptionError, load_robot
from softrod.mujoco import MagneticField, build_spec, chain_info, settle, static_equilibrium

#: N = 50 links: the chain's O(1/N^2) error is far below the 0.1 % of L the issue asks for.
LINKS = 50
#: Tip error allowed against the closed forms, as a fraction of L (issue 20).
TIP_TOL_L = 1e-3

L = 0.2
E = 1.0e6
RADIUS = 0.005
EI = E * math.pi * RADIUS**4 / 4


def _rod(**seg_extra):
    return load_robot(
        {
            "name": "rod",
            "backbone": {
                "youngs_modulus": E,
                "poisson_ratio": 0.5,
                "radius": RADIUS,
                "density": 1000.0,
            },
            "segments": [{"length": L, "disks": 2, "disk_radius": 0.01, **seg_extra}],
        }
    )


def _compile(robot):
    spec = build_spec(robot, links=LINKS, gravity=(0.0, 0.0, 0.0))
    model = spec.compile()
    return model, mujoco.MjData(model)


def _arc_tip(theta: float, toward: np.ndarray) -> np.ndarray:
    """Tip of a constant-curvature arc of length L turned by theta in the plane (toward, z)."""
    kappa = theta / L
    return (1.0 - math.cos(theta)) / kappa * toward + math.sin(theta) / kappa * np.array(
        [0.0, 0.0, 1.0]
    )


@pytest.mark.parametrize("angle_deg", [0.0, 90.0, 210.0])
def test_chamber_gives_constant_curvature(angle_deg):
    area, d, p = 1e-4, 0.004, 5e3
    robot = _rod(chambers=[{"area": area, "offset": d, "angle_deg": angle_deg}])
    model, data = _compile(robot)
    assert model.actuator(0).name == "pressure_0"
    data.ctrl[0] = p
    res = static_equilibrium(model, data)
    assert res.success
    tip = data.site("tip").xpos
    # A pressurised chamber lengthens its side: the segment bends away from it.
    a = math.radians(angle_deg)
    away = -np.array([math.cos(a), math.sin(a), 0.0])
    expected = _arc_tip(p * area * d / EI * L, away)
    assert np.linalg.norm(tip - expected) < TIP_TOL_L * L


def test_chamber_axial_force_on_extensible_chain():
    robot = load_robot(
        {
            **_rod(chambers=[{"area": 1e-4, "offset": 0.0}]).to_dict(),
            "model": "cosserat",
        }
    )
    spec = build_spec(robot, links=10, gravity=(0.0, 0.0, 0.0), axial=True)
    model = spec.compile()
    data = mujoco.MjData(model)
    data.ctrl[0] = 1e3
    assert static_equilibrium(model, data).success
    stretch = data.site("tip").xpos[2] - L
    # A centred chamber only stretches the backbone: F L / EA.
    assert stretch == pytest.approx(1e3 * 1e-4 * L / (E * math.pi * RADIUS**2), rel=1e-6)


def test_centred_chamber_on_inextensible_chain_keeps_its_actuator():
    model, data = _compile(_rod(chambers=[{"area": 1e-4, "offset": 0.0}]))
    assert model.actuator(0).name == "pressure_0"
    data.ctrl[0] = 1e4
    assert static_equilibrium(model, data).success
    np.testing.assert_allclose(data.site("tip").xpos, [0.0, 0.0, L], atol=1e-12)


def test_pressure_range_is_the_ctrlrange():
    robot = _rod(chambers=[{"area": 1e-4, "offset": 0.004, "pressure_range": [0, 2e5]}])
    model, _ = _compile(robot)
    assert model.actuator_ctrllimited[0]
    assert list(model.actuator_ctrlrange[0]) == [0.0, 2e5]
    assert chain_info(robot, links=LINKS).pressure_actuators == ("pressure_0",)


def test_tip_dipole_in_perpendicular_field():
    m, lmb_ei = 0.01, 1.0  # L m B / EI = 1
    B = lmb_ei * EI / (L * m)
    robot = _rod(magnets=[{"s": L, "moment": [0.0, 0.0, m]}])
    spec = build_spec(robot, links=LINKS, gravity=(0.0, 0.0, 0.0))
    model = spec.compile()
    data = mujoco.MjData(model)
    info = chain_info(robot, links=LINKS, gravity=(0.0, 0.0, 0.0))
    field = MagneticField(model, info, field=[B, 0.0, 0.0])
    assert field.n_dipoles == 1
    settle(model, data, damping_time=0.3, qvel_tol=1e-7, before_step=field.apply)
    theta = brentq(lambda t: t - lmb_ei * math.cos(t), 0.0, math.pi / 2)
    expected = _arc_tip(theta, np.array([1.0, 0.0, 0.0]))
    assert np.linalg.norm(data.site("tip").xpos - expected) < TIP_TOL_L * L
    # The hook replaces its own contribution: removing it leaves qfrc_applied as it was.
    field.remove(data)
    assert not data.qfrc_applied.any()


def test_gradient_force_and_magnetization_torque():
    robot = _rod(magnets=[{"s": L / 2, "moment": [0.0, 0.0, 0.02]}], magnetization=[0, 0, 1e4])
    model, data = _compile(robot)
    info = chain_info(robot, links=LINKS)
    grad = np.array([[0.0, 0.0, 0.3], [0.0, 0.0, 0.0], [0.1, 0.0, 0.2]])
    field = MagneticField(model, info, field=[0.0, 0.05, 0.0], field_gradient=grad)
    mujoco.mj_forward(model, data)
    _, forces, torques = field.wrenches(model, data)
    # The point magnet (first dipole) feels (grad B)^T m.
    np.testing.assert_allclose(forces[0], grad.T @ np.array([0.0, 0.0, 0.02]), atol=1e-15)
    # Straight rod: total torque (m + M A L) e_z x B.
    total_m = 0.02 + 1e4 * math.pi * RADIUS**2 * L
    np.testing.assert_allclose(
        torques.sum(axis=0), np.cross([0, 0, total_m], [0, 0.05, 0]), rtol=1e-12
    )
    with pytest.raises(DescriptionError, match=r"field\[0\] must be finite"):
        field.set([math.nan, 0.0, 0.0])
