# Two entry points (see README): `make site` builds the example site, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: site test gates check clean

# The virtual environment is (re)made when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

site: $(VENV)/.installed
	$(BIN)/carnet build content --out build

check: $(VENV)/.installed
	$(BIN)/carnet check content

# the type and lint gates (configured in pyproject.toml), then the whole suite
test: gates
	$(BIN)/python -m pytest

gates: $(VENV)/.installed
	$(BIN)/mypy
	$(BIN)/ruff check generator tests bench scripts

clean:
	rm -rf build .pytest_cache
