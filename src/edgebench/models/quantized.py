"""One entry point for every quantized build method (the quant_build rule calls this)."""

from __future__ import annotations

from pathlib import Path


def build_quantized(reference_dir: Path, out_dir: Path, name: str, spec: dict, model_cfg: dict) -> dict:
    method = spec["method"]
    if method == "existing":
        from edgebench.models.existing import build_existing

        return build_existing(out_dir, name, spec)
    if method == "gptq":
        from edgebench.models.gptq import build_gptq

        return build_gptq(reference_dir, out_dir, name, spec)
    if method in ("rtn", "w8a8"):
        from edgebench.models.rtn_build import build_rtn

        return build_rtn(reference_dir, out_dir, name, spec)
    if method in ("openvino", "ortgenai"):
        from edgebench.jobs import environment_of
        from edgebench.models.tool_build import build_with_tool

        return build_with_tool(reference_dir, out_dir, name, spec, environment_of(spec) or {})
    if method == "gguf":
        from edgebench.models.gguf_build import build_gguf
        from edgebench.models.source import model_gguf

        if model_cfg["kind"] == "tiny_random":
            return build_gguf(reference_dir, out_dir, name, spec, None)
        with model_gguf(model_cfg, out_dir.parent / f".{out_dir.name}.source") as source:
            return build_gguf(reference_dir, out_dir, name, spec, source)
    raise ValueError(f"unknown build method {method!r}")
