"""The deployment decision: each build against the user's budget, with intervals.

A requirement is a metric and a bound (`at_most` or `at_least`). Per arm it is `met` when the whole
95% interval lies on the good side of the bound, `not met` when it lies on the bad side, `undecided`
when it straddles the bound, and `not measured` (with the reason) when the arm has no clean value.
An arm `fits` only when every requirement is met; `does not fit` when one is not met.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from edgebench.formatting import three_digits
from edgebench.metrics import METRICS
from edgebench.stats import student_half_width, wilson_interval

MET, NOT_MET, UNDECIDED, NOT_MEASURED = "met", "not met", "undecided", "not measured"


def judge(low: float, high: float, bound: float, at_least: bool) -> str:
    """The verdict of an interval against a bound."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return NOT_MEASURED
    good, bad = (low >= bound, high < bound) if at_least else (high <= bound, low > bound)
    return MET if good else NOT_MET if bad else UNDECIDED


def mean_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Centre and 95% t-interval of clean samples (one sample: its value, no interval). Samples
    that are all positive (memory, latency, rates) are taken on the log scale: the geometric mean
    and an interval that stays positive however few the samples."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return math.nan, math.nan, math.nan
    positive = bool((values > 0).all())
    scaled = np.log(values) if positive else values
    centre = float(scaled.mean())
    if len(values) == 1:
        low = high = math.nan
    else:
        half = student_half_width(scaled)
        low, high = centre - half, centre + half
    if positive:
        return math.exp(centre), math.exp(low), math.exp(high)
    return centre, low, high


def arm_estimate(tables: dict[str, pd.DataFrame], arm: str, metric: str) -> dict:
    """Value, interval, sample count and (when there is none) why, for one arm and metric."""
    spec = METRICS[metric]
    table = tables.get(spec.table)
    if table is None:
        return {"value": math.nan, "low": math.nan, "high": math.nan, "n": 0, "why": "table not made"}
    rows, column = table[table["arm"] == arm], spec.source_column
    if spec.interval == "wilson":
        clean = rows[rows["status"] == "ok"]
        wins = int(clean[column].sum())
        low, high = wilson_interval(wins, len(clean)) if len(clean) else (math.nan, math.nan)
        value = wins / len(clean) if len(clean) else math.nan
        why = _why(rows, clean, spec.table)
        return {"value": value, "low": low, "high": high, "n": len(clean), "why": why}
    clean = rows[(rows["status"] == "ok") & rows[column].notna()] if column in rows else rows.iloc[0:0]
    if spec.interval == "se" and len(clean):
        row = clean.iloc[-1]
        half = 1.96 * float(row[f"{column}_se"])
        value = float(row[column])
        return {
            "value": value,
            "low": value - half,
            "high": value + half,
            "n": int(row["positions"]),
            "why": "",
        }
    value, low, high = mean_interval(clean[column].to_numpy(float) if len(clean) else np.array([]))
    return {"value": value, "low": low, "high": high, "n": len(clean), "why": _why(rows, clean, spec.table)}


REFUSAL = re.compile(r"kernel (\S+), which needs ([^;]+);")


def root_cause(error: str, limit: int = 160) -> str:
    """What a failure says, short: a refusal by the CPU rule as the kernel and the flags it needs
    (whatever log tail came with it), else the error's first line."""
    refused = REFUSAL.search(error)
    if refused:
        return f"refused: {refused.group(1)} needs {refused.group(2).strip()}"
    first = error.split("; log tail:")[0].strip().splitlines()
    return (first[0] if first else "")[:limit]


def failures_said(failed: pd.DataFrame) -> str:
    """How many rows failed and what the first one said, short."""
    return f"{len(failed)} failed: {root_cause(str(failed['error'].iloc[0]))}"


# Why an arm has no rows in a table, in the study's terms (the study left it out of that part).
ABSENT = {
    "bench": "no cold reps of this arm",
    "warm": "not in the warm session",
    "fidelity": "not scored for fidelity",
    "agent_trials": "no agent trials of this arm",
}


def _why(rows: pd.DataFrame, clean: pd.DataFrame, table: str) -> str:
    if len(clean) > 1:
        return ""
    if rows.empty:
        return ABSENT.get(table, f"no rows for this arm in {table}")
    failed = rows[rows["status"] == "failed"]
    if len(failed) and len(clean) == 0:
        return failures_said(failed)
    return f"{len(clean)} clean of {len(rows)} samples"


def decision_rows(tables: dict[str, pd.DataFrame], requirements: dict, arms: list[str]) -> list[dict]:
    """One row per arm and requirement."""
    rows = []
    for arm in arms:
        for metric, bound in requirements.items():
            at_least = "at_least" in bound
            limit = float(bound["at_least"] if at_least else bound["at_most"])
            est = arm_estimate(tables, arm, metric)
            verdict = judge(est["low"], est["high"], limit, at_least)
            rows.append(
                {
                    "arm": arm,
                    "requirement": f"{metric} {'>=' if at_least else '<='} {limit:g}",
                    "metric": metric,
                    "unit": METRICS[metric].unit,
                    "bound": limit,
                    "direction": "at_least" if at_least else "at_most",
                    **est,
                    "verdict": verdict,
                }
            )
    return rows


def overall(verdicts: list[str]) -> str:
    if verdicts and all(v == MET for v in verdicts):
        return "fits"
    if NOT_MET in verdicts:
        return "does not fit"
    if verdicts and all(v == NOT_MEASURED for v in verdicts):
        return NOT_MEASURED
    return "undecided"


def decision_frame(tables: dict[str, pd.DataFrame], requirements: dict, arms: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(decision_rows(tables, requirements, arms))
    if frame.empty:
        return frame
    fits = frame.groupby("arm")["verdict"].agg(lambda v: overall(list(v)))
    frame["build_verdict"] = frame["arm"].map(fits)
    return frame


# What one more unit of evidence is, per table a requirement's metric comes from.
UNITS = {"bench": "reps", "warm": "warm samples", "fidelity": "scored positions", "agent_trials": "trials"}


def more_needed(row: pd.Series) -> str:
    """For an undecided cell: about how many more units would put the interval on one side of the
    bound at the observed spread (the half-width shrinks with the square root of the count)."""
    value, low, high, bound, n = (float(row[k]) for k in ("value", "low", "high", "bound", "n"))
    log_scale = min(value, low, bound) > 0 and METRICS[row["metric"]].interval == "t"
    scale = math.log if log_scale else float
    half, distance = (scale(high) - scale(low)) / 2, abs(scale(value) - scale(bound))
    if not (n >= 1 and half > 0 and distance > 0):
        return "the value sits on the bound: no count decides it"
    needed = math.ceil(n * (half / distance) ** 2)
    unit = UNITS.get(METRICS[row["metric"]].table, "samples")
    return f"about {max(needed - int(n), 1):,} more {unit} would decide it"


def cell_text(row: pd.Series) -> str:
    if row["verdict"] == NOT_MEASURED:
        why = " ".join(str(row["why"]).replace("|", "/").split())  # one line inside a table cell
        return f"not measured ({why})" if why else "not measured"
    unit = METRICS[row["metric"]].unit
    interval = (
        f" [{three_digits(row['low'])}, {three_digits(row['high'])}]" if math.isfinite(row["low"]) else ""
    )
    cell = f"{row['verdict']}: {three_digits(row['value'])} {unit}{interval}"
    if row["verdict"] in (NOT_MET, UNDECIDED) and str(row.get("note") or ""):
        cell = f"{cell} ({row['note']})"  # what the memory is, and the setting to change
    return f"{cell}; {more_needed(row)}" if row["verdict"] == UNDECIDED else cell


def headline(frame: pd.DataFrame) -> list[str]:
    """The page's first line: the build to deploy (among those that fit, the best on the budget's
    first requirement, its stated priority), or that none fits, the closest, and what it misses."""
    first = frame["metric"].iloc[0]
    higher = METRICS[first].direction == "higher"
    builds = frame[frame["build_verdict"] == "fits"]
    if not builds.empty:
        best = builds[builds["metric"] == first].sort_values("value", ascending=not higher).iloc[0]
        return [
            f"**Deploy `{best['arm']}`**: it meets every requirement with its whole interval, and is "
            f"the best of the {builds['arm'].nunique()} that fit on `{first}`, the budget's first line."
        ]
    closest = closest_build(frame)
    rows = frame[(frame["arm"] == closest) & (frame["verdict"] != MET)]
    misses = "; ".join(f"{r['requirement']} {cell_text(r)}" for _, r in rows.iterrows())
    if not (rows["verdict"] == NOT_MET).any():  # nothing missed, only not yet shown: measure more
        return [f"**No build is shown to fit yet.** Closest: `{closest}`, still open on: {misses}."]
    return [f"**No build fits.** Closest: `{closest}`, which misses: {misses}."]


def closest_build(frame: pd.DataFrame) -> str:
    """The build nearest to fitting: fewest requirements missed or not measured (an undecided cell
    straddles its bound, so more of the same measurement can still settle it), then fewest missed,
    then fewest undecided."""
    marks = frame.assign(
        blocked=frame["verdict"].isin([NOT_MET, NOT_MEASURED]),
        missed=frame["verdict"] == NOT_MET,
        short=frame["verdict"] != MET,
    )
    counts = marks.groupby("arm", sort=False)[["blocked", "missed", "short"]].sum()
    return counts.sort_values(["blocked", "missed", "short"], kind="stable").index[0]


def decision_markdown(frame: pd.DataFrame, others: pd.DataFrame | None = None) -> str:
    """A table a person reads in ten seconds: the build to deploy first, then one line per build,
    one column per requirement; arms that are not deployable builds in a section of their own."""
    if frame.empty:
        return "# Deployment decision\n\nNo requirements were given (config section `requirements`).\n"
    lines = ["# Deployment decision", "", *headline(frame), ""]
    lines += [
        "Each cell: the verdict, the measured value (a geometric mean over samples, or the estimate over "
        "scored positions) and its 95% interval. `met` / `not met` need the whole interval on one "
        "side of the bound; `undecided` straddles it.",
        "",
        *_table(frame),
    ]
    if others is not None and not others.empty:
        lines += [
            "",
            "## Not deployable builds",
            "",
            "Emulations that exist for a fidelity item (their timings would not be the kernel's), "
            "judged against the same budget for reference only.",
            "",
            *_table(others),
        ]
    return "\n".join(lines) + "\n"


def _table(frame: pd.DataFrame) -> list[str]:
    requirements = list(dict.fromkeys(frame["requirement"]))
    lines = [
        "| build | verdict | " + " | ".join(requirements) + " |",
        "|---|---|" + "---|" * len(requirements),
    ]
    for arm, rows in frame.groupby("arm", sort=False):
        cells = {r["requirement"]: cell_text(r) for _, r in rows.iterrows()}
        verdict = rows["build_verdict"].iloc[0]
        lines.append(f"| {arm} | **{verdict}** | " + " | ".join(cells[q] for q in requirements) + " |")
    return lines
