"""The damping filter of seed 004 (ALGORITHMS.md E.5) on noisy data with a wrong stiffness.

The truth is a released PDMS rod with known viscous damping (`simulate_dynamic`); the
measurements are its node positions plus seeded Gaussian noise; the estimator runs on a model
whose Young's modulus is off by -+5 %.
"""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from softrod.dynamics import DampingEstimate, estimate_damping, simulate_dynamic
from softrod.dynamics._filter import FIT_RTOL

#: Issue 19 item 3: with 1-10 um of position noise and a +-5 % stiffness mismatch the estimate
#: is within 10 % of the truth (measured: 6e-6 at 10 um; the 10 % holds to about 10 mm of
#: noise on this 24 mm release, docs/dynamics.md).
NOISY_RTOL = 0.10
#: The fitted stiffness factor undoes the modulus error (measured 1/scale to 1e-5 at 10 um).
STIFFNESS_RTOL = 1e-3
#: Noise-free, the least-squares fit recovers the damping to round-off (measured 2e-11).
EXACT_RTOL = 1e-8
#: The causal (running) fit is within NOISY_RTOL from a quarter of the first period on (the
#: tip first crosses its mean at 0.114 s): measured 0.23 % at 0.12 s with 10 um, standard
#: error 0.18 %, so the 10 % is 40 standard errors away (docs/dynamics.md).
CAUSAL_CONVERGED_T = 0.12
#: Samples between the running estimates in the tests (0.12 s): five windows, the first at
#: CAUSAL_CONVERGED_T, so the running fit costs about two offline fits.
CAUSAL_EVERY = 2012
#: Noise-free, the causal per-step filter (trend "model") lags the truth by one step, an
#: O(omega dt) error largest at node 1 where the rod barely moves: measured 4.2e-4 (the
#: former one-sample-ahead form: 3.9e-4).
PREDICTIVE_RTOL = 1e-3

PDMS_ROD = {
    "name": "pdms",
    "model": "cosserat",
    "backbone": {"youngs_modulus": 365e3, "poisson_ratio": 0.5, "density": 1101.0,
                 "radius": 0.0025},
    "segments": [{"length": 0.0605}],
}  # fmt: skip
GRAVITY = [0.0, 0.0, -9.81]
#: Damping per unit length of the truth [N s/m^2] (2 % of critical in the first mode).
C_TRUE = 0.02


def _with_modulus(scale: float) -> dict:
    rod = dict(PDMS_ROD)
    rod["backbone"] = dict(rod["backbone"], youngs_modulus=365e3 * scale)
    return rod


@pytest.fixture(scope="module")
def release():
    """A 0.6 s damped release from a tip-loaded static shape, sampled every step."""
    st = softrod.solve_static(PDMS_ROD, tip_force=[2e-3, 0.0, 0.0])
    probe = simulate_dynamic(PDMS_ROD, 0.01, initial=st)
    truth = simulate_dynamic(PDMS_ROD, 0.6, dt=probe.dt, initial=st, damping=C_TRUE,
                             gravity=GRAVITY, sample_dt=probe.dt)  # fmt: skip
    assert truth.success, truth.message
    return st, truth


@pytest.mark.parametrize("modulus_scale", [0.95, 1.05])
@pytest.mark.parametrize("noise", [1e-6, 3e-6, 1e-5])
def test_estimate_survives_noise_and_stiffness_mismatch(release, noise, modulus_scale):
    st, truth = release
    rng = np.random.default_rng(19)
    y = truth.positions + noise * rng.normal(size=truth.positions.shape)
    # The causal (running) fit: its last window is the whole record, i.e. the offline fit.
    est = estimate_damping(_with_modulus(modulus_scale), y, truth.dt, initial=st,
                           gravity=GRAVITY, causal=True, every=CAUSAL_EVERY)  # fmt: skip
    assert isinstance(est, DampingEstimate) and est.success, est.message
    assert est.method == "least_squares"
    k_true = C_TRUE * truth.model.node_weight[est.nodes]
    # Every running estimate from a quarter period on is within 10 % (the first is at 0.12 s).
    n_steps = y.shape[0] - 1
    assert est.running_t is not None and est.running_damping_per_length is not None
    assert est.running_t[0] == pytest.approx(CAUSAL_CONVERGED_T, rel=1e-3)
    assert est.running_t[-1] == n_steps * truth.dt
    late = est.running_t >= CAUSAL_CONVERGED_T
    assert np.all(np.abs(est.running_damping_per_length[late] / C_TRUE - 1) < NOISY_RTOL)
    # damping[j] is the latest running estimate using samples up to j.
    assert np.all(np.isnan(est.damping[:CAUSAL_EVERY]))
    weight = truth.model.node_weight[est.nodes]
    np.testing.assert_array_equal(est.damping[CAUSAL_EVERY : 2 * CAUSAL_EVERY, :, 1],
                                  np.broadcast_to(est.running_damping_per_length[0] * weight,
                                                  (CAUSAL_EVERY, weight.shape[0])))  # fmt: skip
    if noise == 1e-5 and modulus_scale == 1.05:
        # The last running estimate is the offline fit, to the fit's convergence tolerance.
        off = estimate_damping(_with_modulus(modulus_scale), y, truth.dt, initial=st,
                               gravity=GRAVITY)  # fmt: skip
        assert off.success and off.running_t is None
        se_c = float(off.std_error[0, 0] / weight[0])
        assert abs(est.damping_per_length - off.damping_per_length) <= FIT_RTOL * se_c
        assert est.running_std_error is not None
        assert est.running_std_error[-1] == pytest.approx(se_c, rel=1e-6)
    rel = np.abs(est.estimate / k_true[:, None] - 1)
    assert np.max(rel) < NOISY_RTOL, rel
    assert abs(est.damping_per_length / C_TRUE - 1) < NOISY_RTOL
    assert abs(est.stiffness_scale * modulus_scale - 1) < STIFFNESS_RTOL
    # The noise model: the residual is the noise, and the truth lies within 5 standard errors.
    assert abs(est.noise / noise - 1) < 0.05
    assert np.all(np.abs(est.estimate - k_true[:, None]) < 5 * est.std_error)


def test_noise_free_accuracy(release):
    st, truth = release
    est = estimate_damping(PDMS_ROD, truth.positions, truth.dt, initial=st, gravity=GRAVITY)
    assert est.success, est.message
    k_true = C_TRUE * truth.model.node_weight[est.nodes]
    assert np.max(np.abs(est.estimate / k_true[:, None] - 1)) < EXACT_RTOL
    assert np.max(est.tracking_error) < 1e-9
    pred = estimate_damping(PDMS_ROD, truth.positions, truth.dt, initial=st, gravity=GRAVITY,
                            method="predictive")  # fmt: skip
    assert pred.success and pred.method == "predictive"
    assert np.max(np.abs(pred.estimate[:, 0] / k_true - 1)) < PREDICTIVE_RTOL


def test_predictive_filter_is_causal(release):
    """Changing the measurements from step j0 on leaves every estimate before j0 as it was."""
    st, truth = release
    y = truth.positions[:2001]
    j0 = 1200
    y2 = y.copy()
    y2[j0:] += 1e-4
    for kw in ({}, {"trend": "linear"}, {"paper_scaling": True}):
        a = estimate_damping(PDMS_ROD, y, truth.dt, initial=st, gravity=GRAVITY,
                             method="predictive", **kw)  # fmt: skip
        b = estimate_damping(PDMS_ROD, y2, truth.dt, initial=st, gravity=GRAVITY,
                             method="predictive", **kw)  # fmt: skip
        assert a.success and b.success
        np.testing.assert_array_equal(a.damping[:j0], b.damping[:j0])
        assert not np.array_equal(a.damping[j0], b.damping[j0])


def test_causal_fit_is_causal(release):
    """The running least-squares fit: changing the measurements after a window's end leaves
    that window's estimate (and every earlier one) as it was, and changes the later ones."""
    st, truth = release
    rng = np.random.default_rng(19)
    y = truth.positions[:3001] + 1e-5 * rng.normal(size=truth.positions[:3001].shape)
    j0 = 2001  # the first sample after the window ending at sample 2000
    y2 = y.copy()
    y2[j0:] += 1e-4
    a, b = (estimate_damping(_with_modulus(1.05), m, truth.dt, initial=st, gravity=GRAVITY,
                             causal=True, every=1000) for m in (y, y2))  # fmt: skip
    assert a.success and b.success
    assert a.running_damping_per_length is not None and b.running_damping_per_length is not None
    np.testing.assert_array_equal(a.running_damping_per_length[:2],
                                  b.running_damping_per_length[:2])  # fmt: skip
    np.testing.assert_array_equal(a.damping[:j0], b.damping[:j0])
    assert a.running_damping_per_length[2] != b.running_damping_per_length[2]


def test_options_are_checked(release):
    st, truth = release
    y = truth.positions[:50]
    with pytest.raises(ValueError, match="method"):
        estimate_damping(PDMS_ROD, y, truth.dt, initial=st, method="kalman")
    with pytest.raises(ValueError, match="paper_scaling"):
        estimate_damping(PDMS_ROD, y, truth.dt, initial=st, method="least_squares",
                         paper_scaling=True)  # fmt: skip
    with pytest.raises(ValueError, match="trend"):
        estimate_damping(PDMS_ROD, y, truth.dt, initial=st, method="predictive", trend="x")
    with pytest.raises(ValueError, match="causal"):
        estimate_damping(PDMS_ROD, y, truth.dt, initial=st, method="predictive", causal=True)
    with pytest.raises(ValueError, match="every"):
        estimate_damping(PDMS_ROD, y, truth.dt, initial=st, every=10)
    with pytest.raises(ValueError, match="every"):
        estimate_damping(PDMS_ROD, y, truth.dt, initial=st, causal=True, every=1)
    # The paper's scaling alone still selects the paper's per-step filter.
    est = estimate_damping(PDMS_ROD, y, truth.dt, initial=st, paper_scaling=True)
    assert est.method == "predictive"


def test_tip_only_measurement(release):
    """E.5 "if only the tip is measured": one node's noisy track still fixes c and gamma."""
    st, truth = release
    tip = truth.positions.shape[1] - 1
    rng = np.random.default_rng(4)
    y = truth.positions[:, [tip]] + 1e-5 * rng.normal(size=(truth.positions.shape[0], 1, 3))
    est = estimate_damping(_with_modulus(1.05), y, truth.dt, nodes=[tip], initial=st,
                           gravity=GRAVITY, sample_every=10)  # fmt: skip
    assert est.success, est.message
    assert abs(est.damping_per_length / C_TRUE - 1) < NOISY_RTOL
    assert abs(est.stiffness_scale * 1.05 - 1) < STIFFNESS_RTOL
    assert est.estimate.shape == (1, 3) and est.positions.shape[0] == est.t.shape[0]
