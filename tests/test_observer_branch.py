"""The observer and `QuasiStaticSim` never report a branch jump as converged (issue 19 item 0):
a step whose tip moves more than `solve_static`'s continuation step rule allows (0.2 L) is
flagged with a message; the sim re-solves it by branch-safe shooting and restarts the observer
there."""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from softrod.bench import example_robot_path
from softrod.rods import ObserverGains, compile_model
from softrod.sim import QuasiStaticSim
from test_static_branch import BRANCH_TOL, REFERENCE_TIPS, _probe_cases


@pytest.fixture(scope="module")
def case60():
    spec, loads = _probe_cases(1, 61)[60]
    lam = np.arange(1, 11)[:, None] / 10.0
    return spec, loads, {key: lam * np.asarray(v)[None, :] for key, v in loads.items()}


def test_ten_step_observer_run_does_not_converge_on_another_branch(case60):
    """Probe case 60 ramped in 10 steps with up to 5 observer updates per step: before the step
    rule, every step but one reported converged and the run ended 194 mm from the gradually
    reached equilibrium. Now the jumps are re-solved by shooting and said in the message."""
    spec, _, inputs = case60
    sim = QuasiStaticSim(spec, "observer", gains=ObserverGains(max_updates=5), record_shape=False)
    hist = sim.run(inputs)
    assert "branch jump" in hist.message and "re-solved by shooting" in hist.message
    np.testing.assert_allclose(hist.tip_position[-1], REFERENCE_TIPS[60], atol=BRANCH_TOL)
    assert hist.converged[-1]


def test_a_tiny_step_bound_flags_every_move(case60):
    spec, _, inputs = case60
    gains = ObserverGains(max_updates=5, max_tip_move=1e-9)
    sim = QuasiStaticSim(spec, "observer", gains=gains, record_shape=False)
    sim.step(**{key: value[0] for key, value in inputs.items()})
    assert sim.message == ""
    sim.step(**{key: value[1] for key, value in inputs.items()})
    assert "branch jump" in sim.message


def test_a_moving_base_is_not_a_jump():
    """The rule measures the tip in the base frame: a base moved 0.5 L per step is no jump."""
    model = compile_model(softrod.load_robot(example_robot_path("softmanisim")))
    sim = QuasiStaticSim(model, "observer", gains=ObserverGains(max_updates=3))
    L = model.total_length
    for k in range(4):
        sim.step(tensions=[0.5, 0.0, 0.0, 0.0], base_position=[0.5 * L * k, 0.0, 0.0])
        assert sim.message == ""


def test_solve_static_observer_flags_a_jump_with_status_5(case60):
    spec, loads, _ = case60
    model = compile_model(spec)
    low = softrod.solve_static(model, **{k: 0.1 * np.asarray(v) for k, v in loads.items()})
    assert low.success
    gains = ObserverGains(max_tip_move=1e-6)
    from softrod.rods import ObserverState

    state = ObserverState.from_result(model, low, gains)
    assert state.x_scaled.shape == (3,)
    sol = softrod.solve_static(model, method="observer", guess=low, **loads)
    # The default rule: the whole load in one update moves the tip far.
    assert sol.status == 5 and not sol.success
    assert "jumps" in sol.message and "step rule" in sol.message


def test_max_tip_move_is_validated():
    with pytest.raises(ValueError, match="max_tip_move"):
        ObserverGains(max_tip_move=0.0)
