"""The one registry of benchmark metrics: name, unit, and which direction is better.

Anything that picks a "best" arm or rep must ask this registry for the direction, because a
harness that maximised latency once produced a retracted conclusion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower"]


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    direction: Direction
    description: str
    measured: Literal["warm", "cold"] = "cold"  # warm session samples, or fresh-process cold reps


METRICS: dict[str, Metric] = {
    m.name: m
    for m in [
        Metric(
            "prefill_tok_s",
            "tok/s",
            "higher",
            "pp512: prompt tokens per second of a 512-token prefill",
            "warm",
        ),
        Metric("decode_tok_s", "tok/s", "higher", "tg128: generated tokens per second, EOS ignored", "warm"),
        Metric("request_s", "s", "lower", "one warm request end to end: the prefill plus the decode", "warm"),
        Metric("ttft_s", "s", "lower", "time to first token of a fresh process's first pp512 prompt"),
        Metric("ready_s", "s", "lower", "process start (imports included) to the first servable token"),
        Metric("import_s", "s", "lower", "time spent importing the engine inside the rep process"),
        Metric(
            "peak_rss_anon_mb", "MiB", "lower", "max over the rep of RssAnon summed over engine processes"
        ),
        Metric("rss_anon_filled_ctx_mb", "MiB", "lower", "RssAnon summed after a prompt filling the context"),
    ]
}


WARM_METRICS = tuple(name for name, m in METRICS.items() if m.measured == "warm")
COLD_METRICS = tuple(name for name, m in METRICS.items() if m.measured == "cold")


def metric(name: str) -> Metric:
    """Look a metric up, failing with the list of known names."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {sorted(METRICS)}") from None


def better(name: str, a: float, b: float) -> bool:
    """True when value `a` is strictly better than `b` for this metric."""
    return a > b if metric(name).direction == "higher" else a < b


def best_index(name: str, values: list[float]) -> int:
    """Index of the best value under the metric's direction (first one on ties)."""
    if not values:
        raise ValueError(f"no values to choose the best {name} from")
    best = 0
    for i, value in enumerate(values[1:], start=1):
        if better(name, value, values[best]):
            best = i
    return best


def ratio_oriented(name: str, candidate: float, baseline: float) -> float:
    """Candidate/baseline oriented so that >1 always means the candidate is better."""
    if metric(name).direction == "higher":
        return candidate / baseline
    return baseline / candidate
