"""llama.cpp through llama-cpp-python: the peer engine users would pick instead.

`use_extra_bufts` (an arm option, off by default, recorded with every row) turns on llama.cpp's
extra buffer types: weight repacking, which on a CPU with AMX is ggml's AMX path. That path dies
with SIGILL even with tile permission granted (its tile configuration can be compiled away), so
`isa.require_kernel` refuses it on a CPU with `amx_tile`, naming the flag. The path an arm ran is
recorded as its kernel.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import numpy as np

from edgebench.engines.base import TokenStream, WindowLogprobs, window_logprobs
from edgebench.isa import llamacpp_kernel, require_kernel
from edgebench.procfs import cpu_flags


@contextlib.contextmanager
def _model_params(use_extra_bufts: bool):
    """llama-cpp-python builds its model params internally; adjust the defaults it starts from."""
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params

    def patched():
        params = original()
        params.use_extra_bufts = use_extra_bufts
        return params

    lib.llama_model_default_params = patched
    try:
        yield
    finally:
        lib.llama_model_default_params = original


class LlamaCppEngine(TokenStream):
    name = "llamacpp"

    def __init__(self) -> None:
        self.llm = None
        self.kernel = ""

    def import_engine(self) -> None:
        import llama_cpp  # noqa: F401

    def load(self, build_dir: str, arm: dict, max_model_len: int, verbose: bool = False) -> None:
        from llama_cpp import Llama

        threads = int(arm.get("threads", 1))
        extra_bufts = bool(arm.get("use_extra_bufts", False))
        flags = cpu_flags()
        self.kernel = llamacpp_kernel(arm, {}, flags)
        require_kernel(self.kernel, flags, arm.get("name", "the arm"))
        with _model_params(extra_bufts):
            self.llm = Llama(
                model_path=f"{build_dir}/model.gguf",
                n_ctx=max(max_model_len, 64),
                n_batch=max(max_model_len, 64),
                n_threads=threads,
                n_threads_batch=threads,
                logits_all=True,
                verbose=verbose,  # the memory ledger reads llama.cpp's buffer sizes from it
                seed=0,
            )

    def layer_kernels(self) -> dict[str, str]:
        """llama.cpp's CPU backend runs every weight through ggml's kernels; what differs is whether
        weights were repacked into extra buffer types (the AMX/repack path) at load."""
        return {"weights": self.kernel}

    def _decode(self, token_ids: list[int], max_tokens: int) -> Iterator[tuple[int, float]]:
        """Greedy decode that ignores EOS: evaluate the prompt, then take argmax tokens, stamping
        each as it is taken."""
        self.llm.reset()
        self.llm.eval(token_ids)
        produced = 0
        while True:
            token = int(np.argmax(self.llm.scores[self.llm.n_tokens - 1]))
            produced += 1
            yield token, time.perf_counter()
            if produced == max_tokens:
                return
            self.llm.eval([token])

    def prompt_logprobs(self, windows: list[list[int]], topk: int) -> list[WindowLogprobs]:
        results = []
        for window in windows:
            self.llm.reset()
            self.llm.eval(window)
            results.append(window_logprobs(self.llm.scores[: len(window) - 1], window, topk))
        return results

    def close(self) -> None:
        if self.llm is not None:
            self.llm.close()
            self.llm = None
