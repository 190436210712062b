"""The bf16 reference checkpoint: dequantized from the shipped GGUF, or a tiny random Llama for tests.

The default reference is SmolLM2-135M-Instruct *dequantized from Q4_1* (the only weights that ship
offline), so "fidelity" means closeness to that model, not to the original bf16 release.
"""

from __future__ import annotations

import json
from pathlib import Path

from edgebench.models.build_record import file_digest, fresh_build_dir, stopwatch, write_build_json
from edgebench.models.ggufmeta import gguf_metadata
from edgebench.models.source import model_gguf

CORPUS_DIR = Path(__file__).resolve().parents[1] / "data"


def _clean_config(out_dir: Path) -> None:
    """Drop quantization_config so engines load the bf16 weights as plain weights."""
    path = out_dir / "config.json"
    config = json.loads(path.read_text())
    config.pop("quantization_config", None)
    config["torch_dtype"] = "bfloat16"
    config.pop("dtype", None)
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def _check_finite(model) -> None:
    import torch

    for name, tensor in model.state_dict().items():
        if not torch.isfinite(tensor.float()).all():
            raise ValueError(f"reference tensor {name} holds NaN or Inf")


def _write_reference_json(
    out_dir: Path, method: str, model, seconds: float, source: str, digest: str
) -> dict:
    return write_build_json(
        out_dir,
        {
            "build": "reference",
            "method": method,
            "bits": 16,
            "group_size": None,
            "sym": None,
            "format": "safetensors-bf16",
            "bits_per_weight": 16.0,
            "parameters": sum(p.numel() for p in model.parameters()),
            "build_s": seconds,
            "source": source,
            "source_digest": digest,
        },
    )


def keep_add_bos(tokenizer, gguf_path: Path) -> bool | None:
    """Give the converted tokenizer the GGUF's add-BOS setting (transformers' GGUF conversion drops
    it: Gemma's tokenizer then starts prompts without <bos> and the model degenerates). Returns the
    GGUF's setting (None when it has none)."""
    key = "tokenizer.ggml.add_bos_token"
    add_bos = gguf_metadata(gguf_path, lambda k: k == key).get(key)
    if add_bos is not None:
        tokenizer.add_bos_token = bool(add_bos)
    return add_bos


def reference_from_gguf(gguf_path: Path, out_dir: Path) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out_dir.mkdir(parents=True, exist_ok=True)
    with stopwatch() as clock:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
        add_bos = keep_add_bos(tokenizer, gguf_path)
        loaded = AutoModelForCausalLM.from_pretrained(
            str(gguf_path.parent), gguf_file=gguf_path.name, torch_dtype=torch.bfloat16
        )
        # The GGUF loader marks the model as quantized (not serialisable); rebuild a plain model
        # from a config without quantization_config and copy the dequantized weights across.
        config = loaded.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
        model.load_state_dict(loaded.state_dict())
        model = model.to(torch.bfloat16)
        del loaded
        _check_finite(model)
        model.save_pretrained(out_dir, safe_serialization=True)
        tokenizer.save_pretrained(out_dir)
        _clean_config(out_dir)
    return _write_reference_json(
        out_dir,
        "dequantized-gguf",
        model,
        clock["seconds"],
        f"{gguf_path.name} (dequantized GGUF, add_bos_token {add_bos})",
        file_digest(gguf_path),
    )


CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def train_tiny_tokenizer(vocab_size: int, out_dir: Path):
    """A byte-level BPE trained on the shipped corpus: tests need a real tokenizer, and no hub."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = [p.read_text() for p in sorted((CORPUS_DIR / "corpus").glob("*.txt"))]
    texts += [p.read_text() for p in sorted((CORPUS_DIR / "calibration").glob("*.txt"))]
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<|im_start|>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    fast.chat_template = CHATML  # agent trials format prompts with the build's own chat template
    fast.save_pretrained(out_dir)
    return fast


def tiny_random_reference(model_cfg: dict, out_dir: Path) -> dict:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out_dir.mkdir(parents=True, exist_ok=True)
    with stopwatch() as clock:
        tokenizer = train_tiny_tokenizer(int(model_cfg["vocab_size"]), out_dir)
        torch.manual_seed(int(model_cfg.get("seed", 0)))
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=model_cfg["hidden_size"],
            intermediate_size=model_cfg["intermediate_size"],
            num_hidden_layers=model_cfg["layers"],
            num_attention_heads=model_cfg["heads"],
            num_key_value_heads=model_cfg["kv_heads"],
            max_position_embeddings=2048,
            tie_word_embeddings=True,
            initializer_range=0.2,  # peaked next-token distributions, so argmax agreement is meaningful
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
        model = LlamaForCausalLM(config).to(torch.bfloat16)
        _check_finite(model)
        model.save_pretrained(out_dir, safe_serialization=True)
        _clean_config(out_dir)
    return _write_reference_json(
        out_dir,
        "tiny-random",
        model,
        clock["seconds"],
        f"random Llama {json.dumps(model_cfg, sort_keys=True)}",
        "",
    )


def reference_from_hf_dir(source: Path, out_dir: Path) -> dict:
    """A checkpoint folder on disk as the reference: its config, safetensors weights and tokenizer
    files copied (no pickles, no code), its config made plain bf16."""
    import shutil

    from edgebench.models.local import hf_dir_summary, safetensors_parameters

    with stopwatch() as clock:
        hf_dir_summary(source)  # refuses pickles, remote code, unknown architectures
        for path in sorted(source.iterdir()):
            if path.is_file() and (path.suffix in (".json", ".safetensors", ".jinja", ".model", ".txt")):
                shutil.copy2(path, out_dir / path.name)
        _clean_config(out_dir)
        weights = sorted(out_dir.glob("*.safetensors"))
        parameters = sum(safetensors_parameters(p) for p in weights)
    return write_build_json(
        out_dir,
        {
            "build": "reference",
            "method": "hf-dir",
            "bits": 16,
            "group_size": None,
            "sym": None,
            "format": "safetensors-bf16",
            "bits_per_weight": 16.0,
            "parameters": parameters,
            "build_s": clock["seconds"],
            "source": f"{source} (checkpoint folder)",
            "source_digest": file_digest(weights[0]),
        },
    )


def build_reference(model_cfg: dict, out_dir: Path) -> dict:
    with fresh_build_dir(out_dir) as tmp:
        if model_cfg["kind"] == "hf_dir":
            return reference_from_hf_dir(Path(model_cfg["path"]), tmp)
        if model_cfg["kind"] in ("gguf_package", "gguf_parts", "gguf_file"):
            with model_gguf(model_cfg, out_dir.parent / f".{out_dir.name}.source") as gguf_path:
                return reference_from_gguf(gguf_path, tmp)
        if model_cfg["kind"] == "tiny_random":
            return tiny_random_reference(model_cfg, tmp)
        raise ValueError(f"unknown model kind {model_cfg['kind']!r}")
