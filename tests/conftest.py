"""Shared test setup: makes the independent oracle importable and provides inline robots."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Headless rendering for every test module, whichever imports mujoco first: MuJoCo fixes its
# OpenGL backend at import, and GLFW without a display aborts the process on a second try.
os.environ.setdefault("MUJOCO_GL", "egl")
# One BLAS thread: threaded OpenBLAS oversubscribes CI's two cores (a 117x117 eigen-solve took
# 2.4 s instead of 0.04 s under load). Effective only where numpy is not loaded yet; `make test`
# sets it in the environment as well.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Under pytest-xdist (`make test` runs two workers) each worker keeps its own numba and Warp
# kernel caches: numba's cache index is read, extended and rewritten without a lock
# (numba/core/caching.py `IndexDataCacheFile.save`), so two workers saving different signatures
# of one kernel at the same moment can both claim data file 1 and leave the index pointing at the
# other signature's code. Set before numba or warp is imported (this file is imported first).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:
    _CACHES = Path(__file__).resolve().parent.parent / ".test_caches" / _WORKER
    os.environ.setdefault("NUMBA_CACHE_DIR", str(_CACHES / "numba"))
    os.environ.setdefault("WARP_CACHE_PATH", str(_CACHES / "warp"))

# `reference` (the independent oracle and the inline robots) lives beside the tests; make it
# importable however pytest was started (with or without tests/__init__.py, from any cwd).
TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from reference.robots import soft_rod_dict, tdcr3_dict  # noqa: E402


@pytest.fixture
def tdcr3() -> dict:
    """Three-segment Kirchhoff TDCR with disk masses and a tilted base (fresh copy)."""
    return tdcr3_dict()


@pytest.fixture
def soft_rod() -> dict:
    """Two-segment soft Cosserat rod with precurvature (fresh copy)."""
    return soft_rod_dict()


@pytest.fixture
def learning_example():
    """`load(name)`: the script `examples/learning/<name>.py` as a module (the examples are
    scripts, not a package)."""
    import importlib.util

    def load(name: str):
        path = TESTS_DIR.parent / "examples" / "learning" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def run_script():
    """`run(args, cwd, timeout)`: `python *args` in a fresh interpreter from `cwd`, as a user
    runs a script (headless MuJoCo, one thread per library: two torch threads were 15x slower
    on the 2-core machine); returns the CompletedProcess, output as text."""
    import subprocess

    def run(args: list, cwd: Path, timeout: float = 300.0) -> subprocess.CompletedProcess:
        env = {**os.environ, "MUJOCO_GL": "egl", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
        return subprocess.run(
            [sys.executable, *map(str, args)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
