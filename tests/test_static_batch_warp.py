"""The Warp back end of batched statics (`rods._batch_warp`) on Warp's CPU device against a
loop of `solve_static` (CI has no Warp: the module is skipped there).

Warp compiles the module's kernels once per machine (~70 s on a loaded 2-core CPU, then cached
under ~/.cache/warp); the solves themselves take a few seconds here.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("warp")

from tests.reference.robots import soft_rod_dict, tdcr3_dict  # noqa: E402

from softrod.description import find_robot  # noqa: E402
from softrod.rods import RodModel, compile_model, solve_static, tip_jacobian  # noqa: E402
from softrod.rods._batch_types import BatchArrays, BatchLoads  # noqa: E402
from softrod.rods._batch_warp import random_loads, solve_batch_warp  # noqa: E402

#: Tip agreement with `solve_static` [m] (issue 16): both stop at the same scaled residual
#: (1e-10) with the same integrator, so they differ by round-off only (~1e-15 m measured).
TIP_TOL = 1e-9
#: Relative agreement of the tip Jacobians: both are exact sensitivities of the same discrete
#: solution at base moments that agree to the Newton tolerance (~1e-12 relative measured).
JAC_RTOL = 1e-7
#: Items per robot: enough to mix direct Newton and load ramps, small for the CPU device.
N_ITEMS = 5
#: Relative agreement of the tip error estimates with the CPU's: the same coarse integration
#: and Richardson formula, the correction with Newton's last Jacobian, which comes from a
#: different iterate where the load paths differ (the Jacobians differ at the Newton
#: tolerance): 4e-6 measured on the tests' mixed batches, 0 on items solved alike.
ERR_RTOL = 1e-4
RTOL = 1e-10
MAX_ITER = 30


def _robots() -> dict[str, RodModel]:
    return {
        "softmanisim": compile_model(find_robot("softmanisim")),
        "tdcr3_kirchhoff": compile_model(tdcr3_dict("kirchhoff")),
        "tdcr3_cosserat": compile_model(tdcr3_dict("cosserat")),
        "soft_rod_cosserat": compile_model(soft_rod_dict("cosserat")),
    }


def _mixed_loads(model: RodModel, B: int, seed: int) -> BatchLoads:
    """Random 3-D loads sized by the robot: load numbers ~0-6 (direct Newton and ramps) and
    tensions up to ~1.5 rad of bending on a random subset of tendons."""
    rng = np.random.default_rng(seed)
    L, m = model.total_length, model.moment_scale

    def vec(scale: float) -> np.ndarray:
        d = rng.normal(size=(B, 3))
        return scale * rng.uniform(0.0, 1.0, size=(B, 1)) * d / np.linalg.norm(d, axis=1)[:, None]

    tau = model.tension_scale * rng.uniform(0, 1.5, size=(B, model.n_tendons))
    tau *= rng.random((B, model.n_tendons)) < 0.5
    weight = 9.81 * model.total_mass
    return BatchLoads(
        "tension",
        tau,
        vec(4.0 * m / L),
        vec(1.0 * m),
        vec(2.0 * m / L**2),
        vec(9.81 * min(1.0, 1.0 * m / L / max(weight, 1e-300))),
    )


def _reference(model: RodModel, loads: BatchLoads, i: int):
    return solve_static(
        model,
        loads.actuation[i],
        tip_force=loads.tip_force[i],
        tip_moment=loads.tip_moment[i],
        distributed_force=loads.distributed_force[i],
        gravity=loads.gravity[i],
        rtol=RTOL,
        max_iter=MAX_ITER,
    )


def _solve(model: RodModel, loads: BatchLoads, **kw) -> BatchArrays:
    opts = dict(device="cpu", guess=None, jacobian=False, shapes=False, rtol=RTOL)
    opts.update(kw)
    return solve_batch_warp(model, loads, max_iter=MAX_ITER, **opts)


@pytest.fixture(scope="module")
def solved() -> dict[str, tuple[RodModel, BatchLoads, BatchArrays]]:
    out = {}
    for k, (name, model) in enumerate(_robots().items()):
        loads = _mixed_loads(model, N_ITEMS, k)
        out[name] = (model, loads, _solve(model, loads, jacobian=True, shapes=True))
    return out


def test_agrees_with_solve_static_loop(solved) -> None:
    for name, (model, loads, res) in solved.items():
        for i in range(loads.size):
            ref = _reference(model, loads, i)
            assert ref.success, (name, i, ref.message)
            assert res.success[i], (name, i, res.residual[i])
            assert res.residual[i] <= RTOL
            # solve_static's continuation is now branch-safe (tip-bounded steps, issue 19) and
            # may take more Newton iterations than the batch's load-number ramp: same answer.
            np.testing.assert_allclose(res.tip_position[i], ref.tip_position, rtol=0, atol=TIP_TOL)
            np.testing.assert_allclose(res.positions[i], ref.positions, rtol=0, atol=TIP_TOL)
            np.testing.assert_allclose(res.tip_rotation[i], ref.tip_rotation, atol=TIP_TOL)
            np.testing.assert_allclose(res.unknowns[i], ref.base_moment, rtol=1e-6, atol=1e-12)
            np.testing.assert_array_equal(res.tensions[i], loads.actuation[i])
            # The device's tip error estimate is solve_static's (unrefined there: below tol).
            assert ref.tip_error is not None and ref.tip_error <= 1e-6 * model.total_length
            assert res.tip_error is not None
            np.testing.assert_allclose(res.tip_error[i], ref.tip_error, rtol=ERR_RTOL, atol=0)


def test_jacobian_matches_tip_jacobian(solved) -> None:
    for name, (model, loads, res) in solved.items():
        assert res.jacobian is not None and res.jacobian.shape == (loads.size, 3, model.n_tendons)
        for i in range(loads.size):
            J = tip_jacobian(model, _reference(model, loads, i))
            scale = np.abs(J).max()
            np.testing.assert_allclose(
                res.jacobian[i], J, rtol=0, atol=JAC_RTOL * scale, err_msg=name
            )


def test_heavy_item_flagged_and_others_unaffected() -> None:
    model = compile_model(find_robot("softmanisim"))
    loads = random_loads(model, 3, 7)
    # Load number F L^2 / EI = 40 > _MULTI_SHOOT_ANGLE: solve_static would use multiple shooting.
    heavy = 40.0 * model.moment_scale / model.total_length
    force = loads.tip_force.copy()
    force[1] = [heavy, 0.0, 0.0]
    loads = BatchLoads("tension", loads.actuation, force, *(np.zeros((3, 3)),) * 3)
    res = _solve(model, loads)
    assert res.success.tolist() == [True, False, True]
    assert np.all(np.isnan(res.tip_position[1]))
    for i in (0, 2):
        ref = _reference(model, loads, i)
        np.testing.assert_allclose(res.tip_position[i], ref.tip_position, rtol=0, atol=TIP_TOL)


def test_warm_start_and_device_names() -> None:
    model = compile_model(find_robot("softmanisim"))
    loads = random_loads(model, 4, 3)
    cold = _solve(model, loads, device="warp-cpu")
    assert cold.success.all()
    warm = _solve(model, loads, guess=cold.unknowns)
    assert warm.success.all()
    # From its own answer Newton has nothing left to do.
    assert warm.iterations.max() <= 1
    np.testing.assert_allclose(warm.tip_position, cold.tip_position, rtol=0, atol=TIP_TOL)


def test_length_control_is_refused() -> None:
    model = compile_model(tdcr3_dict())
    z = np.zeros((1, 3))
    loads = BatchLoads("length", model.tendon_rest_length[None, :], z, z, z, z)
    with pytest.raises(ValueError, match="length control"):
        _solve(model, loads)


# ---------------------------------------------------------------------------------------------
# Branch safety and stability (issue 19 item 0): the numba batch's path rules and test


def test_probe_cases_give_no_wrong_branch_success() -> None:
    """The wrong-branch probe cases of tests/test_static_batch_branch.py on Warp: every success
    sits on the ramped branch and was checked stable; every other item says why (case 25 came
    back 210 mm off with success before the Warp ramp followed the tip-step rule)."""
    from softrod.rods import solve_static_batch
    from test_static_batch_branch import _probe_cases
    from test_static_branch import BRANCH_TOL, REFERENCE_TIPS

    cases = _probe_cases(1, 1 + max(REFERENCE_TIPS))
    groups: dict[str, list[int]] = {}
    for index in sorted(REFERENCE_TIPS):
        groups.setdefault(cases[index][0].model_dump_json(), []).append(index)
    successes = []
    for indices in groups.values():
        model = compile_model(cases[indices[0]][0])
        inputs = {
            key: np.array([cases[i][1][key] for i in indices]) for key in cases[indices[0]][1]
        }
        batch = solve_static_batch(model, device="warp-cpu", **inputs)
        assert batch.stable is not None
        for j, index in enumerate(indices):
            item = batch[j]
            if item.success:
                successes.append(index)
                dist = float(np.linalg.norm(item.tip_position - REFERENCE_TIPS[index]))
                assert dist < BRANCH_TOL, f"case {index}: success {dist * 1e3:.0f} mm away"
                assert item.stable is True
            else:
                assert item.message.startswith(("did not converge", "not solved", "not a"))
                assert item.stable is not True
    assert 25 in successes


def test_unstable_column_is_flagged_and_unchecked_is_none(monkeypatch) -> None:
    """Axial tip loads 0.5-3.5 x the clamped-free Euler load pi^2 EI / (4 L^2) (straight, and
    slightly off axis): the device's stability test (`_final_kernel`) gives the CPU batch's
    verdicts exactly, stable below the Euler load and status 7 above it on the straight
    column, with no item left to the CPU test; without the check `stable` is None."""
    from softrod.description import load_robot
    from softrod.rods import _batch_warp, solve_static_batch
    from softrod.rods._stability import STATUS_UNSTABLE
    from test_static_batch_branch import COLUMN

    def no_cpu(*args, **kwargs):
        raise AssertionError("the device left an item to the CPU stability test")

    monkeypatch.setattr(_batch_warp, "_stability_on_cpu", no_cpu)
    column = compile_model(load_robot(COLUMN))
    critical = np.pi**2 * column.K_bt[0, 0] / (4.0 * column.total_length**2)
    factor = np.array([0.5, 0.9, 1.1, 2.0, 3.5, 0.9, 1.1, 2.0])
    force = np.zeros((factor.size, 3))
    force[:, 2] = -factor * critical
    # The last three slightly off axis: an imperfection of 1e-3 of the Euler load.
    force[5:, 0] = 1e-3 * critical
    z = np.zeros_like(force)
    loads = BatchLoads("tension", np.zeros((factor.size, 0)), force, z, z, z)
    res = _solve(column, loads)
    cpu = solve_static_batch(column, tip_force=force, threads=1, rtol=RTOL, max_iter=MAX_ITER)
    assert res.stable is not None and cpu.stable is not None
    assert res.stable.tolist() == cpu.stable.tolist()
    assert res.status.tolist() == cpu.status.tolist()
    assert res.stable[:5].tolist() == [True, True, False, False, False]
    assert res.status[:5].tolist() == [0, 0] + [STATUS_UNSTABLE] * 3
    assert (~res.success[res.status == STATUS_UNSTABLE]).all()
    unchecked = _solve(column, loads, check_stability=False)
    assert unchecked.stable is None and unchecked.success[:5].all()


def test_tendon_loaded_verdicts_as_the_cpu_test(monkeypatch) -> None:
    """SoftManiSim (Kirchhoff, tendons loaded: the section Newton runs at every stage) under
    axial tip loads of 0.5-3.5 x pi^2 EI / (4 L^2) with a small side load and one tendon pulled:
    the device's verdicts equal the numba test's at the same answers (`_stability_on_cpu`),
    both verdicts occur, and no item is left to the CPU. (The streamed LDL^T once shared a
    name with the section Newton's moment block and called these unstable items stable.)"""
    from softrod.rods import _batch_warp

    cpu_test = _batch_warp._stability_on_cpu

    def no_cpu(*args, **kwargs):
        raise AssertionError("the device left an item to the CPU stability test")

    monkeypatch.setattr(_batch_warp, "_stability_on_cpu", no_cpu)
    model = compile_model(find_robot("softmanisim"))
    critical = np.pi**2 * float(model.K_bt[:, :2].min()) / (4.0 * model.total_length**2)
    factor = np.array([0.5, 1.5, 2.5, 3.5])
    side = critical * np.array([-0.0622, -0.0286, -0.0324])
    force = -factor[:, None] * critical * model.base_rotation[:, 2] + side
    tau = np.zeros((factor.size, model.n_tendons))
    tau[:, 0] = 0.1478
    z = np.zeros_like(force)
    loads = BatchLoads("tension", tau, force, z, z, z)
    res = _solve(model, loads)
    assert res.stable is not None
    checked = np.flatnonzero(np.isin(res.status, (0, 7)))
    assert checked.size == factor.size
    cpu = cpu_test(model, loads, res.unknowns, checked)
    assert res.stable[checked].tolist() == cpu.tolist()
    assert cpu.any() and not cpu.all()


def test_section_newton_step_limit_as_the_cpu_kernels() -> None:
    """Seed 1 case 130 of the wrong-branch probe (tests/test_static_branch.py): the section
    Newton at the base starts far from the tendon's fold w = 0; without the CPU kernels' step
    limit (|dw| <= |w| / 2) Warp cycled across it and stopped at 54.5 % of the load with a
    false stall. With it, 60 % of the load is the stable equilibrium `solve_static` and the
    CPU batch return, and the full load stops at the real fold (62.6 %), not solved."""
    from softrod.description import load_robot
    from softrod.rods import solve_static_batch
    from test_static_branch import CASE_130, CASE_130_LOADS

    model = compile_model(load_robot(CASE_130))
    lam = np.array([[0.6], [1.0]])
    inputs = {key: lam * np.asarray(value) for key, value in CASE_130_LOADS.items()}
    warp = solve_static_batch(model, device="warp-cpu", **inputs)
    cpu = solve_static_batch(model, threads=1, **inputs)
    ref = solve_static(model, **{key: value[0] for key, value in inputs.items()})
    assert ref.success and ref.stable
    assert warp.success.tolist() == cpu.success.tolist() == [True, False]
    assert warp.stable is not None and bool(warp.stable[0])
    for res in (warp, cpu):
        np.testing.assert_allclose(res.tip_position[0], ref.tip_position, rtol=0, atol=TIP_TOL)
    assert 0.6 < warp.load_scale[1] < 0.65


# ---------------------------------------------------------------------------------------------
# Tip error estimate (issue 19 row 0.6): the CPU batch's, and the CPU batch's refinement


def _loop_loads(model: RodModel, B: int) -> BatchLoads:
    """Mixed loads (`_mixed_loads`) and, on every other item instead, the first tendon of each
    segment pulled to bend the straight robot by 1 rad up to a full loop (2 pi): the loop
    items' RK4 error exceeds 1e-6 L on the default grid."""
    from softrod.rods._batch_warp import _tendon_bending_batch

    mixed = _mixed_loads(model, B, 11)
    tau = mixed.actuation.copy()
    one = np.zeros(model.n_tendons)
    one[:: len(model.spec.segments[0].tendons)] = 1.0
    per_newton = _tendon_bending_batch(model, one[None, :])[0]
    loop = np.arange(0, B, 2)
    tau[loop] = np.linspace(1.0, 2.0 * np.pi, loop.size)[:, None] * one / per_newton
    force = [a.copy() for a in (mixed.tip_force, mixed.tip_moment)]
    force += [mixed.distributed_force.copy(), mixed.gravity.copy()]
    for a in force:
        a[loop] = 0.0
    return BatchLoads("tension", tau, *force)


def test_tip_error_as_the_cpu_batch_and_refined_alike(monkeypatch) -> None:
    """SoftManiSim (mixed loads) and a soft rod bent up to a full loop by its tendons: the
    device's estimate equals the CPU batch's before refinement (ERR_RTOL), every converged
    item has one, and through `solve_static_batch` the items above 1e-6 L are refined on the
    CPU as the CPU batch refines its own: the same tips, estimates and status."""
    from softrod.rods import _batch, solve_static_batch

    robots = {
        "softmanisim": compile_model(find_robot("softmanisim")),
        "soft_rod_cosserat": compile_model(soft_rod_dict("cosserat")),
    }
    refined = 0
    for name, model in robots.items():
        loads = _loop_loads(model, 6)
        bound = 1e-6 * model.total_length
        raw = _solve(model, loads)
        assert raw.tip_error is not None and raw.status is not None
        converged = np.isin(raw.status, (0, 7))
        assert converged.all(), name
        assert np.isfinite(raw.tip_error).all(), name
        # The CPU batch's estimate before its refinement (an infinite bound refines nothing).
        with monkeypatch.context() as m:
            m.setattr(_batch, "_DEFAULT_TIP_TOL", np.inf)
            cpu_raw = solve_static_batch(model, threads=1, rtol=RTOL, max_iter=MAX_ITER,
                                         **_inputs(loads))  # fmt: skip
        np.testing.assert_allclose(raw.tip_error, cpu_raw.tip_error, rtol=ERR_RTOL, err_msg=name)
        above = raw.tip_error > bound
        refined += int(above.sum())
        # Refined with the Jacobians and shapes asked for (the refinement replaces them too).
        opts = dict(rtol=RTOL, max_iter=MAX_ITER, jacobian=True, shapes=True)
        warp = solve_static_batch(model, device="warp-cpu", **opts, **_inputs(loads))
        cpu = solve_static_batch(model, threads=1, **opts, **_inputs(loads))
        assert warp.status.tolist() == cpu.status.tolist(), name
        assert (warp.tip_error <= bound).all(), (name, warp.tip_error)
        np.testing.assert_allclose(warp.tip_error, cpu.tip_error, rtol=ERR_RTOL, err_msg=name)
        np.testing.assert_allclose(warp.tip_position, cpu.tip_position, rtol=0, atol=TIP_TOL)
        np.testing.assert_allclose(warp.positions, cpu.positions, rtol=0, atol=TIP_TOL)
        assert warp.jacobian is not None and cpu.jacobian is not None
        scale = np.abs(cpu.jacobian).max()
        np.testing.assert_allclose(warp.jacobian, cpu.jacobian, rtol=0, atol=JAC_RTOL * scale)
        # Items below the bound keep the device's answer unchanged.
        np.testing.assert_array_equal(warp.tip_position[~above], raw.tip_position[~above])
    assert refined >= 2


def _inputs(loads: BatchLoads) -> dict[str, np.ndarray]:
    return {
        "tensions": loads.actuation,
        "tip_force": loads.tip_force,
        "tip_moment": loads.tip_moment,
        "distributed_force": loads.distributed_force,
        "gravity": loads.gravity,
    }
