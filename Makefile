# The two commands of the README: `make demo` and `make test`. Everything else is for developers.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-unit check lint typecheck docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $@

demo: $(VENV)/.runtime
	$(BIN)/llmload demo

test: $(VENV)/.test
	bash scripts/install-test-deps.sh
	$(BIN)/ruff format --check src tests bench locustfiles
	$(BIN)/ruff check src tests bench locustfiles
	$(BIN)/mypy src
	$(BIN)/python -m pytest -q --durations=15

# The edit-test loop: lint, types and the unit tier (no sockets), in seconds.
test-unit: $(VENV)/.test
	$(BIN)/ruff format --check src tests bench locustfiles
	$(BIN)/ruff check src tests bench locustfiles
	$(BIN)/mypy src
	$(BIN)/python -m pytest -q tests/unit

check: test

docs: $(VENV)/.runtime
	$(BIN)/python -m llmload.metrics.catalog > docs/metrics.md
	$(BIN)/python -m llmload.options --update docs/options.md

clean:
	rm -rf $(VENV) results
