"""Does compiling an engine pay for itself? Compile time against the per-request time it saves.

A compiled vLLM arm (torch.compile, `enforce_eager: false`) spends its compile time inside ready_s,
measured in fresh processes (cold reps); its requests may then run faster, measured in the warm
session beside the eager arm (same build, paired duets). Compiling pays for itself after

    break_even_requests = (ready_s compiled - ready_s eager) / (request_s eager - request_s compiled)

requests per engine start. The interval of the paired request-time ratio gives the break-even
interval; a compiled arm that is not faster never breaks even (infinity).
"""

from __future__ import annotations

import math

import pandas as pd

from edgebench.bench.compare import clean_values, paired_log_ratios
from edgebench.stats import paired_estimate


def _break_even(extra_ready_s: float, request_s: float, ratio: float) -> float:
    """Requests after which `extra_ready_s` is recovered, when each request takes `request_s`
    eager and `request_s / ratio` compiled (ratio > 1: compiled faster)."""
    saving = request_s * (1 - 1 / ratio) if ratio > 0 else 0.0
    if extra_ready_s <= 0:
        return 0.0
    return extra_ready_s / saving if saving > 0 else math.inf


def compile_cost_row(bench: pd.DataFrame, warm: pd.DataFrame, eager: str, compiled: str) -> dict:
    """One row: both arms' ready_s (cold reps), the compiled/eager request-time ratio from the warm
    duets (>1 means compiled is faster, with its 95% interval), and the break-even request count
    with the interval that ratio gives. `study_requests` is how many timed requests the study sent
    to the compiled engine in its warm session: the request count the verdict is judged at."""
    ready_e, ready_c = clean_values(bench, eager, "ready_s"), clean_values(bench, compiled, "ready_s")
    # the median of no reps is NaN, and so is a compile time resting on it
    median_e, median_c = float(ready_e.median()), float(ready_c.median())
    extra = median_c - median_e
    estimate = paired_estimate(paired_log_ratios(warm, "request_s", eager, compiled))
    request_e = float(clean_values(warm, eager, "request_s").median())
    # the fastest compiled arm the interval allows breaks even soonest, the slowest latest
    soonest = _break_even(extra, request_e, estimate.ci_high)
    latest = _break_even(extra, request_e, estimate.ci_low)
    compiled_rows = warm[warm["arm"] == compiled]
    return {
        "eager_arm": eager,
        "compiled_arm": compiled,
        "cold_reps_eager": len(ready_e),
        "cold_reps_compiled": len(ready_c),
        "ready_s_eager": median_e,
        "ready_s_compiled": median_c,
        "compile_s": extra,
        "request_s_eager": request_e,
        "pairs": estimate.n,
        "ratio": estimate.ratio,
        "ci_low": estimate.ci_low,
        "ci_high": estimate.ci_high,
        "break_even_requests": _break_even(extra, request_e, estimate.ratio),
        "break_even_low": soonest,
        "break_even_high": latest,
        "study_requests": int(len(compiled_rows)),
    }
