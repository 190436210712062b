"""The cross-check against an engine's own timer (OpenVINO GenAI's PerfMetrics): one generation
stamped by edgebench and timed by the engine itself. Their ratios (edgebench's over the engine's)
say whether edgebench's stamps measure what the engine reports; engines without a timer of their
own (no `engine_timing` method) get no columns."""

from __future__ import annotations

import time


def engine_timer_check(engine, prompt: list[int], decode_tokens: int) -> dict:
    if not hasattr(engine, "engine_timing"):
        return {}
    start = time.perf_counter()
    stamps = engine.generate_stamped(prompt, decode_tokens)
    own = engine.engine_timing()
    ttft_s = stamps[0] - start
    tpot_s = (stamps[-1] - stamps[0]) / max(len(stamps) - 1, 1)
    return {
        "engine_ttft_s": own["engine_ttft_s"],
        "engine_tpot_s": own["engine_tpot_s"],
        "timer_ttft_ratio": ttft_s / own["engine_ttft_s"],
        "timer_tpot_ratio": tpot_s / own["engine_tpot_s"],
    }
