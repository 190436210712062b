"""transformers, eager bf16: the reference arm, benchmarked like any other."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from edgebench.engines.base import WindowLogprobs, layer_kernels_of, top_k


class HfEngine:
    name = "hf"

    def __init__(self) -> None:
        self.model = None

    def import_engine(self) -> None:
        import torch  # noqa: F401
        import transformers  # noqa: F401

    def load(self, build_dir: str, arm: dict, max_model_len: int) -> None:
        import torch
        from transformers import AutoModelForCausalLM

        torch.set_num_threads(int(arm.get("threads", 2)))
        self.model = AutoModelForCausalLM.from_pretrained(
            build_dir,
            torch_dtype=torch.bfloat16,
            trust_remote_code=False,
            use_safetensors=True,
            attn_implementation="eager",
        ).eval()

    def generate(self, token_ids: list[int], max_tokens: int, streamer=None) -> list[int]:
        import torch

        ids = torch.tensor([token_ids])
        with torch.inference_mode():
            out = self.model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=max_tokens,
                min_new_tokens=max_tokens,
                do_sample=False,
                pad_token_id=0,
                streamer=streamer,
            )
        return out[0, ids.shape[1] :].tolist()

    def layer_kernels(self) -> dict[str, str]:
        """The module class of each linear layer type (transformers runs them in torch)."""
        return layer_kernels_of(self.model, _linear_class)

    def generate_stamped(self, token_ids: list[int], max_tokens: int) -> list[float]:
        streamer = StampStreamer()
        self.generate(token_ids, max_tokens, streamer)
        return streamer.stamps

    def decode_stream(self, token_ids: list[int], max_tokens: int) -> Iterator[float]:
        """Greedy steps with the KV cache, one forward a pull, a stamp per token: the same decode
        as `generate`, advanced only as the caller asks (the interleaved design's bursts)."""
        import torch

        with torch.inference_mode():
            out = self.model(torch.tensor([token_ids]), use_cache=True)
        for produced in range(1, max_tokens + 1):
            token = out.logits[:, -1:].argmax(dim=-1)
            yield time.perf_counter()
            if produced == max_tokens:
                return
            with torch.inference_mode():  # entered per step: the caller runs between two pulls
                out = self.model(token, past_key_values=out.past_key_values, use_cache=True)

    def batch_logprobs(self, batch: list[list[int]]) -> list[np.ndarray]:
        """Full-vocabulary log-probabilities for several equal-length sequences in one forward pass."""
        import torch

        with torch.inference_mode():
            logits = self.model(torch.tensor(batch)).logits[:, :-1].float()
        return list(torch.log_softmax(logits, dim=-1).numpy())

    def full_logprobs(self, token_ids: list[int]) -> np.ndarray:
        """Full-vocabulary float32 log-probabilities for positions 1..n-1."""
        import torch

        with torch.inference_mode():
            logits = self.model(torch.tensor([token_ids])).logits[0, :-1].float()
        return torch.log_softmax(logits, dim=-1).numpy()

    def prompt_logprobs(self, windows: list[list[int]], topk: int) -> list[WindowLogprobs]:
        results = []
        for window in windows:
            full = self.full_logprobs(window)
            top = top_k(full, topk)
            targets = full[np.arange(len(full)), window[1:]]
            results.append(
                WindowLogprobs(
                    top, np.take_along_axis(full, top, axis=1).astype(np.float64), targets, full=full
                )
            )
        return results

    def close(self) -> None:
        self.model = None


def _linear_class(module) -> str | None:
    name = type(module).__name__
    return name if name.endswith("Linear") else None


class StampStreamer:
    """A transformers streamer that stamps each generated token (its first `put` is the prompt)."""

    def __init__(self) -> None:
        self.stamps: list[float] = []
        self.prompt_seen = False

    def put(self, value) -> None:
        if not self.prompt_seen:
            self.prompt_seen = True
            return
        self.stamps += [time.perf_counter()] * int(value.numel())

    def end(self) -> None:
        pass
