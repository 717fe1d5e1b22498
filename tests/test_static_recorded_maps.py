"""The stability test's maps built in Newton's last evaluation (docs/stability.md, "Cost of a
solve"): the same numbers the test computes from the result's node states, the same answers
as a solve that does not build them."""

from __future__ import annotations

import numpy as np

from softrod.description import find_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._inputs import _problem
from softrod.rods._shooting import recorded_maps
from softrod.rods._stability import _NO_STRAINS, _node_states
from softrod.rods._stability_kernels import _checkpoints, _interval_maps


def test_recorded_maps_are_the_tests_own_and_answers_unchanged():
    model = compile_model(find_robot("softmanisim"))
    rng = np.random.default_rng(3)
    guess, plain_guess, used = None, None, 0
    for _ in range(4):
        kw = dict(
            tensions=rng.uniform(0.0, 1.0, 4),
            tip_force=rng.uniform(-0.5, 0.5, 3),
            distributed_force=[1.0, 1.0, 1.0],
        )
        res = solve_static(model, guess=guess, **kw)
        plain = solve_static(model, guess=plain_guess, check_stability=False, **kw)
        assert res.success and plain.success and res.stable is True
        # The chained IVP is the same equilibrium to round-off, found in as many iterations.
        assert np.linalg.norm(res.tip_position - plain.tip_position) < 1e-14
        assert (res.nit, res.nfev) == (plain.nit, plain.nfev)
        found = recorded_maps(res)
        if found is not None:
            used += 1
            maps, nodes = found
            # What the test integrates from the stored node states, on the same checkpoints.
            pb = _problem(model, res.inputs, 1.0)
            Y = _node_states(res, res.warm.total_moment)
            again = np.empty(model.n_nodes, dtype=np.int64)
            m = _checkpoints(Y, pb.tau_fixed, pb.geo, pb.ld, again)
            assert np.array_equal(again[:m], nodes)
            own = np.empty_like(maps)
            chain = np.bool_(False)
            m_own = _interval_maps(Y, pb.tau_fixed, pb.geo, pb.ld, nodes, own, chain, _NO_STRAINS)
            assert m_own == nodes.shape[0]
            assert np.array_equal(own, maps)
        assert recorded_maps(plain) is None
        guess, plain_guess = res, plain
    assert used >= 2
