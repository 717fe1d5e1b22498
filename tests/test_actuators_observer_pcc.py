"""The observer and PCC with actuators (issue 20): pressures (chambers), moment-actuator inputs
and a magnetic field against the exact solver; what a model cannot carry is one clear error."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from reference.robots import every_actuator_dict
from softrod.cli import main
from softrod.description import load_robot
from softrod.rods import check_inputs, compile_model, observer_update, solve_static

#: Observer at its fixed point vs the exact (shooting) solve [m]: the same boundary problem.
OBSERVER_TOL = 1e-9
#: PCC vs the exact solve [m] where constant curvature is exact (uniform moments, no load),
#: at 128 RK4 steps (the shooting's O(h^4) error on the arc; 1.5e-9 m at the default 32).
PCC_TOL = 1e-9
PCC_STEPS = 128
#: Observer updates run: each is one Gauss-Newton step (converged after ~5, measured).
UPDATES = 8

E = 3.0e6
RADIUS = 0.005
EI = E * math.pi * RADIUS**4 / 4


@pytest.fixture(scope="module")
def robot():
    """Three tendons in segment 0; a chamber, a bending and a torsion actuator and a tip
    magnet in segment 1."""
    return load_robot(every_actuator_dict(youngs_modulus=E, radius=RADIUS))


LOADS = {
    "tensions": [1.0, 0.0, 0.0],
    "gravity": (0.0, 0.0, -9.81),
    "pressures": [2e4],
    "moments": [0.5, 0.3],
    "field": [0.02, 0.0, 0.01],
}


def test_observer_takes_pressures_moments_and_field(robot):
    """solve_static(method="observer") and the public `observer_update` (which before ignored
    pressures and moments) converge to the exact solve with every actuator on at once."""
    exact = solve_static(robot, **LOADS)
    assert exact.success
    obs = None
    for _ in range(UPDATES):
        obs = solve_static(robot, method="observer", guess=obs, **LOADS)
    assert obs is not None and obs.success
    assert np.linalg.norm(obs.tip_position - exact.tip_position) < OBSERVER_TOL
    np.testing.assert_allclose(obs.internal_moment, exact.internal_moment, atol=1e-9)
    model = compile_model(robot)
    inp = check_inputs(model, **LOADS)
    state = None
    for _ in range(UPDATES):
        state, Y, _, tau, res, ok = observer_update(model, inp, state)
    assert ok and res < 1e-10
    assert Y.shape == (model.n_nodes, 15 + 3) and tau.shape == (3,)  # the robot's tendons only
    assert np.linalg.norm(Y[-1, :3] - exact.tip_position) < OBSERVER_TOL


def test_observer_with_a_field_gradient(robot):
    """solve_static holds the gradient forces at the last shape, so repeated observer calls
    reach the exact fixed point; the bare `observer_update` refuses the gradient."""
    G = np.array([[0.0, 0.0, 0.5], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    exact = solve_static(robot, field_gradient=G, **LOADS)
    obs = None
    for _ in range(2 * UPDATES):
        obs = solve_static(robot, method="observer", guess=obs, field_gradient=G, **LOADS)
    assert obs is not None and obs.success
    assert np.linalg.norm(obs.tip_position - exact.tip_position) < OBSERVER_TOL
    model = compile_model(robot)
    with pytest.raises(ValueError, match="observer_update cannot take a field_gradient"):
        observer_update(model, check_inputs(model, field_gradient=G, **LOADS), None)
    inp = check_inputs(model, tensions=[0.0, 0.0, 0.0], pressures=[1e3])
    length_control = dataclasses.replace(inp, tensions=None, lengths=np.full(3, 0.1))
    with pytest.raises(ValueError, match="observer_update cannot take pressures with length"):
        observer_update(model, length_control, None)


@pytest.mark.parametrize(
    ("pressures", "moments"),
    [([2e4], [0.5, 0.0]), ([0.0], [0.5, 0.3])],
    ids=["chamber+bending", "bending+torsion"],
)
def test_pcc_carries_chambers_and_moments_exactly(robot, pressures, moments):
    """Uniform moments over a segment (a chamber's p A d, a moment actuator's tau m) are
    constant curvature: PCC equals the exact solve without loads. (A chamber or tendon in a
    twisting segment runs along a helix, which PCC's straight-line moment leaves out.)"""
    inputs = {"tensions": [0.0, 0.0, 0.0], "pressures": pressures, "moments": moments}
    exact = solve_static(robot, steps=PCC_STEPS, **inputs)
    pcc = solve_static(robot, method="pcc", steps=PCC_STEPS, **inputs)
    assert exact.success and pcc.success
    assert np.linalg.norm(pcc.positions - exact.positions, axis=1).max() < PCC_TOL
    # Segment 1's bending is the closed form: the chamber's p A d about x, tau m about y.
    u = [pressures[0] * 5e-5 * 0.006 / EI, moments[0] * 1e-3 / EI]
    np.testing.assert_allclose(pcc.curvature[-1, :2], u, rtol=1e-12)


def test_pcc_refuses_a_field(robot, tmp_path, capsys):
    with pytest.raises(ValueError, match=r"method='pcc' cannot take a magnetic field"):
        solve_static(robot, method="pcc", **LOADS)
    path = tmp_path / "every_actuator.yaml"
    path.write_text(robot.to_yaml())
    assert main(["solve", str(path), "--method", "pcc", "--field", "0.02,0,0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot take a magnetic field" in err[0]
