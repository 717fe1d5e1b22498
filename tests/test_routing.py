"""General tendon routing (issue 15 item 3, docs/routing.md): helical, varying-offset and
per-disk-hole tendons in the exact static solver, against the independent Rucker & Webster
oracle (`tests/reference`, r(s), r'(s), r''(s) written from the paper), a closed form, the
straight special case, the MuJoCo chain, the LGVI, and the paths that refuse general routing.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import softrod
import softrod.dynamics
from reference import solve_reference
from softrod.description import DescriptionError

#: Agreement with the oracle asked by the issue: 1e-6 of the length (tip) at matching grids.
REF_TOL_OF_LENGTH = 1e-6
#: A straight tendon written as per-disk holes is today's straight tendon [m].
STRAIGHT_TOL = 1e-12
#: Tip agreement of the 40-link MuJoCo chain on the helix [m]: its second-order discretisation
#: error (measured 5.7e-6 m at N = 40, 2.3e-5 at 20, 1.4e-6 at 80 on a 13 mm deflection).
CHAIN_TOL = 1.5e-5
#: Tip agreement of the 40-element LGVI equilibrium on the helix, Cosserat rod [m]: second
#: order (measured 4.7e-5 m at N = 20, 1.18e-5 at 40, 2.9e-6 at 80).
LGVI_TOL = 1.5e-5

LENGTH = 0.2  # [m]
DISKS = 4
DISK_S = LENGTH * np.arange(1, DISKS + 1) / DISKS
TENSION = 1.0  # [N]
TIP_FORCE = [0.0, 0.02, 0.0]  # [N]
STEPS = 64


def rod(tendon: dict, model: str = "kirchhoff", segments: int = 1) -> dict:
    """A NiTi rod (r = 0.5 mm) of `segments` equal segments, `tendon` in the last one."""
    segs = [
        {"length": LENGTH / segments, "disks": DISKS, "disk_radius": 0.006, "tendons": []}
        for _ in range(segments)
    ]
    segs[-1]["tendons"] = [tendon]
    return {
        "name": "routed",
        "model": model,
        "backbone": {
            "youngs_modulus": 60.0e9,
            "poisson_ratio": 0.33,
            "density": 6450.0,
            "radius": 0.0005,
        },
        "segments": segs,
    }


HELIX = {"offset": 0.004, "angle_deg": 0.0, "pitch": 0.25}
OFFSETS = {"offset": 0.002, "angle_deg": 30.0, "offsets": list(0.002 + 0.015 * DISK_S)}
KINKED = {"offset": 0.004, "angle_deg": 0.0, "angles_deg": [0.0, 0.0, 90.0, 90.0]}


# ------------------------------------------------------------------------------------------
# Description


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"pitch": 0.1, "holes": [[0.004, 0.0]] * DISKS}, "pitch and holes"),
        ({"angles_deg": [0.0] * (DISKS - 1)}, "one entry per disk"),
        ({"holes": [[0.004, 0.0]] * 3 + [[0.0, 0.0065]]}, "holes[3]"),
        ({"offsets": [0.004] * 3 + [float("nan")]}, "offsets"),
        ({"pitch": 0.0}, "pitch"),
    ],
)
def test_bad_routing_names_the_field(change, words):
    d = rod({"offset": 0.004, "angle_deg": 0.0, **change})
    with pytest.raises(DescriptionError, match="tendons") as err:
        softrod.load_robot(d)
    assert words in str(err.value)


def test_description_round_trip_and_plain_files_unchanged():
    spec = softrod.load_robot(rod(HELIX))
    assert softrod.load_robot(spec.to_dict()).segments[0].tendons[0].pitch == HELIX["pitch"]
    plain = softrod.load_robot(rod({"offset": 0.004, "angle_deg": 0.0})).to_dict()
    assert set(plain["segments"][0]["tendons"][0]) == {"offset", "angle_deg"}


# ------------------------------------------------------------------------------------------
# Straight special case and closed form


@pytest.mark.parametrize(
    "form",
    [
        {"holes": [[0.004 * math.cos(0.5), 0.004 * math.sin(0.5)]] * DISKS},
        {"angles_deg": [math.degrees(0.5)] * DISKS},
        {"offsets": [0.004] * DISKS},
    ],
)
def test_straight_holes_are_todays_straight_tendon(form):
    straight = {"offset": 0.004, "angle_deg": math.degrees(0.5), "stiffness": 2.0e4}
    plain = softrod.solve_static(rod(straight), tensions=[TENSION], tip_force=TIP_FORCE)
    holed = softrod.solve_static(rod({**straight, **form}), tensions=[TENSION], tip_force=TIP_FORCE)
    assert plain.success and holed.success
    assert np.max(np.abs(holed.positions - plain.positions)) < STRAIGHT_TOL
    rest = softrod.rods.compile_model(softrod.load_robot(rod({**straight, **form})))
    assert rest.tendon_rest_length == pytest.approx([LENGTH], abs=1e-15)


def test_per_segment_angle_is_straight_piecewise_closed_form():
    """No external load: the total moment vanishes, so the section balance holds pointwise.
    Where the holes keep one position (a parallel stretch) the curvature is a straight
    tendon's, kappa = tau d / EI about the axis normal to r, with no twist; between the last
    disk of segment 0 and the first of segment 1 the tendon crosses over (r' != 0) and twists
    the rod."""
    d, tau = 0.004, TENSION
    tendon = {"offset": d, "angle_deg": 0.0, "angles_deg": [0.0] * DISKS + [90.0] * DISKS}
    robot = softrod.load_robot(rod(tendon, segments=2))
    sol = softrod.solve_static(robot, tensions=[tau], steps=STEPS)
    assert sol.success
    EI = 60.0e9 * math.pi * 0.0005**4 / 4.0
    kappa = tau * d / EI
    half = LENGTH / 2
    cross = (sol.s > half + 1e-12) & (sol.s < half + LENGTH / 2 / DISKS - 1e-12)
    first = sol.s < half - 1e-12
    second = sol.s > half + LENGTH / 2 / DISKS + 1e-12
    assert np.max(np.abs(sol.curvature[first] - [0.0, kappa, 0.0])) < 1e-9 * kappa
    assert np.max(np.abs(sol.curvature[second] - [-kappa, 0.0, 0.0])) < 1e-9 * kappa
    assert np.all(np.abs(sol.curvature[cross, 2]) > 1e-3 * kappa)


# ------------------------------------------------------------------------------------------
# Against the Rucker & Webster oracle


@pytest.mark.parametrize(
    ("tendon", "model"),
    [(HELIX, "kirchhoff"), (OFFSETS, "cosserat"), (KINKED, "kirchhoff")],
    ids=["helix", "varying-offset-cosserat", "per-disk-angles"],
)
def test_matches_rucker_webster_reference(tendon, model):
    d = rod(tendon, model)
    ref = solve_reference(d, [TENSION], tip_force=TIP_FORCE)
    sol = softrod.solve_static(
        softrod.load_robot(d), tensions=[TENSION], tip_force=TIP_FORCE, steps=STEPS
    )
    assert sol.success
    assert np.linalg.norm(sol.tip_position - ref.tip_position) < REF_TOL_OF_LENGTH * LENGTH
    assert np.max(np.abs(sol.rotations[-1] - ref.tip_rotation)) < REF_TOL_OF_LENGTH
    assert sol.tendon_length == pytest.approx(ref.tendon_length, abs=REF_TOL_OF_LENGTH * LENGTH)
    if tendon is HELIX:
        # Twist-bend coupling: a helical tendon twists the rod (a straight one cannot).
        twist = sol.curvature[-1, 2]
        assert abs(twist) > 0.05 * np.max(np.abs(sol.curvature[-1, :2]))
        assert twist == pytest.approx(ref.tip_curvature[2], rel=1e-5)


def test_helix_length_control_and_multiple_shooting_match():
    d = rod({**HELIX, "stiffness": 2.0e4})
    robot = softrod.load_robot(d)
    model = softrod.rods.compile_model(robot)
    k = 2.0 * math.pi / HELIX["pitch"]
    assert model.tendon_rest_length[0] == pytest.approx(LENGTH * math.hypot(1.0, 0.004 * k))
    lengths = model.tendon_rest_length - 1e-4
    ref = solve_reference(d, lengths=lengths, tip_force=TIP_FORCE)
    sol = softrod.solve_static(robot, lengths=lengths, tip_force=TIP_FORCE, steps=STEPS)
    assert sol.success
    assert np.linalg.norm(sol.tip_position - ref.tip_position) < REF_TOL_OF_LENGTH * LENGTH
    assert sol.tendon_tension == pytest.approx(ref.tendon_tension, rel=1e-5)
    multi = softrod.solve_static(
        robot, lengths=lengths, tip_force=TIP_FORCE, steps=STEPS, intervals=3
    )
    assert multi.success
    assert np.linalg.norm(multi.tip_position - sol.tip_position) < 1e-9


def test_helix_tip_jacobian_is_exact():
    robot = softrod.load_robot(rod(HELIX))
    model = softrod.rods.as_model(robot, STEPS)
    sol = softrod.solve_static(model, tensions=[TENSION], tip_force=TIP_FORCE)
    assert sol.success and sol.nit <= 8
    J = softrod.rods.tip_jacobian(model, sol)
    h = 1e-4
    up = softrod.solve_static(model, tensions=[TENSION + h], tip_force=TIP_FORCE)
    down = softrod.solve_static(model, tensions=[TENSION - h], tip_force=TIP_FORCE)
    fd = (up.tip_position - down.tip_position) / (2 * h)
    np.testing.assert_allclose(J[:, 0], fd, atol=1e-6 * np.max(np.abs(fd)))


# ------------------------------------------------------------------------------------------
# Paths without general routing refuse; the MuJoCo chain routes its sites


def test_unsupported_paths_refuse_clearly():
    robot = softrod.load_robot(rod(HELIX))
    words = "general tendon routing is not supported"
    with pytest.raises(ValueError, match=words):
        softrod.rods.solve_static_batch(robot, tensions=[[TENSION]])
    for method in ("observer", "pcc"):
        with pytest.raises(ValueError, match=words):
            softrod.solve_static(robot, tensions=[TENSION], method=method)
    with pytest.raises(ValueError, match=words):
        softrod.rods.solve_sequence(robot, tensions=[[TENSION]])
    # The stability test is not run on routed robots: `stable` is None (not checked).
    assert softrod.solve_static(robot, tensions=[TENSION]).stable is None


def test_mujoco_chain_follows_the_helix():
    pytest.importorskip("mujoco")
    from softrod.mujoco._equilibrium import static_equilibrium
    from softrod.validate._chain import make_model

    d = rod(HELIX)
    exact = softrod.solve_static(softrod.load_robot(d), tensions=[TENSION])
    model, data, info = make_model(d, 40, gravity=(0.0, 0.0, 0.0))
    data.ctrl[:] = [TENSION]
    assert static_equilibrium(model, data).success
    tip = data.site(info.tip_site).xpos
    assert np.linalg.norm(tip - exact.tip_position) < CHAIN_TOL
    # The routed sites matter: the same tendon held straight ends far from there.
    straight = copy.deepcopy(d)
    del straight["segments"][0]["tendons"][0]["pitch"]
    model_s, data_s, _ = make_model(straight, 40, gravity=(0.0, 0.0, 0.0))
    data_s.ctrl[:] = [TENSION]
    assert static_equilibrium(model_s, data_s).success
    assert np.linalg.norm(data_s.site(info.tip_site).xpos - tip) > 100 * CHAIN_TOL


def test_lgvi_follows_the_helix():
    # The LGVI's tendon vertices sit at the routed offset r(s_k) of every node: its settled
    # equilibrium (friction_settle_sequence's "static" method at mu = 0) converges to the
    # exact Cosserat solution at second order.
    d = rod(HELIX, model="cosserat")
    robot = softrod.load_robot(d)
    exact = softrod.solve_static(robot, tensions=[TENSION])
    model = softrod.dynamics.build_lgvi_model(robot, elements=40)
    lg = softrod.dynamics.friction_settle_sequence(model, [[TENSION]])
    assert lg.success.all()
    assert np.linalg.norm(lg.tip_position[0] - exact.tip_position) < LGVI_TOL
    # The routing matters: the same tendon held straight ends far from there.
    straight = copy.deepcopy(d)
    del straight["segments"][0]["tendons"][0]["pitch"]
    model_s = softrod.dynamics.build_lgvi_model(softrod.load_robot(straight), elements=40)
    tip_s = softrod.dynamics.friction_settle_sequence(model_s, [[TENSION]]).tip_position[0]
    assert np.linalg.norm(tip_s - lg.tip_position[0]) > 100 * LGVI_TOL
