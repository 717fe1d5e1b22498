"""The registry of static methods: one explicit list, no registration on import."""

from __future__ import annotations

from collections.abc import Callable

from softrod.rods._budget import budgeted
from softrod.rods._inputs import StaticLoads
from softrod.rods._model import RodModel
from softrod.rods._observer import _solve_observer
from softrod.rods._pcc import _solve_pcc
from softrod.rods._result import StaticResult
from softrod.rods._shooting import _solve_shooting

__all__ = ["METHODS"]

_Solver = Callable[[RodModel, StaticLoads, "StaticResult | None", float, int], StaticResult]

#: Static methods: name -> solver(model, loads, guess, rtol, max_iter, **options). The order is
#: the order the CLI lists them in.
METHODS: dict[str, _Solver] = {
    # Shooting runs under a wall-clock budget (`_budget`): it can iterate for long.
    "shooting": budgeted(_solve_shooting),
    "pcc": _solve_pcc,
    "observer": _solve_observer,
}
