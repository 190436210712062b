"""A real, known throughput loss inside vLLM's decode loop, for calibrating the harness.

A logits processor runs once per engine step in the model-holding process. To lower decode
throughput by `loss` (e.g. 0.05), every step is stretched by loss / (1 - loss) of the step's own
period (from the previous step's end): the period grows to 1 / (1 - loss) of its length, the rate
falls to (1 - loss) of it. A period much longer than the recent ones holds an idle wait (in an
interleaved pair, the partner's turn; a new request's prefill) and counts as a typical period
instead: stretching the wait as well read a 5% loss as 10% with 4-token turns. Two kinds: `sleep`
(the core idles; invisible in CPU time; late wake-ups paid back on the next sleeps) and `busy`
(a spin on the clock; it shows in CPU-time metrics as well). Imports, load and memory stay the same.

With `EDGEBENCH_INJECT_PER_REQUEST=1` only requests whose sampling parameters carry
`extra_args={"edgebench_inject": True}` are slowed: the resident arm turns the loss on and off
by round, so one process is measured with and without it and its own speed offset cancels.
"""

from __future__ import annotations

import collections
import os
import statistics
import time

from vllm.v1.sample.logits_processor import LogitsProcessor

LOSS_ENV = "EDGEBENCH_INJECT_SLOWDOWN"
KIND_ENV = "EDGEBENCH_INJECT_KIND"
PER_REQUEST_ENV = "EDGEBENCH_INJECT_PER_REQUEST"
REQUEST_FLAG = "edgebench_inject"  # the key in SamplingParams.extra_args
KINDS = ("sleep", "busy")
MAX_STEP_S = 2.0  # a longer gap is idle time between requests, not a step


def stretch_factor(loss: float) -> float:
    """Extra time per unit of step time that lowers the rate by `loss`."""
    if not 0 <= loss < 1:
        raise ValueError(f"throughput loss must be in [0, 1), got {loss}")
    return loss / (1 - loss)


class CompensatedSleep:
    """Sleeps that add up to what was asked: a wake-up comes late (a millisecond or so in a VM,
    which is several percent of a 30 ms step), so each sleep is shortened by the previous ones'
    overshoot. A 5% sleep injection read as 7% without it."""

    def __init__(self) -> None:
        self.debt = 0.0  # seconds slept beyond what was asked, not yet paid back

    def __call__(self, seconds: float) -> None:
        target = seconds - self.debt
        if target <= 0:
            self.debt = -target
            return
        start = time.perf_counter()
        time.sleep(target)
        self.debt = time.perf_counter() - start - target


def busy_wait(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class InjectedSlowdown(LogitsProcessor):
    def __init__(self, vllm_config, device, is_pin_memory) -> None:
        self.factor = stretch_factor(float(os.environ.get(LOSS_ENV, "0")))
        kind = os.environ.get(KIND_ENV, "sleep")
        if kind not in KINDS:
            raise ValueError(f"{KIND_ENV}={kind!r}; known: {KINDS}")
        self.wait = CompensatedSleep() if kind == "sleep" else busy_wait
        self.last_end: float | None = None
        self.periods: collections.deque[float] = collections.deque(maxlen=16)
        self.per_request = os.environ.get(PER_REQUEST_ENV) == "1"
        self.flagged: set[int] = set()  # batch indices of requests that asked for the loss

    @classmethod
    def validate_params(cls, sampling_params) -> None:
        return None

    def is_argmax_invariant(self) -> bool:
        return False  # must run under greedy decoding too

    def update_state(self, batch_update) -> None:
        if batch_update is not None and self.per_request:
            self.flagged = flagged_indices(self.flagged, batch_update)

    def active(self) -> bool:
        return self.factor > 0 and (not self.per_request or bool(self.flagged))

    def apply(self, logits):
        now = time.perf_counter()
        if self.active() and self.last_end is not None and 0 < now - self.last_end < MAX_STEP_S:
            self.wait(self.factor * own_period(now - self.last_end, self.periods))
        self.last_end = time.perf_counter()
        return logits


def flagged_indices(flagged: set[int], batch_update) -> set[int]:
    """The batch indices of flagged requests after vLLM's update: removed first, then added
    (an added request may take a removed one's index), then moved (swapped or moved one way)."""
    flagged = set(flagged) - set(batch_update.removed)
    for index, params, *_ in batch_update.added:
        flagged.discard(index)
        if (getattr(params, "extra_args", None) or {}).get(REQUEST_FLAG):
            flagged.add(index)
    for source, target, direction in batch_update.moved:
        had_source, had_target = source in flagged, target in flagged
        flagged -= {source, target}
        if had_source:
            flagged.add(target)
        if had_target and getattr(direction, "name", "") == "SWAP":
            flagged.add(source)
    return flagged


IDLE_RATIO = 1.5  # a period this much longer than the recent median held an idle wait


def own_period(gap: float, periods: collections.deque) -> float:
    """The step's own period: the gap since the previous step ended, or, when the gap is much
    longer than the recent steps' (the engine sat idle before this step), their median. Only
    gaps taken as they are join the history."""
    if len(periods) >= 3:
        typical = statistics.median(periods)
        if gap > IDLE_RATIO * typical:
            return typical
    periods.append(gap)
    return gap
