"""Memory ledgers of the engines that run a converter's folder (OpenVINO GenAI, ORT GenAI): what
their process's RssAnon holds after a filled context, beside the build's weight files and the KV
cache the engine keeps for the arm's context length."""

from __future__ import annotations

from pathlib import Path

from edgebench.bench.contract import EngineSpec
from edgebench.diagnostics.ledger import in_process_rows
from edgebench.models.hf_config import model_config


def weight_file_views(build_dir: str, names: tuple[str, ...]) -> list[dict]:
    """The weight files' sizes: a view, not a part, since an engine may map them (file pages) or
    repack them into anonymous memory, and the ledger cannot tell which from outside."""
    rows = []
    for name in names:
        path = Path(build_dir) / name
        if path.is_file():
            rows.append(
                {"component": f"weight file {name}", "mb": path.stat().st_size / 2**20, "method": "file size"}
            )
    return rows


def kv_cache_mb(build_dir: str, positions: int, bytes_per_value: float) -> float:
    """Keys and values of every layer for `positions` positions."""
    config = model_config(build_dir)
    heads = config.get("num_key_value_heads") or config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return 2 * config["num_hidden_layers"] * heads * head_dim * positions * bytes_per_value / 2**20


def _filled(engine, spec: EngineSpec) -> None:
    engine.load(spec.build_dir, spec.options, spec.max_model_len)
    engine.generate(spec.filled_context_prompt(), 1)


def openvino_ledger(spec: EngineSpec) -> list[dict]:
    from edgebench.engines.openvino_engine import OpenVinoEngine

    engine = OpenVinoEngine()
    _filled(engine, spec)
    # OpenVINO's KV cache grows with the context, at the precision it chose (u8 where it compresses)
    precision = engine.layer_kernels()["kv_cache_precision"]
    width = 1 if "8" in precision else (2 if "16" in precision else 4)
    attributed = [
        {
            "component": "KV cache of the filled context",
            "mb": kv_cache_mb(spec.build_dir, spec.max_model_len, width),
            "method": f"estimate: 2 x layers x KV heads x head dim x positions x {width} B ({precision})",
        }
    ]
    return in_process_rows(engine, attributed, weight_file_views(spec.build_dir, ("openvino_model.bin",)))


def ortgenai_ledger(spec: EngineSpec) -> list[dict]:
    from edgebench.engines.ortgenai_engine import OrtGenaiEngine

    engine = OrtGenaiEngine()
    _filled(engine, spec)
    # one float32 buffer of max_length positions, shared by past and present (past_present_share_buffer)
    attributed = [
        {
            "component": "KV cache buffer (max_model_len positions)",
            "mb": kv_cache_mb(spec.build_dir, max(spec.max_model_len, 64), 4),
            "method": "estimate: 2 x layers x KV heads x head dim x max_model_len x 4 B",
        }
    ]
    return in_process_rows(engine, attributed, weight_file_views(spec.build_dir, ("model.onnx.data",)))
