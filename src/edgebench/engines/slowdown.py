"""A real, known slowdown inside vLLM's decode loop, for calibrating the harness (issue: power).

A logits processor runs once per engine step in the model-holding process. It sleeps `fraction`
times the compute time of the step that just ran, so per-token latency grows by that fraction
while everything else (imports, load, memory) stays the same.
"""

from __future__ import annotations

import os
import time

from vllm.v1.sample.logits_processor import LogitsProcessor

FRACTION_ENV = "EDGEBENCH_INJECT_SLOWDOWN"
MAX_STEP_S = 2.0  # a longer gap is idle time between requests, not a step


class InjectedSlowdown(LogitsProcessor):
    def __init__(self, vllm_config, device, is_pin_memory) -> None:
        self.fraction = float(os.environ.get(FRACTION_ENV, "0"))
        self.last_end: float | None = None

    @classmethod
    def validate_params(cls, sampling_params) -> None:
        return None

    def is_argmax_invariant(self) -> bool:
        return False  # must run under greedy decoding too

    def update_state(self, batch_update) -> None:
        return None

    def apply(self, logits):
        now = time.perf_counter()
        if self.fraction > 0 and self.last_end is not None and 0 < now - self.last_end < MAX_STEP_S:
            time.sleep(self.fraction * (now - self.last_end))
        self.last_end = time.perf_counter()
        return logits
