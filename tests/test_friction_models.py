"""Tendon friction in the MuJoCo chain against the static sequence (issue 15, item 2)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from softrod.description import find_robot
from softrod.mujoco import TendonFriction, build_spec, chain_info, friction_sequence
from softrod.rods import compile_model, solve_sequence

#: A short pull/release of the distal tendon of segment 3 (input 6) of ftdcr_v4 [N].
_CYCLE = np.array([1.5, 3.0, 1.5, 0.0])
_LINKS = 12


def _tensions() -> np.ndarray:
    tensions = np.zeros((_CYCLE.size, 9))
    tensions[:, 6] = _CYCLE
    return tensions


@pytest.fixture(scope="module")
def chain():
    robot = find_robot("ftdcr_v4")
    info = chain_info(robot, links=_LINKS, gravity=(0.0, 0.0, 0.0))
    model = build_spec(robot, links=_LINKS, gravity=(0.0, 0.0, 0.0)).compile()
    return model, info


def test_mujoco_friction_zero_mu_adds_nothing(chain):
    model, info = chain
    runs = []
    for hook in (None, TendonFriction(model, info, mu=0.0)):
        data = mujoco.MjData(model)
        data.ctrl[6] = 2.0
        for _ in range(20):
            if hook is not None:
                hook.apply(model, data)
                assert not data.qfrc_applied.any()
            mujoco.mj_step(model, data)
        runs.append(data.qpos.copy())
    np.testing.assert_array_equal(runs[0], runs[1])


def test_mujoco_friction_loop_matches_static_sequence(chain):
    # The tolerance (0.5 mm) on a short cycle of a coarse chain (N = 12: 0.43 mm of
    # discretisation error at mu = 0 already; N = 30 is dev/friction_models.py).
    model, info = chain
    data = mujoco.MjData(model)
    hook = TendonFriction(model, info, mu=0.1, per_step=False)
    mj = friction_sequence(model, data, info, hook, _tensions(), ramp_time=0.0, qvel_tol=1e-5)
    static = solve_sequence(
        compile_model(find_robot("ftdcr_v4")), tensions=_tensions(), mu=0.1
    ).tip_position
    # The pull/release loop at 1.5 N is a millimetre and more wide in both models ...
    loop_mj = np.linalg.norm(mj[0] - mj[2])
    loop_static = np.linalg.norm(static[0] - static[2])
    assert loop_static > 1e-3
    assert abs(loop_mj - loop_static) < 5e-4
    # ... the chain follows the static path ...
    assert np.max(np.linalg.norm(mj - static, axis=1)) < 5e-4
    # ... and back at zero command the tendon is slack again: the unloaded shape.
    np.testing.assert_allclose(mj[-1], [0.0, 0.0, 0.1865], atol=1e-4)  # settle tolerance
