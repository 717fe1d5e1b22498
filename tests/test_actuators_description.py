"""Description of chambers and magnets (issue 20) and the shared actuation-input check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from softrod.description import (
    ChamberSpec,
    DescriptionError,
    check_actuation,
    find_robot,
    load_robot,
    shipped_robots,
)


def _robot(**seg_extra):
    seg = {"length": 0.2, "disks": 4, "disk_radius": 0.01, **seg_extra}
    return {
        "name": "act",
        "backbone": {"youngs_modulus": 1e6, "poisson_ratio": 0.5, "radius": 0.005, "density": 1e3},
        "segments": [seg, {"length": 0.1}],
    }


def test_chambers_and_magnets_load_and_round_trip():
    robot = load_robot(
        _robot(
            chambers=[
                {"area": 1e-4, "offset": 0.008, "angle_deg": 90},
                {"area": 1e-4, "offset": 0.008},
            ],
            magnets=[{"s": 0.2, "moment": [0, 0, 0.1]}],
            magnetization=[0, 0, 1e4],
        )
    )
    assert robot.n_chambers == robot.n_pressures == 2
    assert robot.n_magnets == 1 and robot.is_magnetic
    assert [j for j, _ in robot.chamber_list()] == [0, 0]
    assert robot.magnet_list()[0][1] == pytest.approx(0.2)
    again = load_robot(robot.to_dict())
    assert again == robot
    # A chamber at +x gives the moment arm r x e_z = (0, -d, 0): it bends the segment toward -x.
    arm = robot.segments[0].chambers[1].moment_arm
    assert arm == pytest.approx((0.0, -0.008, 0.0))


def test_todays_files_load_unchanged():
    # The descriptions shipped before issue 20 have no chambers and no magnets.
    for name in shipped_robots():
        robot = load_robot(find_robot(name))
        if name != "magnetic_catheter":
            assert robot.n_pressures == 0 and not robot.is_magnetic


def test_calibration_polynomial():
    c = ChamberSpec(area=2e-4, offset=0.0, area_polynomial=[-1e-6], pressure_range=(0, 1e5))
    p = 5e4
    assert c.effective_area(p) == pytest.approx(2e-4 * (1 - 0.05))
    assert c.force(p) == pytest.approx(p * 2e-4 * 0.95)
    assert c.equivalent_pressure(p) == pytest.approx(p * 0.95)
    with pytest.raises(DescriptionError, match="effective area > 0"):
        ChamberSpec.load(
            {"area": 1e-4, "offset": 0.0, "area_polynomial": [-1e-4], "pressure_range": [0, 1e5]}
        )


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ({"magnets": [{"s": 0.25, "moment": [0, 0, 1]}]}, r"segments\[0\].*magnets\[0\]\.s"),
        ({"chambers": [{"area": 1e-4, "offset": 0.02}]}, r"segments\[0\]\.chambers\[0\]\.offset"),
        ({"magnetization": [0, float("nan"), 0]}, r"segments\[0\]\.magnetization"),
        ({"chambers": [{"area": float("inf"), "offset": 0.0}]}, r"chambers\[0\]\.area"),
        ({"chambers": [{"area": -1.0, "offset": 0.0}]}, r"chambers\[0\]\.area must be > 0"),
    ],
)
def test_bad_description_names_the_field(extra, match):
    with pytest.raises(DescriptionError, match=match):
        load_robot(_robot(**extra))


def test_chamber_without_disks_stays_within_the_backbone():
    bad = _robot()
    bad["segments"][1]["chambers"] = [{"area": 1e-4, "offset": 0.006}]
    with pytest.raises(DescriptionError, match=r"segments\[1\]\.chambers\[0\]\.offset"):
        load_robot(bad)


def test_check_actuation():
    robot = load_robot(
        _robot(chambers=[{"area": 1e-4, "offset": 0.008, "pressure_range": [0, 2e5]}])
    )
    act = check_actuation(robot, pressures=[1e5], field=[0, 0.01, 0])
    assert act.pressures.shape == (1,) and act.field_gradient.shape == (3, 3)
    zero = check_actuation(robot)
    assert not zero.pressures.any() and not zero.field.any()
    with pytest.raises(DescriptionError, match="pressures must have 1 values, got 2"):
        check_actuation(robot, pressures=[1.0, 2.0])
    with pytest.raises(DescriptionError, match=r"pressures\[0\] must be within .*pressure_range"):
        check_actuation(robot, pressures=[3e5])
    with pytest.raises(DescriptionError, match=r"field\[1\] must be finite"):
        check_actuation(robot, field=[0.0, math.inf, 0.0])
    with pytest.raises(DescriptionError, match="field must have 3 values"):
        check_actuation(robot, field=[0.0, 1.0])
    with pytest.raises(DescriptionError, match=r"field_gradient must have shape \(3, 3\)"):
        check_actuation(robot, field_gradient=np.zeros(3))
    with pytest.raises(DescriptionError, match=r"pressures\[0\] must be finite"):
        check_actuation(robot, pressures=[float("nan")])


@pytest.mark.parametrize(
    ("extra", "args", "field"),
    [
        ({"magnets": [{"s": 0.25, "moment": [0, 0, 1]}]}, [], "segments[0]: magnets[0].s"),
        ({"chambers": [{"area": 1e-4, "offset": 0.02}]}, [], "segments[0].chambers[0].offset"),
        ({"chambers": [{"area": 1e-4, "offset": 0.008}]}, ["--pressures", "1,2"], "--pressures"),
        ({"magnets": [{"s": 0.2, "moment": [0, 0, 1]}]}, ["--field", "0,inf,0"], "--field"),
    ],
    ids=["magnet-outside", "chamber-offset", "pressure-count", "field-nonfinite"],
)
def test_cli_bad_actuation_is_one_line_naming_the_field(tmp_path, capsys, extra, args, field):
    """Issue 20's bad inputs through `softrod solve`: exit 2, one line naming the field."""
    import yaml

    from softrod.cli import main

    path = tmp_path / "act.yaml"
    path.write_text(yaml.safe_dump(_robot(**extra)))
    assert main(["solve", str(path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0], err
