# floorman: `make demo` and `make test` work on a fresh machine with Python 3.11 and the package registries.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
DEMO_OUT ?= out/demo
# Ultralytics must never reach the network: offline, no settings sync, a project-local config dir.
export YOLO_OFFLINE := 1
export YOLO_CONFIG_DIR := $(CURDIR)/.yolo

.PHONY: demo test lint typecheck pytest bench clean venv

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The runtime (edge, rules, dashboard, simulator) needs no torch.
$(RUNTIME): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e .
	touch $(RUNTIME)

# Tests also train small models: torch + Ultralytics (the `train` extra, ~5.5 GB, installed from disk here).
$(DEV): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[dev,train]'
	touch $(DEV) $(RUNTIME)

venv: $(DEV)

demo: $(RUNTIME)
	$(VENV)/bin/floorman demo --out $(DEMO_OUT)

lint: $(DEV)
	$(VENV)/bin/ruff check src tests benchmarks

typecheck: $(DEV)
	$(VENV)/bin/mypy --strict src/

pytest: $(DEV)
	$(VENV)/bin/pytest -q

test: lint typecheck pytest

bench: $(DEV)
	$(PY) benchmarks/simulator.py

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache
