"""Heavy loads: multiple shooting against the exact elastica and against itself.

Truth: the large-deflection cantilever in closed form (Bisshopp & Drucker 1945, with
incomplete elliptic integrals), and path independence: a load applied at once must give the
same equilibrium as the same load reached gradually.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ellipe, ellipeinc, ellipk, ellipkinc

import softrod
from softrod.bench import example_robot_path

#: Tip error allowed against the closed form on a 128-step grid [fraction of L]: RK4 there is
#: accurate to ~3e-9 L at P L^2 / EI = 200 (measured), so 1e-6 L leaves a wide margin.
ELASTICA_TOL = 1e-6
#: Multiple shooting restarts each interval from an exactly orthonormal frame, so different
#: interval counts or paths differ by the RK4 error of the frames: ~2.5e-7 m on the default
#: grid of the soft robot below, ~6e-9 m on 128 steps (measured). 1e-7 m on 128 steps.
SHOOTING_AGREEMENT_M = 1e-7

UNIT_ROD = {
    "backbone": {
        "youngs_modulus": 1.0,
        "shear_modulus": 1.0,
        "second_moment": 1.0,
        "polar_moment": 2.0,
        "area": 1.0,
    },
    "segments": [{"length": 1.0}],
}


def elastica_tip(load: float) -> tuple[float, float]:
    """Tip deflection along the load and shortening along the rod, over L, of a cantilever
    with a dead load P perpendicular to it: load = P L^2 / EI."""
    a = np.sqrt(load)

    def alpha_gap(theta: float) -> float:
        k2 = (1 + np.sin(theta)) / 2
        phi1 = np.arcsin(1 / np.sqrt(2 * k2))
        return ellipk(k2) - ellipkinc(phi1, k2) - a

    theta = brentq(alpha_gap, 1e-12, np.pi / 2 - 1e-12)
    k2 = (1 + np.sin(theta)) / 2
    phi1 = np.arcsin(1 / np.sqrt(2 * k2))
    along = 1 - (2 / a) * (ellipe(k2) - ellipeinc(phi1, k2))
    short = 1 - np.sqrt(2 * np.sin(theta)) / a
    return along, short


def test_closed_form_reproduces_bisshopp_drucker() -> None:
    # The oracle itself against the classical table (PL^2/EI = 10: (0.8106, 0.5550)).
    along, short = elastica_tip(10.0)
    assert (round(along, 4), round(short, 4)) == (0.8106, 0.5550)


@pytest.mark.parametrize("load", [50.0, 200.0])
def test_heavy_cantilever_matches_elastica(load: float) -> None:
    sol = softrod.solve_static(UNIT_ROD, tip_force=[load, 0, 0], steps=128)
    assert sol.success, sol.message
    assert "multiple shooting" in sol.message
    along, short = elastica_tip(load)
    assert sol.tip_position[0] == pytest.approx(along, abs=ELASTICA_TOL)
    assert 1 - sol.tip_position[2] == pytest.approx(short, abs=ELASTICA_TOL)


def test_soft_robot_under_own_weight_is_path_independent() -> None:
    # A soft 0.5 m robot clamped horizontally: w L^3 / EI ~ 180.
    spec = softrod.load_robot(example_robot_path("softmanisim_5seg")).model_dump()
    spec["base"] = {"position": [0, 0, 0.5], "quaternion": [np.sqrt(0.5), 0, np.sqrt(0.5), 0]}
    model = softrod.compile_model(spec, steps=128)
    direct = softrod.solve_static(model, gravity=[0, 0, -9.81])
    assert direct.success, direct.message
    prev = None
    for g in np.linspace(0.5, 9.81, 12):
        prev = softrod.solve_static(model, gravity=[0, 0, -g], guess=prev)
        assert prev.success, prev.message
    assert prev is not None
    np.testing.assert_allclose(prev.positions, direct.positions, atol=SHOOTING_AGREEMENT_M)
    # It hangs: the tip is far below the clamp and close to it horizontally.
    assert direct.tip_position[2] < 0.1 and direct.tip_position[0] < 0.1


@pytest.mark.parametrize("intervals", [2, 5])
def test_multiple_shooting_agrees_with_single(intervals: int) -> None:
    model = softrod.compile_model(example_robot_path("tdcr3"))
    kw = dict(tip_force=[0.1, 0.2, -0.1], gravity=[0, 0, -9.81])
    tau = [2, 0, 0, 0, 1, 0, 0, 0, 0.5]
    one = softrod.solve_static(model, tau, **kw)
    many = softrod.solve_static(model, tau, intervals=intervals, **kw)
    assert many.success and "multiple shooting" in many.message
    np.testing.assert_allclose(many.positions, one.positions, atol=SHOOTING_AGREEMENT_M)
    # Length control through multiple shooting returns the same tensions.
    k = model.tendon_stiffness
    L = one.tendon_length - one.tendon_tension / k
    by_len = softrod.solve_static(model, lengths=L, intervals=intervals, **kw)
    assert by_len.success, by_len.message
    np.testing.assert_allclose(by_len.tendon_tension, one.tendon_tension, atol=1e-5)


def test_bad_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="intervals must be a positive integer"):
        softrod.solve_static(UNIT_ROD, tip_force=[1, 0, 0], intervals=0)
    with pytest.raises(ValueError, match="unknown option 'foo'"):
        softrod.solve_static(UNIT_ROD, foo=1)
    with pytest.raises(ValueError, match="takes no options"):
        softrod.solve_static(UNIT_ROD, method="pcc", intervals=2)
