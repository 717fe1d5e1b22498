"""Issue 15: coupling between segments in the hardware calibration, the distal tendons' radius
in the proximal disks (`passthrough_routing`; `softrod hardware fit --passthrough`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from softrod.datasets import TdcrRecording
from softrod.validate import HardwareParams, calibrate_hardware, calibrated_robot, replay_marker
from softrod.validate._hardware import passthrough_routing

#: The robot of the synthetic recording (near the ftdcr_v4 fit) and its pass-through scales.
PARAMS = HardwareParams(
    stiffness=(6000.0, 4500.0, 3800.0),
    pretension=(0.1, 1.2, 2.0),
    angle_offset=(0.04, -0.01, 0.0),
    marker_offset=0.006,
    translation=(0.001, -0.002, 0.003),
    tilt=(-0.04, -0.01),
)
TRUE = (0.8, 0.9)


def _displacements() -> np.ndarray:
    # Each segment bent alone (its own tendon's lever), then the three together toward one
    # side (the proximal bends carry the distal tendons' paths): out and back, 3 rows each.
    ramp = np.array([2.5e-3, 5e-3, 2.5e-3])
    blocks = []
    for tendons, scale in (((0,), 1.0), ((3,), 1.0), ((6,), 1.0), ((0, 3, 6), 0.6)):
        d = np.zeros((len(ramp), 9))
        d[:, list(tendons)] = scale * ramp[:, None]
        blocks.append(d)
    return np.concatenate(blocks)


def test_passthrough_routing_moves_the_distal_paths_only() -> None:
    spec = calibrated_robot("ftdcr_v4", PARAMS)
    moved = passthrough_routing(spec, TRUE)
    # Segment 1's tendons untouched; segment 2's at 0.8 x offset in segment 1's 10 disks.
    assert moved.segments[0].tendons[0] == spec.segments[0].tendons[0]
    t2 = moved.segments[1].tendons[0]
    assert t2.offsets == pytest.approx([0.8 * 0.0045] * 10 + [0.0045] * 10)
    t3 = moved.segments[2].tendons[1]
    assert t3.offsets == pytest.approx([0.9 * 0.0045] * 20 + [0.0045] * 10)
    with pytest.raises(ValueError, match="one scale per distal segment"):
        passthrough_routing(spec, (1.0,))
    # Scale 1 is the straight path: the same tips through the per-disk routing.
    d = _displacements()[::3]
    plain, _ = replay_marker(spec, d)
    same, _ = replay_marker(passthrough_routing(spec, (1.0, 1.0)), d)
    np.testing.assert_allclose(same, plain, atol=1e-9)
    # The default (no scales) is the shipped description: today's answers.
    assert calibrated_robot("ftdcr_v4", replace(PARAMS, passthrough=())) == spec


def test_fit_recovers_the_passthrough_of_synthetic_data() -> None:
    # Generated with the distal tendons at 0.8 / 0.9 of their offset in the proximal disks;
    # fitted from the right robot but the shipped straight tendons (1, 1).
    d = _displacements()
    truth = calibrated_robot("ftdcr_v4", replace(PARAMS, passthrough=TRUE))
    tip, ok = replay_marker(truth, d)
    assert ok.all()
    rec = TdcrRecording(
        robot="ftdcr_v4",
        split="synthetic",
        t=0.6 * np.arange(len(d)),
        pattern=np.array(["p"] * len(d)),
        displacement=d,
        servo_ids=(),
        tip=tip,
    )
    plain, _ = replay_marker(calibrated_robot("ftdcr_v4", PARAMS), d)
    assert np.linalg.norm(plain - tip, axis=1).max() > 1e-3  # the coupling moves the tip by mm
    start = replace(PARAMS, passthrough=(1.0, 1.0))
    fit = calibrate_hardware("ftdcr_v4", rec, stride=1, max_nfev=4, initial=start, passthrough=True)
    assert fit.params.passthrough == pytest.approx(TRUE, rel=0.03)
    assert fit.rmse_after_mm < 0.1 < fit.rmse_before_mm
    assert fit.extra["passthrough_scale"] == list(fit.params.passthrough)
    se = fit.extra["standard_errors"]
    assert se is None or len(se["passthrough_scale"]) == 2
