"""Physics sanity of `solve_static` outputs: boundary loads and global equilibrium.

`internal_force` / `internal_moment` are the loads carried by the backbone material alone
(world frame); a tendon that passes a section adds its pull tau R t at the tendon's position
p + R r, with t the unit tangent (v + u x r) / |v + u x r| in the body frame.
"""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from reference.robots import soft_rod_dict, tdcr3_dict

#: Relative closure of exact balances (point loads only). RK4 does not keep R exactly
#: orthonormal (drift ~1e-9 on the default grid), and the backbone moment R K K^-1 R^T M
#: inherits that drift; the solver tolerance (1e-12) is far below it.
BALANCE_RTOL = 1e-8
#: |R^T R - I| along the rod on the default grid (RK4 drift is O(h^4), ~1e-9 measured).
ORTHONORMAL_TOL = 1e-8
#: Balances with distributed loads integrated by Simpson's rule on the solver's nodes
#: (h ~ 2 mm, error ~ h^4 kappa^3 ~ 1e-10 relative).
QUADRATURE_RTOL = 1e-7
SOLVE_RTOL = 1e-12

TIP_FORCE = np.array([0.05, -0.1, 0.02])
TIP_MOMENT = np.array([0.002, 0.0, -0.001])
GRAVITY = np.array([0.0, 0.0, -9.81])
POINT_LOADS = [(0.05, [0.01, 0.02, 0.0], [0.0, 1e-4, 0.0]), (0.131, [0.0, -0.03, 0.01])]


def _tendon_pulls(robot: dict, sol: softrod.StaticResult, node: int, tendon_ids) -> tuple:
    """World force and moment (about the backbone point) of the given tendons at a node."""
    r_all = [
        t["offset"]
        * np.array([np.cos(np.deg2rad(t["angle_deg"])), np.sin(np.deg2rad(t["angle_deg"])), 0.0])
        for seg in robot["segments"]
        for t in seg.get("tendons", [])
    ]
    R = sol.rotations[node]
    force, moment = np.zeros(3), np.zeros(3)
    for i in tendon_ids:
        w = sol.strain[node] + np.cross(sol.curvature[node], r_all[i])
        pull = sol.tendon_tension[i] * (R @ (w / np.linalg.norm(w)))
        force += pull
        moment += np.cross(R @ r_all[i], pull)
    return force, moment


def _disk_points(robot: dict) -> list[tuple[float, float]]:
    out, s0 = [], 0.0
    for seg in robot["segments"]:
        n = seg.get("disks", 0)
        out += [(s0 + seg["length"] * k / n, seg.get("disk_mass", 0.0)) for k in range(1, n + 1)]
        s0 += seg["length"]
    return out


def _node(sol, s: float) -> int:
    k = int(np.argmin(np.abs(sol.s - s)))
    assert abs(sol.s[k] - s) < 1e-12
    return k


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_tip_loads_without_tendons_ending_there(model):
    """With no tension in the last segment's tendons, the backbone carries exactly the applied
    tip moment, and the tip force plus the weight of the disk at the tip."""
    robot = tdcr3_dict(model)
    tensions = [1.0, 0.0, 0.4, 0.0, 0.8, 0.3, 0.0, 0.0, 0.0]
    sol = softrod.solve_static(
        robot,
        tensions,
        tip_force=TIP_FORCE,
        tip_moment=TIP_MOMENT,
        gravity=GRAVITY,
        rtol=SOLVE_RTOL,
    )
    tip_disk = robot["segments"][-1]["disk_mass"] * GRAVITY
    m_tol = BALANCE_RTOL * np.abs(TIP_MOMENT).max()
    f_tol = BALANCE_RTOL * np.abs(TIP_FORCE).max()
    np.testing.assert_allclose(sol.internal_moment[-1], TIP_MOMENT, rtol=0, atol=m_tol)
    np.testing.assert_allclose(sol.internal_force[-1], TIP_FORCE + tip_disk, rtol=0, atol=f_tol)


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_tip_loads_with_tendons_ending_there(model):
    """Tendons anchored at the tip pull on it: backbone load = applied - tendon pull."""
    robot = tdcr3_dict(model)
    tensions = [1.0, 0.0, 0.4, 0.0, 0.8, 0.3, 0.7, 0.0, 0.5]
    sol = softrod.solve_static(
        robot, tensions, tip_force=TIP_FORCE, tip_moment=TIP_MOMENT, rtol=SOLVE_RTOL
    )
    pull_f, pull_m = _tendon_pulls(robot, sol, -1, range(6, 9))
    assert np.linalg.norm(pull_m) > 1e-3  # the tendons matter here
    m_tol = BALANCE_RTOL * np.abs(pull_m).max()
    f_tol = BALANCE_RTOL * np.abs(pull_f).max()
    np.testing.assert_allclose(sol.internal_moment[-1], TIP_MOMENT - pull_m, rtol=0, atol=m_tol)
    np.testing.assert_allclose(sol.internal_force[-1], TIP_FORCE - pull_f, rtol=0, atol=f_tol)


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_global_equilibrium_point_loads(model):
    """Massless backbone, so every external load is concentrated (tip, point loads, disk
    weights): backbone + tendon loads at the base balance them exactly."""
    robot = tdcr3_dict(model)
    robot["backbone"]["density"] = 0.0
    tensions = [2.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.3, 0.0, 1.0]
    sol = softrod.solve_static(
        robot,
        tensions,
        tip_force=TIP_FORCE,
        tip_moment=TIP_MOMENT,
        gravity=GRAVITY,
        point_loads=POINT_LOADS,
        rtol=SOLVE_RTOL,
    )
    assert sol.success
    p0 = sol.positions[0]
    force = TIP_FORCE.copy()
    moment = TIP_MOMENT + np.cross(sol.positions[-1] - p0, TIP_FORCE)
    concentrated = [
        (s, np.asarray(f), np.asarray(m[0] if m else np.zeros(3))) for s, f, *m in POINT_LOADS
    ]
    concentrated += [(s, mass * GRAVITY, np.zeros(3)) for s, mass in _disk_points(robot)]
    for s, f, m in concentrated:
        force += f
        moment += m + np.cross(sol.positions[_node(sol, s)] - p0, f)
    pull_f, pull_m = _tendon_pulls(robot, sol, 0, range(9))
    scale_f, scale_m = np.abs(force).max(), np.abs(moment).max()
    np.testing.assert_allclose(
        sol.internal_force[0] + pull_f, force, rtol=0, atol=BALANCE_RTOL * scale_f
    )
    np.testing.assert_allclose(
        sol.internal_moment[0] + pull_m, moment, rtol=0, atol=BALANCE_RTOL * scale_m
    )


def test_global_equilibrium_distributed_loads():
    """Soft Cosserat rod with backbone weight and a distributed load: base loads balance the
    loads integrated along the deformed shape (Simpson on the solver's nodes)."""
    from scipy.integrate import simpson

    robot = soft_rod_dict("cosserat")
    f_dist = np.array([0.0, 0.05, 0.02])
    g = np.array([0.0, -9.81, 0.0])
    tensions = [2.0, 0.0, 1.2, 1.5, 0.8]
    sol = softrod.solve_static(
        robot,
        tensions,
        tip_force=TIP_FORCE * 0.3,
        distributed_force=f_dist,
        gravity=g,
        rtol=SOLVE_RTOL,
    )
    assert sol.success
    # Line load per reference length in each segment: f + rho A g.
    rho = robot["backbone"]["density"]
    radii = [robot["backbone"]["radius"], robot["segments"][1]["backbone"]["radius"]]
    seg_end = np.cumsum([seg["length"] for seg in robot["segments"]])
    p0 = sol.positions[0]
    force = TIP_FORCE * 0.3
    moment = np.cross(sol.positions[-1] - p0, TIP_FORCE * 0.3)
    start = 0
    for j, end in enumerate(seg_end):
        stop = _node(sol, end)
        q = f_dist + rho * np.pi * radii[j] ** 2 * g
        s = sol.s[start : stop + 1]
        force = force + q * (s[-1] - s[0])
        arm = np.cross(sol.positions[start : stop + 1] - p0, q)
        moment = moment + simpson(arm, x=s, axis=0)
        start = stop
    for s, mass in _disk_points(robot):
        force = force + mass * g
        moment = moment + np.cross(sol.positions[_node(sol, s)] - p0, mass * g)
    pull_f, pull_m = _tendon_pulls(robot, sol, 0, range(5))
    np.testing.assert_allclose(
        sol.internal_force[0] + pull_f, force, rtol=0, atol=BALANCE_RTOL * np.abs(force).max()
    )
    np.testing.assert_allclose(
        sol.internal_moment[0] + pull_m, moment, rtol=0, atol=QUADRATURE_RTOL * np.abs(moment).max()
    )


def test_internal_moment_is_rod_stiffness_times_curvature(tdcr3):
    """internal_moment = R K_bt (u - u*) at every node (EI from E and r, GJ from nu)."""
    sol = softrod.solve_static(
        tdcr3, [2.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.3, 0.0, 1.0], tip_force=TIP_FORCE
    )
    bb = tdcr3["backbone"]
    EI = bb["youngs_modulus"] * np.pi * bb["radius"] ** 4 / 4
    GJ = bb["youngs_modulus"] / (2 * (1 + bb["poisson_ratio"])) * np.pi * bb["radius"] ** 4 / 2
    m_body = sol.curvature * np.array([EI, EI, GJ])
    np.testing.assert_allclose(
        sol.internal_moment, np.einsum("nij,nj->ni", sol.rotations, m_body), rtol=0, atol=1e-14
    )
    # Rotations stay orthonormal along the rod (to RK4's drift).
    eye = np.einsum("nji,njk->nik", sol.rotations, sol.rotations)
    np.testing.assert_allclose(eye, np.broadcast_to(np.eye(3), eye.shape), atol=ORTHONORMAL_TOL)
