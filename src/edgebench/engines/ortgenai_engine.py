"""ONNX Runtime GenAI: a model folder written by its model builder (edgebench.models.tool_build),
run by its Generator, one token per `generate_next_token`.

The Generator is pull-based already, so the decode stream takes a token only when the caller asks.
Its KV cache is one buffer of the arm's `max_model_len` positions (past_present_share_buffer), as
vLLM reserves its cache for that length. Its quantized MatMul path is read from the graph: the
MatMulNBits nodes' bits, block size and accuracy level (4: int8 activations, where the CPU has the
instructions; 0 or 1: float)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from edgebench.engines.base import TokenStream, WindowLogprobs, window_logprobs
from edgebench.engines.chat_text import OneRequestChat, choice_scores, cut_at_stop, sampled
from edgebench.engines.token_parity import check_token_parity


def session_overlay(threads: int) -> str:
    """The genai_config overlay that gives the decoder's session the arm's threads. (GenAI's config
    cannot turn off the spinning of ORT's thread pool, so an arm of more than one thread spins while it
    waits, where the other engines' OpenMP waits passively; a one-thread arm has no pool.)"""
    options = {"intra_op_num_threads": threads, "inter_op_num_threads": 1}
    return json.dumps({"model": {"decoder": {"session_options": options}}})


def matmul_paths(model_path: Path) -> dict[str, str]:
    """Per weight kind, the op ORT runs and, for MatMulNBits, its bits, block and accuracy level."""
    import onnx

    graph = onnx.load(str(model_path), load_external_data=False).graph
    seen: dict[str, Counter] = {}
    for node in graph.node:
        weights = node.op_type in ("MatMulNBits", "MatMul") or "embed" in node.name
        if not weights or node.op_type not in ("MatMulNBits", "MatMul", "GatherBlockQuantized", "Gather"):
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        label = node.op_type
        if "bits" in attrs:
            level = attrs.get("accuracy_level", 0)
            label += f"(bits={attrs['bits']},block={attrs.get('block_size')},accuracy_level={level})"
        kind = (
            "lm_head" if "lm_head" in node.name else ("embedding" if "Gather" in node.op_type else "linear")
        )
        seen.setdefault(kind, Counter())[label] += 1
    return {kind: "+".join(sorted(labels)) for kind, labels in sorted(seen.items())}


def guidance(schema: dict | str) -> tuple[str, str]:
    """ORT GenAI's guidance for one reply: a pattern, or a JSON schema decoded without free whitespace
    (llguidance's option; vLLM's structured outputs decode the same compact JSON here)."""
    if isinstance(schema, str):
        return "regex", schema
    return "json_schema", json.dumps({**schema, "x-guidance": {"whitespace_flexible": False}})


class OrtGenaiEngine(TokenStream, OneRequestChat):
    name = "ortgenai"

    def __init__(self) -> None:
        self.model = self.tokenizer = self.template = None
        self.max_length = 0
        self.kernels: dict[str, str] = {}
        self.build_dir = ""

    def import_engine(self) -> None:
        import onnxruntime_genai  # noqa: F401

    def load(self, build_dir: str, arm: dict, max_model_len: int, **batching) -> None:
        """`batching`: the agent suite's options for vLLM's batched engine, which a generator that
        serves one sequence has no use for."""
        import onnxruntime_genai as og

        config = og.Config(build_dir)
        config.overlay(session_overlay(int(arm.get("threads", 1))))
        self.model = og.Model(config)
        self.max_length = max(int(max_model_len), 64)
        self.tokenizer = og.Tokenizer(self.model)
        check_token_parity(self.name, build_dir, self.tokenizer.encode)
        self.kernels = matmul_paths(Path(build_dir) / "model.onnx")
        self.build_dir = build_dir

    def layer_kernels(self) -> dict[str, str]:
        return dict(self.kernels)

    def _generator(self, token_ids: list[int], max_tokens: int):
        import onnxruntime_genai as og

        params = og.GeneratorParams(self.model)
        total = len(token_ids) + max_tokens
        if total > self.max_length:
            raise ValueError(
                f"{len(token_ids)} prompt + {max_tokens} new tokens exceed max_model_len {self.max_length}"
            )
        # greedy, and EOS cannot end it early (min_length): every arm decodes the same count
        params.set_search_options(max_length=self.max_length, min_length=total, do_sample=False)
        generator = og.Generator(self.model, params)
        generator.append_tokens(np.asarray([token_ids], dtype=np.int32))
        return generator

    def _decode(self, token_ids: list[int], max_tokens: int) -> Iterator[tuple[int, float]]:
        generator = self._generator(token_ids, max_tokens)
        for _ in range(max_tokens):
            generator.generate_next_token()
            yield int(generator.get_next_tokens()[0]), time.perf_counter()

    def prompt_logprobs(self, windows: list[list[int]], topk: int) -> list[WindowLogprobs]:
        """The prompt pass's logits: the builder's graph returns one row per position."""
        results = []
        for window in windows:
            generator = self._generator(window, 1)
            logits = np.asarray(generator.get_output("logits"))[0, : len(window) - 1]
            results.append(window_logprobs(logits, window, topk))
        return results

    def _reply(self, ids: list[int], seed: int, sampling: dict, schema) -> str:
        import onnxruntime_genai as og

        params = og.GeneratorParams(self.model)
        options = {"max_length": min(len(ids) + int(sampling["max_new_tokens"]), self.max_length)}
        options["do_sample"] = sampled(sampling)
        if sampled(sampling):
            options.update(
                temperature=float(sampling["temperature"]),
                top_p=float(sampling["top_p"]),
                random_seed=seed % 2**31,
            )
        params.set_search_options(**options)
        if schema:
            params.set_guidance(*guidance(schema))
        generator = og.Generator(self.model, params)
        generator.append_tokens(np.asarray([ids], dtype=np.int32))
        stream, text, stops = self.tokenizer.create_stream(), "", sampling.get("stop") or []
        while not generator.is_done():
            generator.generate_next_token()
            text, stopped = cut_at_stop(text + stream.decode(int(generator.get_next_tokens()[0])), stops)
            if stopped:
                break
        return text

    def choice_logprobs(self, prompts: list[str], reply_prefix: str, choices: list[str]) -> list[list[float]]:
        """Each choice's first-token log-probability after the chat text (one prompt pass each)."""
        template = self._chat_template()
        choice_ids = template.first_tokens(choices)
        scores = []
        for prompt in prompts:
            generator = self._generator(template.ids(prompt, reply_prefix), 1)
            scores.append(choice_scores(np.asarray(generator.get_output("logits"))[0, -1], choice_ids))
        return scores

    def close(self) -> None:
        self.model = self.tokenizer = None
