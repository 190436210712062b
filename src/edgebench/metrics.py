"""The one registry of metrics: name, unit, which direction is better, the table that carries it,
and how its interval is made.

Anything that picks a "best" arm or rep, orients a difference or judges a bound must ask this
registry for the direction, because a harness that maximised latency once produced a retracted
conclusion. Adding a metric is one entry here: the tables' contracts, the roadmap checks, the
deployment decision and the retraction check all read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower"]
# How a value's 95% interval is made: a t-interval over clean samples, the row's own standard
# error (the `<name>_se` column), or a Wilson interval of a rate over clean trials.
Interval = Literal["t", "se", "wilson", "none"]


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    direction: Direction
    description: str
    table: str = "bench"  # bench = fresh-process cold reps; warm = warm session samples; ...
    column: str = ""  # the column holding it, when it is not the metric's name
    interval: Interval = "t"
    budget: bool = True  # a `requirements:` entry may name it

    @property
    def source_column(self) -> str:
        return self.column or self.name

    @property
    def measured(self) -> str:
        """warm (resident-engine samples) or cold (fresh processes, and everything else)."""
        return "warm" if self.table == "warm" else "cold"


def _fidelity(name: str, unit: str, direction: Direction, description: str, **extra) -> Metric:
    return Metric(name, unit, direction, description, table="fidelity", **extra)


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
        Metric(
            "decode_tok_s",
            "tok/s",
            "higher",
            "tg128: generated tokens per second, EOS ignored; in a duet, over the window both arms ran",
            "warm",
        ),
        Metric(
            "decode_tok_s_own",
            "tok/s",
            "higher",
            "a duet arm's decode rate over its whole decode (decode_tok_s: over the window both arms ran)",
            "warm",
            budget=False,
        ),
        Metric("request_s", "s", "lower", "one warm request end to end: the prefill plus the decode", "warm"),
        Metric("ttft_s", "s", "lower", "time to first token of a fresh process's first pp512 prompt"),
        Metric("ready_s", "s", "lower", "process start (imports included) to the first servable token"),
        Metric("import_s", "s", "lower", "time spent importing the engine inside the rep process"),
        Metric(
            "peak_rss_anon_mb", "MiB", "lower", "max over the rep of RssAnon summed over engine processes"
        ),
        Metric("rss_anon_filled_ctx_mb", "MiB", "lower", "RssAnon summed after a prompt filling the context"),
        _fidelity("top1", "share", "higher", "positions whose argmax matches the reference's", interval="se"),
        _fidelity(
            "kl_mean", "nats", "lower", "mean KL(reference || arm) over scored positions", interval="se"
        ),
        _fidelity(
            "kl_p99", "nats", "lower", "99th percentile of per-position KL", interval="none", budget=False
        ),
        _fidelity("kl_max", "nats", "lower", "largest per-position KL", interval="none", budget=False),
        _fidelity(
            "ppl_ratio",
            "ratio",
            "lower",
            "the arm's perplexity over the reference's",
            interval="none",
            budget=False,
        ),
        Metric(
            "agent_success",
            "share",
            "higher",
            "episodes whose device end state is right and that the agent ended itself",
            table="agent_trials",
            column="success",
            interval="wilson",
        ),
        Metric(
            "agent_reached",
            "share",
            "higher",
            "episodes that reached the task's screen (navigation)",
            table="agent_trials",
            column="reached",
            interval="wilson",
        ),
        Metric(
            "ratio",
            "ratio",
            "higher",
            "candidate over baseline of a paired comparison, oriented so that > 1 is better",
            table="compare",
            interval="none",
            budget=False,
        ),
    ]
}


def table_metrics(table: str) -> tuple[str, ...]:
    return tuple(name for name, m in METRICS.items() if m.table == table)


WARM_METRICS = table_metrics("warm")
COLD_METRICS = table_metrics("bench")
BUDGET_METRICS = tuple(name for name, m in METRICS.items() if m.budget)


def metric(name: str) -> Metric:
    """Look a metric up, failing with the list of known names."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {sorted(METRICS)}") from None


def lower_is_better(name: str) -> bool:
    return metric(name).direction == "lower"
