"""SoMo compatibility (issue 8, part 2): calibration closed forms (ALGORITHMS.md §B.2 and the
compliance ratio of §B Ambiguity 1), the empirical rigid-link chain in MuJoCo against them,
importing SoMo definitions, assemblies and grasp trials."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

import softrod
from softrod.somo import (
    STIFFNESS_RULES,
    bending_stiffness_from_joint,
    chain_compliance_ratio,
    chain_tip_compliance,
    import_somo,
    joint_stiffness,
    pressure_torques,
    world_scale_factors,
)

ROOT = Path(__file__).resolve().parents[1]
#: Closed forms evaluated two ways agree to round-off.
EXACT = 1e-12
#: Small-deflection MuJoCo checks: a tip deflection of ~0.2 % of the length leaves geometric
#: nonlinearity ~1e-5, and the Newton equilibrium is converged far below that.
SMALL_DEFLECTION = 1e-3

# SoMo's two-segment finger definition (GrauleM/somo, region_of_acquisition), world scale 20.
SOMO_FINGER = {
    "manipulator_name": "teeple_koutros_finger",
    "urdf_filename": "teeple_koutros_finger.urdf",
    "n_act": 2,
    "actuator_definitions": [
        {
            "actuator_length": 1.0,
            "n_segments": 10,
            "planar_flag": 0,
            "link_definition": {
                "shape_type": "box",
                "dimensions": [0.46, 0.34, 0.1],
                "mass": 0.0025,
            },
            "joint_definitions": [
                {
                    "joint_type": "revolute",
                    "axis": [1, 0, 0],
                    "spring_stiffness": 278.57,
                    "joint_neutral_position": 0,
                    "neutral_axis_offset": [0.0, 0.1, 0, 0, 0, 0],
                    "joint_control_limit_force": 2.0,
                },
                {"joint_type": "revolute", "axis": [0, 1, 0], "spring_stiffness": 557.14},
            ],
        },
        {
            "actuator_length": 1.0,
            "n_segments": 10,
            "planar_flag": 0,
            "link_definition": {
                "shape_type": "box",
                "dimensions": [0.46, 0.34, 0.1],
                "mass": 0.0015,
            },
            "joint_definitions": [
                {"joint_type": "revolute", "axis": [1, 0, 0], "spring_stiffness": 207.14},
                {"joint_type": "revolute", "axis": [0, 1, 0], "spring_stiffness": 414.28},
            ],
        },
    ],
    "base_definition": {"shape_type": "box", "dimensions": [0.64, 0.64, 0.2], "mass": 0.6},
    "tip_definition": {"shape_type": "box", "dimensions": [0.46, 0.25, 0.3], "mass": 0.01},
}


# ---------------------------------------------------------------------------------------------
# Closed forms


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 20, 50])
def test_somo_chain_compliance_ratio(n):
    """Eq. 8's kappa on every joint: tip compliance / beam's = (N+1)(2N+1)(3N-1) / (12 N^3)."""
    L, K_b = 0.1, 5.0
    kappa = joint_stiffness(L, n, tip_stiffness=K_b, rule="somo")
    assert kappa == pytest.approx(2 * n**2 * L**2 * K_b / (3 * n - 1), rel=EXACT)
    ratio = chain_tip_compliance(kappa, L, n, rule="somo") * K_b
    assert ratio == pytest.approx(chain_compliance_ratio(n), rel=EXACT)
    # The fix matches the tip exactly; the midpoint chain converges as 1 - 1/(4 N^2).
    k_tip = joint_stiffness(L, n, tip_stiffness=K_b, rule="tip")
    assert chain_tip_compliance(k_tip, L, n, rule="tip") * K_b == pytest.approx(1.0, rel=EXACT)
    k_mid = joint_stiffness(L, n, tip_stiffness=K_b, rule="midpoint")
    assert chain_tip_compliance(k_mid, L, n, rule="midpoint") * K_b == pytest.approx(
        1 - 1 / (4 * n**2), rel=EXACT
    )


def test_compliance_ratio_values():
    assert round(chain_compliance_ratio(20), 3) == 0.529  # §B Ambiguity 1
    assert chain_compliance_ratio(10**6) == pytest.approx(0.5, abs=1e-5)
    # With EI known: kappa = 6 N^2 EI / ((3N - 1) L), about 2 N EI / L.
    EI, L, n = 1.7e-3, 0.1, 20
    assert joint_stiffness(L, n, EI=EI, rule="somo") == pytest.approx(
        6 * n**2 * EI / ((3 * n - 1) * L), rel=EXACT
    )


@pytest.mark.parametrize("rule", STIFFNESS_RULES)
def test_joint_stiffness_inverts(rule):
    EI = 2.3e-3
    kappa = joint_stiffness(0.08, 12, EI=EI, rule=rule)
    assert bending_stiffness_from_joint(kappa, 0.08, 12, rule=rule) == pytest.approx(EI, rel=EXACT)


def test_actuation_and_scaling_helpers():
    assert pressure_torques(10.0, 4.0) == (14.0, 3.25 * 6.0)
    f = world_scale_factors(20.0)
    assert f["length"] == 20 and f["torque"] == 400 and f["joint_stiffness"] == 400
    assert f["mass"] == 1 and f["damping"] == 1
    with pytest.raises(ValueError, match="rule"):
        joint_stiffness(0.1, 10, EI=1.0, rule="magic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exactly one"):
        joint_stiffness(0.1, 10)


# ---------------------------------------------------------------------------------------------
# Empirical rigid-link mode in MuJoCo


def _chain_model(rule: str, n: int = 20):
    mujoco = pytest.importorskip("mujoco")
    from softrod.mujoco import MujocoOptions, configure_spec
    from softrod.somo import EmpiricalActuator, EmpiricalManipulator, add_empirical_chain

    act = EmpiricalActuator(
        length=0.1, n_links=n, tip_stiffness=(5.0, 10.0), blocked_force=0.75, rule=rule
    )  # type: ignore[arg-type]
    spec = mujoco.MjSpec()
    configure_spec(spec, MujocoOptions(gravity=(0.0, 0.0, 0.0)))
    chain = add_empirical_chain(spec, spec.worldbody, EmpiricalManipulator(actuators=[act]))
    model = spec.compile()
    return mujoco, model, mujoco.MjData(model), chain, act


@pytest.mark.parametrize("rule", STIFFNESS_RULES)
def test_empirical_chain_tip_stiffness(rule):
    """MuJoCo chain under a small tip load: tip rule = K_b, somo rule = K_b / ratio(N)."""
    mujoco, model, data, chain, act = _chain_model(rule)
    from softrod.mujoco._equilibrium import PointLoad, static_equilibrium

    site = model.site(chain.tip_site).id
    body = int(model.site_bodyid[site])
    for axis, K_b in ((1, act.tip_stiffness[0]), (0, act.tip_stiffness[1])):
        force = np.zeros(3)
        force[axis] = 2e-4 * K_b * act.length  # tip deflection 0.02 % .. 0.04 % of L
        mujoco.mj_resetData(model, data)
        res = static_equilibrium(
            model, data, [PointLoad(body, model.site_pos[site].copy(), force, np.zeros(3))]
        )
        assert res.success
        k_sim = force[axis] / data.site_xpos[site][axis]
        expected = {
            "tip": 1.0,
            "somo": 1 / chain_compliance_ratio(20),
            "midpoint": 1 / (1 - 1 / (4 * 20**2)),
        }[rule]
        assert k_sim / K_b == pytest.approx(expected, rel=SMALL_DEFLECTION)


def test_empirical_chain_actuation_bends_every_joint_equally():
    """A torque tau on every x hinge: each joint turns tau / kappa (uniform moment, eq. 9)."""
    mujoco, model, data, chain, act = _chain_model("tip")
    from softrod.mujoco._equilibrium import static_equilibrium

    tau = 1e-3 * act.kappa()[0]  # 1 mrad per joint
    data.ctrl[model.actuator(chain.actuators[0]).id] = tau
    assert static_equilibrium(model, data).success
    angles = np.array([data.joint(f"j{k}x").qpos[0] for k in range(act.n_links)])
    np.testing.assert_allclose(angles, tau / act.kappa()[0], rtol=SMALL_DEFLECTION)
    assert act.torque(100e3) == pytest.approx(0.75 * 0.1)


# ---------------------------------------------------------------------------------------------
# Import


def test_import_somo_finger_keeps_stiffness_and_notes_the_rest():
    res = import_somo(SOMO_FINGER, world_scale=20.0)
    robot = res.robot
    assert [s.length for s in robot.segments] == pytest.approx([0.05, 0.05])
    assert res.n_links == (10, 10)
    # SoMo's eq. 8 with the imported EI gives back the file's kappa (SI: / Y^2).
    for j, kappa_file in enumerate((278.57, 207.14)):
        bb = robot.segment_backbone(j)
        kappa = joint_stiffness(0.05, 10, EI=bb.youngs_modulus * bb.I, rule="somo")
        assert kappa == pytest.approx(kappa_file / 400.0, rel=EXACT)
    # Link mass 2.5 g per 5 mm link of 23 x 17 mm: density = m / (A h).
    assert robot.backbone.density == pytest.approx(0.0025 / (0.023 * 0.017 * 0.005), rel=EXACT)
    assert robot.segments[-1].disk_mass == 0.01
    text = " ".join(res.notes)
    for needle in (
        "about y",
        "neutral_axis_offset",
        "base_definition",
        "no tendon",
        "joint_control_limit_force",
        "N = 10, 10",
    ):
        assert needle in text


def test_imported_chain_rule_bends_like_the_somo_chain():
    """rule 'chain': the softrod continuum deflects at the tip like SoMo's chain (closed form)."""
    one = {
        **SOMO_FINGER,
        "actuator_definitions": SOMO_FINGER["actuator_definitions"][:1],
        "tip_definition": None,
    }
    res = import_somo(one, world_scale=20.0, rule="chain")
    robot = softrod.load_robot({**res.robot.model_dump(), "model": "kirchhoff"})
    F = 1e-4
    tip = softrod.solve_static(robot, tip_force=[0.0, F, 0.0]).tip_position
    compliance = chain_tip_compliance(278.57 / 400.0, 0.05, 10, rule="somo")
    assert tip[1] / F == pytest.approx(compliance, rel=SMALL_DEFLECTION)


def test_cli_import_somo(tmp_path):
    import yaml

    import softrod.cli._sysid_cmds  # noqa: F401
    from softrod.cli import main

    src = tmp_path / "finger.yaml"
    src.write_text(yaml.safe_dump(SOMO_FINGER))
    out = tmp_path / "finger_softrod.yaml"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["import-somo", str(src), "--world-scale", "20", "-o", str(out), "--json"])
    assert rc == 0
    payload = json.loads(buf.getvalue())
    assert payload["notes"] and payload["output"] == str(out)
    robot = softrod.load_robot(out)
    assert robot.total_length == pytest.approx(0.1)
    assert "# Not mapped" in out.read_text()
    # SoMo's torques as moment actuators by default; --actuation chambers keeps the earlier import.
    assert robot.n_moments == 4 and robot.n_pressures == 0
    args = ["import-somo", str(src), "--world-scale", "20", "-o", str(out), "--overwrite"]
    assert main([*args, "--actuation", "chambers"]) == 0
    assert softrod.load_robot(out).n_pressures == 4
    assert main([*args, "--actuation", "tendons"]) == 2
    assert main(["import-somo", str(src), "--rule", "magic", "-o", str(out), "--overwrite"]) == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"actuator_definitions": [{"actuator_length": -1}]}))
    assert main(["import-somo", str(bad), "-o", str(out), "--overwrite"]) == 2


# ---------------------------------------------------------------------------------------------
# Assemblies and grasp trials


@pytest.mark.parametrize("name", ["hand.yaml", "arm_gripper.yaml"])
def test_example_assemblies_build_and_close(name):
    mujoco = pytest.importorskip("mujoco")
    from softrod.somo._scenes import build_assembly, load_assembly

    path = ROOT / "examples" / "somo" / name
    asm = load_assembly(path)
    assert load_assembly(json.loads(json.dumps(asm.model_dump(mode="json")))) == asm
    spec, info = build_assembly(path)
    model = spec.compile()
    data = mujoco.MjData(model)
    if asm.arm is not None:
        for act, deg in zip(info.arm_actuators, asm.arm.home_deg, strict=True):
            data.qpos[model.jnt_qposadr[model.joint(act).id]] = math.radians(deg)
            data.ctrl[model.actuator(act).id] = math.radians(deg)
    mujoco.mj_forward(model, data)
    tips0 = {n: data.site(c.tip_site).xpos.copy() for n, c in info.fingers.items()}
    for chain in info.fingers.values():
        for act, a in zip(chain.actuators, chain.actuated, strict=True):
            data.ctrl[model.actuator(act).id] = chain.manipulator.actuators[a].torque(40e3)
    for _ in range(300):
        mujoco.mj_step(model, data)
    assert np.all(np.isfinite(data.qpos))
    for n, chain in info.fingers.items():
        # Every finger curls: its tip moves by > 5 mm (a 0.1 m finger at 40 kPa).
        assert np.linalg.norm(data.site(chain.tip_site).xpos - tips0[n]) > 5e-3


def test_teeple_finger_distal_stiffness_scale():
    """The passive distal part's tip stiffness scales with `distal_stiffness_scale` (EI ratio);
    the actuated part and the actuation torque do not change."""
    from softrod.somo import teeple_finger
    from softrod.somo._empirical import SOMO_DISTAL_STIFFNESS_SCALE

    same = teeple_finger(0.3)
    soft = teeple_finger(0.3, distal_stiffness_scale=SOMO_DISTAL_STIFFNESS_SCALE)
    assert soft.actuators[0] == same.actuators[0]
    ratio = np.array(soft.actuators[1].tip_stiffness) / np.array(same.actuators[1].tip_stiffness)
    assert ratio == pytest.approx([207.14 / 278.57] * 2, rel=1e-12)
    with pytest.raises(ValueError, match="distal_stiffness_scale"):
        teeple_finger(0.3, distal_stiffness_scale=0.0)


#: Grasp-trial cases taken from the middle of their regions of the study map (docs/sysid.md),
#: at least 10 mm of centring from a region boundary, so that solver-level changes do not flip
#: them: (DSR, object width [m], centring [m], grasp).
GRASP_CASES = [
    # 20 mm box held flat between long passive distal parts (SoMo Fig. 6's pinch).
    (0.4, 0.02, 0.12, "pinch"),
    # 40 mm box near the finger bases, fully actuated fingers: they wrap it.
    (0.0, 0.04, 0.10, "power"),
    # Object centre 135 mm from the finger bases: beyond the 0.1 m fingers, never touched.
    (0.2, 0.02, 0.18, "none"),
]


@pytest.mark.parametrize(("dsr", "width", "centering", "grasp"), GRASP_CASES)
def test_grasp_trial_classifies(dsr, width, centering, grasp):
    """One trial per grasp type; a lifted object follows the hand up by > 80 % of the 75 mm lift
    and stays upright (< 20 deg), a missed one is left standing where it was."""
    pytest.importorskip("mujoco")
    from softrod.somo import run_grasp_trial

    out = run_grasp_trial(dsr, width, centering)
    assert out.grasp == grasp
    if grasp == "none":
        assert not out.lifted and out.n_contacts == 0
        assert abs(out.object_rise) < 1e-3 and out.object_shift < 1e-3
    else:
        assert out.lifted and out.object_rise > 0.8 * 0.075
        assert out.object_tilt_deg < 20.0
    if grasp == "pinch":
        assert out.mean_contact_s >= out.distal_start_s
    if grasp == "power":
        assert out.mean_contact_s < out.distal_start_s
