"""Tendon friction in the MuJoCo chain and the LGVI against the static sequence (issue 15,
item 2)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from softrod.description import find_robot
from softrod.dynamics import (
    DynamicLoads,
    build_lgvi_model,
    friction_settle_sequence,
    piecewise_tendon_model,
    simulate_dynamic,
)
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


@pytest.fixture(scope="module")
def lgvi():
    return build_lgvi_model(find_robot("ftdcr_v4"), elements=9)


def test_lgvi_piecewise_tendons_equal_tension_is_todays_model(lgvi):
    # mu = 0: every piece carries its tendon's tension, the forces of the frictionless model.
    tensions = np.zeros(9)
    tensions[6], tensions[1] = 3.0, 1.0
    pieces = piecewise_tendon_model(lgvi)
    per_piece = np.repeat(tensions, np.diff(lgvi.tendon_vstart) - 1)
    runs = [
        simulate_dynamic(m, 0.005, loads=DynamicLoads(tensions=t), integrator="implicit", dt=1e-3)
        for m, t in ((lgvi, tensions), (pieces, per_piece))
    ]
    np.testing.assert_allclose(runs[1].positions, runs[0].positions, rtol=0.0, atol=1e-12)


@pytest.fixture(scope="module")
def lgvi_cycle(lgvi):
    """The LGVI's settled sequence (method "static") and the static one on the short cycle."""
    tensions = _tensions()
    lg = friction_settle_sequence(lgvi, tensions, mu=0.1)
    static = solve_sequence(compile_model(find_robot("ftdcr_v4")), tensions=tensions, mu=0.1)
    return lg, static


def test_lgvi_friction_loop_matches_static_sequence(lgvi, lgvi_cycle):
    # A coarse model (9 elements: 0.8 mm off the exact tip at 3 N without friction); the loop
    # width, which friction makes, is what is compared (N = 30: dev/friction_models.py).
    res, static = lgvi_cycle
    assert res.success.all()
    lg = res.tip_position
    loop_lg = np.linalg.norm(lg[0] - lg[2])
    loop_static = np.linalg.norm(static.tip_position[0] - static.tip_position[2])
    assert loop_static > 1e-3
    assert abs(loop_lg - loop_static) < 5e-4
    # The loop (1.621 vs 1.630 mm measured) is far inside the 0.5 mm; the path error
    # is the 9-element discretisation (0.80 mm at 3 N, about as much without friction) ...
    assert abs(loop_lg - loop_static) < 1e-4
    assert np.max(np.linalg.norm(lg - static.tip_position, axis=1)) < 1e-3
    # ... and back at zero command the tendon is slack: the unloaded rest shape, exactly.
    np.testing.assert_allclose(lg[-1], lgvi.rest_positions[-1], rtol=0.0, atol=1e-12)


def test_lgvi_static_settle_is_the_dynamics_rest_state(lgvi, lgvi_cycle):
    # The "static" equilibrium is a fixed point of the LGVI steps themselves: started there at
    # rest with the committed piece tensions, neither integrator moves it.
    res, _ = lgvi_cycle
    row = 1  # 3 N, the largest bend
    short = friction_settle_sequence(lgvi, _tensions()[: row + 1], mu=0.1)
    np.testing.assert_array_equal(short.tip_position, res.tip_position[: row + 1])
    loads = DynamicLoads(tensions=short.piece_tension[row])
    for integrator in ("implicit", "explicit"):
        run = simulate_dynamic(
            piecewise_tendon_model(lgvi), 0.002, loads=loads, initial=short.state,
            integrator=integrator, dt=1e-4 if integrator == "implicit" else None,
        )  # fmt: skip
        assert run.success
        drift = np.max(np.linalg.norm(run.positions - short.state.positions, axis=2))
        assert drift < 1e-9, (integrator, drift)


def test_lgvi_dynamic_settle_runs_from_rest(lgvi):
    # method="dynamic" (the damped time stepping) still runs; 0.02 s does not settle a row.
    res = friction_settle_sequence(
        lgvi, _tensions()[:1], mu=0.1, method="dynamic", settle_time=0.02, chunk=0.01
    )
    assert res.success.all() and res.final is not None
    assert res.state is res.final.final_state
    assert np.all(np.isfinite(res.tip_position)) and res.tip_speed[0] > 0.0
    with pytest.raises(ValueError, match="method"):
        friction_settle_sequence(lgvi, _tensions()[:1], method="settle")
