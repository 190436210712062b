"""One Engine protocol, one implementation per engine; the bench worker and fidelity use only this."""

from __future__ import annotations

from edgebench.engines.base import Engine


def make_engine(engine: str) -> Engine:
    """Construct (without importing the engine's heavy packages) the implementation for a name."""
    if engine == "vllm":
        from edgebench.engines.vllm_engine import VllmEngine

        return VllmEngine()
    if engine == "hf":
        from edgebench.engines.hf_engine import HfEngine

        return HfEngine()
    if engine == "llamacpp":
        from edgebench.engines.llamacpp_engine import LlamaCppEngine

        return LlamaCppEngine()
    raise ValueError(f"unknown engine {engine!r}; known: vllm, hf, llamacpp")
