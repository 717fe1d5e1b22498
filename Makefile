# softrod: one Makefile. Every target sets up .venv first when it is missing or stale.
PY      := .venv/bin/python
STAMP   := .venv/.installed
# `warp` too: the batched envs, the Warp statics and on-device PPO are tested on Warp's CPU device
# (issue 16: CI needs no GPU, but it must run those tests rather than skip them).
EXTRAS  := mujoco,rl,learn,dist,bench,web,dev,warp
PIP     := $(PY) -m pip -q --disable-pip-version-check

.PHONY: setup test demo bench lint format clean

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv .venv
	@$(PIP) install -e ".[$(EXTRAS)]" 2>&1 | grep -v "^WARNING: Location" || true
	@$(PY) -c "import softrod" && touch $(STAMP)

setup: $(STAMP)

# Two pytest-xdist workers: every test is single-threaded (OPENBLAS_NUM_THREADS=1, one torch
# thread), so on CI's 2 cores two processes nearly halve the wall time (docs/architecture.md has
# the measured runs). `--dist loadfile` keeps each file on one worker: module-scoped fixtures are
# built once and tests that rely on file order keep it. Tests must therefore not share fixed ports,
# files outside tmp_path or a default Ray instance (tests/test_sweep.py starts its own). Each
# worker keeps its own numba / Warp kernel cache under .test_caches/ (tests/conftest.py: numba's
# cache index is rewritten without a lock, so two processes saving at once can corrupt it).
# `make test TEST_WORKERS=0` runs the suite in one process (no xdist), e.g. to debug a failure.
TEST_WORKERS ?= 2

test: setup
	OPENBLAS_NUM_THREADS=1 MUJOCO_GL=egl $(PY) -m pytest -q --durations=15 \
		-n $(TEST_WORKERS) --dist loadfile tests

demo: setup
	MUJOCO_GL=egl .venv/bin/softrod demo

bench: setup
	.venv/bin/softrod bench static

lint: setup
	.venv/bin/ruff check src tests
	.venv/bin/ruff format --check src tests
	.venv/bin/mypy

format: setup
	.venv/bin/ruff check --fix src tests
	.venv/bin/ruff format src tests

clean:
	rm -rf .venv runs .pytest_cache .ruff_cache .mypy_cache
