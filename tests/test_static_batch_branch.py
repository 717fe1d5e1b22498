"""Branch safety and stability of `solve_static_batch` (issue 19 items 0 and 1): every item
follows `solve_static`'s path rules (continuation sized by the loads' and the tendons' bending,
steps accepted only while the tip stays on the branch, status 5 for a jump), and converged
items are checked for stability (status 7 where unstable; `stable` per item)."""

from __future__ import annotations

import numpy as np
import pytest

from softrod.rods import compile_model, solve_static, solve_static_batch
from softrod.rods._batch_kernels import STATUS_NEEDS_MULTIPLE_SHOOTING
from softrod.rods._stability import STATUS_UNSTABLE
from test_static_branch import BRANCH_TOL, REFERENCE_TIPS, _probe_cases

#: Clamped-free Kirchhoff column of tests/test_stability.py (1 m, EI = 0.98 N m^2).
COLUMN = {
    "name": "column",
    "model": "kirchhoff",
    "backbone": {"youngs_modulus": 2e9, "shear_modulus": 2e9 / 2.6, "density": 1000.0,
                 "radius": 0.005},
    "segments": [{"length": 1.0}],
}  # fmt: skip


@pytest.fixture(scope="module")
def probe_batches():
    """The wrong-branch probe cases with reference tips, batched per robot (same spec)."""
    cases = _probe_cases(1, 1 + max(REFERENCE_TIPS))
    groups: dict[str, list[int]] = {}
    for index in sorted(REFERENCE_TIPS):
        groups.setdefault(cases[index][0].model_dump_json(), []).append(index)
    out = []
    for indices in groups.values():
        model = compile_model(cases[indices[0]][0])
        inputs = {
            key: np.array([cases[i][1][key] for i in indices]) for key in cases[indices[0]][1]
        }
        out.append((model, indices, inputs))
    return out


def test_probe_cases_as_a_batch_give_no_wrong_branch_success(probe_batches):
    """Case 25 came back from the batch with success 210 mm from the ramped equilibrium before
    the batch followed solve_static's path rules; now every success is on the ramped branch
    and every failure says why (most of these loads need multiple shooting: status 8)."""
    successes = 0
    for model, indices, inputs in probe_batches:
        batch = solve_static_batch(model, **inputs)
        for j, index in enumerate(indices):
            item = batch[j]
            if item.success:
                successes += 1
                dist = float(np.linalg.norm(item.tip_position - REFERENCE_TIPS[index]))
                assert dist < BRANCH_TOL, f"case {index}: success {dist * 1e3:.0f} mm away"
                assert item.stable is True
            else:
                assert item.message.startswith(("did not converge", "not solved", "not a"))
                assert item.stable is not True
    assert successes >= 4


def test_the_jumping_case_succeeds_on_the_ramped_branch(probe_batches):
    for model, indices, inputs in probe_batches:
        if 25 in indices:
            j = indices.index(25)
            one = {key: value[j] for key, value in inputs.items()}
            batch = solve_static_batch(model, **one)
            assert batch.success[0], batch[0].message
            np.testing.assert_allclose(batch.tip_position[0], REFERENCE_TIPS[25], atol=BRANCH_TOL)
            return
    raise AssertionError("case 25 not in the probe batches")


def test_warm_batch_moves_from_the_guess_inputs(probe_batches):
    """A batch warm-started from the unloaded robot moves each item's inputs from the guess's
    (the balanced inputs it carries) and lands where the cold batch and the ramp do."""
    for model, indices, inputs in probe_batches:
        if 25 not in indices:
            continue
        j = indices.index(25)
        one = {key: value[j : j + 1] for key, value in inputs.items()}
        rest = solve_static_batch(model, tensions=np.zeros((1, model.n_tendons)))
        assert rest.balanced_actuation is not None and rest.balanced_forces is not None
        np.testing.assert_array_equal(rest.balanced_forces, 0.0)
        warm = solve_static_batch(model, guess=rest, **one)
        assert warm.success[0], warm[0].message
        np.testing.assert_allclose(warm.tip_position[0], REFERENCE_TIPS[25], atol=BRANCH_TOL)
        # The balanced inputs of a success are its inputs.
        np.testing.assert_allclose(warm.balanced_actuation[0], one["tensions"][0])
        np.testing.assert_allclose(warm.balanced_forces[0, 0], one["tip_force"][0])
        return
    raise AssertionError("case 25 not in the probe batches")


def test_probe_batch_agrees_with_solve_static(probe_batches):
    """Items that converge in both agree with solve_static to 1e-9 m (the batch contract)."""
    model, indices, inputs = probe_batches[0]
    batch = solve_static_batch(model, **inputs)
    for j in range(len(indices)):
        if not batch.success[j]:
            continue
        sol = solve_static(model, **{key: value[j] for key, value in inputs.items()})
        assert sol.success, sol.message
        np.testing.assert_allclose(batch.tip_position[j], sol.tip_position, rtol=0, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# Stability


@pytest.fixture(scope="module")
def column():
    from softrod.description import load_robot

    return compile_model(load_robot(COLUMN))


def test_compressed_column_is_stable_below_euler_and_flagged_above(column):
    """Axial tip loads 0.9 and 1.1 x pi^2 EI / (4 L^2): the straight column is stable below
    the Euler load and unstable above it (status 7, stable False; solve_static continues onto
    the buckled branch, the batch says so)."""
    EI = column.K_bt[0, 0]
    critical = np.pi**2 * EI / (4.0 * column.total_length**2)
    forces = np.array([[0.0, 0.0, -0.9 * critical], [0.0, 0.0, -1.1 * critical]])
    batch = solve_static_batch(column, tip_force=forces)
    assert batch.stable is not None
    assert batch.success[0] and batch.stable[0]
    assert not batch.success[1] and not batch.stable[1]
    assert batch.status[1] == STATUS_UNSTABLE
    assert "unstable" in batch[1].message and "solve_static" in batch[1].message
    # Unchecked: the straight answer comes back as converged, stable None.
    unchecked = solve_static_batch(column, tip_force=forces, check_stability=False)
    assert unchecked.stable is None and unchecked.success.all()
    assert unchecked[1].stable is None


def test_stable_is_none_under_length_control():
    from reference.robots import tdcr3_dict
    from softrod.description import load_robot

    model = compile_model(load_robot(tdcr3_dict()))
    batch = solve_static_batch(model, lengths=model.tendon_rest_length)
    assert batch.success.all() and batch.stable is None


def test_check_stability_must_be_a_bool(column):
    with pytest.raises(ValueError, match="check_stability"):
        solve_static_batch(column, check_stability=1)


def test_status_codes_do_not_collide():
    """The batch's own status (load needs multiple shooting) is not solve_static's jump (5),
    budget (6) or unstable (7) code, on both back ends."""
    from softrod.rods._batch import BATCH_STATUS_MESSAGES
    from softrod.rods._shooting import _STATUS_MESSAGES

    assert STATUS_NEEDS_MULTIPLE_SHOOTING not in _STATUS_MESSAGES
    assert STATUS_NEEDS_MULTIPLE_SHOOTING not in (5, 6, STATUS_UNSTABLE)
    assert BATCH_STATUS_MESSAGES[5] == _STATUS_MESSAGES[5]
    assert "multiple shooting" in BATCH_STATUS_MESSAGES[STATUS_NEEDS_MULTIPLE_SHOOTING]
