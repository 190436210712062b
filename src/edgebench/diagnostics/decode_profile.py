"""Where one decode step goes (items I5 and I10): every op's own time in a torch-profiled decode
step at batch 1, grouped into parts, against the unprofiled step.

The engine runs in this process (vLLM's single-process mode, one thread), so the profiler sees the
model's ops. A decode step is the difference between generating 1 + STEPS tokens and 1 token from
the same prompt, divided by STEPS: the prefill cancels out, in the profiled and the timed runs.
The parts are ops' self times (children excluded, so nothing is counted twice); `remainder` is the
unprofiled step minus their sum: Python, dispatch and the profiler's own cost when negative. The
parts, remainder included, always sum to the unprofiled step.
"""

from __future__ import annotations

import statistics
import time

import pandas as pd

STEPS = 32
PROMPT = list(range(100, 116))

# Op name -> part, by substring, first match wins. The attention wrapper is vLLM's custom-op layer
# around the kernels (its self time only); the C++ kernels that enter OpenMP regions are gemm,
# attention_kernel and rotary (small elementwise aten ops on one decode row stay single-threaded).
PARTS = (
    ("attention_wrapper", ("vllm::unified_attention", "vllm::unified_kv_cache_update")),
    (
        "attention_kernel",
        ("cpu_attention", "cpu_attn", "reshape_and_cache", "scheduler_metadata", "slot_mapping"),
    ),
    ("gemm", ("onednn_mm", "gemm", "_mm", "linear", "matmul", "aten::mm", "addmm", "int4", "int8_scaled")),
    ("rotary", ("rotary",)),
    ("norm", ("rms_norm", "aten::pow", "aten::mean", "aten::rsqrt")),
    ("activation", ("silu", "gelu", "and_mul")),
    ("sampling", ("argmax", "topk", "softmax", "sort", "multinomial", "sampl", "cumsum", "gather")),
    (
        "elementwise",
        ("aten::mul", "aten::add", "aten::div", "aten::sub", "aten::sum", "aten::neg", "aten::cat"),
    ),
)
PARALLEL_PARTS = ("gemm", "attention_kernel", "rotary")


def part_of(op: str) -> str:
    for part, needles in PARTS:
        if any(needle in op for needle in needles):
            return part
    return "tensor_glue" if op.startswith("aten::") else "other_ops"


def op_totals(run) -> dict[str, tuple[float, int]]:
    """Self microseconds and calls per op name of one profiled call of `run`."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    return {e.key: (e.self_cpu_time_total, e.count) for e in prof.key_averages()}


def step_parts(long: dict, short: dict, steps: int) -> dict[str, tuple[float, float]]:
    """Per decode step: (self us, calls) of each part, from the long run minus the short one."""
    parts: dict[str, list[float]] = {}
    for op, (us, calls) in long.items():
        base_us, base_calls = short.get(op, (0.0, 0))
        total = parts.setdefault(part_of(op), [0.0, 0.0])
        total[0] += (us - base_us) / steps
        total[1] += (calls - base_calls) / steps
    return {part: (us, calls) for part, (us, calls) in parts.items()}


def timed_step_us(generate, repeats: int = 3) -> float:
    """Unprofiled decode step: median over repeats of (t(1 + STEPS tokens) - t(1 token)) / STEPS."""
    values = []
    for _ in range(repeats):
        start = time.perf_counter()
        generate(PROMPT, 1)
        short = time.perf_counter() - start
        start = time.perf_counter()
        generate(PROMPT, 1 + STEPS)
        values.append((time.perf_counter() - start - short) / STEPS * 1e6)
    return statistics.median(values)


def profile_rows(generate, layers: int) -> list[dict]:
    """One row per part of an engine's decode step, `remainder` included."""
    generate(PROMPT, 8)  # warm-up: first-call allocations stay out of the step
    whole = timed_step_us(generate)
    parts = step_parts(
        op_totals(lambda: generate(PROMPT, 1 + STEPS)), op_totals(lambda: generate(PROMPT, 1)), STEPS
    )
    profiled = sum(us for us, _ in parts.values())
    rows = [{"part": part, "us": us, "calls": calls} for part, (us, calls) in sorted(parts.items())]
    rows.append({"part": "remainder", "us": whole - profiled, "calls": 0.0})
    regions = sum(calls for part, (_, calls) in parts.items() if part in PARALLEL_PARTS)
    for row in rows:
        row.update(
            whole_us=whole,
            profiled_ops_us=profiled,
            steps=STEPS,
            layers=layers,
            per_layer_us=row["us"] / layers,
            parallel_regions_per_step=regions,
        )
    return rows


def run_decode_profile(
    config: dict, arm_name: str, *, build_dir: str, out: str, code_digest: str
) -> pd.DataFrame:
    """The decode_profile rule: one arm's profiled decode step; an engine that cannot load is a
    failure row with its error."""
    import traceback

    from edgebench.engines import make_engine
    from edgebench.engines.base import EngineBoundary, EngineFailed, failure_text
    from edgebench.io import write_parquet
    from edgebench.models.hf_config import model_config
    from edgebench.rows import arm_row

    base = arm_row(config, arm_name, code_digest=code_digest, cpus=[0])
    arm = {**config["arms"][arm_name], "single_process": True, "threads_bind": "0"}
    engine = EngineBoundary(make_engine(arm["engine"]))  # every call into it fails as EngineFailed
    try:
        engine.import_engine()
        engine.load(build_dir, arm, max_model_len=256)
        rows = profile_rows(engine.generate, int(model_config(build_dir)["num_hidden_layers"]))
        engine.close()
    except EngineFailed as error:  # the engine's failures are rows; a profiler bug is not
        traceback.print_exc()
        base.update(status="failed", error=failure_text(error))
        rows = [{"part": "(failed)", "us": float("nan")}]
    frame = pd.DataFrame([{**base, **row} for row in rows])
    write_parquet(frame, out)
    print(
        frame[[c for c in ("arm", "part", "us", "calls", "whole_us") if c in frame]].to_string(), flush=True
    )
    return frame
