# Set-up and checks. `make test` and `make demo` work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck pytest demo bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check loopguard harness tests benchmarks
	$(BIN)/ruff format --check loopguard harness tests benchmarks

typecheck: install
	$(BIN)/mypy loopguard

pytest: install
	$(BIN)/python -m pytest -q

test: lint typecheck pytest

demo: install
	$(BIN)/python -m harness.demo

bench: install
	$(BIN)/python benchmarks/guard_throughput.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
