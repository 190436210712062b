"""One cold rep, run as `python -m edgebench.bench.worker SPEC OUT` in a fresh process.

The parent takes a timestamp before exec and passes it in, so ready_s counts interpreter start and
imports. Throughput is not measured here: it comes from resident engines in
the warm session (`edgebench.bench.session`).
"""

from __future__ import annotations

import json
import os
import sys
import time


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def inject_fault(fault: dict | None) -> None:
    """Configured faults (reliability tests): a real crash or a real hang inside the rep process."""
    if not fault:
        return
    if fault["kind"] == "crash":
        os.abort()  # SIGABRT, as an engine segfault or assertion would end the process
    if fault["kind"] == "hang":
        while True:
            time.sleep(3600)


def run_rep(raw: dict) -> dict:
    """Cold metrics of one fresh process: imports, load to the first servable token, the first
    pp512 request's TTFT, and RssAnon after a prompt that fills the context."""
    from edgebench.bench.contract import EngineSpec
    from edgebench.bench.engine_timer import engine_timer_check
    from edgebench.bench.prompts import synthetic_prompt
    from edgebench.engines import make_engine
    from edgebench.engines.base import apply_env
    from edgebench.procfs import tree_rss_anon_mb

    t_parent = float(raw["t_parent"])
    spec = EngineSpec.from_json(raw)
    apply_env({})
    spec.require_environment()
    engine = make_engine(spec.engine)
    t_import = time.time()
    engine.import_engine()
    import_s = time.time() - t_import

    bench, vocab, decode = spec.bench, spec.vocab_size, int(spec.bench["decode_tokens"])
    engine.load(spec.build_dir, spec.options, spec.max_model_len)
    inject_fault(spec.fault)
    engine.generate(synthetic_prompt(8, vocab, seed=1), 1)  # first servable token
    ready_s = time.time() - t_parent
    ttft_s = _timed(engine.generate, synthetic_prompt(int(bench["prefill_tokens"]), vocab, seed=3), 1)

    engine.generate(spec.filled_context_prompt(), 1)
    rss_filled = tree_rss_anon_mb(os.getpid())
    timer = engine_timer_check(engine, synthetic_prompt(int(bench["prefill_tokens"]), vocab, seed=5), decode)
    kernels = json.dumps(engine.layer_kernels(), sort_keys=True)  # after every measurement
    engine.close()
    return {
        "import_s": import_s,
        "ready_s": ready_s,
        "ttft_s": ttft_s,
        "rss_anon_filled_ctx_mb": rss_filled,
        "layer_kernels": kernels,
        **timer,
    }


def main(argv: list[str]) -> int:
    spec_path, out_path = argv
    with open(spec_path) as handle:
        spec = json.load(handle)
    result = run_rep(spec)
    tmp = out_path + ".tmp"  # not edgebench.io: the worker imports nothing its import_s would include
    with open(tmp, "w") as handle:
        json.dump(result, handle)
    os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":  # vLLM spawns workers: guard the entry point
    sys.exit(main(sys.argv[1:]))
