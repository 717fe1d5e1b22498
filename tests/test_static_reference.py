"""softrod's static shooting solver against an independent oracle.

The oracle (`tests/reference/cosserat_reference.py`) is Rucker & Webster's 2011 formulation:
strains (u, v) as states, the tendons' distributed loads in the ODE's 6x6 system, explicit
jump conditions at segment ends and disks, DOP853 at 1e-12, scipy root finding. softrod instead
integrates the total moment and solves the section balance algebraically, so agreement checks
both the physics and the numerics. The oracle is itself checked against closed forms first.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import softrod
from reference import solve_reference
from reference.robots import soft_rod_dict, tdcr3_dict

#: Backbone positions and tendon path lengths [m]: the agreement asked of the solver (the
#: default RK4 grid is accurate to ~1e-8 m on these robots, the oracle to ~1e-11 m).
REF_POSITION_TOL = 1e-6
#: Tip frame (rotation matrix entries): 1e-6 m over these ~0.2 m robots is ~5e-6 rad.
REF_ROTATION_TOL = 5e-6
#: Relative agreement of base loads and of solved tensions (length control): the same
#: ~1e-8 relative discretization error as the positions, with margin.
REF_LOAD_RTOL = 1e-5
#: The oracle against exact solutions: DOP853 at 1e-12 and shooting to 1e-10 give ~1e-11.
ORACLE_TOL = 1e-9
#: The Cosserat and Kirchhoff answers must differ by far more than the test tolerance, or the
#: Cosserat comparisons could not tell the two models apart.
MODEL_SEPARATION = 100 * REF_POSITION_TOL

TDCR3_TENSIONS = [2.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.3, 0.0, 1.0]  # N, several angles
TDCR3_LOADS = {
    "tip_force": [0.05, -0.1, 0.02],  # N
    "tip_moment": [0.002, 0.0, -0.001],  # N m
    "distributed_force": [0.0, 0.3, 0.0],  # N/m
    "gravity": [0.0, 0.0, -9.81],  # m/s^2 (backbone and 30 disk masses)
}
SOFT_TENSIONS = [2.0, 0.0, 1.2, 1.5, 0.8]
SOFT_LOADS = {
    "tip_force": [0.02, -0.03, 0.01],
    "tip_moment": [0.0005, 0.0, -0.0003],
    "distributed_force": [0.0, 0.05, 0.0],
    "gravity": [0.0, -9.81, 0.0],
    # Point wrenches between grid nodes, on the segment joint, and at the tip.
    "point_loads": [
        (0.123, [0.01, 0.0, 0.02], [0.0, 2e-4, 1e-4]),
        (0.15, [0.0, -0.01, 0.0], [1e-4, 0.0, -1e-4]),
        (0.27, [0.0, 0.01, 0.0]),
    ],
}


def _assert_matches(sol: softrod.StaticResult, ref, check_base: bool = True) -> None:
    assert sol.success, sol.message
    assert ref.residual < 1e-9
    np.testing.assert_allclose(
        sol.positions, ref.positions_at(sol.s), rtol=0, atol=REF_POSITION_TOL
    )
    np.testing.assert_allclose(sol.tip_rotation, ref.tip_rotation, rtol=0, atol=REF_ROTATION_TOL)
    np.testing.assert_allclose(sol.tendon_length, ref.tendon_length, rtol=0, atol=REF_POSITION_TOL)
    if check_base:
        # Rod-only force and moment at s = 0+ (world frame).
        f_scale = max(np.abs(ref.base_force).max(), 1e-3)
        m_scale = max(np.abs(ref.base_moment).max(), 1e-6)
        np.testing.assert_allclose(
            sol.internal_force[0], ref.base_force, rtol=0, atol=REF_LOAD_RTOL * f_scale
        )
        np.testing.assert_allclose(
            sol.internal_moment[0], ref.base_moment, rtol=0, atol=REF_LOAD_RTOL * m_scale
        )


# ---------------------------------------------------------------------------------------------
# The oracle itself against closed forms


def test_oracle_constant_curvature_cosserat():
    """Pure tendon tension on a Cosserat rod: a circular arc of curvature tau d / EI, shortened
    by the axial strain tau / EA (exact)."""
    robot = soft_rod_dict("cosserat")
    robot["backbone"].pop("precurvature")
    robot["segments"] = robot["segments"][:1]
    tau = np.array([3.0, 0.0, 0.0])
    ref = solve_reference(robot, tau)
    E, r = robot["backbone"]["youngs_modulus"], robot["backbone"]["radius"]
    EI, EA = E * np.pi * r**4 / 4, E * np.pi * r**2
    d, a = 0.006, np.deg2rad(10.0)
    u = tau[0] * d / EI * np.array([-np.sin(a), np.cos(a), 0.0])
    length = 0.15 * (1 - tau[0] / EA)
    kappa = np.linalg.norm(u)
    bend = np.cross(u, [0, 0, 1]) / kappa
    tip = (1 - np.cos(kappa * 0.15)) / kappa * bend + np.array([0, 0, np.sin(kappa * 0.15) / kappa])
    np.testing.assert_allclose(ref.tip_position, tip * length / 0.15, atol=ORACLE_TOL)
    np.testing.assert_allclose(
        ref.tip_rotation, Rotation.from_rotvec(u * 0.15).as_matrix(), atol=ORACLE_TOL
    )


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_oracle_small_load_cantilever(model):
    """Linear cantilever: tip deflection F L^3 / (3 EI) (+ F L / GA with shear)."""
    EI, GA, L, F = 2.0, 50.0, 1.0, 2e-5
    robot = {
        "model": model,
        "backbone": {
            "youngs_modulus": 100.0,
            "shear_modulus": GA,
            "second_moment": EI / 100.0,
            "polar_moment": 1.0 / GA,
            "area": 1.0,
        },
        "segments": [{"length": L}],
    }
    ref = solve_reference(robot, tip_force=[0.0, F, 0.0])
    expected = F * L**3 / (3 * EI) + (F * L / GA if model == "cosserat" else 0.0)
    # Geometric nonlinearity is O((F L^2 / EI)^2) ~ 1e-10 relative here.
    assert ref.tip_position[1] == pytest.approx(expected, rel=1e-6)
    if model == "kirchhoff":
        assert ref.force_check < 1e-12  # the rod force ODE keeps the tip force balance


# ---------------------------------------------------------------------------------------------
# softrod against the oracle


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_tdcr3_tensions_and_all_loads(model):
    """3 segments x 3 tendons at 9 angles, tilted base, tip force + moment, distributed load,
    gravity on backbone and 30 disks."""
    robot = tdcr3_dict(model)
    sol = softrod.solve_static(robot, TDCR3_TENSIONS, **TDCR3_LOADS)
    ref = solve_reference(robot, TDCR3_TENSIONS, **TDCR3_LOADS)
    _assert_matches(sol, ref)


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_soft_rod_point_loads_precurvature_overrides(model):
    """Soft two-segment rod: precurvature with twist, a stiffer second segment (override),
    interior point force and moment, gravity sideways."""
    robot = soft_rod_dict(model)
    sol = softrod.solve_static(robot, SOFT_TENSIONS, **SOFT_LOADS)
    ref = solve_reference(robot, SOFT_TENSIONS, **SOFT_LOADS)
    _assert_matches(sol, ref)


def test_soft_rod_models_differ():
    """Guard: on the soft rod the Cosserat strains move the tip by far more than the
    tolerance, so the Cosserat comparisons above really test shear and extension."""
    tips = [
        softrod.solve_static(soft_rod_dict(m), SOFT_TENSIONS, **SOFT_LOADS).tip_position
        for m in ("kirchhoff", "cosserat")
    ]
    assert np.linalg.norm(tips[0] - tips[1]) > MODEL_SEPARATION


def test_length_control_tdcr3():
    """Commanded lengths with antagonistic pulls and one slack tendon (index 5)."""
    robot = tdcr3_dict("kirchhoff")
    anchors = np.repeat([0.062, 0.124, 0.186], 3)
    pulls = np.array([3e-4, 0.0, 1e-4, 0.0, 2e-4, -1e-3, 1e-4, 0.0, 2e-4])  # m
    lengths = anchors - pulls
    loads = {"tip_force": [0.05, -0.1, 0.02], "gravity": [0.0, 0.0, -9.81]}
    sol = softrod.solve_static(robot, lengths=lengths, **loads)
    ref = solve_reference(robot, lengths=lengths, **loads)
    _assert_matches(sol, ref)
    t_scale = np.abs(ref.tendon_tension).max()
    np.testing.assert_allclose(
        sol.tendon_tension, ref.tendon_tension, rtol=0, atol=REF_LOAD_RTOL * t_scale
    )
    assert sol.tendon_tension[5] == 0.0  # the slack tendon


def test_length_control_soft_rod_cosserat():
    robot = soft_rod_dict("cosserat")
    lengths = np.array([0.15, 0.15, 0.15, 0.27, 0.27]) - np.array([1e-3, 0.0, 5e-4, 8e-4, 2e-4])
    loads = {"tip_force": [0.02, -0.03, 0.01], "gravity": [0.0, -9.81, 0.0]}
    sol = softrod.solve_static(robot, lengths=lengths, **loads)
    ref = solve_reference(robot, lengths=lengths, **loads)
    _assert_matches(sol, ref)
    t_scale = np.abs(ref.tendon_tension).max()
    np.testing.assert_allclose(
        sol.tendon_tension, ref.tendon_tension, rtol=0, atol=REF_LOAD_RTOL * t_scale
    )
