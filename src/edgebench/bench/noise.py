"""How steady the warm session was, per duet and per way of timing it: the paired SD per swap,
what it costs in machine time, the smallest loss it can show at the session's size, and the core
offset the swaps cancelled. Timing each arm over the common window (decode_tok_s) and over its
own whole decode (decode_tok_s_own) come from the same samples, so the two are compared on one
run: the variance-pilot of the warm design, written by every study."""

from __future__ import annotations

import math

import pandas as pd

from edgebench.bench.compare import candidates, core_offset, is_duet, paired_log_ratios, swapped
from edgebench.stats import minimum_detectable_effect, paired_estimate

TIMINGS = {
    "decode_tok_s": "duet, each arm over the common window",
    "decode_tok_s_own": "duet, each arm over its own whole decode",
}
INTERLEAVED = "interleaved on one core, each arm over its own bursts"

NOISE_COLUMNS = (
    "baseline",
    "arm",
    "metric",
    "design",
    "swaps",
    "ratio",
    "sd_log_per_swap",
    "seconds_per_swap",
    "sd_log_per_machine_second",
    "mde",
    "core_offset",
)


def machine_seconds_per_value(duet: pd.DataFrame, swaps: bool) -> float:
    """Seconds of the whole machine one paired value costs: a swap is two duets that each hold
    every core; an interleaved pair holds one core while other pairs hold the rest."""
    if "pair_wall_s" not in duet or not len(duet):
        return math.nan
    pair_s = duet["pair_wall_s"].median()
    if swaps:
        return float(2 * pair_s)
    sharing = duet["concurrent_pairs"].median() if "concurrent_pairs" in duet else 1.0
    return float(pair_s / sharing)


def noise_rows(warm: pd.DataFrame, baseline: str) -> list[dict]:
    """One row per (duet, timing); empty when the session ran no duets."""
    if not is_duet(warm):
        return []
    rows = []
    for candidate in candidates(warm, baseline):
        duet = warm[(warm["arm"] == candidate) & (warm["partner"] == baseline)]
        seconds = machine_seconds_per_value(duet, swapped(warm))
        for column, design in TIMINGS.items():
            if column not in warm or warm[column].isna().all():
                continue
            est = paired_estimate(paired_log_ratios(warm, column, baseline, candidate))
            seconds_per_swap = seconds
            rows.append(
                {
                    "baseline": baseline,
                    "arm": candidate,
                    "metric": column,
                    "design": design if swapped(warm) else INTERLEAVED,
                    "swaps": est.n,
                    "ratio": est.ratio,
                    "sd_log_per_swap": est.sd_log,
                    "seconds_per_swap": seconds_per_swap,
                    # SD scaled to one second of machine time: designs of different sample
                    # lengths compare on what a fixed budget buys
                    "sd_log_per_machine_second": est.sd_log * math.sqrt(seconds_per_swap),
                    "mde": minimum_detectable_effect(est.sd_log, est.n),
                    "core_offset": core_offset(warm, column, baseline, candidate),
                }
            )
    return rows


def noise_table(warm: pd.DataFrame, baseline: str) -> pd.DataFrame:
    frame = pd.DataFrame(noise_rows(warm, baseline), columns=NOISE_COLUMNS)
    for key in ("run_id", "git_commit"):
        frame[key] = warm[key].iloc[0] if key in warm and len(warm) else ""
    return frame
