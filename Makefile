# softrod: one Makefile. Every target sets up .venv first when it is missing or stale.
PY      := .venv/bin/python
STAMP   := .venv/.installed
EXTRAS  := mujoco,rl,learn,dist,bench,web,dev
PIP     := $(PY) -m pip -q --disable-pip-version-check

.PHONY: setup test demo bench lint format clean

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv .venv
	@$(PIP) install -e ".[$(EXTRAS)]" 2>&1 | grep -v "^WARNING: Location" || true
	@$(PY) -c "import softrod" && touch $(STAMP)

setup: $(STAMP)

test: setup
	OPENBLAS_NUM_THREADS=1 MUJOCO_GL=egl $(PY) -m pytest -q --durations=15 tests

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
