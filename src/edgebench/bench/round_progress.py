"""The warm session's progress line after each round: what the round measured and how long the
rounds left will take at the pace so far. A session of bf16 prefills can run for most of an hour
on a CPU without native bf16, and the log is where a user sees whether to wait."""

from __future__ import annotations

import math
import time


def minutes_left(elapsed_s: float, rounds_done: int, rounds_left: int) -> str:
    """The rounds left at the mean pace of the rounds done, in words ("" before the first round)."""
    if rounds_done <= 0 or rounds_left <= 0:
        return ""
    minutes = elapsed_s / rounds_done * rounds_left / 60
    return f"about {math.ceil(minutes)} min left" if minutes >= 1 else "under a minute left"


def sample_summary(row: dict) -> str:
    """One sample as "arm@core rate" ("arm rate" in a design that does not pin arms to cores), nan
    where it failed."""
    where = f"@{row['core']}" if "core" in row else ""
    return f"{row['arm']}{where} {row.get('decode_tok_s', float('nan')):.2f}"


class RoundClock:
    """Times a run of rounds; `line` closes one round and says what it measured and what is left."""

    def __init__(self, round_indices: range, now=time.time) -> None:
        self.round_indices = round_indices
        self.now = now
        self.started = now()
        self.round_started = self.started

    def line(self, round_index: int, rows: list[dict]) -> str:
        now = self.now()
        done = round_index - self.round_indices.start + 1
        left = minutes_left(now - self.started, done, self.round_indices.stop - round_index - 1)
        took = now - self.round_started
        self.round_started = now
        head = f"round {round_index + 1}/{self.round_indices.stop} in {took:.1f} s"
        head += f" ({left})" if left else ""
        return head + ": " + ", ".join(sample_summary(r) for r in rows)
