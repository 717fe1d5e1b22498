"""Issue 9, dynamics: SoRoSim release records vs the MuJoCo chain and the LGVI (short cases;
the full study is `softrod validate sorosim`, numbers in docs/validation.md)."""

from __future__ import annotations

import math

import pytest

from softrod.datasets import load_sorosim_release
from softrod.validate._dynamics import (
    BETA1_SQ,
    effective_damping_ratio,
    lgvi_release,
    mujoco_release,
)
from softrod.validate._sorosim import sorosim_robot

#: Measured effective/stated damping factor over all ten steel records: 9.5-9.9.
STEEL_FACTOR_RANGE = (9.0, 10.5)
#: The 25-link chain with the leave-one-out damping (stated x 9.7) on steel release 1: mean
#: tip error 0.1-0.2 % of L over 10 s at N = 50; bound with margin for N = 25.
N25_MEAN_BOUND_PCT = 1.0
#: FFT bin of a 10 s record is 0.1 Hz: the dominant frequencies must share a bin or neighbour.
FREQ_TOL_HZ = 0.11
#: Kelvin-Voigt reading of the stated number beta: first-mode ratio = beta omega_1 / 2. The ten
#: steel records (light rod, gravity barely shifts omega_1) lie within -3.3 / +0.8 % of it,
#: release 1 at +0.5 %; the envelope fit on 1-s windows is the main scatter.
KV_FACTOR_RTOL = 0.05
#: TPU release 1 with SoRoSim's damping (beta = stated number): chain N = 25 measured 0.23 %
#: mean over 10 s (N = 50: 0.18 %); bound at half the 1 % target.
N25_TPU_KV_MEAN_BOUND_PCT = 0.5
#: LGVI, 20 elements, first 2 s of TPU release 1 (largest amplitude): measured 0.63 % mean;
#: bound: the 1 % target.
LGVI_TPU_2S_MEAN_BOUND_PCT = 1.0


def test_stated_damping_ratio_is_not_the_decay() -> None:
    ref = load_sorosim_release("steel", 1)
    factor = effective_damping_ratio(ref) / ref.damping_ratio
    assert STEEL_FACTOR_RANGE[0] < factor < STEEL_FACTOR_RANGE[1]


def test_mujoco_release_steel() -> None:
    ref = load_sorosim_release("steel", 1)
    cmp = mujoco_release("steel", 1, links=25, damping=9.7 * ref.damping_ratio)
    assert cmp.mean_error_pct < N25_MEAN_BOUND_PCT
    assert cmp.freq_model == pytest.approx(cmp.freq_ref, abs=FREQ_TOL_HZ)


def test_stated_number_is_kelvin_voigt_time() -> None:
    """SoRoSim's damping is Kelvin-Voigt; the file's number acts as beta [s]: the record's
    first-mode ratio is beta omega_1 / 2 (omega_1 of the unloaded Euler-Bernoulli cantilever)."""
    ref = load_sorosim_release("steel", 1)
    bb = sorosim_robot("steel").backbone
    omega1 = BETA1_SQ * math.sqrt(bb.youngs_modulus * bb.I / (bb.density * bb.A * ref.length**4))
    predicted = ref.damping_ratio * omega1 / 2
    assert effective_damping_ratio(ref) == pytest.approx(predicted, rel=KV_FACTOR_RTOL)


def test_mujoco_release_tpu_sorosim_damping() -> None:
    cmp = mujoco_release("tpu", 1, links=25, damping="sorosim")
    assert cmp.mean_error_pct < N25_TPU_KV_MEAN_BOUND_PCT
    assert cmp.freq_model == pytest.approx(cmp.freq_ref, abs=FREQ_TOL_HZ)


def test_lgvi_release_tpu_sorosim_damping() -> None:
    cmp = lgvi_release("tpu", 1, duration=2.0, elements=20)
    assert cmp.mean_error_pct < LGVI_TPU_2S_MEAN_BOUND_PCT
