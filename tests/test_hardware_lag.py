"""Issue 15: a first-order lag (creep) of the servo displacements in the hardware calibration
(`calibration.lag_time_constant`, `lag_fraction`; `softrod hardware fit --lag`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from softrod.datasets import TdcrRecording
from softrod.description import CalibrationSpec
from softrod.validate import HardwareParams, calibrate_hardware, calibrated_robot, replay_marker
from softrod.validate._hardware import lag

#: The robot of the synthetic recording (near the ftdcr_v4 fit) and its lag.
PARAMS = HardwareParams(
    stiffness=(6000.0, 4500.0, 3800.0),
    pretension=(0.1, 1.2, 2.0),
    angle_offset=(0.04, -0.01, 0.0),
    marker_offset=0.006,
    translation=(0.001, -0.002, 0.003),
    tilt=(-0.04, -0.01),
)
TAU, FRACTION = 2.0, 0.5


def test_lag_is_a_first_order_lowpass() -> None:
    # A step at t = 0 held afterwards: d + a (y - d) with y = 1 - exp(-t / tau) on top of the
    # step (exact for a held command at any sampling).
    t = np.r_[0.0, np.cumsum(np.random.default_rng(0).uniform(0.1, 1.0, 30))]
    d = np.zeros((len(t), 2))
    d[1:] = [1e-3, -2e-3]
    out = lag(d, t, TAU, FRACTION)
    decay = np.exp(-(t[1:] - t[0]) / TAU)[:, None]
    np.testing.assert_allclose(out[1:], d[1:] * (1.0 - FRACTION * decay), rtol=1e-12)
    np.testing.assert_array_equal(lag(d, t, TAU, 0.0), d)
    np.testing.assert_array_equal(lag(d, t, 0.0, FRACTION), d)
    with pytest.raises(ValueError, match="lag_fraction"):
        CalibrationSpec(servo_columns=["a"], pretension=[0.0], lag_fraction=1.5)


def _synthetic() -> tuple[TdcrRecording, np.ndarray]:
    # Tendon 0 (segment 1) and tendon 3 (segment 2) pulled out and back with holds, 0.6 s rows.
    ramp = np.r_[np.linspace(0.0, 6e-3, 8), [6e-3] * 4, np.linspace(6e-3, 0.0, 8), [0.0] * 4]
    d = np.zeros((len(ramp), 9))
    d[:, 0] = ramp
    d[:, 3] = 0.5 * ramp
    t = 0.6 * np.arange(len(ramp))
    spec = calibrated_robot(
        "ftdcr_v4", replace(PARAMS, lag_time_constant=TAU, lag_fraction=FRACTION)
    )
    tip, ok = replay_marker(spec, d, t=t)
    assert ok.all()
    rec = TdcrRecording(
        robot="ftdcr_v4",
        split="synthetic",
        t=t,
        pattern=np.array(["p"] * len(t)),
        displacement=d,
        servo_ids=(),
        tip=tip,
    )
    return rec, tip


def test_fit_recovers_the_lag_of_synthetic_data() -> None:
    # Generated with the lag (tau 2 s, half of each change lagging); fitted from the right
    # robot but a wrong lag (5 s, 0.2): the fit finds the lag and the tips.
    rec, tip = _synthetic()
    spec = calibrated_robot("ftdcr_v4", PARAMS)
    lagged = calibrated_robot("ftdcr_v4", replace(PARAMS, lag_time_constant=1.0, lag_fraction=0.1))
    with pytest.raises(ValueError, match="needs the rows' times"):
        replay_marker(lagged, rec.displacement)
    plain, _ = replay_marker(spec, rec.displacement)
    assert np.linalg.norm(plain - tip, axis=1).max() > 1e-3  # the lag moves the tip by mm
    fit = calibrate_hardware("ftdcr_v4", rec, stride=3, max_nfev=6, initial=PARAMS, lag=True)
    assert fit.params.lag_time_constant == pytest.approx(TAU, rel=0.05)
    assert fit.params.lag_fraction == pytest.approx(FRACTION, rel=0.05)
    assert fit.rmse_after_mm < 0.05 < fit.rmse_before_mm
    assert fit.extra["lag"]["time_constant_s"] == fit.params.lag_time_constant
    se = fit.extra["standard_errors"]
    assert se is None or {"lag_time_constant_s", "lag_fraction"} <= set(se)
    # The fitted description carries the lag: its replay needs the times and gives the tips.
    fitted = calibrated_robot("ftdcr_v4", fit.params)
    assert fitted.calibration is not None and fitted.calibration.has_lag
    again, _ = replay_marker(fitted, rec.displacement, t=rec.t)
    assert np.linalg.norm(again - tip, axis=1).max() < 1e-4
    assert math.isfinite(fit.rmse_after_mm)
