"""Helpers shared by long jobs (sweeps, training): a kill that still saves what was done."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["StopFlag", "sigterm_as_interrupt", "stop_requested"]


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt inside the block (main thread only), so a job stopped by
    `kill` saves its results the way a Ctrl-C'd one does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class StopFlag:
    """Set by SIGINT/SIGTERM inside `stop_requested()`; a loop checks it between units of work
    so it can save a consistent state. A second signal interrupts at once."""

    def __init__(self) -> None:
        self.requested = False


@contextmanager
def stop_requested() -> Iterator[StopFlag]:
    """Ctrl-C and SIGTERM set the yielded flag instead of interrupting (main thread only)."""
    flag = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum: int, frame: Any) -> None:
        if flag.requested:
            raise KeyboardInterrupt
        flag.requested = True

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)
