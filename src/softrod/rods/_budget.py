"""A wall-clock budget per static solve, so that no solve hangs (issue 19 item 2).

Multiple shooting under extreme loads can take hundreds of continuation steps of a dozen
Newton iterations, each integrating every interval; a solve then ran for minutes. Every
shooting solve now runs under a deadline (`DEFAULT_TIME_LIMIT`, or the one set with
`solve_time_limit`); the Newton loops ask `budget_expired()` once per iteration and give up
with status `BUDGET_STATUS`, so a solve overruns its limit by at most about one iteration.
A solve started inside another one (a refinement, a stability check) shares its deadline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, TypeVar

import numba.core.event as numba_event

__all__ = [
    "BUDGET_MESSAGE",
    "BUDGET_STATUS",
    "DEFAULT_TIME_LIMIT",
    "budget_expired",
    "budgeted",
    "solve_time_limit",
]

#: Seconds one solve may take by default. Measured on a 2-core machine at load average ~16:
#: the slowest converging solves of the property probe (<= 10 segments, default grid) and of
#: the heavy-load tests take 3-4 s (the first solve of a process adds ~2.5 s of JIT loading);
#: without a budget the probe's worst solves ran 38-600 s.
DEFAULT_TIME_LIMIT = 10.0
#: Solver status when the budget ran out (0-4 are the Newton ones, 5 a branch jump).
BUDGET_STATUS = 6
BUDGET_MESSAGE = "time budget exhausted"

_LIMIT: ContextVar[float] = ContextVar("softrod_solve_time_limit", default=DEFAULT_TIME_LIMIT)
_DEADLINE: ContextVar[float | None] = ContextVar("softrod_solve_deadline", default=None)

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def solve_time_limit(seconds: float) -> Iterator[None]:
    """Set the wall-clock limit [s] of every static solve started inside the block
    (`math.inf`: none). A solve that runs out returns success=False with a message.

    >>> with solve_time_limit(60.0):  # doctest: +SKIP
    ...     sol = softrod.solve_static(robot, tip_force=[0, 0, -50])
    """
    if not (isinstance(seconds, int | float) and seconds > 0 and not math.isnan(seconds)):
        raise ValueError(f"time limit must be > 0 [s] (math.inf for none), got {seconds!r}")
    token = _LIMIT.set(float(seconds))
    try:
        yield
    finally:
        _LIMIT.reset(token)


class _CompileClock(numba_event.Listener):
    """Seconds spent compiling numba kernels in this process (outermost compiles only)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0

    def on_start(self, event: Any) -> None:
        self._depth += 1
        if self._depth == 1:
            self._t0 = time.perf_counter()

    def on_end(self, event: Any) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0


# A first solve in a fresh checkout compiles the kernels (a minute on a slow machine): that is
# not the solve's time, so the deadline moves by the compile time spent since the solve began.
_COMPILE = _CompileClock()
numba_event.register("numba:compile", _COMPILE)


def budget_expired() -> bool:
    """True when the running solve has used up its time limit, JIT compilation not counted
    (False outside a solve)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return False
    return time.perf_counter() - _COMPILE.seconds > deadline


def budgeted(solver: F) -> F:
    """Run `solver` under a deadline: the current limit from now, or the enclosing solve's."""

    @wraps(solver)
    def run(*args: Any, **kwargs: Any) -> Any:
        if _DEADLINE.get() is not None:
            return solver(*args, **kwargs)
        token = _DEADLINE.set(time.perf_counter() - _COMPILE.seconds + _LIMIT.get())
        try:
            return solver(*args, **kwargs)
        finally:
            _DEADLINE.reset(token)

    return run  # type: ignore[return-value]
