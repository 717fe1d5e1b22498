"""One BLAS thread for the small dense solves of `static_equilibrium`.

Newton on a chain solves one (nv x nv) system per iteration, nv <= a few hundred. A threaded
OpenBLAS spends far longer synchronizing its threads than computing at this size, and on a busy
machine it is worse (measured: 0.55 s vs 0.04 s per equilibrium at N = 50, load average 7 on 2
cores). This sets OpenBLAS's thread count through its own C entry points for the duration of a
`with` block (threadpoolctl does the same when it is installed).
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator
from typing import Any

__all__ = ["single_thread_blas"]

_SETTERS = (
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)
_handles: list[tuple[Any, Any]] | None = None


def _find() -> list[tuple[Any, Any]]:
    global _handles
    if _handles is not None:
        return _handles
    found: list[tuple[Any, Any]] = []
    try:
        with open("/proc/self/maps") as maps:
            libs = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        libs = set()
    for lib in sorted(libs):
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        for set_name, get_name in _SETTERS:
            if hasattr(handle, set_name) and hasattr(handle, get_name):
                found.append((getattr(handle, set_name), getattr(handle, get_name)))
                break
    _handles = found
    return found


@contextlib.contextmanager
def single_thread_blas() -> Iterator[None]:
    """Run the block with one OpenBLAS thread (no-op where OpenBLAS is not found)."""
    try:
        import threadpoolctl
    except ImportError:
        threadpoolctl = None
    if threadpoolctl is not None:
        with threadpoolctl.threadpool_limits(1, user_api="blas"):
            yield
        return
    handles = _find()
    saved = [int(get()) for _, get in handles]
    for set_threads, _ in handles:
        set_threads(1)
    try:
        yield
    finally:
        for (set_threads, _), n in zip(handles, saved, strict=True):
            set_threads(n)
