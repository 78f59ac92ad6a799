# The two commands of the README: `make demo` and `make test`. Everything else is for developers.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SOURCES := src tests bench locustfiles

.PHONY: demo test test-unit lint typecheck check bench docs clean test-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip

# The package alone: the demo's report.html draws its charts without any extra.
$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# What developers add: every extra, and the test and lint dependency groups.
$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[report,tokenize,otlp,postgres]' --group test --group lint
	touch $@ $(VENV)/.runtime

test-venv: $(VENV)/.test

demo: $(VENV)/.runtime
	$(BIN)/llmload demo

# Debian's prometheus, chromium, postgresql, cmake and g++ (as root), llama.cpp's llama-server
# built once (about 5 minutes on 2 cores) into ~/.cache/llmload while the venv installs and the
# first tiers run; then lint, types and the tiers (scripts/test.sh prints each tier's time). Where
# llama-server cannot be built its tests skip, except under CI=true, where a skip fails the run.
test:
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/test.sh

# The edit-test loop: lint, types and the unit tier (no sockets), in about a minute.
test-unit: lint typecheck
	$(BIN)/python -m pytest -q -n 2 tests/unit

lint: $(VENV)/.test
	$(BIN)/ruff format --check $(SOURCES)
	$(BIN)/ruff check $(SOURCES)

typecheck: $(VENV)/.test
	$(BIN)/mypy src

check: test

# The benchmarks of bench/, side by side in one run (bench/run_all.py; --smoke runs in make test).
bench: $(VENV)/.test
	$(BIN)/python bench/run_all.py

docs: $(VENV)/.runtime
	$(BIN)/python -m llmload.metrics.catalog_doc > docs/metrics.md
	$(BIN)/python -m llmload.cli.list_options --update docs/options.md

clean:
	rm -rf $(VENV) results
