# Set-up and checks. `make test` and `make demo` work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install postgres test lint typecheck pytest demo bench lab clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The distributed-sweep tests start their own PostgreSQL server from Debian's binaries.
postgres:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing PostgreSQL server binaries (apt-get)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	else echo "PostgreSQL binaries missing: the postgres tests will be skipped (outside CI)"; fi

lint: install
	$(BIN)/ruff check loopguard harness tests benchmarks notebooks
	$(BIN)/ruff format --check loopguard harness tests benchmarks notebooks

typecheck: install
	$(BIN)/mypy loopguard

pytest: install postgres
	$(BIN)/python -m pytest -q

test: lint typecheck pytest

demo: install
	$(BIN)/python -m harness.demo

lab: install
	$(BIN)/python -m pip install --quiet -e '.[lab]'
	$(BIN)/jupyter lab notebooks/

bench: install
	$(BIN)/python benchmarks/guard_throughput.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
