"""The per-solve shortcuts of a warm static solve give the same numbers as the full path
(docs/stability.md, "Cost of a solve")."""

from __future__ import annotations

import numpy as np
import pytest

from softrod.description import find_robot, load_robot
from softrod.rods import compile_model, solve_static
from softrod.rods._inputs import check_inputs


@pytest.fixture(scope="module")
def sms():
    return compile_model(load_robot(find_robot("softmanisim")))


def test_plain_inputs_match_the_checked_path(sms):
    """No field, gradient, moment input or pressure given: check_actuation is skipped; the
    loads equal those of the checked path (a zero field given explicitly)."""
    kw = dict(tensions=[1.0, 0.5, 0.0, 0.0], tip_force=[0.2, 0.0, -0.5])
    plain = check_inputs(sms, **kw)
    checked = check_inputs(sms, field=[0.0, 0.0, 0.0], **kw)
    for name in ("field", "field_gradient", "tensions", "tip_force"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(checked, name))
    assert plain.pressures is None and checked.pressures is None
    assert plain.moments is None and checked.moments is None
    with pytest.raises(ValueError, match="tensions"):
        check_inputs(sms, tensions=[1.0, -1.0, 0.0, 0.0])


def test_warm_solve_is_the_same_either_way(sms):
    """A warm-started solve through the shortcuts equals one through the checked path, bit for
    bit, with its estimate and stability verdict."""
    first = solve_static(sms, tensions=[1.0, 0.0, 0.0, 0.0], tip_force=[0.3, 0.2, -0.4])
    kw = dict(tensions=[0.0, 0.8, 0.6, 0.0], tip_force=[-0.3, 0.5, -0.6])
    a = solve_static(sms, guess=first, distributed_force=[1.0, 1.0, 1.0], **kw)
    b = solve_static(sms, guess=first, distributed_force=[1.0, 1.0, 1.0], field=np.zeros(3), **kw)
    assert a.success and b.success and a.stable is True and b.stable is True
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.internal_moment, b.internal_moment)
    assert a.tip_error == b.tip_error and a.nit == b.nit
