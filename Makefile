# hive-mind — the two commands: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
PYTEST_ARGS ?=

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HIVE_MIND_TEST_REDIS_URL := $(TEST_REDIS_URL)
# compiled test modules are kept between runs (pytest's assertion rewriting is a third of a
# fast run's time otherwise)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install test test-fast lint typecheck bench run redis browser clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# torch first, pinned: the CPU wheel (a plain `torch` dependency would pull a CUDA build)
	$(VENV)/bin/pip install --quiet torch==2.13.0
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

redis: install
	@deploy/ensure-redis.sh "$(TEST_REDIS_URL)" "$(PY)"

# headless Chromium for the web console's browser tests (installed when missing)
browser:
	@deploy/ensure-browser.sh

# two workers, a test file each at a time: most tests wait on processes, servers and Redis
# (each worker has its own Redis dbs: tests/conftest.py)
test: install redis browser
	$(VENV)/bin/pytest -q -n 2 --dist loadfile $(PYTEST_ARGS)

# the unit tier: in-process tests on real SQLite files, no Redis, model or processes
# (tests/conftest.py says what falls in which tier)
test-fast: install
	$(VENV)/bin/pytest -q -n 2 --dist loadfile -m unit $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: install
	$(PY) -m bench.components.bulk_write

DEMO_DIR ?= $(CURDIR)/.hive-mind-demo

# embedded mode, no Redis: harvest examples/ into $(DEMO_DIR) and show recall results
run: install
	env -u HIVE_MIND_REDIS_URL -u HIVE_MIND_URL $(PY) examples/demo.py --data-dir "$(DEMO_DIR)"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
