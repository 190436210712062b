"""Change points per arm x metric in one machine's history, found by Apache Otava (E-divisive
with a t-test merge step, as in Fleming et al.'s Hunter), and what changed at each: commit, versions.
"""

from __future__ import annotations

import json

import pandas as pd
from otava.analysis import compute_change_points

MAX_PVALUE = 0.001
SERIES_KEYS = ("kind", "table", "arm", "metric")


def series_in(history: pd.DataFrame) -> dict[tuple, pd.DataFrame]:
    """Each arm x metric's studies in the order they finished (one value per study)."""
    ordered = history.sort_values("finished_at")
    return {key: frame.reset_index(drop=True) for key, frame in ordered.groupby(list(SERIES_KEYS))}


def what_changed(before: pd.Series, after: pd.Series) -> str:
    """The commit and package versions that differ between two studies, in words."""
    parts = []
    if before["git_commit"] != after["git_commit"]:
        parts.append(f"commit {before['git_commit'][:10]} -> {after['git_commit'][:10]}")
    old, new = json.loads(before["versions"] or "{}"), json.loads(after["versions"] or "{}")
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            parts.append(f"{name} {old.get(name, 'absent')} -> {new.get(name, 'absent')}")
    return "; ".join(parts) or "nothing recorded changed (same commit and versions): the machine or the run"


def change_points(series: pd.DataFrame, max_pvalue: float = MAX_PVALUE) -> list[dict]:
    """Otava's change points of one series: where, how large, how sure, and what changed there."""
    series = series[series["value"].notna()].reset_index(drop=True)
    values = series["value"].astype(float)
    if len(values) < 3:  # a change needs a point on each side and one to tell it from noise
        return []
    found, _ = compute_change_points(values.to_list(), window_len=max(len(values), 3), max_pvalue=max_pvalue)
    rows = []
    for point in found:
        index = int(point.index)
        before, after = series.iloc[index - 1], series.iloc[index]
        stats = point.stats
        rows.append(
            {
                "index": index,
                "study_before": before["study"],
                "study_after": after["study"],
                "finished_at": after["finished_at"],
                "mean_before": float(stats.mean_1),
                "mean_after": float(stats.mean_2),
                "change": float(stats.mean_2 / stats.mean_1 - 1),
                "pvalue": float(stats.pvalue),
                "follows": what_changed(before, after),
            }
        )
    return rows


def change_point_table(history: pd.DataFrame, max_pvalue: float = MAX_PVALUE) -> pd.DataFrame:
    """Every change point of every series, keyed by arm x metric."""
    rows = []
    for key, series in series_in(history).items():
        for point in change_points(series, max_pvalue):
            rows.append({**dict(zip(SERIES_KEYS, key, strict=True)), "points": len(series), **point})
    columns = [
        *SERIES_KEYS,
        "points",
        "index",
        "study_before",
        "study_after",
        "finished_at",
        "mean_before",
        "mean_after",
        "change",
        "pvalue",
        "follows",
    ]
    return pd.DataFrame(rows, columns=columns)
