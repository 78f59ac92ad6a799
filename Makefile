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

# llama.cpp's llama-server for tests/e2e/test_llama_server.py is built once (~10 min on 2 cores)
# into ~/.cache/llmload; where it cannot be built, those tests skip and say why.
test: $(VENV)/.test
	bash scripts/install-test-deps.sh
	PIP="$(BIN)/python -m pip" bash scripts/llama-server.sh >/dev/null || echo "make test: llama-server was not built (above); its tests will skip"
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
	$(BIN)/python -m llmload.cli.list_options --update docs/options.md

clean:
	rm -rf $(VENV) results
