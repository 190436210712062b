"""Paired comparisons and spread-derived gates (measurement rule 6).

Ratios are oriented with the metric registry so that > 1 always means "candidate better".
Comparisons pair reps of the same round, so slow drift of the machine cancels.

Gate band method: for each of the two arms, the A/A spread is max/min - 1 over its clean reps
(the widest disagreement of the arm with itself). The band is [1/(1+s), 1+s] with s the larger of
the two spreads. If s exceeds the configured limit the gate is `ungateable`; otherwise it `fail`s
when the paired ratio falls below the band and `pass`es otherwise.

Fewer than MIN_PAIRS paired rounds judge nothing: a bootstrap over one ratio has zero width, so a
single pair would look certain. Such rows say `too few pairs` (compare) or `ungateable` (gates).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from edgebench.metrics import metric, ratio_oriented

CLEAN = "ok"
MIN_PAIRS = 2


def clean_reps(frame: pd.DataFrame, arm: str, name: str) -> pd.Series:
    """Values of one metric for an arm's clean reps, indexed by round (last attempt per round)."""
    rows = frame[(frame["arm"] == arm) & (frame["status"] == CLEAN) & frame[name].notna()]
    rows = rows.sort_values("attempt").drop_duplicates("round", keep="last")
    return rows.set_index("round")[name].astype(float)


def paired_ratios(frame: pd.DataFrame, name: str, baseline: str, candidate: str) -> np.ndarray:
    """Oriented candidate/baseline ratios from rounds where both arms have a clean rep."""
    base, cand = clean_reps(frame, baseline, name), clean_reps(frame, candidate, name)
    rounds = sorted(set(base.index) & set(cand.index))
    return np.array([ratio_oriented(name, cand[r], base[r]) for r in rounds], dtype=float)


def geometric_mean(values: np.ndarray) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def bootstrap_ci(values: np.ndarray, resamples: int = 2000, level: float = 0.95, seed: int = 0):
    """Percentile bootstrap interval of the geometric mean of ratios."""
    if len(values) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    logs = np.log(values)
    means = logs[rng.integers(0, len(logs), size=(resamples, len(logs)))].mean(axis=1)
    alpha = (1 - level) / 2
    return float(np.exp(np.quantile(means, alpha))), float(np.exp(np.quantile(means, 1 - alpha)))


def aa_spread(values: pd.Series | np.ndarray) -> float:
    """max/min - 1 over repeated measurements of one arm; NaN with fewer than two."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2 or np.min(values) <= 0:
        return float("nan")
    return float(np.max(values) / np.min(values) - 1)


def paired_spread(frame: pd.DataFrame, name: str, baseline: str, candidate: str) -> float:
    """The larger A/A spread of the two arms; NaN when either lacks two clean reps (ungateable)."""
    return float(
        np.max([aa_spread(clean_reps(frame, baseline, name)), aa_spread(clean_reps(frame, candidate, name))])
    )


def gate_status(ratio: float, spread: float, max_spread: float, pairs: int = MIN_PAIRS) -> str:
    if pairs < MIN_PAIRS or math.isnan(spread) or math.isnan(ratio) or spread > max_spread:
        return "ungateable"
    return "fail" if ratio < 1 / (1 + spread) else "pass"


def compare_rows(frame: pd.DataFrame, baseline: str, metrics: list[str], resamples: int = 2000) -> list[dict]:
    """One row per (candidate arm, metric): paired ratio vs the baseline with a bootstrap CI."""
    rows = []
    for candidate in sorted(set(frame["arm"]) - {baseline}):
        for name in metrics:
            ratios = paired_ratios(frame, name, baseline, candidate)
            low, high = bootstrap_ci(ratios, resamples)
            if len(ratios) < MIN_PAIRS:
                verdict = "too few pairs" if len(ratios) else "no clean pairs"
                low = high = float("nan")
            else:
                verdict = "better" if low > 1 else "worse" if high < 1 else "not significant"
            rows.append(
                {
                    "baseline": baseline,
                    "arm": candidate,
                    "metric": name,
                    "direction": metric(name).direction,
                    "pairs": len(ratios),
                    "ratio": geometric_mean(ratios),
                    "ci_low": low,
                    "ci_high": high,
                    "verdict": verdict,
                    "method": f"geomean of within-round oriented ratios, {resamples}-sample bootstrap 95% CI",
                }
            )
    return rows


def gate_rows(frame: pd.DataFrame, baseline: str, metrics: list[str], max_spread: float) -> list[dict]:
    """One row per (candidate arm, metric): A/A band, paired ratio, pass | fail | ungateable."""
    rows = []
    for candidate in sorted(set(frame["arm"]) - {baseline}):
        for name in metrics:
            ratios = paired_ratios(frame, name, baseline, candidate)
            spread = paired_spread(frame, name, baseline, candidate)
            ratio = geometric_mean(ratios)
            rows.append(
                {
                    "baseline": baseline,
                    "arm": candidate,
                    "metric": name,
                    "pairs": len(ratios),
                    "spread": spread,
                    "band_low": 1 / (1 + spread) if not math.isnan(spread) else float("nan"),
                    "band_high": 1 + spread if not math.isnan(spread) else float("nan"),
                    "max_spread": max_spread,
                    "ratio": ratio,
                    "status": gate_status(ratio, spread, max_spread, len(ratios)),
                }
            )
    return rows
