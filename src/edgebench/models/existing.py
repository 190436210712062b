"""A checkpoint the user already has, measured as a build (`method: existing` with `path`): a GPTQ,
AWQ or compressed-tensors folder for vLLM arms, or a GGUF file for llama.cpp arms. It is copied into
the build folder and its build.json records what was read from it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from edgebench.models.build_record import file_digest, fresh_build_dir, stopwatch, write_build_json
from edgebench.models.gguf_build import tensor_histogram
from edgebench.models.local import gguf_summary, hf_dir_summary, safetensors_parameters

COPIED = (".json", ".safetensors", ".jinja", ".model", ".txt")


def quantization_facts(config: dict) -> dict:
    """bits, group size and symmetry from a checkpoint's quantization_config (GPTQ, AWQ or
    compressed-tensors); None where the checkpoint does not say."""
    quant = config.get("quantization_config") or {}
    if "bits" in quant or "w_bit" in quant:  # GPTQ / AWQ
        sym = quant.get("sym", not quant.get("zero_point", False))
        return {
            "bits": quant.get("bits", quant.get("w_bit")),
            "group_size": quant.get("group_size"),
            "sym": sym,
        }
    for group in (quant.get("config_groups") or {}).values():  # compressed-tensors
        weights = group.get("weights") or {}
        return {
            "bits": weights.get("num_bits"),
            "group_size": weights.get("group_size"),
            "sym": weights.get("symmetric"),
        }
    return {"bits": 16, "group_size": None, "sym": None}


def build_existing(out_dir: Path, name: str, spec: dict) -> dict:
    with fresh_build_dir(out_dir) as tmp:
        return _copy_existing(Path(spec["path"]), tmp, name)


def _copy_existing(source: Path, out_dir: Path, name: str) -> dict:
    with stopwatch() as clock:
        if source.suffix == ".gguf":
            summary = gguf_summary(source)
            shutil.copy2(source, out_dir / "model.gguf")
            # a GGUF mixes tensor types (a Q4_K_M file holds Q4_K, Q5_0, Q6_K, Q8_0 and F32): its
            # histogram and real bits per weight say what it is, not one bit width
            types, _, parameters = tensor_histogram(out_dir / "model.gguf")
            facts, fmt = {"bits": None, "group_size": None, "sym": None, "tensor_types": types}, "gguf"
            digest = file_digest(out_dir / "model.gguf")
        else:
            summary = hf_dir_summary(source)
            for path in sorted(source.iterdir()):
                if path.is_file() and path.suffix in COPIED:
                    shutil.copy2(path, out_dir / path.name)
            config = json.loads((out_dir / "config.json").read_text())
            facts = quantization_facts(config)
            fmt = (config.get("quantization_config") or {}).get("quant_method", "safetensors")
            weights = sorted(out_dir.glob("*.safetensors"))
            bits = facts["bits"] if isinstance(facts["bits"], int) and facts["bits"] < 16 else None
            parameters = sum(safetensors_parameters(p, bits) for p in weights)
            digest = file_digest(weights[0])
    bits_per_weight = summary["bytes"] * 8 / parameters if parameters else None
    return write_build_json(
        out_dir,
        {
            "build": name,
            "method": "existing",
            **facts,
            "format": fmt,
            "bits_per_weight": bits_per_weight,
            "parameters": parameters,
            "build_s": clock["seconds"],
            "source": f"{source} (existing checkpoint, {summary['tensors']} tensors)",
            "source_digest": digest,
        },
    )
