"""One statistics module for every comparison edgebench makes.

Throughput comparisons rest on within-round paired log ratios (candidate vs baseline, oriented so
that a positive log ratio means "candidate better"). Their mean is the log of the geometric-mean
ratio; intervals are Student-t, never a percentile bootstrap over a handful of values. Decisions are
sequential: the data is looked at every `look_every` rounds up to the maximum, against Pocock bounds
(one constant z bound for every look, turned into a t quantile at each look's degrees of freedom), so
a large effect stops at the first look and a null runs to the end while the overall false-alarm rate
stays at alpha. Pocock, not O'Brien-Fleming: the first look comes after two rounds, where t has one
degree of freedom and O'Brien-Fleming's first bound could never be crossed.

Success rates use Wilson intervals; paired success/failure uses McNemar's exact test.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05  # one-sided, for every decision
POWER = 0.90  # what the minimum detectable effect is defined at


def _scipy_stats():
    """scipy.stats on first use: every Snakefile parse imports this module (the roadmap's verify
    methods) without calling it, and importing scipy.stats takes a large share of a dry run."""
    from scipy import stats

    return stats


def wilson_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (scipy's binomtest); (nan, nan) with no trials."""
    if trials == 0:
        return float("nan"), float("nan")
    interval = _scipy_stats().binomtest(int(successes), int(trials)).proportion_ci(level, method="wilson")
    return float(interval.low), float(interval.high)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (a succeeded alone, b alone): a
    binomial test of one side's share of the discordant pairs against 1/2."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(_scipy_stats().binomtest(int(only_a), n, 0.5).pvalue)


@dataclass(frozen=True)
class PairedOutcomes:
    """Binary outcomes of two arms on the same units (task and seed), for McNemar's test."""

    pairs: int
    rate: float
    reference_rate: float
    only_arm: int
    only_reference: int

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_arm, self.only_reference)


def paired_outcomes(arm, reference, keys: list[str], outcome: str = "success") -> PairedOutcomes:
    """Pair two frames of trials on `keys` (inner join) and count the discordant pairs."""
    paired = arm.merge(reference, on=keys, suffixes=("", "_ref"))
    ours, theirs = paired[outcome].astype(bool), paired[f"{outcome}_ref"].astype(bool)
    return PairedOutcomes(
        pairs=len(paired),
        rate=float(ours.mean()) if len(paired) else math.nan,
        reference_rate=float(theirs.mean()) if len(paired) else math.nan,
        only_arm=int((ours & ~theirs).sum()),
        only_reference=int((~ours & theirs).sum()),
    )


@dataclass(frozen=True)
class PairedEstimate:
    """Geometric-mean ratio of paired samples with a two-sided t-interval at `level`."""

    n: int
    ratio: float
    ci_low: float
    ci_high: float
    sd_log: float
    se_log: float


def student_half_width(values: np.ndarray, level: float = 0.95) -> float:
    """Half the width of the Student-t interval of the mean of two or more values."""
    n = len(values)
    return float(_scipy_stats().t.ppf(0.5 + level / 2, n - 1)) * float(np.std(values, ddof=1)) / math.sqrt(n)


def paired_estimate(log_ratios: np.ndarray, level: float = 0.95) -> PairedEstimate:
    """Mean of log ratios with a Student-t interval; NaN interval below two values."""
    values = np.asarray(log_ratios, dtype=float)
    values = values[np.isfinite(values)]
    n = len(values)
    if n == 0:
        return PairedEstimate(0, math.nan, math.nan, math.nan, math.nan, math.nan)
    mean = float(values.mean())
    if n < 2:
        return PairedEstimate(1, math.exp(mean), math.nan, math.nan, math.nan, math.nan)
    sd = float(values.std(ddof=1))
    se = sd / math.sqrt(n)
    half = float(_scipy_stats().t.ppf(0.5 + level / 2, n - 1)) * se
    return PairedEstimate(n, math.exp(mean), math.exp(mean - half), math.exp(mean + half), sd, se)


def contrast_estimate(first: np.ndarray, second: np.ndarray, level: float = 0.95) -> PairedEstimate:
    """exp(mean(first) - mean(second)) of two groups of log ratios with Welch's t-interval (no
    equal-variance assumption); n counts both groups, sd_log is their pooled within-group SD."""
    a = np.asarray(first, dtype=float)
    b = np.asarray(second, dtype=float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) < 2 or len(b) < 2:
        mean = float(a.mean() - b.mean()) if len(a) and len(b) else math.nan
        return PairedEstimate(len(a) + len(b), math.exp(mean), math.nan, math.nan, math.nan, math.nan)
    result = _scipy_stats().ttest_ind(a, b, equal_var=False)
    low, high = result.confidence_interval(level)
    mean = float(a.mean() - b.mean())
    pooled = ((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / (len(a) + len(b) - 2)
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return PairedEstimate(
        len(a) + len(b), math.exp(mean), math.exp(low), math.exp(high), math.sqrt(pooled), se
    )


def minimum_detectable_effect(sd_log: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """Smallest relative slowdown a one-sided paired t-test at `alpha` catches with `power` in n
    pairs, given the per-pair log-ratio SD: 1 - exp(-(t_{1-a} + t_{power}) * sd / sqrt(n))."""
    if n < 2 or not math.isfinite(sd_log):
        return math.nan
    df = n - 1
    shift = (_scipy_stats().t.ppf(1 - alpha, df) + _scipy_stats().t.ppf(power, df)) * sd_log / math.sqrt(n)
    return float(1 - math.exp(-shift))


def mde_interval(mde: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """The MDE at both ends of the chi-square interval of the SD it was read from (n values, n - 1
    degrees of freedom): an MDE from a few pairs is as uncertain as their spread. The MDE is
    1 - exp(-c * sd), so at an SD s it is 1 - (1 - mde) ** (s / sd)."""
    if n < 2 or not math.isfinite(mde):
        return math.nan, math.nan
    df, tail = n - 1, (1 - level) / 2
    chi2 = _scipy_stats().chi2
    low, high = math.sqrt(df / chi2.ppf(1 - tail, df)), math.sqrt(df / chi2.ppf(tail, df))
    return float(1 - (1 - mde) ** low), float(1 - (1 - mde) ** high)


@functools.lru_cache(maxsize=64)
def mcnemar_pairs_needed(
    difference: float, discordant: float, alpha: float = ALPHA, power: float = POWER
) -> float:
    """Pairs a two-sided McNemar test needs to detect a difference `difference` in paired success
    rates when a fraction `discordant` of pairs disagree (Connor 1987's normal approximation)."""
    z_a, z_b = _scipy_stats().norm.ppf(1 - alpha / 2), _scipy_stats().norm.ppf(power)
    discordant = max(discordant, difference)  # a difference d needs at least d discordant pairs
    spread = math.sqrt(max(discordant - difference**2, 0.0))
    return (z_a * math.sqrt(discordant) + z_b * spread) ** 2 / difference**2


def mcnemar_detectable_difference(
    pairs: int, discordant: float, alpha: float = ALPHA, power: float = POWER
) -> float:
    """The smallest difference in paired rates that `pairs` pairs detect with the given power, at
    the observed fraction of discordant pairs (bisection on mcnemar_pairs_needed)."""
    if pairs < 1:
        return math.nan
    low, high = 1e-6, 1.0
    if mcnemar_pairs_needed(high, discordant, alpha, power) > pairs:
        return math.inf  # too few pairs to detect even a difference of 1
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (
            (middle, high)
            if mcnemar_pairs_needed(middle, discordant, alpha, power) > pairs
            else (low, middle)
        )
    return high


@functools.lru_cache(maxsize=64)  # seeded, so the same (looks, alpha, draws) always gives the same bound
def pocock_bounds(looks: int, alpha: float = ALPHA, draws: int = 200_000) -> tuple[float, ...]:
    """One-sided z bound, the same at each of K equally spaced looks, whose overall crossing
    probability under the null is alpha. Found on seeded Brownian paths, so it is reproducible."""
    if looks < 1:
        raise ValueError(f"need at least one look, got {looks}")
    if looks == 1:
        return (float(_scipy_stats().norm.ppf(1 - alpha)),)
    rng = np.random.default_rng(12345)
    paths = rng.standard_normal((draws, looks)).cumsum(axis=1)
    z = paths / np.sqrt(np.arange(1, looks + 1))  # the z statistic at each look
    c = float(np.quantile(z.max(axis=1), 1 - alpha))
    return (c,) * looks


def look_schedule(available: int, look_every: int, max_rounds: int) -> list[int]:
    """Round counts at which the data is looked at: every `look_every` up to `max_rounds`, cut at
    what is available (the last look is at the available count when that is short of a step)."""
    if look_every < 2:
        raise ValueError(f"look_every must be >= 2 (a t-interval needs two pairs), got {look_every}")
    planned = list(range(look_every, max_rounds + 1, look_every))
    if not planned or planned[-1] != max_rounds:
        planned.append(max_rounds)
    return planned


TOO_FEW_PAIRS = "too few pairs"  # no verdict because samples were lost, not because the noise is wide


@dataclass(frozen=True)
class SequentialResult:
    """Outcome of a group-sequential paired analysis at the look where it stopped."""

    decision: str  # better | worse | same | undecided
    rounds_used: int
    looks_taken: int
    looks_planned: int
    ratio: float
    ci_low: float  # at the stopping look's adjusted level (two one-sided bounds)
    ci_high: float
    sd_log: float
    mde: float  # minimum detectable slowdown at the planned maximum, from the observed SD


def sequential_paired(
    log_ratios: np.ndarray,
    tolerance: float,
    look_every: int,
    max_rounds: int,
    alpha: float = ALPHA,
    power: float = POWER,
    equivalence_first: bool = False,
) -> SequentialResult:
    """Look every `look_every` rounds: stop as `better`/`worse` when a one-sided bound excludes
    ratio 1, or as `same` when both bounds lie within [1 - tolerance, 1/(1 - tolerance)] (TOST);
    `undecided` at the last look otherwise. Bounds are Pocock over the planned looks, the z bound
    turned into a t quantile at each look's degrees of freedom. With `equivalence_first` (gates) a
    change shown within the tolerance is `same` even when it is also shown to be non-zero."""
    values = np.asarray(log_ratios, dtype=float)
    values = values[np.isfinite(values)]
    planned = look_schedule(len(values), look_every, max_rounds)
    bounds = pocock_bounds(len(planned), alpha)
    margin = -math.log(1 - tolerance)
    sd_all = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    mde = minimum_detectable_effect(sd_all, max_rounds, alpha, power)
    decision, used, taken, low, high, mean = "undecided", 0, 0, math.nan, math.nan, math.nan
    for index, (n, z) in enumerate(zip(planned, bounds, strict=True)):
        n = min(n, len(values))
        if n < 2 or n == used:
            continue
        part = values[:n]
        mean = float(part.mean())
        se = float(part.std(ddof=1)) / math.sqrt(n)
        crit = float(_scipy_stats().t.ppf(_scipy_stats().norm.cdf(z), n - 1))
        low, high = mean - crit * se, mean + crit * se
        used, taken = n, index + 1
        within = low > -margin and high < margin
        if within and equivalence_first:
            decision = "same"
        elif low > 0:
            decision = "better"
        elif high < 0:
            decision = "worse"
        elif within:
            decision = "same"
        if decision != "undecided":
            break
    if used == 0:
        return SequentialResult(
            "undecided", len(values), 0, len(planned), math.nan, math.nan, math.nan, sd_all, mde
        )
    return SequentialResult(
        decision, used, taken, len(planned), math.exp(mean), math.exp(low), math.exp(high), sd_all, mde
    )


def gate_outcome(result: SequentialResult, tolerance: float) -> str:
    """A gate over a sequential result (run with `equivalence_first`): `pass` (shown within the
    tolerance, or better), `fail` (a slowdown shown, and not shown within the tolerance),
    `too few pairs` when fewer than two pairs were clean (nothing was looked at), `ungateable` when
    undecided and the noise floor (MDE) is wider than the tolerance, else `inconclusive`."""
    if result.looks_taken == 0:
        return TOO_FEW_PAIRS
    if result.decision in ("same", "better"):
        return "pass"
    if result.decision == "worse":
        return "fail"
    if not math.isfinite(result.mde) or result.mde > tolerance:
        return "ungateable"
    return "inconclusive"
