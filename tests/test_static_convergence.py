"""The classes of the property probe's failures over the plausible domain (issue 19 items 1-2;
docs/validation.md "Convergence rate", docs/stability.md "Dead moments: flutter"), one cheap
case each."""

from __future__ import annotations

import numpy as np

import softrod
from softrod.rods import compile_model
from softrod.rods._stability import flutter_growth

L, R, E = 0.2, 0.002, 1e6
EI = E * np.pi * R**4 / 4


def _rod(tendon_offset: float | None = None, youngs: float = E) -> dict:
    tendons = [] if tendon_offset is None else [{"offset": tendon_offset, "angle_deg": 0.0}]
    backbone = {"youngs_modulus": youngs, "poisson_ratio": 0.3, "density": 1000.0, "radius": R}
    return {
        "name": "rod",
        "model": "kirchhoff",
        "backbone": backbone,
        "segments": [{"length": L, "disks": 5, "disk_radius": 0.006, "tendons": tendons}],
    }


def test_dead_axial_torque_flutters_and_is_not_called_stable():
    """Ziegler: a clamped-free shaft under a world-fixed axial torque flutters at any torque.
    The energy's second variation (its natural tip condition is a conservative torque's)
    calls it stable up to a critical torque; the linearised dynamics with the dead tip
    condition grows at ~0.16 of its frequency at T L / EI = 1 (an LGVI run from the static
    answer with 3 % damping leaves it by 0.2 L within 10 periods: dev/dead_moment_dynamics.py)."""
    model = compile_model(softrod.load_robot(_rod()))
    torque = np.array([0.02, 0.0, 1.0]) * EI / L
    res = softrod.solve_static(model, tip_moment=torque)
    assert res.success and res.stable is None
    assert "flutters" in res.message
    assert 0.1 < flutter_growth(model, res) < 0.25
    # A smaller torque flutters more slowly (growth ~ linear in the torque).
    slow = softrod.solve_static(model, tip_moment=0.1 * torque, check_stability=False)
    assert flutter_growth(model, slow) < 0.5 * flutter_growth(model, res)
    # Without a dead moment nothing changes: a tip force is conservative.
    bent = softrod.solve_static(model, tip_force=[0.5 * EI / L**2, 0.0, 0.0])
    assert bent.success and bent.stable is True and "flutter" not in bent.message


def test_tendon_folding_back_is_refused_not_returned():
    """A tendon at offset d bends a segment with curvature tau d / EI; its path density
    |v + u x r| = 1 - u d vanishes at tau d^2 / EI = 1 and beyond it the section balance has
    no solution. The section Newton then used to stop unconverged and the solve returned a
    shape bent away from the tendon with success=True; now it is refused with a message."""
    d = 0.005
    spec = softrod.load_robot(_rod(d, youngs=1e9))
    ei = 1e9 * np.pi * R**4 / 4
    ok = softrod.solve_static(spec, tensions=[0.9 * ei / d**2])
    assert ok.success
    np.testing.assert_allclose(ok.curvature[:, 1] * d, 0.9, rtol=1e-9)
    beyond = softrod.solve_static(spec, tensions=[1.2 * ei / d**2])
    assert not beyond.success
    assert "folds back" in beyond.message


def _buckled_column() -> tuple[softrod.RodModel, np.ndarray]:
    """The rod under a dead axial tip load of 1.5 Euler loads (clamped-free, pi^2 EI / (4 L^2)):
    the straight equilibrium is unstable (2 negative directions) and a buckled one stable."""
    model = compile_model(softrod.load_robot(_rod()))
    return model, np.array([0.0, 0.0, -1.5 * np.pi**2 * EI / (4 * L**2)])


def test_unstable_modes_from_the_band_match_the_dense_form():
    """The stable-branch search takes its modes from the block-tridiagonal band
    (`scipy.linalg.eig_banded`, the lowest eigenpairs only): the same eigenvalues as the dense
    symmetric form, eigenvectors spanning the same (double) eigenspace."""
    from softrod.rods._stability import _condensed_matrix, stability_maps, unstable_modes

    model, force = _buckled_column()
    straight = softrod.solve_static(model, tip_force=force, check_stability=False)
    maps = stability_maps(model, straight)
    w, modes = unstable_modes(maps)
    dense_w, dense_v = np.linalg.eigh(_condensed_matrix(maps))
    assert w.size == 2 and np.all(w < 0.0)
    np.testing.assert_allclose(w, dense_w[:2], rtol=1e-9)
    V = modes[:, 1:].reshape(2, -1).T
    # Projections onto the dense eigenspace keep the modes' norm (same subspace).
    np.testing.assert_allclose(np.linalg.norm(dense_v[:, :2].T @ V, axis=0), 1.0, rtol=1e-9)


def test_stable_branch_search_stops_at_the_time_budget(monkeypatch):
    """The search asks the solve's budget before its eigenvalue problems and ramp steps: out of
    time it returns the unstable equilibrium as a failure that says so (never hangs)."""
    from softrod.rods import _stability

    model, force = _buckled_column()
    found = softrod.solve_static(model, tip_force=force)
    assert found.success and found.stable is True  # the buckled branch, given the time
    monkeypatch.setattr(_stability, "budget_expired", lambda: True)
    out = softrod.solve_static(model, tip_force=force)
    assert not out.success and out.stable is False
    assert out.status == _stability.STATUS_UNSTABLE
    assert "unstable" in out.message and "time budget exhausted" in out.message


def test_a_probe_dead_moment_is_refused_as_unstable_within_the_budget():
    """Seed 4 case 90 of dev/static_property_probe.py (in the restated plausible domain: load
    number <= 10, fold number 0.02): a dead tip moment with no stable equilibrium. The answer
    the convergence rate counts apart (`refused_dead_moment`): success=False, stable=False,
    status 7, a message that says so, well inside the solve's time budget."""
    import time

    from softrod.rods import DEFAULT_TIME_LIMIT
    from softrod.rods._stability import STATUS_UNSTABLE

    seg = {"length": 0.0003575530211971007, "disk_radius": 1.0004799688139065e-05}
    tendons = [
        {"offset": 4.676306305990549e-06, "angle_deg": 162.2820347896216},
        {"offset": 8.957749740820658e-06, "angle_deg": 282.1210726817537},
        {"offset": 7.1353438737964485e-06, "angle_deg": 261.80352943138473},
    ]
    robot = {
        "name": "p",
        "model": "cosserat",
        "backbone": {
            "youngs_modulus": 389799244.3660735,
            "poisson_ratio": 0.3,
            "density": 263.5808346771897,
            "radius": 2.000959937627813e-06,
        },
        "segments": [
            {**seg, "disks": 1, "tendons": []},
            {**seg, "disks": 3, "tendons": tendons},
            {**seg, "disks": 5, "tendons": []},
        ],
    }
    loads = {
        "tensions": [0.0, 0.0, 1.1243838946854477e-09],
        "tip_force": [-6.520923346109838e-13, -1.427426255580684e-11, -3.0040269239762185e-11],
        "tip_moment": [-6.223159138776799e-12, -9.360377723605922e-12, 1.8555282690856902e-12],
        "gravity": [0, 0, -9.81],
    }
    spec = softrod.load_robot(robot)
    t0 = time.perf_counter()
    out = softrod.solve_static(spec, **loads)
    assert time.perf_counter() - t0 < DEFAULT_TIME_LIMIT
    assert not out.success and out.stable is False and out.status == STATUS_UNSTABLE
    assert "unstable" in out.message and "no stable equilibrium" in out.message
