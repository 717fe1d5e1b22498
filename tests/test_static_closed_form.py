"""Static solver against closed-form and published solutions (no oracle code involved)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import softrod
from reference.robots import EXAMPLES_DIR, plain_rod_dict, soft_rod_dict, tdcr3_dict

#: Shooting on exact circular arcs: only the RK4 rotation error is left (~1e-12 m here).
ARC_TOL = 1e-9
#: method="pcc" evaluates arcs in closed form: round-off only.
PCC_TOL = 1e-12
#: Bisshopp & Drucker's table is rounded to 4 decimals (half a unit of the last digit).
BD_TOL = 5e-5
#: Small-load linear theory: geometric nonlinearity is O((F L^2/EI)^2) = 1e-8 relative here.
LINEAR_RTOL = 1e-6
#: Uniform strain states (pure moment, stretch, torsion) are integrated exactly up to RK4's
#: rotation error, ~L (kappa h)^4 / 100: 2e-11 m for the 1.5 rad arc on a 400-step grid (the
#: default 80 steps leave 1.5e-8 m, which test_static_order bounds separately).
EXACT_TOL = 1e-10
#: Steps for the uniform-strain tests (see EXACT_TOL).
FINE_STEPS = 400
#: SoftManiSim elastica table (ALGORITHMS.md A.5): positions to 0.5 mm as the spec asks.
ELASTICA_TOL = 0.5e-3
#: The same table's tip angles are rounded to 0.1 deg: half a unit plus 0.01 deg.
ELASTICA_ANGLE_TOL_DEG = 0.06
#: tdcr-modeling C++ reference tip (Rao et al. 2021), 3 decimals in mm: the brief asks 2 um.
TDCR_MODELING_TOL = 2e-6

E3 = np.array([0.0, 0.0, 1.0])


# ---------------------------------------------------------------------------------------------
# Constant curvature under pure tendon tension


def _section(bb: dict) -> tuple[float, float]:
    """EI and EA of a description's backbone dict (radius or explicit section)."""
    E = bb["youngs_modulus"]
    if "radius" in bb:
        r = bb["radius"]
        return E * np.pi * r**4 / 4, E * np.pi * r**2
    return E * bb["second_moment"], E * bb["area"]


def _expected_arcs(robot: dict, tensions: np.ndarray):
    """Per-segment curvature u_j = sum over passing tendons of tau (e3 x r) / EI_j, axial
    strain v_z = 1 - sum tau / EA_j (Cosserat), and the chained arc frames."""
    segs = robot["segments"]
    tendons = [(j, t) for j, seg in enumerate(segs) for t in seg.get("tendons", [])]
    u_list, vz_list = [], []
    for j, seg in enumerate(segs):
        # The test robots' overrides keep the section kind, so a plain merge applies them.
        EI, EA = _section({**robot["backbone"], **seg.get("backbone", {})})
        moment = np.zeros(3)
        pull = 0.0
        for tau, (k, t) in zip(tensions, tendons, strict=True):
            if k >= j:
                a = np.deg2rad(t["angle_deg"])
                r = t["offset"] * np.array([np.cos(a), np.sin(a), 0.0])
                moment += tau * np.cross(E3, r)
                pull += tau
        u_list.append(moment / EI)
        vz_list.append(1.0 - pull / EA if robot.get("model") == "cosserat" else 1.0)
    return u_list, vz_list


def _arc_positions(robot: dict, tensions: np.ndarray, s: np.ndarray):
    """Positions (n, 3) and the tip frame of the chained circular arcs at arc lengths s."""
    u_list, vz_list = _expected_arcs(robot, tensions)
    base = robot.get("base", {})
    p0 = np.array(base.get("position", [0.0, 0.0, 0.0]))
    q = np.array(base.get("quaternion", [1.0, 0.0, 0.0, 0.0]))
    R0 = Rotation.from_quat(q / np.linalg.norm(q), scalar_first=True).as_matrix()
    out = np.empty((s.shape[0], 3))
    s0 = 0.0
    for seg, u, vz in zip(robot["segments"], u_list, vz_list, strict=True):
        length = seg["length"]
        kappa = np.linalg.norm(u)
        bend = np.cross(u, E3) / kappa if kappa > 0 else np.zeros(3)

        def local(sig, kappa=kappa, bend=bend, vz=vz):
            # Planar arc in the segment's base frame: in-plane curvature keeps tendons
            # parallel (t = e3), so the strain is uniform.
            if kappa == 0:
                return vz * sig * E3
            return vz * (
                (1 - np.cos(kappa * sig)) / kappa * bend + np.sin(kappa * sig) / kappa * E3
            )

        mask = (s >= s0 - 1e-12) & (s <= s0 + length + 1e-12)
        for i in np.flatnonzero(mask):
            out[i] = p0 + R0 @ local(s[i] - s0)
        p0 = p0 + R0 @ local(length)
        R0 = R0 @ Rotation.from_rotvec(u * length).as_matrix()
        s0 += length
    return out, R0, u_list, vz_list


def _four_tendon_rod(model: str) -> dict:
    return {
        "model": model,
        "backbone": {"youngs_modulus": 1.0e7, "poisson_ratio": 0.4, "radius": 0.004},
        "segments": [
            {
                "length": 0.12,
                "disks": 6,
                "disk_radius": 0.008,
                "tendons": [{"offset": 0.007, "angle_deg": a} for a in (0, 90, 180, 270)],
            }
        ],
    }


def _no_precurvature(robot: dict) -> dict:
    robot["backbone"].pop("precurvature", None)
    return robot


CC_ROBOTS = {
    "one_segment_4_tendons_kirchhoff": lambda: _four_tendon_rod("kirchhoff"),
    "one_segment_4_tendons_cosserat": lambda: _four_tendon_rod("cosserat"),
    "tdcr3_kirchhoff": lambda: tdcr3_dict("kirchhoff"),
    "tdcr3_cosserat": lambda: tdcr3_dict("cosserat"),
    "soft_rod_cosserat_override": lambda: _no_precurvature(soft_rod_dict("cosserat")),
}


@pytest.mark.parametrize("name", sorted(CC_ROBOTS))
@pytest.mark.parametrize("seed", [0, 1])
def test_constant_curvature(name, seed):
    robot = CC_ROBOTS[name]()
    n_t = sum(len(seg.get("tendons", [])) for seg in robot["segments"])
    rng = np.random.default_rng(seed)
    # Random tensions, some exactly zero; magnitudes give 0.3..3 rad of bending.
    tensions = rng.uniform(0.0, 2.0, n_t) * (rng.random(n_t) < 0.7)
    sol = softrod.solve_static(robot, tensions)
    assert sol.success, sol.message
    expected, tip_R, u_list, vz_list = _arc_positions(robot, tensions, sol.s)
    np.testing.assert_allclose(sol.positions, expected, rtol=0, atol=ARC_TOL)
    np.testing.assert_allclose(sol.tip_rotation, tip_R, rtol=0, atol=ARC_TOL)
    # Curvature and strain per node: each node belongs to one segment (the distal side).
    seg_end = np.cumsum([seg["length"] for seg in robot["segments"]])
    node_seg = np.minimum(np.searchsorted(seg_end, sol.s, side="right"), len(seg_end) - 1)
    u_scale = max(np.abs(u).max() for u in u_list)
    np.testing.assert_allclose(
        sol.curvature, np.array(u_list)[node_seg], rtol=0, atol=1e-9 * max(u_scale, 1.0)
    )
    np.testing.assert_allclose(sol.strain[:, 2], np.array(vz_list)[node_seg], rtol=0, atol=1e-12)

    pcc = softrod.solve_static(robot, tensions, method="pcc")
    assert pcc.success
    np.testing.assert_allclose(pcc.positions, expected, rtol=0, atol=PCC_TOL)
    np.testing.assert_allclose(pcc.tip_rotation, tip_R, rtol=0, atol=PCC_TOL)
    np.testing.assert_allclose(pcc.tendon_length, sol.tendon_length, rtol=0, atol=ARC_TOL)


def test_constant_curvature_tendon_lengths():
    """Path length of a straight tendon over an arc: sum_j L_j (v_z + (u_j x r)_z)."""
    robot = tdcr3_dict("cosserat")
    tensions = np.array([1.0, 0.0, 0.0, 0.0, 0.8, 0.0, 0.0, 0.0, 0.5])
    sol = softrod.solve_static(robot, tensions)
    u_list, vz_list = _expected_arcs(robot, tensions)
    k = 0
    for j, seg in enumerate(robot["segments"]):
        for t in seg["tendons"]:
            a = np.deg2rad(t["angle_deg"])
            r = t["offset"] * np.array([np.cos(a), np.sin(a), 0.0])
            expected = sum(
                robot["segments"][i]["length"] * (vz_list[i] + np.cross(u_list[i], r)[2])
                for i in range(j + 1)
            )
            assert sol.tendon_length[k] == pytest.approx(expected, abs=ARC_TOL)
            k += 1


# ---------------------------------------------------------------------------------------------
# Cantilever with a tip force


@pytest.mark.parametrize(
    ("load", "x_over_L", "drop_over_L"),
    [(1.0, 0.3017, 0.0564), (2.0, 0.4935, 0.1606), (5.0, 0.7138, 0.3876), (10.0, 0.8106, 0.5550)],
)
def test_bisshopp_drucker(load, x_over_L, drop_over_L):
    """Large-deflection cantilever under a dead tip load P perpendicular to it (Bisshopp &
    Drucker 1945): PL^2/EI -> tip (x/L, 1 - z/L)."""
    L, EI = 0.5, 0.02
    sol = softrod.solve_static(plain_rod_dict(L, EI=EI), tip_force=[load * EI / L**2, 0.0, 0.0])
    assert sol.success, sol.message
    assert sol.tip_position[0] / L == pytest.approx(x_over_L, abs=BD_TOL)
    assert 1.0 - sol.tip_position[2] / L == pytest.approx(drop_over_L, abs=BD_TOL)
    assert sol.tip_position[1] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_small_load_deflection(model):
    """Linear beam theory in an arbitrary transverse direction: F L^3 / (3 EI), plus the
    Timoshenko shear term F L / (GA) for the Cosserat rod."""
    L, EI, GA = 0.8, 0.05, 40.0
    direction = np.array([np.cos(0.7), np.sin(0.7), 0.0])
    F = 1e-4 * EI / L**2
    sol = softrod.solve_static(
        plain_rod_dict(L, EI=EI, GA=GA, model=model), tip_force=F * direction
    )
    expected = F * L**3 / (3 * EI) + (F * L / GA if model == "cosserat" else 0.0)
    deflection = sol.tip_position @ direction
    assert deflection == pytest.approx(expected, rel=LINEAR_RTOL)
    assert np.cross(direction, sol.tip_position)[2] == pytest.approx(0.0, abs=1e-15)


# ---------------------------------------------------------------------------------------------
# Uniform strain states


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_pure_tip_moment_is_an_arc(model):
    """A tip moment M bends a rod into an arc of curvature M / EI (here 1.5 rad in total)."""
    L, EI = 0.4, 0.03
    M = 1.5 * EI / L * np.array([np.cos(2.0), np.sin(2.0), 0.0])
    sol = softrod.solve_static(
        plain_rod_dict(L, EI=EI, model=model), tip_moment=M, steps=FINE_STEPS
    )
    u = M / EI  # body = world at the base; the moment stays along this axis
    kappa = np.linalg.norm(u)
    bend = np.cross(u, E3) / kappa
    expected = np.array(
        [(1 - np.cos(kappa * s)) / kappa * bend + np.sin(kappa * s) / kappa * E3 for s in sol.s]
    )
    np.testing.assert_allclose(sol.positions, expected, rtol=0, atol=EXACT_TOL)
    np.testing.assert_allclose(sol.curvature, np.tile(u, (sol.s.shape[0], 1)), atol=1e-9)
    np.testing.assert_allclose(
        sol.tip_rotation, Rotation.from_rotvec(u * L).as_matrix(), rtol=0, atol=EXACT_TOL
    )


def test_axial_stretch_cosserat():
    """Axial tip force F on a straight Cosserat rod: elongation F L / EA; Kirchhoff: none."""
    L, EA = 0.3, 200.0
    F = 0.01 * EA
    cos = softrod.solve_static(plain_rod_dict(L, EA=EA, model="cosserat"), tip_force=[0, 0, F])
    np.testing.assert_allclose(cos.tip_position, [0.0, 0.0, L + F * L / EA], atol=EXACT_TOL)
    np.testing.assert_allclose(cos.strain[:, 2], 1.0 + F / EA, atol=1e-14)
    kir = softrod.solve_static(plain_rod_dict(L, EA=EA), tip_force=[0, 0, F])
    np.testing.assert_allclose(kir.tip_position, [0.0, 0.0, L], atol=EXACT_TOL)


@pytest.mark.parametrize("model", ["kirchhoff", "cosserat"])
def test_pure_torsion(model):
    """Tip torque T about the axis twists the rod by T L / GJ and leaves it straight."""
    L, GJ = 0.5, 0.02
    T = 0.8 * GJ / L
    sol = softrod.solve_static(plain_rod_dict(L, GJ=GJ, model=model), tip_moment=[0, 0, T])
    np.testing.assert_allclose(
        sol.tip_rotation, Rotation.from_rotvec([0, 0, T * L / GJ]).as_matrix(), atol=EXACT_TOL
    )
    np.testing.assert_allclose(sol.tip_position, [0.0, 0.0, L], atol=EXACT_TOL)
    np.testing.assert_allclose(sol.curvature[:, 2], T / GJ, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Published numbers

# ALGORITHMS.md A.5: F [N] -> tip (y, z) [mm] and tip angle [deg], for L = 0.1 and 0.07 m.
ELASTICA_TABLE = {
    0.1: {
        0.2: (27.9, 95.2, 24.3),
        0.4: (46.6, 85.8, 42.0),
        0.5: (53.0, 81.2, 48.5),
        0.6: (57.9, 76.9, 53.8),
        0.7: (61.8, 73.1, 58.1),
        1.0: (69.6, 63.7, 67.4),
    },
    0.07: {
        0.2: (10.2, 69.1, 12.5),
        0.4: (19.2, 66.8, 23.9),
        0.5: (23.0, 65.3, 29.0),
        0.6: (26.5, 63.7, 33.5),
        0.7: (29.5, 62.0, 37.7),
        1.0: (36.7, 57.2, 47.9),
    },
}


@pytest.mark.parametrize("L", sorted(ELASTICA_TABLE))
def test_softmanisim_elastica_table(L):
    robot = plain_rod_dict(L, EI=0.0022, GJ=0.001)
    for F, (y_mm, z_mm, angle_deg) in ELASTICA_TABLE[L].items():
        sol = softrod.solve_static(robot, tip_force=[0.0, F, 0.0])
        assert sol.success, sol.message
        assert sol.tip_position[1] == pytest.approx(y_mm * 1e-3, abs=ELASTICA_TOL), F
        assert sol.tip_position[2] == pytest.approx(z_mm * 1e-3, abs=ELASTICA_TOL), F
        angle = np.degrees(np.arccos(np.clip(sol.tip_rotation[2, 2], -1, 1)))
        assert angle == pytest.approx(angle_deg, abs=ELASTICA_ANGLE_TOL_DEG), F


def test_tdcr_modeling_reference_tip():
    """The two-segment robot of the tdcr-modeling benchmark (Cosserat, tensions [4,0,0,0,2,0]
    N) has its tip at (127.608, 143.467, 336.407) mm in the authors' C++ solver."""
    robot = softrod.load_robot(EXAMPLES_DIR / "tdcr_modeling.yaml")
    sol = softrod.solve_static(robot, [4.0, 0.0, 0.0, 0.0, 2.0, 0.0])
    assert sol.success, sol.message
    np.testing.assert_allclose(
        sol.tip_position, [0.127608, 0.143467, 0.336407], rtol=0, atol=TDCR_MODELING_TOL
    )


def test_pcc_says_it_ignores_loads(tdcr3):
    """Constant curvature is a load-free model: its result says so rather than pretending."""
    tensions = [1.0] + [0.0] * 8
    free = softrod.solve_static(tdcr3, tensions, method="pcc")
    loaded = softrod.solve_static(tdcr3, tensions, method="pcc", tip_force=[0.1, 0.0, 0.0])
    assert "ignored" not in free.message
    assert "ignored" in loaded.message
    np.testing.assert_array_equal(loaded.positions, free.positions)
