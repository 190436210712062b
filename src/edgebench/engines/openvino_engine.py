"""OpenVINO GenAI: an OpenVINO IR folder exported by optimum-intel (edgebench.models.tool_build),
run by GenAI on the CPU device.

Decoding runs GenAI's continuous-batching pipeline (what LLMPipeline runs on a CPU) one `step()` at a
time: a step is one decode step, so each token is stamped as its step returns, and the interleaved
design's stream computes only when pulled. (GenAI's streamer callback cannot stamp steps: it runs
in a thread of its own while generation goes on, so a callback that waits does not pause decoding.)
OpenVINO picks its inference precision itself (bf16 where the
CPU has the instructions, else f32) and keeps the KV cache at a precision of its own choosing: both,
and each layer's runtime precision, are read from the compiled model and recorded as layer kernels.
Teacher-forced logits come from the same IR compiled by OpenVINO's runtime with the same
properties (the pipeline itself returns generated tokens only).
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from edgebench.engines.base import TokenStream, WindowLogprobs, window_logprobs
from edgebench.engines.chat_text import OneRequestChat, choice_scores, cut_at_stop, sampled
from edgebench.engines.token_parity import check_token_parity

MODEL_XML = "openvino_model.xml"


def ov_properties(arm: dict) -> dict:
    """The arm's threads, and no pinning by OpenVINO: the coordinator pins every engine the same way."""
    return {"INFERENCE_NUM_THREADS": int(arm.get("threads", 1)), "ENABLE_CPU_PINNING": False}


def _layer_kind(name: str) -> str:
    lowered = name.lower()
    if "lm_head" in lowered:
        return "lm_head"
    if "embed" in lowered:
        return "embedding"
    return "linear"


def runtime_kernels(compiled) -> dict[str, str]:
    """Per weight kind, OpenVINO's layer type and the precision it runs at, plus its chosen
    inference and KV cache precisions, read from the compiled model."""
    seen: dict[str, Counter] = {}
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        layer = info["layerType"].astype(str)
        if layer not in ("FullyConnected", "MatMul") or "aten::matmul" in op.get_friendly_name():
            continue  # attention's own matmuls are not weights
        label = f"{layer}:{info['runtimePrecision'].astype(str)}"
        seen.setdefault(_layer_kind(op.get_friendly_name()), Counter())[label] += 1
    kernels = {kind: "+".join(sorted(labels)) for kind, labels in sorted(seen.items())}
    kernels["inference_precision"] = compiled.get_property("INFERENCE_PRECISION_HINT").to_string()
    kernels["kv_cache_precision"] = compiled.get_property("KV_CACHE_PRECISION").to_string()
    return kernels


def compact_json_grammar(schema: dict) -> str:
    """The schema as xgrammar's grammar for JSON without free whitespace (what vLLM's structured
    outputs decode under here), in the EBNF OpenVINO GenAI's own xgrammar reads: its JSON-schema
    option admits any whitespace between tokens, which a small model fills its token budget with."""
    import xgrammar

    ebnf = str(xgrammar.Grammar.from_json_schema(json.dumps(schema), any_whitespace=False))
    ebnf = re.sub(r"\{0, ?-1\}", "*", ebnf)  # unbounded repeats, in the older syntax
    ebnf = re.sub(r"\{1, ?-1\}", "+", ebnf)
    return re.sub(r"\{(\d+), ?-1\}", r"{\1,}", ebnf)


def structured_output(schema: dict | str):
    """GenAI's structured output for one reply: a pattern (a string) or a JSON schema."""
    import openvino_genai as og

    if isinstance(schema, str):
        return og.StructuredOutputConfig(regex=schema)
    return og.StructuredOutputConfig(grammar=compact_json_grammar(schema))


class OpenVinoEngine(TokenStream, OneRequestChat):
    name = "openvino"

    def __init__(self) -> None:
        self.pipe = None
        self.build_dir = ""
        self.properties: dict = {}
        self.compiled = None
        self.template = None
        self.requests = itertools.count()
        self.last_perf = None  # the pipeline's own metrics of the last generation (the cross-check)

    def import_engine(self) -> None:
        import openvino_genai  # noqa: F401

    def load(self, build_dir: str, arm: dict, max_model_len: int, **batching) -> None:
        """`batching`: the agent suite's options for vLLM's batched engine; this pipeline serves
        one request at a time."""
        import openvino_genai as og

        self.build_dir, self.properties = build_dir, ov_properties(arm)
        scheduler = og.SchedulerConfig()
        # a prompt is prefilled in one step, as the other engines do (GenAI's default splits it)
        scheduler.max_num_batched_tokens = max(int(max_model_len), 64)
        self.pipe = og.ContinuousBatchingPipeline(build_dir, scheduler, "CPU", self.properties)
        check_token_parity(self.name, build_dir, self._encode)

    def _encode(self, text: str) -> list[int]:
        """The pipeline's own tokenizer (the IR openvino-tokenizers converted at export)."""
        return list(self.pipe.get_tokenizer().encode(text, add_special_tokens=False).input_ids.data[0])

    def _config(self, max_tokens: int):
        import openvino_genai as og

        config = og.GenerationConfig()
        config.max_new_tokens = config.min_new_tokens = max_tokens
        config.do_sample, config.ignore_eos = False, True  # greedy, every arm decodes the same count
        return config

    def _decode(self, token_ids: list[int], max_tokens: int) -> Iterator[tuple[int, float]]:
        """One request, advanced one pipeline step at a time: each step is one decode step (the
        first also the prefill), so a token is stamped when its step returns and nothing runs
        between two pulls. A stream dropped half-way cancels its request."""
        import openvino as ov

        ids = ov.Tensor(np.asarray([token_ids], dtype=np.int64))
        handle = self.pipe.add_request(next(self.requests), ids, self._config(max_tokens))
        try:
            while self.pipe.has_non_finished_requests():
                self.pipe.step()
                stamp = time.perf_counter()
                while handle.can_read():
                    for output in handle.read().values():
                        for token in output.generated_ids:
                            yield int(token), stamp
            self.last_perf = handle.get_perf_metrics()
        finally:
            if self.pipe.has_non_finished_requests():
                handle.cancel()
                while self.pipe.has_non_finished_requests():
                    self.pipe.step()

    def engine_timing(self) -> dict[str, float]:
        """The pipeline's own timer for the last generation: TTFT and mean time per output token."""
        perf = self.last_perf
        return {"engine_ttft_s": perf.get_ttft().mean / 1e3, "engine_tpot_s": perf.get_tpot().mean / 1e3}

    def _compiled(self):
        if self.compiled is None:
            import openvino as ov

            path = Path(self.build_dir) / MODEL_XML
            self.compiled = ov.Core().compile_model(str(path), "CPU", self.properties)
        return self.compiled

    def layer_kernels(self) -> dict[str, str]:
        return runtime_kernels(self._compiled())

    def _logits(self, request, ids: list[int]) -> np.ndarray:
        """Every position's logits of one prompt pass ([positions, vocab])."""
        request.reset_state()  # the IR keeps its KV cache as state: each pass starts empty
        n = len(ids)
        outputs = request.infer(
            {
                "input_ids": np.asarray([ids], dtype=np.int64),
                "attention_mask": np.ones((1, n), dtype=np.int64),
                "position_ids": np.arange(n, dtype=np.int64)[None],
                "beam_idx": np.zeros(1, dtype=np.int32),
            }
        )
        return outputs[self._compiled().output("logits")][0]

    def prompt_logprobs(self, windows: list[list[int]], topk: int) -> list[WindowLogprobs]:
        request = self._compiled().create_infer_request()
        return [window_logprobs(self._logits(request, w)[: len(w) - 1], w, topk) for w in windows]

    def _reply(self, ids: list[int], seed: int, sampling: dict, schema) -> str:
        import openvino as ov
        import openvino_genai as og

        config = og.GenerationConfig()
        config.max_new_tokens = int(sampling["max_new_tokens"])
        if sampled(sampling):
            config.do_sample, config.rng_seed = True, seed % 2**31
            config.temperature, config.top_p = float(sampling["temperature"]), float(sampling["top_p"])
        stops = sampling.get("stop") or []
        if stops:
            config.stop_strings, config.include_stop_str_in_output = set(stops), True
        if schema:
            config.structured_output_config = structured_output(schema)
        (result,) = self.pipe.generate([ov.Tensor(np.asarray([ids], dtype=np.int64))], [config])
        text = self._chat_template().tokenizer.decode(result.m_generation_ids[0], skip_special_tokens=True)
        return cut_at_stop(text, stops)[0]

    def choice_logprobs(self, prompts: list[str], reply_prefix: str, choices: list[str]) -> list[list[float]]:
        """Each choice's first-token log-probability after the chat text (one prompt pass each)."""
        template = self._chat_template()
        choice_ids, request = template.first_tokens(choices), self._compiled().create_infer_request()
        return [
            choice_scores(self._logits(request, template.ids(prompt, reply_prefix))[-1], choice_ids)
            for prompt in prompts
        ]

    def close(self) -> None:
        self.pipe = None
        self.compiled = None
