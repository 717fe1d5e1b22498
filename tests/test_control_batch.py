"""The Jacobian controller's finite differences of the tensions run as one batched solve."""

from __future__ import annotations

import numpy as np

import softrod.control._jacobian as jac_mod
from softrod.control import TendonRobotPlant
from softrod.description import find_robot

#: Batched and one-by-one difference quotients: tips agree to ~1e-12 m over 1e-3 N steps.
SAME_COLUMN = 1e-6


def test_fd_tension_columns_are_one_batch_and_match_the_loop(monkeypatch) -> None:
    plant = TendonRobotPlant(
        find_robot("softmanisim_2seg_extensible"), loads={"gravity": [0, 0, -9.81]}
    )
    q = np.zeros(plant.n_q)
    q[0], q[plant.n_t] = 1.0, 0.01  # a tension (one-sided at 0 for the others), an extension
    real = jac_mod.solve_static_batch
    sizes = []

    def counted(*args, **kwargs):
        sizes.append(kwargs["tensions"].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(jac_mod, "solve_static_batch", counted)
    batched = plant.jacobian(q, "fd")
    assert sizes == [(2 * plant.n_t, plant.n_t)]
    monkeypatch.setattr(plant, "_batched_tips", lambda pairs, warm: None)
    loop = plant.jacobian(q, "fd")
    np.testing.assert_allclose(batched, loop, rtol=0, atol=SAME_COLUMN * np.abs(loop).max())
