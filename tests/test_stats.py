"""The statistics every comparison uses: interval coverage, sequential false alarms, power, MDE."""

import math

import numpy as np
import pytest

from edgebench.stats import (
    gate_outcome,
    look_schedule,
    mcnemar_exact,
    mde_interval,
    minimum_detectable_effect,
    paired_estimate,
    pocock_bounds,
    sequential_paired,
    wilson_interval,
)


def test_t_interval_covers_a_known_ratio_on_lognormal_data():
    rng = np.random.default_rng(7)
    true_ratio, trials, n = 0.93, 2000, 6
    covered = 0
    for _ in range(trials):
        logs = rng.normal(math.log(true_ratio), 0.04, n)
        est = paired_estimate(logs)
        covered += est.ci_low <= true_ratio <= est.ci_high
    assert 0.93 <= covered / trials <= 0.97  # nominal 95%


def test_estimate_needs_two_values_for_an_interval():
    assert math.isnan(paired_estimate(np.array([0.1])).ci_low)
    assert paired_estimate(np.array([])).n == 0


def test_pocock_bounds_are_constant_and_wider_than_one_look():
    bounds = pocock_bounds(5, 0.05)
    assert len(set(bounds)) == 1
    assert 2.10 < bounds[0] < 2.18  # tabulated Pocock bound, 5 looks, two-sided 0.10 (one-sided 0.05): 2.142
    assert pocock_bounds(1, 0.05)[0] == pytest.approx(1.6449, abs=1e-3)


def test_sequential_looks_keep_false_alarms_at_or_below_alpha():
    rng = np.random.default_rng(11)
    trials = 4000
    alarms = sum(
        sequential_paired(rng.normal(0, 0.02, 12), 0.025, 2, 12).decision == "worse" for _ in range(trials)
    )
    assert alarms / trials <= 0.05 + 0.01  # one-sided alpha 0.05, Monte Carlo slack


def test_a_large_effect_stops_at_the_first_look():
    rng = np.random.default_rng(5)
    result = sequential_paired(np.log(1.76) + rng.normal(0, 0.03, 12), 0.025, 2, 12)
    assert result.decision == "better" and result.looks_taken == 1 and result.rounds_used == 2


def test_power_at_the_minimum_detectable_effect_is_about_ninety_percent():
    rng = np.random.default_rng(9)
    sd, n = 0.02, 10
    mde = minimum_detectable_effect(sd, n)
    trials = 3000
    hits = sum(
        sequential_paired(np.log(1 - mde) + rng.normal(0, sd, n), 0.5, n, n).decision == "worse"
        for _ in range(trials)
    )
    assert 0.86 <= hits / trials <= 0.94


def test_gate_outcomes():
    rng = np.random.default_rng(2)
    same = sequential_paired(rng.normal(0, 0.002, 8), 0.025, 2, 8)
    assert gate_outcome(same, 0.025) == "pass"
    slow = sequential_paired(math.log(0.95) + rng.normal(0, 0.002, 8), 0.025, 2, 8)
    assert gate_outcome(slow, 0.025) == "fail"
    noisy = sequential_paired(rng.normal(0, 0.3, 4), 0.025, 2, 4)
    assert noisy.mde > 0.025
    assert gate_outcome(noisy, 0.025) in ("ungateable", "fail", "pass")
    if noisy.decision == "undecided":
        assert gate_outcome(noisy, 0.025) == "ungateable"


def test_look_schedule_ends_at_the_maximum():
    assert look_schedule(12, 2, 12) == [2, 4, 6, 8, 10, 12]
    assert look_schedule(12, 5, 12) == [5, 10, 12]
    with pytest.raises(ValueError):
        look_schedule(12, 1, 12)


def test_wilson_and_mcnemar():
    low, high = wilson_interval(10, 10)
    assert high == pytest.approx(1.0) and 0.65 < low < 0.75
    assert math.isnan(wilson_interval(0, 0)[0])
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(10, 0) < 0.01


def test_a_small_real_offset_passes_the_gate_but_is_a_difference_for_an_item():
    rng = np.random.default_rng(8)
    logs = math.log(0.99) + rng.normal(0, 0.001, 10)  # 1% slower, measured very precisely
    gate = sequential_paired(logs, 0.025, 2, 10, equivalence_first=True)
    assert gate.decision == "same" and gate_outcome(gate, 0.025) == "pass"
    assert sequential_paired(logs, 0.025, 2, 10).decision == "worse"


def test_paired_outcomes_pair_on_the_same_units_and_count_discordant_pairs():
    import pandas as pd

    from edgebench.stats import paired_outcomes

    arm = pd.DataFrame({"task": ["a", "b", "c", "d"], "trial": 0, "success": [True, True, False, False]})
    ref = pd.DataFrame({"task": ["a", "b", "c", "e"], "trial": 0, "success": [True, False, True, True]})
    pairs = paired_outcomes(arm, ref, ["task", "trial"])
    assert (pairs.pairs, pairs.only_arm, pairs.only_reference) == (3, 1, 1)  # d and e have no pair
    assert pairs.rate == 2 / 3 and pairs.reference_rate == 2 / 3 and pairs.p_value == 1.0


@pytest.mark.parametrize("n", [2, 4, 12])
def test_the_mde_interval_covers_the_mde_of_the_true_spread_at_its_level(n):
    """An MDE read from n pairs' spread, with its interval: over many draws the interval holds the MDE
    the true spread gives in about 95 % of them, at any n (two pairs included)."""
    rng = np.random.default_rng(11)
    sd, planned, trials = 0.02, 10, 2000
    true = minimum_detectable_effect(sd, planned)
    covered = 0
    for _ in range(trials):
        observed = minimum_detectable_effect(float(rng.normal(0.0, sd, n).std(ddof=1)), planned)
        low, high = mde_interval(observed, n)
        assert low <= observed <= high
        covered += low <= true <= high
    assert abs(covered / trials - 0.95) < 3 * math.sqrt(0.95 * 0.05 / trials)
    narrow, wide = mde_interval(true, 40), mde_interval(true, 3)
    assert wide[0] < narrow[0] < true < narrow[1] < wide[1]  # more pairs, a narrower interval
    assert all(math.isnan(v) for v in mde_interval(true, 1))
