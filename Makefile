# floorman: `make demo` and `make test` work on a fresh machine with Python 3.11 and the package registries.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
DEMO_OUT ?= out/demo

.PHONY: demo test lint typecheck pytest bench clean venv train-env

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# Torch + Ultralytics (~5.5 GB): only for training the detector, never for the runtime.
train-env: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,train]'

demo: $(STAMP)
	$(VENV)/bin/floorman datasets preview --out $(DEMO_OUT)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict src/

pytest: $(STAMP)
	$(VENV)/bin/pytest -q

test: lint typecheck pytest

bench: $(STAMP)
	$(PY) benchmarks/simulator.py

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache
