"""Observer method, quasi-static simulation and Jacobian control (issue 4).

Independent truth: the converged shooting solution (the observer must reach it), central
finite differences (sensitivities and Jacobians), and SoftManiSim's Table 5 (tracking MSE).
"""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from softrod.bench import example_robot_path
from softrod.bench._observer import observer_inputs
from softrod.control import ResolvedRateController, TendonRobotPlant, make_trajectory, track
from softrod.rods import (
    ObserverGains,
    check_inputs,
    observer_update,
    shooting_eval,
    tip_jacobian,
)
from softrod.rods._inputs import _problem
from softrod.rods._observer_kernels import _coarse_keep
from softrod.sim import QuasiStaticSim, with_pose_and_lengths

#: Observer error after the first few steps of a smooth 100 Hz trajectory with tip forces up
#: to 1 N (issue 4 target; the paper's boundary error is 5e-4 m).
OBSERVER_TRACKING_TOL_M = 1e-5
#: A static query must converge within this many observer updates (issue 4 target).
STATIC_QUERY_STEPS = 5
#: Converged means the tip agrees with shooting to near the solver tolerance.
CONVERGED_TIP_TOL_M = 1e-9
#: Central differences with step h have error O(h^2) ~ 1e-8 relative here; 1e-5 relative
#: leaves room for round-off of the difference quotient.
FD_REL_TOL = 1e-5
#: Issue 19 item 4: observer error on fast inputs (tensions 0-3 N at 1 Hz, a rotating 0.5-1 N
#: tip force, 100 Hz) with a few updates per step; one update leaves ~2e-4 m.
FAST_INPUT_TOL_M = 1e-5
#: Updates per step that meet it (measured: 2 leave 4e-7 m, 3 leave 2e-14 m).
FAST_INPUT_UPDATES = 3
#: Issue 4: tracking MSE at most a tenth of SoftManiSim Table 5 (circle: 1.95e-4 m^2).
CIRCLE_MSE_TARGET = 1.95e-5


@pytest.fixture(scope="module")
def sms() -> softrod.RodModel:
    return softrod.compile_model(example_robot_path("softmanisim"))


@pytest.fixture(scope="module")
def tdcr() -> softrod.RodModel:
    return softrod.compile_model(example_robot_path("tdcr3"))


def test_observer_static_query_converges_within_five_steps(sms: softrod.RodModel) -> None:
    # Loads up to the buckling limit (P_cr = pi^2 EI / (4 L^2) = 1.11 N for this robot).
    kw = dict(tensions=[1.5, 0.5, 0, 0], tip_force=[0.3, 1.0, -0.4], distributed_force=[1, 1, 1])
    ref = softrod.solve_static(sms, **kw)
    sol = None
    for _ in range(STATIC_QUERY_STEPS):
        sol = softrod.solve_static(sms, method="observer", guess=sol, **kw)
    assert sol is not None and sol.success, sol.message
    assert np.linalg.norm(sol.tip_position - ref.tip_position) < CONVERGED_TIP_TOL_M


def test_observer_single_update_reports_unconverged_residual(sms: softrod.RodModel) -> None:
    sol = softrod.solve_static(sms, method="observer", tip_force=[0, 1.0, 0])
    assert not sol.success and sol.status == 4
    assert "residual" in sol.message and sol.residual > 0
    assert np.all(np.isfinite(sol.positions))


def test_observer_length_control_converges(tdcr: softrod.RodModel) -> None:
    g = [0, 0, -9.81]
    base = softrod.solve_static(tdcr, tensions=[2, 0, 0, 0, 1, 0, 0, 0, 0.5], gravity=g)
    L = base.tendon_length - base.tendon_tension / tdcr.tendon_stiffness
    sol = None
    for _ in range(STATIC_QUERY_STEPS):
        sol = softrod.solve_static(tdcr, method="observer", guess=sol, lengths=L, gravity=g)
    assert sol is not None and sol.success, sol.message
    np.testing.assert_allclose(sol.tendon_tension, base.tendon_tension, atol=1e-6)
    assert np.linalg.norm(sol.tip_position - base.tip_position) < CONVERGED_TIP_TOL_M


def test_observer_tracks_smooth_trajectory(sms: softrod.RodModel) -> None:
    inputs = observer_inputs(200, seed=1, max_force=1.0, corr_steps=100)
    shoot = QuasiStaticSim(sms, "shooting", record_shape=False).run(inputs)
    obs = QuasiStaticSim(sms, "observer", record_shape=False).run(inputs)
    assert shoot.converged.all()
    err = np.linalg.norm(obs.tip_position - shoot.tip_position, axis=1)
    assert err[5:].max() < OBSERVER_TRACKING_TOL_M
    # The first update starts from the straight robot: a visible error that then vanishes.
    assert err[0] > 10 * OBSERVER_TRACKING_TOL_M


def _fast_inputs(n: int, dt: float = 0.01) -> dict[str, np.ndarray]:
    """Tensions 1.5 (1 + sin(2 pi t + k pi / 2)) [N] and a tip force of 0.75 + 0.25 sin(pi t)
    [N] rotating about z at 1 Hz, 30 deg below the horizontal (dev/observer_fast_input.py)."""
    t = np.arange(n) * dt
    tens = 1.5 * (1.0 + np.sin(2 * np.pi * t[:, None] + 0.5 * np.pi * np.arange(4)))
    el = np.deg2rad(-30.0)
    d = np.column_stack(
        [
            np.cos(el) * np.cos(2 * np.pi * t),
            np.cos(el) * np.sin(2 * np.pi * t),
            np.full(n, np.sin(el)),
        ]
    )
    return dict(tensions=tens, tip_force=(0.75 + 0.25 * np.sin(np.pi * t))[:, None] * d)


def test_observer_extra_updates_keep_up_with_fast_inputs(sms: softrod.RodModel) -> None:
    inputs = _fast_inputs(100)
    shoot = QuasiStaticSim(sms, "shooting", record_shape=False).run(inputs)
    assert shoot.converged.all()
    gains = ObserverGains(max_updates=FAST_INPUT_UPDATES)
    obs = QuasiStaticSim(sms, "observer", gains=gains, record_shape=False).run(inputs)
    err = np.linalg.norm(obs.tip_position - shoot.tip_position, axis=1)
    assert err[5:].max() < FAST_INPUT_TOL_M
    # The paper's single update (the default) lags this input by more than the bound.
    one = QuasiStaticSim(sms, "observer", record_shape=False).run(inputs)
    assert np.linalg.norm(one.tip_position - shoot.tip_position, axis=1)[5:].max() > (
        FAST_INPUT_TOL_M
    )


def test_observer_broyden_updates_only_where_needed_keep_up(sms: softrod.RodModel) -> None:
    """Up to three updates, taken only where the residual after one exceeds 1e-4, with
    Broyden-corrected Jacobians (plain integrations, no new sensitivities): within the
    1e-5 m bound on the fast inputs (dev/observer_fast_input.py measures its time)."""
    inputs = _fast_inputs(100)
    shoot = QuasiStaticSim(sms, "shooting", record_shape=False).run(inputs)
    # The same on the coarse predictor grid (every 5th node: the robot's disks), the shape
    # and the reported residual still from the full grid.
    for stride in (1, 5):
        gains = ObserverGains(max_updates=3, rtol=1e-4, broyden=True, predictor_stride=stride)
        obs = QuasiStaticSim(sms, "observer", gains=gains, record_shape=False).run(inputs)
        err = np.linalg.norm(obs.tip_position - shoot.tip_position, axis=1)
        assert err[5:].max() < FAST_INPUT_TOL_M, stride
        assert np.median(obs.residual[5:]) <= 1e-4, stride


#: The default observer's tip after 12 fast-input steps [m] and its residual, from the code
#: before the predictor grid (main at 2026-11-27 04:50 UTC): the paper's update is unchanged.
DEFAULT_OBSERVER_TIP_12 = [0.035156032569134556, 0.033785997862109916, 0.04149888761563211]
DEFAULT_OBSERVER_RESIDUAL_12 = 1.2864216433178985e-05


def test_observer_default_single_update_answers_unchanged(sms: softrod.RodModel) -> None:
    hist = QuasiStaticSim(sms, "observer", record_shape=False).run(_fast_inputs(12))
    np.testing.assert_allclose(hist.tip_position[-1], DEFAULT_OBSERVER_TIP_12, rtol=0, atol=1e-15)
    assert hist.residual[-1] == pytest.approx(DEFAULT_OBSERVER_RESIDUAL_12, rel=1e-9)


def test_observer_coarse_predictor_keeps_load_nodes_and_reaches_full_grid(
    tdcr: softrod.RodModel,
) -> None:
    """The predictor grid keeps every node where a load changes (segment ends, disk weights,
    point loads off the stride) and, with the carried defect, the observer converges to the
    full grid's equilibrium however coarse the stride."""
    s21, s33 = float(tdcr.node_s[21]), float(tdcr.node_s[33])
    kw = dict(
        tensions=[1.0, 0, 0.3, 0, 2.0, 0, 0.5, 0, 0],
        point_loads=[(s21, [0.02, 0, 0], [0, 0.001, 0]), (s33, [0, 0.01, 0])],
    )
    keep = np.empty(tdcr.n_nodes, dtype=np.int64)
    pb = _problem(tdcr, check_inputs(tdcr, **kw))
    n_keep = _coarse_keep(4, pb.geo, pb.ld, keep)
    assert keep[:n_keep].tolist() == sorted(set(range(0, 61, 4)) | {21, 33})
    heavy = _problem(tdcr, check_inputs(tdcr, gravity=[0, 0, -9.81], **kw))
    n_heavy = _coarse_keep(4, heavy.geo, heavy.ld, keep)
    assert keep[:n_heavy].tolist() == sorted(set(range(0, 61, 2)) | {21, 33})
    ref = softrod.solve_static(tdcr, **kw)
    inp = check_inputs(tdcr, **kw)
    gains = ObserverGains(max_updates=3, broyden=True, predictor_stride=12)
    state = None
    for _ in range(STATIC_QUERY_STEPS):
        state, Y, _, _, res, ok = observer_update(tdcr, inp, state, gains)
    assert ok and res <= softrod.rods.DEFAULT_RTOL
    assert np.linalg.norm(Y[-1, :3] - ref.tip_position) < CONVERGED_TIP_TOL_M


def test_observer_gains_validated() -> None:
    with pytest.raises(ValueError, match="Q"):
        ObserverGains(Q=-1.0)
    with pytest.raises(ValueError, match="max_updates"):
        ObserverGains(max_updates=0)
    with pytest.raises(ValueError, match="broyden"):
        ObserverGains(broyden=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="predictor_stride"):
        ObserverGains(predictor_stride=0)


def test_sensitivities_against_finite_differences(tdcr: softrod.RodModel) -> None:
    kw = dict(tip_force=[0.1, -0.2, 0.05], gravity=[0, 0, -9.81])
    tau = np.array([1.0, 0, 0.3, 0, 2.0, 0, 0.5, 0, 0])
    x = np.array([1e-3, -2e-3, 5e-4])
    ev = shooting_eval(tdcr, x, tau, **kw)
    h = 1e-7
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        fd = (
            shooting_eval(tdcr, x + e, tau, **kw).residual
            - shooting_eval(tdcr, x - e, tau, **kw).residual
        ) / (2 * h)
        np.testing.assert_allclose(
            ev.jacobian[:, k], fd, rtol=FD_REL_TOL, atol=FD_REL_TOL * np.abs(ev.jacobian).max()
        )
    sol = softrod.solve_static(tdcr, tau, **kw)
    J = tip_jacobian(tdcr, sol)
    ht = 1e-4
    for j in (0, 4, 6):
        d = np.zeros(9)
        d[j] = ht
        fd = (
            softrod.solve_static(tdcr, tau + d, **kw).tip_position
            - softrod.solve_static(tdcr, tau - d, **kw).tip_position
        ) / (2 * ht)
        np.testing.assert_allclose(J[:, j], fd, rtol=1e-4, atol=1e-4 * np.abs(J).max())


def test_extension_and_base_pose(sms: softrod.RodModel) -> None:
    spec = softrod.load_robot(example_robot_path("softmanisim_2seg_extensible"))
    m = softrod.compile_model(spec)
    ext = with_pose_and_lengths(m, extensions=[0.02, 0.01])
    assert ext.total_length == pytest.approx(m.total_length + 0.03)
    # An extended robot equals a robot described with the longer segments.
    longer = spec.model_copy(deep=True)
    longer.segments[0].length += 0.02
    longer.segments[1].length += 0.01
    a = softrod.solve_static(ext, tensions=[1, 0, 0, 0, 0, 0.5, 0, 0], gravity=[0, 0, -9.81])
    b = softrod.solve_static(
        softrod.compile_model(longer), tensions=[1, 0, 0, 0, 0, 0.5, 0, 0], gravity=[0, 0, -9.81]
    )
    np.testing.assert_allclose(a.tip_position, b.tip_position, atol=1e-9)
    moved = with_pose_and_lengths(m, base_position=[0.1, 0.2, 0.5])
    c = softrod.solve_static(moved, tensions=[1, 0, 0, 0, 0, 0.5, 0, 0])
    d = softrod.solve_static(m, tensions=[1, 0, 0, 0, 0, 0.5, 0, 0])
    np.testing.assert_allclose(c.tip_position - d.tip_position, [0.1, 0.2, 0.0], atol=1e-12)
    with pytest.raises(ValueError, match=r"extensions\[0\]"):
        with_pose_and_lengths(m, extensions=[0.05, 0.0])


def test_quasistatic_history_exports(tmp_path, sms: softrod.RodModel) -> None:
    sim = QuasiStaticSim(sms, "shooting")
    hist = sim.run({"tensions": np.linspace(0, 1, 10)[:, None] * np.array([1.0, 0, 0, 0])})
    assert hist.positions is not None and hist.positions.shape == (10, sms.n_nodes, 3)
    assert hist.to_npz(tmp_path / "h.npz").stat().st_size > 0
    assert hist.to_csv(tmp_path / "h.csv").read_text().startswith("t,tip_x")
    assert hist.plot(tmp_path / "h.png").stat().st_size > 0
    with pytest.raises(ValueError, match="unknown input"):
        sim.step(tension=[1, 0, 0, 0])


def test_circle_tracking_beats_paper_by_10x() -> None:
    plant = TendonRobotPlant(
        example_robot_path("softmanisim_2seg_extensible"), loads={"gravity": [0, 0, -9.81]}
    )
    ctl = ResolvedRateController(plant, kp=10.0, jacobian_mode="analytic")
    x0 = plant.solve(np.zeros(plant.n_q)).tip_position
    # A quarter loop keeps the test short; the CLI runs whole loops (softrod track circle).
    t, x_d, xdot_d = make_trajectory("circle", x0, dt=0.02, loops=0.25)
    res = track(ctl, t, x_d, xdot_d)
    assert res.mse_mean < CIRCLE_MSE_TARGET


def test_fd_and_analytic_jacobians_agree() -> None:
    plant = TendonRobotPlant(
        example_robot_path("softmanisim_2seg_extensible"), loads={"gravity": [0, 0, -9.81]}
    )
    q = np.zeros(plant.n_q)
    q[0], q[5], q[8] = 1.0, 0.7, 0.01  # tensions, one extension, base offset
    Ja = plant.jacobian(q, "analytic")
    Jf = plant.jacobian(q, "fd")
    np.testing.assert_allclose(Ja, Jf, rtol=1e-3, atol=1e-3 * np.abs(Ja).max())


def test_trajectories_start_at_center_and_reject_bad_names() -> None:
    for name in ("square", "circle", "figure8", "helix", "square_helix"):
        t, x, v = make_trajectory(name, np.array([0.1, 0.2, 0.3]), dt=0.1)
        np.testing.assert_allclose(x[0], [0.1, 0.2, 0.3], atol=1e-12)
        assert x.shape == v.shape == (t.shape[0], 3)
    with pytest.raises(ValueError, match="trajectory must be one of"):
        make_trajectory("triangle", np.zeros(3))
