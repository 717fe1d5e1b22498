"""The tip error estimate on every static result (issue 19, item 0): a Richardson estimate from
one integration on a grid of twice the step (`_shooting._coarse_tip_error`), and refinement
of the grid where it exceeds `tol` (default 1e-6 of the length). docs/stability.md, "Accuracy".
"""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from reference.robots import tdcr3_dict
from softrod.description import find_robot
from softrod.rods import compile_model
from softrod.rods._shooting import _coarse_model, grid_model

#: The estimate against the true error (a 2048-step solve): Richardson on RK4 is asymptotically
#: exact; measured within 20 % on these cases. A factor 2 either way still tells 1e-8 from 1e-6.
ESTIMATE_FACTOR = 2.0
FINE_STEPS = 2048

TDCR_LOADS = dict(
    tensions=[1.5, 0, 0, 0, 0.5, 0, 0, 0, 0.8], gravity=[0, 0, -9.81], tip_force=[0.3, 0, 0]
)
SMS_LOADS = dict(
    tensions=[1.5, 1.0, 0, 0], tip_force=[0.8, -1.2, 0.9], distributed_force=[1.0, 1.0, 1.0]
)
#: Clamped-free Kirchhoff rod, 1 m, EI = 0.98 N m^2 (tests/test_stability.py's column).
ROD = {
    "name": "column",
    "model": "kirchhoff",
    "backbone": {"youngs_modulus": 2e9, "shear_modulus": 2e9 / 2.6, "density": 1000.0,
                 "radius": 0.005},
    "segments": [{"length": 1.0}],
}  # fmt: skip


@pytest.fixture(scope="module")
def tdcr3():
    return compile_model(softrod.load_robot(tdcr3_dict()))


@pytest.fixture(scope="module")
def sms():
    return compile_model(find_robot("softmanisim"))


def _true_error(model, sol, **loads) -> float:
    fine = softrod.solve_static(model, steps=FINE_STEPS, error_estimate=False, **loads)
    return float(np.linalg.norm(sol.tip_position - fine.tip_position))


@pytest.mark.parametrize(
    "robot, loads",
    [
        ("tdcr3", TDCR_LOADS),
        ("tdcr3", dict(tensions=[0.0] * 9, tip_force=[0.0, 0.5, 0.0])),
        ("sms", SMS_LOADS),
        ("sms", dict(tensions=[0, 0, 2.0, 0], point_loads=[(0.031, [0.4, 0.0, -0.3])])),
        ("sms", dict(lengths=[0.0695, 0.07, 0.07, 0.07])),
    ],
)
def test_every_result_carries_a_tip_error_estimate(robot, loads, request):
    model = request.getfixturevalue(robot)
    if "lengths" in loads and np.isnan(model.tendon_stiffness).any():
        model = compile_model(_with_stiff_tendons(model.spec))
    sol = softrod.solve_static(model, **loads)
    assert sol.success and sol.tip_error is not None, sol.message
    assert sol.tip_error <= 1e-6 * model.total_length
    true = _true_error(model, sol, **loads)
    assert true / ESTIMATE_FACTOR <= sol.tip_error <= ESTIMATE_FACTOR * true, (sol.tip_error, true)
    assert sol.to_dict()["tip_error"] == sol.tip_error


def _with_stiff_tendons(spec):
    d = spec.to_dict()
    for seg in d["segments"]:
        for t in seg.get("tendons", []):
            t["stiffness"] = 2000.0
    return softrod.load_robot(d)


def test_default_refines_the_grid_to_the_default_tol():
    # A tip force of P L^2 / EI = 40 bends the column through a loop-like shape: the default
    # grid misses 1e-6 L, so the default solve refines until the estimate meets it.
    model = compile_model(softrod.load_robot(ROD))
    EI, L = float(model.K_bt[0, 0]), model.total_length
    loads = dict(tip_force=[40.0 * EI / L**2, 0.0, 0.0])
    plain = softrod.solve_static(model, error_estimate=False, **loads)
    assert _true_error(model, plain, **loads) > 1e-6 * L
    sol = softrod.solve_static(model, **loads)
    assert sol.success and sol.tip_error <= 1e-6 * L, sol.message
    assert sol.s.size > plain.s.size
    assert _true_error(model, sol, **loads) <= 2e-6 * L
    # The stability check runs on the refined grid too.
    assert sol.stable is True


def test_error_estimate_false_skips_it(sms):
    sol = softrod.solve_static(sms, error_estimate=False, **SMS_LOADS)
    assert sol.tip_error is None
    with pytest.raises(ValueError, match="error_estimate"):
        softrod.solve_static(sms, error_estimate="yes", **SMS_LOADS)


def test_coarse_grid_halves_each_run_and_keeps_the_fixed_nodes(tdcr3, sms):
    # tdcr3: two steps between disks, so every other node is a disk: exact halving, ratio 16.
    coarse, idx, ratio = _coarse_model(tdcr3, ())
    assert ratio == pytest.approx(16.0)
    assert np.all(np.isin(np.flatnonzero(tdcr3.node_point_mass), idx))
    assert coarse.n_nodes == idx.size and coarse.step_seg.size == idx.size - 1
    # softmanisim: five steps between disks (2 + 2 + 1 on the coarse grid); a pinned node stays.
    coarse, idx, ratio = _coarse_model(sms, (3,))
    assert 3 in idx and np.all(np.isin(np.flatnonzero(sms.node_point_mass), idx))
    assert 8.0 < ratio < 16.0
    np.testing.assert_array_equal(coarse.node_s, sms.node_s[idx])


def test_refinement_keeps_the_chamber_tendons():
    # A chamber runs as an internal tendon of a kernel model that its spec does not hold: the
    # finer grids of the refinement must carry it too (they lost it: a ValueError on the guess).
    robot = softrod.load_robot(
        {
            "name": "rod",
            "model": "cosserat",
            "backbone": {"youngs_modulus": 1e6, "poisson_ratio": 0.5, "radius": 0.005,
                         "density": 1000.0},
            "segments": [{"length": 0.1, "disks": 2, "disk_radius": 0.01,
                          "chambers": [{"area": 1e-4, "offset": 0.004}]}],
        }
    )  # fmt: skip
    loads = dict(pressures=[5e3], gravity=[-9.81, 0.0, 0.0])
    coarse = softrod.solve_static(robot, **loads)
    assert coarse.success and coarse.tip_error is not None, coarse.message
    sol = softrod.solve_static(robot, tol=coarse.tip_error / 20.0, **loads)
    assert sol.success and sol.tip_error <= coarse.tip_error / 20.0, sol.message
    assert sol.s.size > coarse.s.size and sol.tendon_tension.shape == (0,)


def test_default_refines_single_shooting_and_the_batch_refines_alike(sms):
    # A single-shooting answer whose estimate misses 1e-6 L is refined by default (issue 19:
    # every answer meets tol), and the batched solver refines the same item the same way, so
    # its items still equal a loop of solve_static (1e-9 m); the unrefined item stays put.
    loads = dict(tensions=[20.0, 0.0, 0.0, 0.0])
    L = sms.total_length
    plain = softrod.solve_static(sms, error_estimate=False, **loads)
    sol = softrod.solve_static(sms, **loads)
    assert sol.success and sol.tip_error <= 1e-6 * L and sol.s.size > sms.n_nodes, sol.message
    assert _true_error(sms, sol, **loads) <= 2e-6 * L
    assert np.linalg.norm(sol.tip_position - plain.tip_position) > 1e-6 * L
    tau = np.array([[20.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0]])
    batch = softrod.rods.solve_static_batch(sms, tensions=tau, shapes=True, jacobian=True)
    for i in range(2):
        ref = softrod.solve_static(sms, tau[i])
        assert batch.success[i] and batch.stable[i], batch[i].message
        np.testing.assert_allclose(batch.tip_position[i], ref.tip_position, rtol=0, atol=1e-9)
        grid = grid_model(sms, ref)
        J = softrod.rods.tip_jacobian(grid, ref)
        np.testing.assert_allclose(batch.jacobian[i], J, rtol=0, atol=1e-6 * np.abs(J).max())
        # The shape comes at the batch's nodes (the finer grid holds them).
        k = np.searchsorted(ref.s, sms.node_s)
        np.testing.assert_allclose(batch.positions[i], ref.positions[k], rtol=0, atol=1e-9)
