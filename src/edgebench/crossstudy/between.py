"""Statistics between two studies: pure functions on values, no tables.

Two sessions share no rounds, so nothing pairs across studies: an absolute metric is compared
unpaired (Welch's t on log values), and a paired within-study ratio is compared as the difference
of two independent log estimates, each with its own standard error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from edgebench.stats import minimum_detectable_effect

LEVEL = 0.95
UNPAIRED_METHOD = "unpaired: Welch t-interval on log values (geometric means), 95%"
SE_METHOD = "unpaired: normal interval from each study's standard error (delta method on logs), 95%"
PAIRED_METHOD = (
    "difference of two independent paired log ratios, each study's SE from its own t-interval; "
    "Welch-Satterthwaite t, 95%"
)


@dataclass(frozen=True)
class Estimate:
    """One study's value of a metric: geometric mean (or the row's value) with its interval."""

    value: float
    low: float
    high: float
    n: int
    se_log: float  # standard error of log(value)
    df: float  # degrees of freedom of that SE (inf: a normal SE)
    mde: float  # the smallest relative difference this study's spread could detect

    @property
    def usable(self) -> bool:
        return self.n >= 2 and math.isfinite(self.se_log)


def sample_estimate(values: np.ndarray) -> Estimate:
    """Geometric mean of positive samples with a Student-t interval on logs."""
    logs = np.log(np.asarray(values, dtype=float))
    logs = logs[np.isfinite(logs)]
    n = len(logs)
    if n < 2:
        value = math.exp(logs.mean()) if n else math.nan
        return Estimate(value, math.nan, math.nan, n, math.nan, math.nan, math.nan)
    mean, sd = float(logs.mean()), float(logs.std(ddof=1))
    se = sd / math.sqrt(n)
    half = float(scipy_stats.t.ppf(0.5 + LEVEL / 2, n - 1)) * se
    mde = minimum_detectable_effect(sd, n)
    return Estimate(math.exp(mean), math.exp(mean - half), math.exp(mean + half), n, se, n - 1, mde)


def se_estimate(value: float, se: float, n: int) -> Estimate:
    """A value reported with its own standard error (fidelity's top-1, KL): a normal interval."""
    if not (math.isfinite(value) and value > 0 and math.isfinite(se)):
        return Estimate(
            value, math.nan, math.nan, n if math.isfinite(value) else 0, math.nan, math.nan, math.nan
        )
    se_log = se / value
    z = float(scipy_stats.norm.ppf(0.5 + LEVEL / 2))
    mde = 1 - math.exp(-(z + float(scipy_stats.norm.ppf(0.9))) * se_log)
    return Estimate(
        value, value * math.exp(-z * se_log), value * math.exp(z * se_log), n, se_log, math.inf, mde
    )


def interval_estimate(value: float, low: float, high: float, n: int, mde: float) -> Estimate:
    """A ratio reported with its t-interval over n pairs (a compare row): its SE recovered."""
    if n < 2 or not all(math.isfinite(v) and v > 0 for v in (value, low, high)):
        return Estimate(value, low, high, n, math.nan, math.nan, mde)
    t = float(scipy_stats.t.ppf(0.5 + LEVEL / 2, n - 1))
    se_log = (math.log(high) - math.log(low)) / (2 * t)
    return Estimate(value, low, high, n, se_log, n - 1, mde)


def welch_df(a: Estimate, b: Estimate) -> float:
    """Welch-Satterthwaite degrees of freedom of the difference (inf when both SEs are normal)."""
    terms = [(e.se_log**2) ** 2 / e.df for e in (a, b) if math.isfinite(e.df) and e.df > 0]
    if not terms or sum(terms) == 0:  # normal SEs, or no spread at all (identical samples)
        return math.inf
    return (a.se_log**2 + b.se_log**2) ** 2 / sum(terms)


def ratio_between(a: Estimate, b: Estimate) -> tuple[float, float, float]:
    """b over a with a 95% interval on the difference of logs."""
    if not (a.usable and b.usable):
        return (b.value / a.value if a.value else math.nan), math.nan, math.nan
    diff = math.log(b.value) - math.log(a.value)
    se = math.sqrt(a.se_log**2 + b.se_log**2)
    df = welch_df(a, b)
    dist = scipy_stats.t(df) if math.isfinite(df) else scipy_stats.norm()
    half = float(dist.ppf(0.5 + LEVEL / 2)) * se
    return math.exp(diff), math.exp(diff - half), math.exp(diff + half)


def label(a: Estimate, b: Estimate, names: tuple[str, str]) -> tuple[str, str]:
    """`differs` (the studies' intervals exclude each other, or the between-study interval
    excludes no change), `same` (no difference shown, and the observed one is below both studies'
    MDE), `too few samples`, or `unresolved` (neither); each with its reason."""
    for est, name in ((a, names[0]), (b, names[1])):
        if not est.usable:
            return "too few samples", f"{name} has {est.n} clean value{'s' * (est.n != 1)} (needs 2)"
    if a.high < b.low or b.high < a.low:
        return "differs", "the two studies' 95% intervals exclude each other"
    ratio, low, high = ratio_between(a, b)
    if not low <= 1 <= high:
        return "differs", (
            f"the intervals overlap, but the between-study interval [{low:.3f}, {high:.3f}] excludes 1"
        )
    gap = abs(ratio - 1)
    mdes = [m for m in (a.mde, b.mde) if math.isfinite(m)]
    if mdes and gap <= min(mdes):
        return (
            "same",
            f"no difference shown, and the observed {gap:.1%} is within both MDEs (≥ {min(mdes):.1%})",
        )
    return "unresolved", (
        f"no difference shown, but the observed {gap:.1%} exceeds an MDE "
        f"({', '.join(f'{m:.1%}' for m in (a.mde, b.mde))}): more samples would tell"
    )
