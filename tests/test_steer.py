"""Jacobian control steers pressures, moment inputs and the field (issue 20, docs/actuators.md
"Steering with pressures and fields")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from softrod.control import ResolvedRateController, TendonRobotPlant, track
from softrod.description import find_robot, load_robot
from softrod.rods import as_model, solve_static, tip_jacobian

#: Central differences of the plant (steps 1e-3 of each input's bound) vs the analytic columns.
FD_RTOL = 1e-5
#: Circle tracking, 41 samples of a 4 s loop (kp 10 /s): measured rms 0.23 mm (field, 0.1 m
#: catheter, 40 mm radius) and 0.04 mm (pressures, 0.2 m segment, 48 mm radius).
FIELD_CIRCLE_RMS = 5e-4  # [m]
PRESSURE_CIRCLE_RMS = 1e-4  # [m]


def _pneumatic(**extra: object) -> dict:
    """0.2 m soft segment (E = 1 MPa, r = 5 mm), three chambers at 120 deg, 0..10 kPa."""
    chambers = [
        {"area": 1e-4, "offset": 0.004, "angle_deg": a, "pressure_range": [0, 1e4]}
        for a in (0, 120, 240)
    ]
    return {
        "name": "pneumatic3",
        "model": "kirchhoff",
        "backbone": {"youngs_modulus": 1e6, "poisson_ratio": 0.5, "density": 1000.0,
                     "radius": 0.005},
        "segments": [{"length": 0.2, "chambers": chambers, **extra}],
    }  # fmt: skip


def _circle(plant: TendonRobotPlant, q_first: np.ndarray, n: int = 41, period: float = 4.0):
    """A reachable circle: the tip at q_first turned about the base's z axis (axisymmetric
    robots), sampled n times over one period [s]."""
    x0 = plant.solve(q_first).tip_position
    t = np.linspace(0.0, period, n)
    phase = 2 * np.pi * t / period
    r, z = np.hypot(x0[0], x0[1]), x0[2]
    x_d = np.stack([r * np.cos(phase), r * np.sin(phase), np.full(n, z)], axis=1)
    return t, x_d, np.gradient(x_d, t, axis=0)


def _rms(res) -> float:
    return float(np.sqrt(np.mean(np.sum((res.actual - res.desired) ** 2, axis=1))))


def test_all_kinds_fd_matches_analytic_columns() -> None:
    """Tensions, pressures, field and moments in one q: the plant's central differences equal
    tip_jacobian's columns, placed where `index` says."""
    robot = load_robot(
        _pneumatic(
            disks=4, disk_radius=0.006,
            tendons=[{"offset": 0.005, "angle_deg": 60}],
            magnets=[{"s": 0.2, "moment": [0.0, 0.0, 0.02]}],
            moment_actuators=[{"moment": [0.0, 0.0, 1e-3]}],
        )
    )  # fmt: skip
    plant = TendonRobotPlant(
        robot, controls=("tensions", "pressures", "field", "moments"), mobile_base=False,
        moment_max=1.0,
    )  # fmt: skip
    assert plant.n_q == 1 + 3 + 3 + 1
    assert [plant.index[k] for k in ("pressures", "field", "moments")] == [
        slice(1, 4), slice(4, 7), slice(7, 8)
    ]  # fmt: skip
    q = np.array([0.05, 2000.0, 500.0, 1000.0, 0.004, -0.002, 0.001, 0.3])
    Ja = plant.jacobian(q, "analytic")
    Jf = plant.jacobian(q, "fd")
    scale = np.abs(Ja).max(axis=0)
    assert np.all(np.abs(Ja - Jf) <= FD_RTOL * scale)
    # The same columns as tip_jacobian's on the solve at q.
    sol = plant.solve(q)
    ref = tip_jacobian(plant._model_at(q)[0], sol, pressures=True, field=True, moments=True)
    np.testing.assert_allclose(Ja, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_chamber_jacobian_after_a_refined_grid() -> None:
    """Bug found here: a chamber robot whose solve refined its grid (multiple shooting) made
    tip_jacobian raise 'result has 65 nodes but the model has 33' (the finer grid was kept
    under the kernel model). Upright under its own weight this segment buckles sideways."""
    model = as_model(load_robot(_pneumatic()))
    sol = solve_static(model, pressures=[300.0, 100.0, 50.0], gravity=[0, 0, -9.81])
    assert sol.success and sol.s.shape[0] != model.n_nodes
    # Bounds 0..1 kPa: FD steps of 1 Pa (the hanging shape is far from linear over 10 Pa).
    plant = TendonRobotPlant(
        model, controls=("pressures",), mobile_base=False, loads={"gravity": [0, 0, -9.81]},
        pressure_range=(0.0, 1e3),
    )  # fmt: skip
    q = np.array([300.0, 100.0, 50.0])
    Ja = plant.jacobian(q, "analytic")
    np.testing.assert_allclose(Ja, tip_jacobian(model, sol, pressures=True), rtol=1e-9)
    Jf = plant.jacobian(q, "fd")
    assert np.all(np.abs(Ja - Jf) <= FD_RTOL * np.abs(Ja).max(axis=0))


def test_field_alone_steers_a_tip_magnet_round_a_circle() -> None:
    plant = TendonRobotPlant(find_robot("magnetic_catheter"), controls=("field",),
                             mobile_base=False)  # fmt: skip
    q0 = np.array([0.01, 0.0, 0.0])  # 10 mT across: the tip 40 mm off the axis
    t, x_d, xdot_d = _circle(plant, q0)
    res = track(ResolvedRateController(plant, kp=10.0), t, x_d, xdot_d, q0=q0)
    assert _rms(res) < FIELD_CIRCLE_RMS
    assert np.all(np.linalg.norm(res.q, axis=1) <= plant.b_max + 1e-15)


def test_pressures_steer_a_pneumatic_segment_round_a_circle() -> None:
    plant = TendonRobotPlant(load_robot(_pneumatic()), controls=("pressures",),
                             mobile_base=False)  # fmt: skip
    q0 = np.array([0.0, 3000.0, 3000.0])
    t, x_d, xdot_d = _circle(plant, q0)
    res = track(ResolvedRateController(plant, kp=10.0), t, x_d, xdot_d, q0=q0)
    assert _rms(res) < PRESSURE_CIRCLE_RMS
    assert np.all((res.q >= 0.0) & (res.q <= 1e4))


def test_field_projection_and_bad_controls() -> None:
    plant = TendonRobotPlant(find_robot("magnetic_catheter"), controls=("field",), b_max=0.01)
    q = plant.project(np.concatenate([np.zeros(3), [0.01, 0.01, 0.0]]))
    assert np.linalg.norm(q[plant.index["field"]]) == pytest.approx(0.01, rel=1e-12)
    tdcr = find_robot("tdcr3")
    cases = [
        (dict(robot=tdcr, controls=("tension",)), "controls must be distinct names"),
        (dict(robot=tdcr, controls=("tensions", "field")), "has no magnets or magnetization"),
        (dict(robot=tdcr, controls=("pressures",)), "has no chambers"),
        (dict(robot=find_robot("magnetic_catheter"), controls=("field",),
              loads={"field": [0, 0, 0.01]}), "'field' is a control"),
        (dict(robot=load_robot(_pneumatic(moment_actuators=[{"moment": [0, 0, 1e-3]}])),
              controls=("moments",)), "needs moment_max > 0"),
        (dict(robot=find_robot("magnetic_catheter"), controls=("field",), b_max=-1.0),
         "b_max must be a positive"),
    ]  # fmt: skip
    for kwargs, msg in cases:
        with pytest.raises(ValueError, match=msg):
            TendonRobotPlant(**kwargs)  # type: ignore[arg-type]
    spec = _pneumatic()
    for c in spec["segments"][0]["chambers"]:
        c.pop("pressure_range")
    with pytest.raises(ValueError, match=r"pressures\[0\] \(segments\[0\].chambers\) needs"):
        TendonRobotPlant(load_robot(spec), controls=("pressures",))
    assert TendonRobotPlant(load_robot(spec), controls=("pressures",),
                            pressure_range=(0, 5e3)).q_max[-1] == 5e3  # fmt: skip


def test_cli_track_takes_the_new_controls(tmp_path, capsys) -> None:
    from softrod.cli import main

    out = tmp_path / "track"
    argv = ["track", "circle", "--robot", "magnetic_catheter", "--controls", "field",
            "--no-base", "--no-gravity", "--loops", "0.02", "--scale", "0.2", "--json",
            "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert json.loads((out / "circle.json").read_text())["controls"] == ["field"]
    capsys.readouterr()
    assert main(["track", "circle", "--robot", "tdcr3", "--controls", "tensions,field"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "softrod: error: --controls tensions,field: controls 'field': the robot 'tdcr3' has no "
        "magnets or magnetization"
    )
    assert main(["track", "circle", "--controls", "pressure"]) == 2
    assert "controls must be distinct names" in capsys.readouterr().err
