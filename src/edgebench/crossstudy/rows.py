"""The comparison table: every arm x metric two studies share, the first study as reference.

Absolute metrics (warm rates, cold reps, fidelity) are compared unpaired; each study's paired
within-study ratios (its compare table) are compared as ratios of ratios. Every row names its
method, and carries a label with its reason.
"""

from __future__ import annotations

import math

import pandas as pd

from edgebench.crossstudy import between
from edgebench.crossstudy.load import NotAStudy, Study
from edgebench.metrics import METRICS
from edgebench.stats import minimum_detectable_effect

SAMPLE_TABLES = ("warm", "bench")  # one row per sample: a t-interval over clean samples
FIDELITY_METRICS = ("kl_mean", "top1")  # one row per arm, with its own standard error


def clean(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] == "ok"] if "status" in frame else frame


def sample_estimates(study: Study) -> dict[tuple, between.Estimate]:
    """(table, arm, metric) -> estimate, from every clean sample of each arm."""
    out = {}
    for name in SAMPLE_TABLES:
        frame = clean(study.table(name))
        for metric in (m for m, spec in METRICS.items() if spec.table == name and m in frame):
            for arm, values in frame.groupby("arm")[metric]:
                values = pd.to_numeric(values, errors="coerce").dropna()
                if len(values):
                    out[(name, arm, metric)] = between.sample_estimate(values.to_numpy(float))
    return out


def fidelity_estimates(study: Study) -> dict[tuple, between.Estimate]:
    frame = clean(study.table("fidelity"))
    out = {}
    for _, row in frame.iterrows():
        for metric in FIDELITY_METRICS:
            if metric in row and pd.notna(row[metric]):
                se = row.get(f"{metric}_se", math.nan)
                positions = int(row.get("positions", 0) or 0)
                out[("fidelity", row["arm"], metric)] = between.se_estimate(
                    float(row[metric]), float(se) if pd.notna(se) else math.nan, positions
                )
    return out


def paired_estimates(study: Study) -> dict[tuple, tuple[between.Estimate, str]]:
    """(arm vs baseline, metric) -> the study's paired ratio and what its interval covers."""
    frame = study.table("compare")
    return {(f"{r['arm']} vs {r['baseline']}", r["metric"]): _headline(r) for _, r in frame.iterrows()}


def _headline(r: pd.Series) -> tuple[between.Estimate, str]:
    """A compare row's ratio with the interval that covers most: across its k sessions where the
    study ran several (n = k), else within its one session (n = pairs)."""
    k = int(r["sessions"]) if "sessions" in r and pd.notna(r["sessions"]) else 1
    if k > 1 and pd.notna(r.get("across_ci_low")):
        mde = minimum_detectable_effect(float(r["between_session_sd_log"]), k)
        ratio, low, high = float(r["across_ratio"]), float(r["across_ci_low"]), float(r["across_ci_high"])
        return between.interval_estimate(ratio, low, high, k, mde), f"across {k} sessions"
    rounds = int(r["rounds"]) if pd.notna(r["rounds"]) else 0
    ratio, low, high = float(r["ratio"]), float(r["ci_low"]), float(r["ci_high"])
    return between.interval_estimate(ratio, low, high, rounds, float(r["mde"])), "within one session"


def estimate_columns(est: between.Estimate, suffix: str) -> dict:
    return {
        f"value_{suffix}": est.value,
        f"low_{suffix}": est.low,
        f"high_{suffix}": est.high,
        f"n_{suffix}": est.n,
    }


def comparison_row(key: tuple, a: between.Estimate, b: between.Estimate, names: tuple, method: str) -> dict:
    ratio, low, high = between.ratio_between(a, b)
    verdict, why = between.label(a, b, names)
    return {
        "study_a": names[0],
        "study_b": names[1],
        **estimate_columns(a, "a"),
        **estimate_columns(b, "b"),
        "ratio": ratio,
        "ci_low": low,
        "ci_high": high,
        "difference": b.value - a.value,
        "method": method,
        "label": verdict,
        "why": why,
    }


def absolute_rows(a: Study, b: Study) -> list[dict]:
    ests_a = {**sample_estimates(a), **fidelity_estimates(a)}
    ests_b = {**sample_estimates(b), **fidelity_estimates(b)}
    rows = []
    for key in sorted(set(ests_a) & set(ests_b)):
        table, arm, metric = key
        method = between.SE_METHOD if table == "fidelity" else between.UNPAIRED_METHOD
        row = comparison_row(key, ests_a[key], ests_b[key], (a.name, b.name), method)
        rows.append(
            {
                "kind": "absolute",
                "table": table,
                "arm": arm,
                "metric": metric,
                "unit": METRICS[metric].unit,
                **row,
                "covers_a": "",
                "covers_b": "",
            }
        )
    return rows


def paired_rows(a: Study, b: Study) -> list[dict]:
    pa, pb = paired_estimates(a), paired_estimates(b)
    rows = []
    for key in sorted(set(pa) & set(pb)):
        (est_a, covers_a), (est_b, covers_b) = pa[key], pb[key]
        row = comparison_row(key, est_a, est_b, (a.name, b.name), between.PAIRED_METHOD)
        rows.append(
            {
                "kind": "paired ratio",
                "table": "compare",
                "arm": key[0],
                "metric": key[1],
                "unit": "ratio",
                **row,
                "covers_a": covers_a,
                "covers_b": covers_b,
            }
        )
    return rows


def comparison_table(studies: list[Study]) -> pd.DataFrame:
    """Every other study against the first; refuses studies that share no arm x metric."""
    rows = []
    reference = studies[0]
    for other in studies[1:]:
        found = absolute_rows(reference, other) + paired_rows(reference, other)
        if not found:
            raise NotAStudy(
                f"{other.path}: shares no arm and metric with {reference.path}; nothing to compare"
            )
        rows += found
    return pd.DataFrame(rows)
