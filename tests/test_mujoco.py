"""MuJoCo rigid-link chain (issue 3): contract, physics against independent truth, CLI.

Independent truths: softrod's exact static shooting solver, the constant-curvature closed form
(kappa = T d / EI for one tendon), Euler-Bernoulli's first cantilever frequency, F L / EA for
axial stretch, and the described masses and stiffnesses. Sizes are kept small (N <= 50, a few
samples); the full protocol is `softrod bench mujoco`.
"""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

import softrod
from softrod.cli import main
from softrod.mujoco import build_spec, chain_info, chain_layout, split_links
from softrod.mujoco._equilibrium import PointLoad, settle, static_equilibrium
from softrod.validate import (
    euler_bernoulli_frequency,
    free_oscillation,
    make_model,
    material_robot,
    static_errors,
    tendon_tip,
)

#: Geometry built from the description (rest tip, XML round trip): only float round-off.
EXACT_ATOL = 1e-12
#: MuJoCo's XML writer prints 6 significant digits.
XML_RTOL = 1e-5
#: Issue-3 targets at N = 50 for the seed-002 static protocol [fraction of length].
STATIC_MEAN_N50 = 1e-3
STATIC_MAX_N50 = 5e-3
#: Second-order convergence: halving h divides the error by 4; allow 3 for sample noise and
#: the O(h^3) terms (measured 3.7-4.3 on these cases).
SECOND_ORDER_RATIO = 3.0
#: Tendon-only 90 deg bend at N = 20 vs kappa = T d / EI: measured 0.24 % of the length.
TENDON_BEND_N20 = 3e-3
#: First-mode frequency vs Euler-Bernoulli at N = 50 (issue target; measured -0.04 %).
FREQUENCY_N50 = 1e-2
#: Damping ratio: the log decrement of a 4 s record of a damped mode; measured within 1 %.
DAMPING_RTOL = 0.1
#: Two equilibrium procedures (Newton vs damped settling to |qdot| < 1e-6 rad/s): residual
#: motion of the settled state, measured 1e-9 m.
SETTLE_ATOL = 1e-6
#: Same equilibrium reached by force or length control: Newton converges to 1e-10 rad steps.
CONTROL_ATOL = 1e-8
#: Linear axial stretch through slide joints is exact up to Newton's tolerance.
AXIAL_RTOL = 1e-6


def single_tendon_robot() -> dict:
    """One 0.1 m NiTi segment with one tendon at 4.5 mm, 0 deg (inline fixture)."""
    return {
        "name": "one_tendon",
        "backbone": {
            "youngs_modulus": 60e9,
            "poisson_ratio": 0.33,
            "density": 6450.0,
            "radius": 0.0005,
        },
        "segments": [
            {
                "length": 0.1,
                "disks": 10,
                "disk_radius": 0.005,
                "tendons": [{"offset": 0.0045, "angle_deg": 0.0}],
            }
        ],
    }


# ------------------------------------------------------------------------------------------
# Contract and construction


def test_contract_tip_site_and_tension_actuators(tdcr3):
    spec = build_spec(tdcr3, links=15)
    model = spec.compile()
    assert model.site("tip").id >= 0
    assert model.nu == 9 and model.ntendon == 9
    for k in range(9):
        act = model.actuator(f"tension_{k}")
        assert act.trntype[0] == mujoco.mjtTrn.mjTRN_TENDON
        assert model.tendon(int(act.trnid[0])).name == f"tendon_{k}"
        assert act.gear[0] == -1.0
        assert act.ctrllimited[0] and act.ctrlrange[0] == 0.0 and act.ctrlrange[1] > 0
    assert model.nq == model.nv == 3 * 15
    assert np.all(model.jnt_type == mujoco.mjtJoint.mjJNT_HINGE)


def test_rest_tip_at_base_pose(tdcr3):
    robot = softrod.load_robot(tdcr3)
    model = build_spec(robot, links=12).compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    R = softrod.rods._model.quat_to_matrix(robot.base.quaternion)
    expected = np.array(robot.base.position) + R @ np.array([0, 0, robot.total_length])
    np.testing.assert_allclose(data.site("tip").xpos, expected, atol=EXACT_ATOL)


def test_xml_round_trip(tdcr3):
    spec = build_spec(tdcr3, links=12)
    model = spec.compile()
    xml = spec.to_xml()
    assert 'angle="radian"' in xml and "<composite" not in xml
    again = mujoco.MjModel.from_xml_string(xml)
    assert (again.nq, again.nu, again.ntendon, again.nsite) == (
        model.nq,
        model.nu,
        model.ntendon,
        model.nsite,
    )
    np.testing.assert_allclose(again.jnt_stiffness, model.jnt_stiffness, rtol=XML_RTOL)
    np.testing.assert_allclose(again.body_mass, model.body_mass, rtol=XML_RTOL)


def test_mass_stiffness_and_damping_from_description(tdcr3):
    robot = softrod.load_robot(tdcr3)
    n = 15
    model, _, info = make_model(robot, n)
    lay = info.layout
    bb = robot.backbone
    total = bb.density * bb.A * robot.total_length + sum(
        s.disks * s.disk_mass for s in robot.segments
    )
    moving = sum(model.body(b).mass[0] for b in info.link_bodies)
    assert math.isclose(moving + lay.base_mass, total, rel_tol=1e-12)
    h = np.diff(lay.node_s)
    assert np.allclose(h, robot.segments[0].length / 5)
    for k in range(n):
        for ax, expected in (
            ("x", bb.youngs_modulus * bb.I / h[k]),
            ("y", bb.youngs_modulus * bb.I / h[k]),
            ("z", bb.G * bb.J / h[k]),
        ):
            j = model.joint(f"j{k}{ax}")
            assert math.isclose(j.stiffness[0], expected, rel_tol=1e-12)
            dof = j.dofadr[0]
            assert math.isclose(
                model.dof_damping[dof], info.joint_damping_time * expected, rel_tol=1e-12
            )


def test_split_links_per_segment(tdcr3):
    robot = softrod.load_robot(tdcr3)
    assert split_links(robot, 30) == [10, 10, 10]
    assert split_links(robot, 20) == [7, 7, 6]
    with pytest.raises(ValueError, match="links must be >= the number of segments"):
        split_links(robot, 2)
    lay = chain_layout(robot, 20)
    # Segment ends are element boundaries; joints sit at element middles.
    ends = np.cumsum([s.length for s in robot.segments])
    assert all(np.min(np.abs(lay.node_s - e)) < 1e-15 for e in ends)
    np.testing.assert_allclose(lay.joint_s, 0.5 * (lay.node_s[1:] + lay.node_s[:-1]))


def test_bad_inputs_have_clear_errors(tdcr3):
    with pytest.raises(ValueError, match="links must be >= 1"):
        build_spec(tdcr3, links=0)
    massless = dict(tdcr3, backbone=dict(tdcr3["backbone"], density=0.0))
    for seg in massless["segments"]:
        seg["disk_mass"] = 0.0
    with pytest.raises(ValueError, match="backbone.density must be > 0"):
        build_spec(massless, links=6)
    robot = single_tendon_robot()
    with pytest.raises(ValueError, match=r"segments\[0\].tendons\[0\].stiffness is required"):
        build_spec(robot, links=6, tendon_control="length")
    with pytest.raises(ValueError, match="need model: cosserat"):
        build_spec(robot, links=6, axial=True)
    with pytest.raises(ValueError, match="integrator"):
        build_spec(robot, links=6, integrator="verlet")


# ------------------------------------------------------------------------------------------
# Statics against the exact rod


def test_tendon_bends_toward_its_side():
    robot = single_tendon_robot()
    tip = tendon_tip(robot, [1.0], 10)
    assert tip[0] > 1e-3 and abs(tip[1]) < 1e-12
    robot["segments"][0]["tendons"][0]["angle_deg"] = 90.0
    tip = tendon_tip(robot, [1.0], 10)
    assert tip[1] > 1e-3 and abs(tip[0]) < 1e-12


def test_tendon_tip_vs_constant_curvature_second_order():
    robot = softrod.load_robot(single_tendon_robot())
    bb, seg = robot.backbone, robot.segments[0]
    tension = (math.pi / 2) / seg.length * bb.youngs_modulus * bb.I / seg.tendons[0].offset
    # Closed form: a 90 deg arc of radius 1/kappa.
    kappa = tension * seg.tendons[0].offset / (bb.youngs_modulus * bb.I)
    closed = np.array(
        [(1 - math.cos(kappa * seg.length)) / kappa, 0.0, math.sin(kappa * seg.length) / kappa]
    )
    shooting = softrod.solve_static(robot, tensions=[tension]).tip_position
    np.testing.assert_allclose(shooting, closed, atol=1e-7)
    e10 = np.linalg.norm(tendon_tip(robot, [tension], 10) - closed) / seg.length
    e20 = np.linalg.norm(tendon_tip(robot, [tension], 20) - closed) / seg.length
    assert e20 < TENDON_BEND_N20
    assert e10 / e20 > SECOND_ORDER_RATIO


def test_static_protocol_targets_at_n50():
    rng = np.random.default_rng(7)
    for material in ("spring_steel", "tpu"):
        errs = static_errors(material, [50], 6, rng)[50]
        assert errs.mean() <= STATIC_MEAN_N50, (material, errs)
        assert errs.max() <= STATIC_MAX_N50, (material, errs)


def test_static_protocol_second_order_and_hinge_order():
    rng = np.random.default_rng(3)
    errs = static_errors("spring_steel", [10, 20], 4, np.random.default_rng(3))
    assert errs[10].mean() / errs[20].mean() > SECOND_ORDER_RATIO
    # The plain x-y-z hinge sequence is only first order (its twist error does not cancel).
    plain = static_errors("spring_steel", [20], 4, rng, hinge_order="xyz")[20]
    assert plain.mean() > 2.0 * errs[20].mean()


def test_precurvature_rest_shape_second_order(soft_rod):
    ref = softrod.solve_static(soft_rod).tip_position
    length = softrod.load_robot(soft_rod).total_length
    errs = []
    for n in (10, 20):
        model, data, info = make_model(soft_rod, n, gravity=(0.0, 0.0, 0.0))
        assert static_equilibrium(model, data).success
        errs.append(np.linalg.norm(data.site(info.tip_site).xpos - ref) / length)
    assert errs[0] / errs[1] > SECOND_ORDER_RATIO


def test_cosserat_slides_converge_for_a_soft_rod(soft_rod):
    """With shear and axial slides the chain follows a soft Cosserat rod under tendon loads."""
    tensions = [1.0, 0.0, 0.0, 0.5, 0.0]
    ref = softrod.solve_static(soft_rod, tensions=tensions).tip_position
    length = softrod.load_robot(soft_rod).total_length
    errs = {}
    for kw in ({}, {"axial": True, "shear": True}):
        tip = tendon_tip(soft_rod, tensions, 20, **kw)
        errs[bool(kw)] = np.linalg.norm(tip - ref) / length
    assert errs[True] < 0.25 * errs[False]


def test_axial_slides_stretch_by_fl_over_ea():
    robot = material_robot("tpu")
    model, data, info = make_model(robot, 10, axial=True, gravity=(0.0, 0.0, 0.0))
    force = 0.3
    body, point = info.body_point(model, robot.total_length)
    res = static_equilibrium(
        model, data, [PointLoad(body, point, np.array([0, 0, force]), np.zeros(3))]
    )
    assert res.success
    stretch = data.site("tip").xpos[2] - robot.total_length
    bb = robot.backbone
    expected = force * robot.total_length / (bb.youngs_modulus * bb.A)
    assert math.isclose(stretch, expected, rel_tol=AXIAL_RTOL)


def test_settling_reaches_the_newton_equilibrium():
    robot = material_robot("spring_steel")
    model, data, info = make_model(robot, 10, gravity=(0.0, -9.81, 0.0))
    body, point = info.body_point(model, robot.total_length)
    # A world-fixed force is conservative; world-fixed moments are not (a cantilever under
    # one can flutter), so settling is checked with forces and gravity only.
    load = PointLoad(body, point, np.array([0.1, 0.0, 0.05]), np.zeros(3))
    assert static_equilibrium(model, data, [load]).success
    newton = data.site("tip").xpos.copy()
    # Same load, re-applied through xfrc_applied before every step, with heavy damping.
    mujoco.mj_resetData(model, data)
    settle(model, data, [load], qvel_tol=1e-6)
    np.testing.assert_allclose(data.site("tip").xpos, newton, atol=SETTLE_ATOL)


def test_length_control_matches_force_control(tdcr3):
    model, data, info = make_model(tdcr3, 15, tendon_control="length")
    assert [model.actuator(i).name for i in range(model.nu)] == [f"length_{k}" for k in range(9)]
    assert static_equilibrium(model, data).success
    rest = data.ten_length.copy()
    data.ctrl[:] = rest
    data.ctrl[0] -= 2e-4  # shorten tendon 0 by 0.2 mm: it pulls
    data.ctrl[4] += 1e-3  # lengthen tendon 4: slack, pull-only gives zero force
    assert static_equilibrium(model, data).success
    tensions = -data.actuator_force.copy()
    assert tensions[0] > 0.5 and tensions[4] == 0.0 and np.all(tensions >= 0)
    tip_length = data.site("tip").xpos.copy()
    model_f, data_f, _ = make_model(tdcr3, 15)
    data_f.ctrl[:] = tensions
    assert static_equilibrium(model_f, data_f).success
    np.testing.assert_allclose(data_f.site("tip").xpos, tip_length, atol=CONTROL_ATOL)


# ------------------------------------------------------------------------------------------
# Dynamics


def test_first_mode_frequency_matches_euler_bernoulli():
    robot = material_robot("spring_steel")
    osc = free_oscillation(robot, 50, duration=2.0)
    f_eb = euler_bernoulli_frequency(robot)
    assert abs(osc.frequency / f_eb - 1) < FREQUENCY_N50


def test_damping_ratio_is_what_was_asked():
    robot = material_robot("spring_steel")
    zeta = 0.01
    osc = free_oscillation(robot, 20, duration=3.0, timestep=5e-4, damping_ratio=zeta)
    assert abs(osc.damping_ratio / zeta - 1) < DAMPING_RTOL
    info = chain_info(robot, links=20, timestep=5e-4, damping_ratio=zeta)
    assert math.isclose(info.damping_ratio, zeta, rel_tol=1e-12)


# ------------------------------------------------------------------------------------------
# Contact


def test_contact_with_a_box_and_never_with_itself():
    robot = softrod.load_robot(single_tendon_robot())
    spec = build_spec(robot, links=12)
    spec.worldbody.add_geom(
        name="box",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[0.01, 0.03, 0.03],
        pos=[0.03, 0.0, 0.07],
        contype=1,
        conaffinity=(1 << 31) - 1,
    )
    model = spec.compile()
    data = mujoco.MjData(model)
    # Ramp the tension to 6 N over 0.3 s: it bends toward +x (free tip x ~ 0.043 m) into the box
    # face at x = 0.02 m. (A step input moves the links by more than the box in one 2 ms step.)
    while data.time < 1.5:
        data.ctrl[0] = 6.0 * min(1.0, data.time / 0.3)
        mujoco.mj_step(model, data)
    box = model.geom("box").id
    assert data.ncon > 0
    assert all(box in (c.geom1, c.geom2) for c in data.contact[: data.ncon])
    free = 0.043
    assert data.site("tip").xpos[0] < 0.02 < free  # held back by the face


# ------------------------------------------------------------------------------------------
# CLI


def test_cli_mjcf_writes_a_loadable_model(tmp_path: Path, capsys):
    out = tmp_path / "robot.xml"
    rc = main(
        [
            "mjcf",
            str(Path(__file__).parents[1] / "examples/robots/tdcr3.yaml"),
            "--links",
            "12",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    model = mujoco.MjModel.from_xml_path(str(out))
    assert model.site("tip").id >= 0
    assert [model.actuator(i).name for i in range(model.nu)] == [f"tension_{k}" for k in range(9)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--links", "0"], "links must be >= 1"),
        (["--links", "2"], "links must be >= the number of segments"),
        (["--routing", "nowhere"], "--routing must be one of"),
    ],
)
def test_cli_mjcf_bad_input_is_one_line(tmp_path: Path, capsys, args, message):
    robot = str(Path(__file__).parents[1] / "examples/robots/tdcr3.yaml")
    rc = main(["mjcf", robot, "-o", str(tmp_path / "x.xml"), *args])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and len(err.strip().splitlines()) == 1
