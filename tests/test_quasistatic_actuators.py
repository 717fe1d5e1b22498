"""QuasiStaticSim with every actuator (issue 20): pressures, moment-actuator inputs, a field
and its gradient, step by step against `solve_static`, by shooting and by the observer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reference.robots import every_actuator_dict
from softrod.description import load_robot
from softrod.rods import ObserverGains, solve_static
from softrod.sim import QuasiStaticSim

#: A step of the simulation vs a cold `solve_static` of the same inputs [m]: the same
#: equilibrium (the brief's 1e-9 m).
STEP_TOL = 1e-9
#: Observer updates allowed per step: each is one Gauss-Newton step (~5 converge, measured).
UPDATES = 10
#: Solver tolerance: the gradient's fixed point stops at 1e-12 L between solves, which the
#: default rtol (1e-10) does not always resolve.
RTOL = 1e-12

E = 3.0e6
RADIUS = 0.005
EI = E * math.pi * RADIUS**4 / 4


@pytest.fixture(scope="module")
def robot():
    """Three tendons in segment 0; a chamber, a bending and a torsion actuator and a tip
    magnet in segment 1 (as tests/test_actuators_observer_pcc.py)."""
    return load_robot(every_actuator_dict(youngs_modulus=E, radius=RADIUS))


N_STEPS = 4
#: Constant inputs of every sequence.
BASE = {"tensions": [0.5, 0.0, 0.0], "gravity": [0.0, 0.0, -9.81], "moments": [0.3, 0.2]}
#: A pressure step sequence [Pa] and a field turning in the x-z plane (20 mT) [T].
PRESSURES = np.array([[0.0], [1e4], [2e4], [3e4]])
FIELDS = 0.02 * np.array([[math.sin(a), 0.0, math.cos(a)] for a in np.linspace(0, 1.2, N_STEPS)])
#: A constant gradient [T/m] (symmetric, traceless: a source-free field).
GRADIENT = np.array([[0.0, 0.0, 0.3], [0.0, 0.0, 0.0], [0.3, 0.0, 0.0]])

SEQUENCES = {
    "pressures": {"pressures": PRESSURES, "field": [0.0, 0.0, 0.01]},
    "field": {"pressures": [1e4], "field": FIELDS},
    "field+gradient": {"pressures": [1e4], "field": FIELDS, "field_gradient": GRADIENT},
}


@pytest.mark.parametrize("method", ["shooting", "observer"])
@pytest.mark.parametrize("name", list(SEQUENCES))
def test_sequences_match_solve_static_at_every_step(robot, method, name):
    """Every step is the equilibrium of that instant's inputs: the run's tips and shapes equal
    a cold `solve_static` of the same inputs; a constant (3, 3) gradient is one value, not a
    time axis of three steps."""
    seq = {**BASE, **SEQUENCES[name]}
    gains = ObserverGains(max_updates=UPDATES, rtol=RTOL)
    sim = QuasiStaticSim(robot, method=method, gains=gains, rtol=RTOL)
    hist = sim.run(seq)
    assert hist.t.shape == (N_STEPS,) and hist.converged.all(), hist.message
    for k in range(N_STEPS):
        kw = {
            key: (np.asarray(v)[k] if np.ndim(v) == 2 and key != "field_gradient" else v)
            for key, v in seq.items()
        }
        exact = solve_static(robot, rtol=RTOL, **kw)
        assert exact.success, exact.message
        assert np.linalg.norm(hist.tip_position[k] - exact.tip_position) < STEP_TOL
        assert hist.positions is not None
        assert np.abs(hist.positions[k] - exact.positions).max() < STEP_TOL


def test_input_keys_and_constant_matrices(robot):
    """The new keys are named in the unknown-key error and checked like `solve_static`'s; a
    constant (3, 3) base rotation is one value (before, its 3 rows counted as 3 steps:
    "input 'pressures' has 2 steps, expected 3")."""
    sim = QuasiStaticSim(robot)
    with pytest.raises(ValueError, match="unknown input 'pressure'.*'pressures'.*'field_gradient'"):
        sim.step(pressure=[1.0])
    with pytest.raises(ValueError, match=r"pressures must have 1 values?, got 2"):
        sim.step(pressures=[1.0, 2.0])
    hist = QuasiStaticSim(robot, record_shape=False).run(
        {"pressures": PRESSURES[:2], "base_rotation": np.eye(3)}
    )
    assert hist.t.shape == (2,) and hist.converged.all()
