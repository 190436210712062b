"""A resident engine for warm throughput: `python -m edgebench.bench.resident SPEC`.

The process loads one arm's engine once, warms it at the measured shapes, then answers commands, one
JSON line each on stdin, with one JSON line on its protocol channel (the original stdout; the
engine's own prints are sent to stderr so they cannot corrupt the protocol):

- `{"op": "warmup"}`: a short uncounted generation, run after every switch of arm;
- `{"op": "sample", "index": i}`: one pp512 prefill and one tg128 decode, timed here, with the
  time of every decode step (`decode_stamps`, on the system-wide monotonic clock);
- `{"op": "sample", "index": i, "hold": true}`: the same, then, after its reply, the same decode
  again and again, uncounted, until the next line (`{"op": "release"}`), answered with every
  repeat's stamps (`hold_stamps`, one list per repeat): a duet's faster arm keeps its core as busy
  as during its own decode while the slower one is still timed, so both arms are timed over one
  window however different their speeds;
- `{"op": "open", "index": i}` then `{"op": "burst", "tokens": k}` until `done`: the interleaved
  design's sample, the same prefill and decode with the decode advanced k tokens a burst, so that
  two arms on one core can take turns (each burst's start `t0` and its stamps go back);
- `{"op": "engine_latency", "iters": n, "warmup": w}`: the engine's own latency benchmark (for
  vLLM, `vllm.benchmarks.latency`, batch 1, input 16, output tg) run unmodified on this engine;
- `{"op": "exit"}`: close the engine and exit.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import select
import sys
import threading
import time

from edgebench.bench.alternation import injection_on
from edgebench.bench.contract import EngineSpec
from edgebench.bench.prompts import synthetic_prompt

WARMUP_TOKENS = 8


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


class ResidentArm:
    """One loaded engine and the prompts of its samples (the same ids for every arm)."""

    def __init__(self, spec: EngineSpec) -> None:
        from edgebench.engines import make_engine

        bench = spec.bench
        self.vocab = spec.vocab_size
        self.prefill_tokens = int(bench["prefill_tokens"])
        self.decode_tokens = int(bench["decode_tokens"])
        self.short = synthetic_prompt(16, self.vocab, seed=2)
        self.build_dir = spec.build_dir
        self.crash_at = (spec.fault or {}).get("sample")  # reliability tests: die at this sample
        # tests: re-apply the mask this process started with before every sample, as OpenVINO's
        # thread pool does to the threads it runs
        self.start_mask = os.sched_getaffinity(0) if (spec.fault or {}).get("repin") else None
        # calibration: the injected loss on in some rounds only (edgebench.bench.alternation)
        self.alternate = bool(spec.options.get("inject_alternate"))
        self.stream = None  # the interleaved design's open decode stream
        self.streamed = 0
        self.engine = make_engine(spec.engine)
        self.engine.import_engine()
        self.engine.load(spec.build_dir, spec.options, spec.max_model_len)
        # Warm-up at the measured shapes, never counted.
        self.engine.generate(synthetic_prompt(self.prefill_tokens, self.vocab, seed=3), 1)
        self.engine.generate(self.short, self.decode_tokens)

    def warmup(self) -> dict:
        return {"warmup_s": _timed(self.engine.generate, self.short, WARMUP_TOKENS)}

    def sample(self, index: int) -> dict:
        """pp512 on a prompt no cache can serve, then tg128 after a 16-token prompt, every decode
        step stamped; decode rate is (n - 1) tokens over the time from the first token to the
        last, as in the cold rep. The stamps go back too: a duet times each arm over the window
        both arms ran."""
        if self.crash_at is not None and index == self.crash_at:
            os.abort()  # as an engine segfault would end the process
        injected = self.set_injection(index)
        start = time.time()
        prompt = synthetic_prompt(self.prefill_tokens, self.vocab, seed=100_000 + index)
        prefill_s = _timed(self.engine.generate, prompt, 1)
        t0 = time.perf_counter()
        stamps = self.engine.generate_stamped(self.short, self.decode_tokens)
        decode_s = stamps[-1] - stamps[0]
        return {
            "sample_start": start,
            "prefill_s": prefill_s,
            "decode_s": decode_s,
            "request_s": stamps[-1] - t0,
            "prefill_tok_s": self.prefill_tokens / prefill_s,
            "decode_tok_s": (len(stamps) - 1) / max(decode_s, 1e-9),
            "decode_stamps": stamps,
            **injected,
        }

    def set_injection(self, index: int) -> dict:
        """Turn the injected loss on or off for sample `index` (an `inject_alternate` arm); what
        the row records about it (nothing for other arms)."""
        if not self.alternate:
            return {}
        on = injection_on(index)
        self.engine.inject_slowdown(on)
        return {"injected": on}

    def hold(self, commands) -> list[list[float]]:
        """Repeat the sample's decode, uncounted, until a line arrives on `commands` (not read
        here); each repeat's stamps are a list of their own (a repeat's first step also prefills
        its short prompt, so no interval spans two repeats)."""
        repeats: list[list[float]] = []
        while True:
            stream = self.engine.decode_stream(self.short, self.decode_tokens)
            stamps: list[float] = []
            repeats.append(stamps)
            try:
                for stamp in stream:
                    stamps.append(stamp)
                    if select.select([commands], [], [], 0)[0]:
                        return repeats
            finally:
                stream.close()

    def open_stream(self, index: int) -> dict:
        """The interleaved design's sample: the prefill of `sample`, then a decode stream that
        `burst` advances while the partner on the same core waits."""
        if self.crash_at is not None and index == self.crash_at:
            os.abort()
        if self.start_mask is not None:
            os.sched_setaffinity(0, self.start_mask)
        if self.stream is not None:  # a stream left open by a partner's failure
            self.stream.close()
        injected = self.set_injection(index)
        start = time.time()
        prompt = synthetic_prompt(self.prefill_tokens, self.vocab, seed=100_000 + index)
        prefill_s = _timed(self.engine.generate, prompt, 1)
        self.stream = self.engine.decode_stream(self.short, self.decode_tokens)
        self.streamed = 0
        return {
            "sample_start": start,
            "prefill_s": prefill_s,
            "prefill_tok_s": self.prefill_tokens / prefill_s,
            **injected,
        }

    def burst(self, tokens: int) -> dict:
        """The next `tokens` decode steps of the open stream: when the burst began and each step's
        stamp (the engine sat idle before `t0`, so the burst's work is t0 to the last stamp)."""
        if self.stream is None:
            raise RuntimeError("burst without an open stream")
        t0 = time.perf_counter()
        stamps = list(itertools.islice(self.stream, tokens))
        self.streamed += len(stamps)
        done = len(stamps) < tokens or self.streamed >= self.decode_tokens
        if done:
            self.stream.close()
            self.stream = None
        return {"t0": t0, "stamps": stamps, "done": done}

    def engine_latency(self, iters: int, warmup: int) -> dict:
        """The engine's own latency benchmark, run on this process's loaded engine."""
        latencies = self.engine.latency_benchmark(self.build_dir, self.decode_tokens, iters, warmup)
        return {"latencies": latencies, "output_len": self.decode_tokens}

    def close(self) -> None:
        self.engine.close()


def answer_then_hold(arm: ResidentArm, reply: dict, commands, replies) -> dict:
    """Send the sample's reply, decode uncounted until the coordinator's release, and return what
    the release is answered with (the repeats' stamps)."""
    replies.write(json.dumps(reply) + "\n")
    replies.flush()
    repeats = arm.hold(commands)
    release = json.loads(commands.readline() or "{}")
    if release.get("op") != "release":
        return {"error": f"expected a release after a held sample, got {release!r}"}
    return {"hold_stamps": repeats}


def serve(spec: EngineSpec, commands, replies) -> None:
    """Answer commands until `exit` or end of input; an engine error becomes an `error` reply."""
    arm = ResidentArm(spec)
    kernels = json.dumps(arm.engine.layer_kernels(), sort_keys=True)
    replies.write(json.dumps({"ready": True, "layer_kernels": kernels}) + "\n")
    replies.flush()
    while line := commands.readline():  # readline, not iteration: a held sample reads one too
        command = json.loads(line)
        op = command["op"]
        if op == "exit":
            break
        if op == "release":  # a held sample that had failed already answered it
            continue
        try:
            if op == "warmup":
                reply = arm.warmup()
            elif op == "sample":
                reply = arm.sample(int(command["index"]))
                if command.get("hold"):
                    reply = answer_then_hold(arm, reply, commands, replies)
            elif op == "open":
                reply = arm.open_stream(int(command["index"]))
            elif op == "burst":
                reply = arm.burst(int(command["tokens"]))
            elif op == "engine_latency":
                reply = arm.engine_latency(int(command["iters"]), int(command["warmup"]))
            else:
                reply = {"error": f"unknown op {op!r}"}
        except Exception as error:  # the row says why; the coordinator decides what follows
            reply = {"error": f"{type(error).__name__}: {error}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    arm.close()


def _spin() -> None:
    """Burn CPU mostly outside the GIL (hashlib releases it for large inputs), as an engine's
    native polling threads do: a Python busy loop would hold the GIL and stall this process's
    own decode instead."""
    block = bytes(1 << 20)
    while True:
        hashlib.sha256(block).digest()


def main(argv: list[str]) -> int:
    from edgebench.engines.base import apply_env

    apply_env({})
    with open(argv[0]) as handle:
        spec = EngineSpec.from_json(json.load(handle))
    spec.require_environment()
    if (spec.fault or {}).get("idle_spin"):  # tests: a thread that burns CPU even while idle
        threading.Thread(target=_spin, daemon=True).start()
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # library prints go to the log, never into the protocol
    serve(spec, sys.stdin, replies)
    return 0


if __name__ == "__main__":  # vLLM spawns workers: guard the entry point
    sys.exit(main(sys.argv[1:]))
