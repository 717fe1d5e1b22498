"""The tip error estimate of methods "observer" and "pcc" (issue 19, item 0; shooting's is
tests/test_static_accuracy.py). Observer: the update's distance from the grid's equilibrium
plus the grid's discretisation error (`_observer._observer_tip_error`). PCC: 0.0, closed-form
arcs, and the model error against the rod on request (`model_error=True`).
docs/stability.md, "Accuracy".
"""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from reference.robots import tdcr3_dict
from softrod.description import find_robot
from softrod.rods import compile_model

#: The observer's estimate against the true error (a 2048-step shooting solve). It sums two
#: parts, so it bounds the error: measured 0.97-1.07x where one part dominates, 2.6x on an
#: update whose convergence and grid errors are alike and partly cancel; 4x allows that and
#: still tells 1e-8 from 1e-6.
OBSERVER_FACTOR = 4.0
FINE_STEPS = 2048
#: Updates from a cold start checked: from a residual ~1 down to converged (~1e-16).
UPDATES = 5
#: PCC's arcs are closed form: a grid 4x finer moves its tip by round-off only (~1e-16 m).
PCC_ROUND_OFF = 1e-14

TDCR_LOADS = dict(tensions=[1.0, 0, 0, 0, 0, 0, 0, 0, 0.5], tip_force=[0.3, 0, 0])
SMS_LOADS = dict(
    tensions=[1.5, 1.0, 0, 0], tip_force=[0.8, -1.2, 0.9], distributed_force=[1.0, 1.0, 1.0]
)


@pytest.fixture(scope="module")
def tdcr3():
    return compile_model(softrod.load_robot(tdcr3_dict()))


@pytest.fixture(scope="module")
def sms():
    return compile_model(find_robot("softmanisim"))


@pytest.fixture(scope="module")
def sms_stiff():
    """SoftManiSim with elastic tendons (2000 N/m), for length control."""
    d = softrod.load_robot(find_robot("softmanisim")).to_dict()
    for seg in d["segments"]:
        for t in seg.get("tendons", []):
            t["stiffness"] = 2000.0
    return compile_model(softrod.load_robot(d))


@pytest.mark.parametrize(
    "robot, loads",
    [
        ("tdcr3", TDCR_LOADS),
        ("sms", SMS_LOADS),
        # Length control: the tensions are unknowns of the update and of the estimate.
        ("sms_stiff", dict(lengths=[0.0695, 0.07, 0.07, 0.07], tip_force=[0.2, 0.0, 0.0])),
    ],
)
def test_observer_tip_error_tracks_the_true_error(robot, loads, request):
    model = request.getfixturevalue(robot)
    fine = softrod.solve_static(model, steps=FINE_STEPS, error_estimate=False, **loads)
    assert fine.success, fine.message
    bound = 1e-6 * model.total_length
    sol = None
    seen_unconverged = False
    for _ in range(UPDATES):
        sol = softrod.solve_static(model, method="observer", guess=sol, **loads)
        assert sol.tip_error is not None, sol.message
        true = float(np.linalg.norm(sol.tip_position - fine.tip_position))
        ratio = sol.tip_error / true
        assert 1.0 / OBSERVER_FACTOR <= ratio <= OBSERVER_FACTOR, (sol.status, sol.tip_error, true)
        # Above the default tol (1e-6 L) the message says so.
        assert (sol.tip_error > bound) == ("above tol" in sol.message), sol.message
        seen_unconverged |= sol.status == 4
    assert seen_unconverged
    assert sol is not None and sol.success and sol.tip_error <= bound, sol.message
    assert sol.to_dict()["tip_error"] == sol.tip_error
    # Converged, it is shooting's estimate on the same grid.
    shot = softrod.solve_static(model, **loads)
    assert sol.tip_error == pytest.approx(shot.tip_error, rel=1e-3)


def test_observer_estimate_options(sms):
    sol = softrod.solve_static(sms, method="observer", error_estimate=False, **SMS_LOADS)
    assert sol.tip_error is None
    tight = softrod.solve_static(sms, method="observer", tol=1e-12, **SMS_LOADS)
    assert tight.tip_error > 1e-12 and "above tol 1.00e-12 m" in tight.message
    with pytest.raises(ValueError, match="tol must be a positive tip error"):
        softrod.solve_static(sms, method="observer", tol=-1.0, **SMS_LOADS)
    with pytest.raises(ValueError, match="error_estimate must be True or False"):
        softrod.solve_static(sms, method="observer", error_estimate=1, **SMS_LOADS)
    with pytest.raises(ValueError, match="takes no options"):
        softrod.solve_static(sms, method="observer", intervals=2, **SMS_LOADS)


def test_pcc_tip_error_is_zero_and_its_model_error_is_the_distance_to_shooting(tdcr3):
    tensions = TDCR_LOADS["tensions"]
    sol = softrod.solve_static(tdcr3, tensions, method="pcc")
    assert sol.success and sol.tip_error == 0.0 and sol.model_error is None
    # 0.0 means closed form: a 4x finer grid gives the same tip to round-off.
    finer = softrod.solve_static(tdcr3, tensions, method="pcc", steps=4 * (tdcr3.n_nodes - 1))
    assert np.linalg.norm(finer.tip_position - sol.tip_position) <= PCC_ROUND_OFF
    # The model error is the distance to solve_static's default (shooting) answer.
    for loads in (dict(), dict(tip_force=[0.3, 0.0, 0.0])):
        pcc = softrod.solve_static(tdcr3, tensions, method="pcc", model_error=True, **loads)
        rod = softrod.solve_static(tdcr3, tensions, **loads)
        assert pcc.model_error == np.linalg.norm(pcc.tip_position - rod.tip_position)
        assert pcc.to_dict()["model_error"] == pcc.model_error
        if not loads:
            # Load-free tendon bending is constant curvature: left is shooting's grid error
            # (tdcr3's disks weigh nothing without gravity).
            assert pcc.model_error <= 2.0 * rod.tip_error + PCC_ROUND_OFF
        else:
            assert pcc.model_error > 1e-3 * tdcr3.total_length
    with pytest.raises(ValueError, match="model_error must be True or False"):
        softrod.solve_static(tdcr3, tensions, method="pcc", model_error="yes")
