"""Chambers and description magnets in the LGVI dynamics (issue 20), run to rest."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from scipy.optimize import brentq

import softrod
from reference.robots import rod_dict
from softrod.description import load_robot
from softrod.dynamics import Magnet, MagneticField, build_lgvi_model, simulate_dynamic
from softrod.mujoco import MagneticField as ChainField
from softrod.mujoco import build_spec, chain_info, settle

#: Tip error allowed at rest, as a fraction of L (issue 20).
TIP_TOL_L = 1e-3
#: Rest: the tip moves less than this fraction of L over the last 0.2 s of the run.
REST_TOL_L = 1e-5
#: LGVI elements: its O(1/N^2) error is ~0.08 % L at 40 for the loaded pneumatic rod, ~0.01 %
#: for the magnetic cantilever at 20.
ELEMENTS_MAGNET = 20
ELEMENTS_CHAMBER = 40
#: Translational damping per unit length [N s/m^2], about critical for the first mode.
DAMPING = 1.0

L = 0.2
E = 1.0e6
RADIUS = 0.005
EI = E * math.pi * RADIUS**4 / 4


def _rod(model: str = "kirchhoff", youngs_modulus: float = E, **seg_extra):
    segment = {"length": L, "disks": 2, "disk_radius": 0.01, **seg_extra}
    return load_robot(
        rod_dict("rod", [segment], youngs_modulus=youngs_modulus, radius=RADIUS, model=model)
    )


def _at_rest(res) -> np.ndarray:
    assert res.success
    tip = res.positions[:, -1]
    moved = np.linalg.norm(tip[-1] - tip[np.searchsorted(res.t, res.t[-1] - 0.2)])
    assert moved < REST_TOL_L * L
    return tip[-1]


def _magnetic_closed_form(lmb_ei: float) -> np.ndarray:
    """Tip of a cantilever with a tangent tip dipole in a perpendicular (+x) field: constant
    curvature, theta_tip = (L m B / EI) cos(theta_tip)."""
    theta = brentq(lambda t: t - lmb_ei * math.cos(t), 0.0, math.pi / 2)
    kappa = theta / L
    return np.array([(1 - math.cos(theta)) / kappa, 0.0, math.sin(theta) / kappa])


def test_description_magnet_cantilever_at_rest_matches_closed_form_and_mujoco():
    m, lmb_ei = 0.01, 1.0
    B = lmb_ei * EI / (L * m)
    robot = _rod(magnets=[{"s": L, "moment": [0.0, 0.0, m]}])
    expected = _magnetic_closed_form(lmb_ei)
    model = build_lgvi_model(robot, ELEMENTS_MAGNET)
    assert model.mag_m.shape == (1, 3)
    res = simulate_dynamic(
        model, 3.0, field=MagneticField(uniform=[B, 0.0, 0.0]), damping=DAMPING, sample_dt=0.01
    )
    tip = _at_rest(res)
    assert np.linalg.norm(tip - expected) < TIP_TOL_L * L
    # The MuJoCo chain at N = 50 settles within the same band of the same closed form.
    chain = build_spec(robot, links=50, gravity=(0.0, 0.0, 0.0)).compile()
    data = mujoco.MjData(chain)
    info = chain_info(robot, links=50, gravity=(0.0, 0.0, 0.0))
    field = ChainField(chain, info, field=[B, 0.0, 0.0])
    settle(chain, data, damping_time=0.3, qvel_tol=1e-7, before_step=field.apply)
    assert np.linalg.norm(data.site("tip").xpos - tip) < TIP_TOL_L * L


def test_api_magnets_still_work_and_add_to_the_description():
    robot = _rod(magnets=[{"s": L, "moment": [0.0, 0.0, 0.01]}], magnetization=[0, 0, 1e3])
    model = build_lgvi_model(robot, 10, magnets=[Magnet(s=0.1, moment=[0.0, 0.01, 0.0])])
    # The API magnet first, then the description's dipole and one per element (M A l_e).
    assert model.mag_m.shape == (1 + 1 + 10, 3)
    np.testing.assert_allclose(model.mag_m[0], [0.0, 0.01, 0.0])
    np.testing.assert_allclose(model.mag_m[2:, 2].sum(), 1e3 * math.pi * RADIUS**2 * L, rtol=1e-12)


def test_pneumatic_segment_at_rest_matches_the_static_solver():
    p, gravity = 5e3, [-9.81, 0.0, 0.0]
    # Cosserat: LGVI's rod is extensible, and the chamber's axial force p A stretches it.
    robot = _rod(model="cosserat", chambers=[{"area": 1e-4, "offset": 0.004}])
    static = softrod.solve_static(robot, pressures=[p], gravity=gravity)
    res = simulate_dynamic(
        robot,
        3.0,
        pressures=[p],
        gravity=gravity,
        damping=DAMPING,
        elements=ELEMENTS_CHAMBER,
        sample_dt=0.01,
    )
    assert res.model.n_tendons == 0 and res.model.n_chamber_tendons == 1
    tip = _at_rest(res)
    assert np.linalg.norm(tip - static.tip_position) < TIP_TOL_L * L
    # The chamber matters: without it the rod hangs elsewhere.
    assert np.linalg.norm(static.tip_position - softrod.solve_static(robot, gravity=gravity)
                          .tip_position) > 0.05 * L  # fmt: skip


def test_time_varying_pressure_and_bad_pressures():
    robot = _rod(chambers=[{"area": 1e-4, "offset": 0.004, "pressure_range": [0, 1e4]}])
    res = simulate_dynamic(robot, 0.02, pressures=lambda t: [1e5 * t], elements=10)
    assert res.success and res.positions[-1, -1, 0] < 0.0  # bends away from the chamber
    with pytest.raises(ValueError, match="pressures must have 1 values"):
        simulate_dynamic(robot, 0.01, pressures=[1.0, 2.0], elements=10)
    with pytest.raises(ValueError, match=r"pressures\[0\] must be finite"):
        simulate_dynamic(robot, 0.01, pressures=[math.inf], elements=10)
    with pytest.raises(ValueError, match=r"pressures\[0\] must be within"):
        simulate_dynamic(robot, 0.01, pressures=[2e4], elements=10)


def test_moment_actuators_at_rest_match_the_static_solver():
    """A bending and a torsion moment actuator (uniform internal moments, the discrete rest
    strains of the actuated curve) under gravity: LGVI run to rest vs `solve_static`
    (3.2e-4 L at 40 elements)."""
    tau = [0.5 * EI / L, 0.2 * EI / L]  # bend 0.5 rad about body y; twist 0.2 EI/GJ rad
    gravity = [0.0, -9.81, 0.0]
    robot = _rod(model="cosserat", moment_actuators=[{"moment": [0, 1, 0]}, {"moment": [0, 0, 1]}])
    static = softrod.solve_static(robot, moments=tau, gravity=gravity)
    res = simulate_dynamic(
        robot,
        3.0,
        moments=tau,
        gravity=gravity,
        damping=DAMPING,
        angular_damping=1e-5,  # the twist mode: translational damping does not reach it
        elements=ELEMENTS_CHAMBER,
        sample_dt=0.01,
    )
    tip = _at_rest(res)
    assert np.linalg.norm(tip - static.tip_position) < TIP_TOL_L * L
    with pytest.raises(ValueError, match=r"moments must have 2 values, got 1"):
        simulate_dynamic(robot, 0.01, moments=[1.0], elements=10)
    with pytest.raises(ValueError, match=r"moments must be constant"):
        simulate_dynamic(robot, 0.01, moments=lambda t: [t, t], elements=10)


def test_moment_schedule_runs_piecewise_constant():
    """A moment schedule as docs/actuators.md runs it: one constant piece per run, each
    continuing the last, ends at the static solve of the last piece (4.2e-6 L measured)."""
    robot = _rod(model="cosserat", moment_actuators=[{"moment": [0, 1, 0]}])
    first = simulate_dynamic(
        robot, 1.0, moments=[0.2 * EI / L], damping=1.0, elements=20, sample_dt=0.01
    )
    second = simulate_dynamic(
        robot, 2.0, moments=[0.5 * EI / L], damping=1.0, elements=20, sample_dt=0.01,
        initial=first,
    )  # fmt: skip
    assert first.success and second.success and second.t[-1] > 2.9
    static = softrod.solve_static(robot, moments=[0.5 * EI / L])
    assert np.linalg.norm(second.positions[-1, -1] - static.tip_position) < TIP_TOL_L * L
