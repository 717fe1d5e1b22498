"""Stability of static equilibria (issue 19 item 1): the second-variation test against closed
forms (Euler, Greenhill, the elastica), the continuation onto the stable branch, and the
MuJoCo chain and LGVI dynamics settling where the static solver says."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from scipy.linalg import null_space
from scipy.optimize import brentq
from scipy.special import ellipe, ellipk, jv

import softrod
from reference.robots import EXAMPLES_DIR, tdcr3_dict
from softrod.dynamics import build_lgvi_model, linear_modes, simulate_dynamic
from softrod.mujoco import settle
from softrod.rods import as_model
from softrod.rods._stability import (
    STATUS_UNSTABLE,
    _condensed_matrix,
    _second_variation_inertia,
    is_stable,
    stability_maps,
    stable_equilibrium,
)
from softrod.validate import make_model

#: The issue asks the stability boundary to 0.1 %: the test loads sit that far either side of
#: the closed-form critical load. The RK4 grid moves the boundary by 1e-7 (Euler) and 3.5e-7
#: (Greenhill) relative, measured by bisection, far inside the margin.
CRITICAL_MARGIN = 1e-3
#: Grid of the clamped-clamped check: its tip-position constraint is the trapezoid rule on the
#: step nodes (O(h^2)); with 64 steps the second critical load moves by 1.7e-4 relative and the
#: first by 1.5e-6 (measured by bisection), inside CRITICAL_MARGIN.
CLAMPED_STEPS = 64
#: Post-buckled tip against the elliptic-integral elastica [fraction of L]: the default grid's
#: RK4 error, measured 1.1e-6 at 1.5 P_cr and 3.8e-6 at 3 P_cr; at 1.001 P_cr the amplitude
#: ~ sqrt(P / P_cr - 1) magnifies the grid's 1e-7 shift of P_cr to 2.8e-6.
ELASTICA_TIP_TOL = 1e-5
#: The issue quotes the upright robot's droop as "about (170, 0, 40) mm" (two digits, from a
#: 200-step ramp): 5 mm covers that rounding; measured (169.4, 0, 43.1) mm.
DROOP_ATOL = 5e-3
#: Transfer maps of (eta, p) are symplectic up to RK4's O(h^5) per step: measured 5e-8 to 4e-7
#: on maps of entries ~1.5; an error in the momentum (p = dM -+ eta x M / 2) shows as ~0.1.
SYMPLECTIC_ATOL = 1e-5
#: The issue's dynamic check: both settle within 1 % of L of the static buckled shape
#: (measured 0.28 % for the 50-link chain, 0.48 % for LGVI with 40 elements).
SETTLE_TOL = 0.01

#: Clamped-free Kirchhoff rod, 1 m, r = 5 mm, E = 2 GPa (EI = 0.98 N m^2).
ROD = {
    "name": "column",
    "model": "kirchhoff",
    "backbone": {"youngs_modulus": 2e9, "shear_modulus": 2e9 / 2.6, "density": 1000.0,
                 "radius": 0.005},
    "segments": [{"length": 1.0}],
}  # fmt: skip
#: A soft heavy rod standing upright, 1.34 x its self-weight buckling length (Cosserat).
HEAVY_ROD = {
    "name": "heavy",
    "model": "cosserat",
    "backbone": {"youngs_modulus": 365e3, "poisson_ratio": 0.5, "density": 1101.0,
                 "radius": 0.0025},
    "segments": [{"length": 0.1}],
}  # fmt: skip


@pytest.fixture(scope="module")
def column():
    model = as_model(softrod.load_robot(ROD), None, ())
    EI = float(model.K_bt[0, 0])
    L = model.total_length
    return model, EI, L, math.pi**2 * EI / (4 * L**2)


def _greenhill() -> float:
    """Self-weight buckling q L^3 / EI of a clamped-free column: (3 j / 2)^2 with j the first
    zero of J_{-1/3} (7.837)."""
    j = brentq(lambda x: jv(-1.0 / 3.0, x), 1.5, 2.2)
    return (1.5 * j) ** 2


def _elastica_tip(P: float, EI: float, L: float) -> np.ndarray:
    """Clamped-free elastica under a dead compressive tip load P [N] (first mode): with
    lambda = sqrt(P / EI) and K(m) = lambda L, the tip sits at x = 2 sqrt(m) / lambda,
    z = 2 E(m) / lambda - L [m]."""
    lam = math.sqrt(P / EI)
    m = brentq(lambda q: ellipk(q) - lam * L, 0.0, 1.0 - 1e-12)
    return np.array([2.0 * math.sqrt(m) / lam, 0.0, 2.0 * ellipe(m) / lam - L])


# ---------------------------------------------------------------------------------------------
# The test against closed forms


def test_euler_load_is_the_stability_boundary(column):
    model, _, L, P_cr = column
    below = softrod.solve_static(
        model, tip_force=[0, 0, -(1 - CRITICAL_MARGIN) * P_cr], check_stability=False
    )
    above = softrod.solve_static(
        model, tip_force=[0, 0, -(1 + CRITICAL_MARGIN) * P_cr], check_stability=False
    )
    # Both unchecked solves return the straight rod: only the first is stable.
    assert np.allclose(below.tip_position, [0, 0, L]) and np.allclose(above.tip_position, [0, 0, L])
    assert is_stable(model, below) is True
    assert is_stable(model, above) is False
    checked = softrod.solve_static(
        model, tip_force=[0, 0, -(1 - CRITICAL_MARGIN) * P_cr], check_stability=True
    )
    assert checked.success and checked.stable is True and checked.message == "converged"


@pytest.mark.parametrize("ratio", [1 + CRITICAL_MARGIN, 1.5, 3.0])
def test_beyond_euler_returns_the_stable_elastica(column, ratio):
    model, EI, L, P_cr = column
    res = softrod.solve_static(model, tip_force=[0, 0, -ratio * P_cr], check_stability=True)
    assert res.success and res.stable is True, res.message
    assert "unstable" in res.message
    err = np.linalg.norm(res.tip_position - _elastica_tip(ratio * P_cr, EI, L))
    assert err < ELASTICA_TIP_TOL * L, err / L
    assert res.to_dict()["stable"] is True


def test_stability_is_checked_by_default(column):
    # A success is a stable equilibrium without asking: beyond Euler's load the default solve
    # returns the buckled elastica, not the straight column.
    model, EI, L, P_cr = column
    res = softrod.solve_static(model, tip_force=[0, 0, -1.5 * P_cr])
    assert res.success and res.stable is True, res.message
    err = np.linalg.norm(res.tip_position - _elastica_tip(1.5 * P_cr, EI, L))
    assert err < ELASTICA_TIP_TOL * L, err / L


def test_self_weight_buckling_length(column):
    model, EI, L, _ = column
    q_cr = _greenhill() * EI / L**3  # [N/m]
    g_cr = q_cr / float(model.rho_A[0])
    below = softrod.solve_static(
        model, gravity=[0, 0, -(1 - CRITICAL_MARGIN) * g_cr], check_stability=False
    )
    above = softrod.solve_static(
        model, gravity=[0, 0, -(1 + CRITICAL_MARGIN) * g_cr], check_stability=False
    )
    assert is_stable(model, below) is True
    assert is_stable(model, above) is False
    droop = softrod.solve_static(
        model, gravity=[0, 0, -(1 + CRITICAL_MARGIN) * g_cr], check_stability=True
    )
    assert droop.success and droop.stable is True
    assert droop.tip_position[0] > 1e-2 * L  # buckled, toward the base frame's x


def test_upright_softmanisim_robot_droops():
    robot = softrod.load_robot(EXAMPLES_DIR / "softmanisim_2seg_extensible.yaml")
    upright = robot.model_copy(update={"base": robot.base.model_copy(update={
        "position": (0.0, 0.0, 0.0), "quaternion": (1.0, 0.0, 0.0, 0.0)})})  # fmt: skip
    plain = softrod.solve_static(upright, gravity=[0, 0, -9.81], check_stability=False)
    assert np.allclose(plain.tip_position, [0, 0, 0.2])  # the unstable upright shape
    res = softrod.solve_static(upright, gravity=[0, 0, -9.81])  # checked by default
    assert res.success and res.stable is True, res.message
    np.testing.assert_allclose(res.tip_position, [0.170, 0.0, 0.040], atol=DROOP_ATOL)


def _clamped_clamped_index(model, P: float) -> int:
    """Negative directions of the straight column under an axial force P [N] with both ends
    clamped: the condensed second variation restricted to eta(L) = 0 and a fixed tip position,
    int eta x p' ds = 0 (trapezoid rule on the nodes)."""
    res = softrod.solve_static(model, tip_force=[0, 0, -P], check_stability=False)
    maps = stability_maps(model, res)
    H = _condensed_matrix(maps)
    n = maps.shape[0]
    A = np.zeros((6, 3 * n))
    A[0:3, 3 * (n - 1) :] = np.eye(3)
    for k, (dx, dy, dz) in enumerate(np.diff(res.positions, axis=0)):
        # (eta_k + eta_k+1) / 2 x dp_k = -[dp_k]x (eta_k + eta_k+1) / 2, eta_0 = 0.
        C = -0.5 * np.array([[0.0, -dz, dy], [dz, 0.0, -dx], [-dy, dx, 0.0]])
        if k > 0:
            A[3:6, 3 * (k - 1) : 3 * k] += C
        A[3:6, 3 * k : 3 * k + 3] += C
    Z = null_space(A)
    return int(np.sum(np.linalg.eigvalsh(Z.T @ H @ Z) < 0.0))


def test_clamped_clamped_first_and_second_modes():
    """Clamped-clamped column: the first mode buckles at 4 pi^2 EI / L^2, the second
    (antisymmetric, tan(k L / 2) = k L / 2) at 80.763 EI / L^2; each is a pair of directions
    (the rod is axisymmetric)."""
    model = as_model(softrod.load_robot(ROD), CLAMPED_STEPS, ())
    EI = float(model.K_bt[0, 0])
    L = model.total_length
    x = brentq(lambda y: math.tan(y) - y, math.pi + 0.1, 1.5 * math.pi - 1e-9)
    P1 = 4 * math.pi**2 * EI / L**2
    P2 = (2 * x) ** 2 * EI / L**2
    below, above = 1 - CRITICAL_MARGIN, 1 + CRITICAL_MARGIN
    assert _clamped_clamped_index(model, below * P1) == 0
    assert _clamped_clamped_index(model, above * P1) == 2
    assert _clamped_clamped_index(model, below * P2) == 2
    assert _clamped_clamped_index(model, above * P2) == 4


# ---------------------------------------------------------------------------------------------
# The derivation's checks and the contract


def test_transfer_maps_are_symplectic_with_tendons_and_3d_loads():
    """p = dM - eta x M / 2 makes the linearised balance laws Hamiltonian (module doc): the
    step maps preserve the symplectic form on a bent 3-D robot with tendons and both models."""
    J = np.block([[np.zeros((3, 3)), np.eye(3)], [-np.eye(3), np.zeros((3, 3))]])
    for kind in ("kirchhoff", "cosserat"):
        model = as_model(softrod.load_robot(tdcr3_dict(kind)), None, ())
        tensions = np.linspace(0.5, 2.0, model.n_tendons)
        res = softrod.solve_static(
            model, tensions, tip_force=[0.3, -0.2, -0.1], tip_moment=[0.01, 0.02, 0.0],
            gravity=[0, -9.81, 0], check_stability=True,
        )  # fmt: skip
        assert res.success and res.stable is True
        maps = stability_maps(model, res)
        assert maps is not None
        err = max(np.abs(M.T @ J @ M - J).max() for M in maps)
        assert err < SYMPLECTIC_ATOL, err


def test_stable_is_none_where_not_checked(tdcr3):
    res = softrod.solve_static(tdcr3, [0.5] * 9, check_stability=False)
    assert res.stable is None and res.to_dict()["stable"] is None
    pcc = softrod.solve_static(tdcr3, [0.5] * 9, method="pcc", check_stability=True)
    assert pcc.stable is None
    neck = as_model(softrod.load_robot(EXAMPLES_DIR / "softmanisim_neck.yaml"), None, ())
    lengths = softrod.solve_static(neck, lengths=neck.tendon_rest_length, check_stability=True)
    assert lengths.success and lengths.stable is None  # length control is not checked
    with pytest.raises(ValueError, match="check_stability"):
        softrod.solve_static(tdcr3, [0.5] * 9, check_stability="yes")


def test_unstable_without_a_stable_branch_is_a_failure(column):
    """If no stable equilibrium is reached the answer is success=False, never the unstable
    shape with success (here a solver that can only return the straight rod)."""
    model, _, _, P_cr = column
    straight = softrod.solve_static(model, tip_force=[0, 0, -1.5 * P_cr], check_stability=False)
    out = stable_equilibrium(model, straight.inputs, straight, lambda loads, guess: straight)
    assert not out.success and out.stable is False and out.status == STATUS_UNSTABLE
    assert "unstable" in out.message and "no stable equilibrium" in out.message
    np.testing.assert_array_equal(out.tip_position, straight.tip_position)


# ---------------------------------------------------------------------------------------------
# The cheap default test (checkpoint intervals) and dead moments


def _step_inertia(model, res) -> int:
    return int(_second_variation_inertia(stability_maps(model, res)))


@pytest.mark.parametrize("ratio", [1 - CRITICAL_MARGIN, 1 + CRITICAL_MARGIN, 10.0, 40.0])
def test_checkpoint_intervals_count_like_every_step(column, ratio):
    """The default test condenses onto checkpoints a third of a conjugate-point distance apart
    (`_checkpoints`): fewer transfer maps, the same negative count as on every step, on the
    straight column from below Euler's load to far beyond its second and third modes."""
    model, _, _, P_cr = column
    res = softrod.solve_static(model, tip_force=[0, 0, -ratio * P_cr], check_stability=False)
    grouped = stability_maps(model, res, grouped=True)
    assert grouped.shape[0] < model.n_nodes - 1 or ratio > 1.5
    assert _second_variation_inertia(grouped) == _step_inertia(model, res)
    assert (_step_inertia(model, res) > 0) == (ratio > 1.0)


def test_checkpoint_intervals_count_like_every_step_on_a_bent_tdcr(tdcr3):
    tdcr3 = as_model(softrod.load_robot(tdcr3), None, ())
    rng = np.random.default_rng(2)
    for _ in range(4):
        tensions = rng.uniform(0.0, 2.0, tdcr3.n_tendons) * (rng.random(tdcr3.n_tendons) < 0.5)
        res = softrod.solve_static(
            tdcr3, tensions, tip_force=rng.normal(size=3), gravity=[0, 0, -9.81],
            check_stability=False,
        )  # fmt: skip
        grouped = stability_maps(tdcr3, res, grouped=True)
        assert _second_variation_inertia(grouped) == _step_inertia(tdcr3, res)


def _seed003_stand_in(follower: bool) -> tuple[dict, list]:
    """The seed-003 arm of tests/test_pneumatic.py's Kirchhoff comparison at q = (40, -90, 60)
    kPa: segments at their actuated lengths, the actuator as world-fixed point moment pairs
    EI kappa* (follower=False) or as the precurvature kappa* those moments stand in for."""
    from softrod.pneumatic import NoLoadModel, compile_pneumatic

    arm = compile_pneumatic(softrod.load_robot(EXAMPLES_DIR / "pneumatic_arm3.yaml"))
    kappa, length = NoLoadModel(arm).curvature_length(np.array([4e4, -9e4, 6e4]))
    d = arm.spec.to_dict()
    d["base"] = {"quaternion": [math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0]}
    starts = np.concatenate([[0.0], np.cumsum(length)])
    loads = []
    for j, seg in enumerate(d["segments"]):
        seg.pop("actuator")
        seg["length"] = float(length[j])
        backbone = seg.setdefault("backbone", {})
        backbone["density"] = (
            arm.spec.segment_backbone(j).density * arm.rest_length[j] / float(length[j])
        )
        if follower:
            # World z is body -x here (the base turns body z onto world x).
            backbone["precurvature"] = [-float(kappa[j]), 0.0, 0.0]
            continue
        moment = arm.bending_stiffness[j] * kappa[j]
        loads.append((starts[j + 1], [0.0, 0.0, 0.0], [0.0, 0.0, moment]))
        if j > 0:
            loads.append((starts[j], [0.0, 0.0, 0.0], [0.0, 0.0, -moment]))
    return d, loads


def test_dead_moments_without_divergence_are_not_called_unstable():
    """Item 3 of the brief: world-fixed stand-in moments make the symmetric part of the second
    variation indefinite, yet the whole tangent stiffness has no eigenvalue with a real part
    <= 0 (no static instability): the verdict is open (None), the answer stands. The physical
    arm (follower moments, i.e. precurvature) has the same shape and is stable."""
    g = [0.0, -9.81, 0.0]
    d, loads = _seed003_stand_in(follower=False)
    sol = softrod.solve_static(d, tensions=[], gravity=g, point_loads=loads)
    assert sol.success and sol.stable is None, sol.message
    assert "stability not decided" in sol.message
    model = as_model(softrod.load_robot(d), None, tuple(p[0] for p in loads))
    plain = softrod.solve_static(model, tensions=[], gravity=g, point_loads=loads,
                                 check_stability=False)  # fmt: skip
    assert is_stable(model, plain) is None
    assert _step_inertia(model, plain) > 0  # the symmetric part alone says unstable
    follower, _ = _seed003_stand_in(follower=True)
    phys = softrod.solve_static(follower, tensions=[], gravity=g)
    assert phys.success and phys.stable is True
    np.testing.assert_allclose(phys.positions, sol.positions, atol=1e-9)


def test_dead_moment_divergence_is_still_unstable(column):
    # A small axial tip moment beside a compressive load beyond Euler's: a real divergence, so
    # the straight rod stays "unstable" and is never the default answer with success.
    model, EI, L, P_cr = column
    loads = dict(tip_force=[0, 0, -1.5 * P_cr], tip_moment=[0.0, 0.0, 1e-3 * EI / L])
    plain = softrod.solve_static(model, check_stability=False, **loads)
    assert np.allclose(plain.tip_position, [0, 0, L])
    assert is_stable(model, plain) is False
    res = softrod.solve_static(model, **loads)
    assert not (res.success and np.allclose(res.tip_position, [0, 0, L])), res.message


# ---------------------------------------------------------------------------------------------
# Dynamics settle on the same buckled shape


def test_mujoco_chain_and_lgvi_settle_on_the_buckled_shape():
    g = [0.0, 0.0, -9.81]
    L = 0.1
    static = softrod.solve_static(HEAVY_ROD, gravity=g, check_stability=True)
    assert static.success and static.stable is True
    assert static.tip_position[0] > 0.5 * L  # a heavy droop toward +x
    # MuJoCo chain, 50 links, released from a 1 mrad tilt toward +x at every joint.
    model, data, info = make_model(HEAVY_ROD, 50, gravity=tuple(g))
    for j in range(model.njnt):
        if abs(model.jnt_axis[j][1]) > 0.9:
            data.qpos[model.jnt_qposadr[j]] = 1e-3 * np.sign(model.jnt_axis[j][1])
    settle(model, data, qvel_tol=1e-6, max_time=20.0)
    mujoco.mj_forward(model, data)
    err_mj = np.linalg.norm(data.site(info.tip_site).xpos - static.tip_position)
    assert err_mj < SETTLE_TOL * L, err_mj / L
    # LGVI, 40 elements, critically damped first mode, released from a 3 mm tip deflection.
    start = softrod.solve_static(HEAVY_ROD, tip_force=[1e-4, 0, 0])
    w, _ = linear_modes(build_lgvi_model(HEAVY_ROD, 40))
    spec = softrod.load_robot(HEAVY_ROD)
    rho_A = spec.backbone.density * spec.backbone.A
    res = simulate_dynamic(
        HEAVY_ROD, 3.0, initial=start, gravity=g, damping=2 * rho_A * float(np.min(w)),
        elements=40, sample_dt=1e-2,
    )  # fmt: skip
    assert res.success, res.message
    err_lgvi = np.linalg.norm(res.tip_position[-1] - static.tip_position)
    assert err_lgvi < SETTLE_TOL * L, err_lgvi / L
