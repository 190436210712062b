"""GGUF builds for llama.cpp: the reference written as f16 GGUF with the `gguf` package (Llama
architecture), then quantized by llama.cpp's own quantize API (the gguf package cannot make K-quants).
build.json records the tensor-type histogram and the real bits per weight."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from edgebench.models.build_record import file_digest, fresh_build_dir, stopwatch, write_build_json
from edgebench.models.gptq import BuildError

FTYPES = {
    "f16": "LLAMA_FTYPE_MOSTLY_F16",
    "q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0",
    "q4_1": "LLAMA_FTYPE_MOSTLY_Q4_1",
    "q4_k_m": "LLAMA_FTYPE_MOSTLY_Q4_K_M",
    "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0",
}
LAYER_TENSORS = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}


def rope_permute(weight: np.ndarray, heads: int) -> np.ndarray:
    """HF stores q/k in rotate-half order; GGUF (llama.cpp) expects the interleaved order."""
    return (
        weight.reshape(heads, 2, weight.shape[0] // heads // 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def gguf_tensor_name(hf_name: str) -> str | None:
    if hf_name == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf_name == "model.norm.weight":
        return "output_norm.weight"
    if hf_name == "lm_head.weight":
        return "output.weight"
    parts = hf_name.split(".")
    if parts[:2] == ["model", "layers"]:
        key = ".".join(parts[3:-1])
        if key in LAYER_TENSORS:
            return f"blk.{parts[2]}.{LAYER_TENSORS[key]}.weight"
    return None


def _tokenizer_from_gguf(writer, source: Path) -> None:
    """Copy every tokenizer.* key from the GGUF the reference was made from (same vocabulary)."""
    from gguf import GGUFReader, GGUFValueType

    for field in GGUFReader(str(source)).fields.values():
        if not field.name.startswith("tokenizer."):
            continue
        main = field.types[0]
        sub = field.types[-1] if main == GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), main, sub)


def _tokenizer_from_json(writer, reference_dir: Path) -> None:
    """A byte-level BPE from tokenizer.json (the tiny test models)."""
    spec = json.loads((reference_dir / "tokenizer.json").read_text())
    vocab = spec["model"]["vocab"]
    special = {t["id"]: t["content"] for t in spec.get("added_tokens", [])}
    tokens = [None] * (max([*vocab.values(), *special]) + 1)
    for token, index in {**vocab, **{v: k for k, v in special.items()}}.items():
        tokens[index] = token
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    config = json.loads((reference_dir / "tokenizer_config.json").read_text())
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")  # llama.cpp's name for the GPT-2 byte-level pre-tokenizer
    writer.add_token_list([t or f"[PAD{i}]" for i, t in enumerate(tokens)])
    writer.add_token_types([3 if i in special else 1 for i in range(len(tokens))])
    writer.add_token_merges(merges)
    ids = {content: index for index, content in special.items()}
    if config.get("bos_token") in ids:
        writer.add_bos_token_id(ids[config["bos_token"]])
    if config.get("eos_token") in ids:
        writer.add_eos_token_id(ids[config["eos_token"]])


def write_f16_gguf(reference_dir: Path, out_path: Path, source_gguf: Path | None) -> None:
    import gguf
    import torch
    from safetensors.torch import load_file

    config = json.loads((reference_dir / "config.json").read_text())
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    writer = gguf.GGUFWriter(str(out_path), "llama")
    writer.add_name("edgebench-reference")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_rope_dimension_count(config["hidden_size"] // heads)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    rope = config.get("rope_parameters") or {}
    writer.add_rope_freq_base(float(rope.get("rope_theta", config.get("rope_theta", 10000.0))))
    writer.add_vocab_size(config["vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    if source_gguf is not None:
        _tokenizer_from_gguf(writer, source_gguf)
    else:
        _tokenizer_from_json(writer, reference_dir)
    template = reference_dir / "chat_template.jinja"
    if template.exists():
        writer.add_chat_template(template.read_text())
    for name, tensor in load_file(str(reference_dir / "model.safetensors")).items():
        target = gguf_tensor_name(name)
        if target is None:
            raise BuildError(f"no GGUF name for tensor {name}")
        data = tensor.to(torch.float32).numpy()
        if name.endswith("q_proj.weight"):
            data = rope_permute(data, heads)
        elif name.endswith("k_proj.weight"):
            data = rope_permute(data, kv_heads)
        writer.add_tensor(target, data.astype(np.float32 if data.ndim == 1 else np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def quantize_gguf(f16_path: Path, out_path: Path, kind: str, threads: int) -> None:
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, FTYPES[kind])
    params.nthread = threads
    status = llama_cpp.llama_model_quantize(str(f16_path).encode(), str(out_path).encode(), params)
    if status != 0:
        raise BuildError(f"llama.cpp quantize to {kind} failed with status {status}")


def tensor_histogram(path: Path) -> tuple[dict[str, int], float, int]:
    """Tensor types by count, bits per weight over all tensors (bytes * 8 / elements), elements."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    types = Counter(t.tensor_type.name for t in reader.tensors)
    n_bytes = sum(int(t.n_bytes) for t in reader.tensors)
    n_elements = sum(int(t.n_elements) for t in reader.tensors)
    return dict(types), 8 * n_bytes / n_elements, n_elements


def build_gguf(reference_dir: Path, out_dir: Path, name: str, spec: dict, source_gguf: Path | None) -> dict:
    kind = spec["gguf_type"]
    if kind not in FTYPES:
        raise BuildError(f"unknown gguf_type {kind!r}; known: {sorted(FTYPES)}")
    with fresh_build_dir(out_dir) as tmp:
        with stopwatch() as clock:  # closed before build.json is written, so build_s is set
            f16 = tmp / "model-f16.gguf"
            write_f16_gguf(reference_dir, f16, source_gguf)
            final = tmp / "model.gguf"
            if kind == "f16":
                f16.rename(final)
            else:
                quantize_gguf(f16, final, kind, int(spec.get("threads", 2)))
                f16.unlink()
        histogram, bpw, elements = tensor_histogram(final)
        return write_build_json(
            tmp,
            {
                "build": name,
                "method": "gguf",
                "bits": {"f16": 16, "q8_0": 8}.get(kind, 4),
                "group_size": None,
                "sym": None,
                "format": f"gguf-{kind}",
                "bits_per_weight": bpw,
                "tensor_types": histogram,
                "parameters": elements,
                "build_s": clock["seconds"],
                "source": "reference",
                "source_digest": file_digest(reference_dir / "model.safetensors"),
            },
        )
