import numpy as np
import pandas as pd
import pytest

from edgebench.bench.compare import (
    aa_spread,
    bootstrap_ci,
    compare_rows,
    gate_rows,
    gate_status,
    paired_ratios,
)
from edgebench.bench.rep import straggler_reason
from edgebench.bench.validity import round_subsets, validity_rows


def reps(arm, values, status="ok", metric="decode_tok_s"):
    return [
        {"arm": arm, "round": r, "attempt": 1, "status": status, metric: v, "ttft_s": 1 / v}
        for r, v in enumerate(values)
    ]


def test_paired_ratios_are_within_round_and_oriented():
    frame = pd.DataFrame(reps("a", [10, 20, 30]) + reps("b", [11, 22, 33]))
    np.testing.assert_allclose(paired_ratios(frame, "decode_tok_s", "a", "b"), [1.1, 1.1, 1.1])
    # lower-is-better metric: b has lower ttft, so b is better: ratio > 1
    np.testing.assert_allclose(paired_ratios(frame, "ttft_s", "a", "b"), [1.1, 1.1, 1.1])


def test_drift_cancels_in_paired_ratios_but_not_in_spread():
    drift = [10, 13, 16]  # the machine got faster over the rounds
    frame = pd.DataFrame(reps("a", drift) + reps("b", [v * 0.9 for v in drift]))
    row = compare_rows(frame, "a", ["decode_tok_s"])[0]
    assert row["ratio"] == pytest.approx(0.9) and row["verdict"] == "worse"
    assert aa_spread(pd.Series(drift)) == pytest.approx(0.6)


def test_one_clean_pair_judges_nothing():
    frame = pd.DataFrame(reps("a", [100, 101]) + reps("b", [150, 10]))
    frame.loc[(frame["arm"] == "b") & (frame["round"] == 1), "status"] = "contended"
    row = compare_rows(frame, "a", ["decode_tok_s"])[0]
    assert row["pairs"] == 1 and row["ratio"] == pytest.approx(1.5)
    assert row["verdict"] == "too few pairs" and np.isnan(row["ci_low"])
    frame.loc[frame["arm"] == "b", "status"] = "contended"
    assert compare_rows(frame, "a", ["decode_tok_s"])[0]["verdict"] == "no clean pairs"
    assert gate_status(1.5, 0.01, 0.1, pairs=1) == "ungateable"


def test_bootstrap_interval_contains_the_estimate_and_narrows_with_less_noise():
    rng = np.random.default_rng(1)
    noisy = np.exp(rng.normal(0, 0.1, 30))
    quiet = np.exp(rng.normal(0, 0.01, 30))
    lo_n, hi_n = bootstrap_ci(noisy)
    lo_q, hi_q = bootstrap_ci(quiet)
    assert lo_n < np.exp(np.log(noisy).mean()) < hi_n
    assert hi_q - lo_q < hi_n - lo_n


def test_gate_band_method_on_synthetic_samples():
    assert gate_status(0.95, 0.03, 0.1) == "fail"  # below 1/1.03
    assert gate_status(0.98, 0.03, 0.1) == "pass"
    assert gate_status(1.20, 0.03, 0.1) == "pass"  # better is never a regression
    assert gate_status(0.50, 0.30, 0.1) == "ungateable"  # ~30% swing: refuse to judge
    assert gate_status(0.95, float("nan"), 0.1) == "ungateable"


def test_gate_rows_use_clean_reps_only():
    frame = pd.DataFrame(reps("a", [100, 101, 102]) + reps("b", [90, 10, 92]))
    frame.loc[(frame["arm"] == "b") & (frame["round"] == 1), "status"] = "contended"  # a straggler...
    retry = {"arm": "b", "round": 1, "attempt": 2, "status": "ok", "decode_tok_s": 91.0, "ttft_s": 1 / 91}
    frame = pd.concat([frame, pd.DataFrame([retry])], ignore_index=True)  # ...re-run once, clean
    row = gate_rows(frame, "a", ["decode_tok_s"], 0.1)[0]
    assert row["pairs"] == 3 and row["ratio"] == pytest.approx((0.9 * 91 / 101 * 92 / 102) ** (1 / 3))
    assert row["spread"] == pytest.approx(92 / 90 - 1) and row["status"] == "fail"
    frame.loc[frame.index[-1], "status"] = "contended"
    assert gate_rows(frame, "a", ["decode_tok_s"], 0.1)[0]["pairs"] == 2


def test_straggler_rule_uses_direction():
    assert straggler_reason(10.0, [20.0, 21.0], "decode_tok_s", 1.5).startswith("straggler")
    assert straggler_reason(19.0, [20.0, 21.0], "decode_tok_s", 1.5) == ""
    assert straggler_reason(3.0, [1.0, 1.1], "ttft_s", 1.5).startswith("straggler")
    assert straggler_reason(3.0, [], "ttft_s", 1.5) == ""


def test_validity_false_alarms_and_power_on_synthetic_calibration():
    rng = np.random.default_rng(0)
    base = 100 * np.exp(rng.normal(0, 0.01, 8))
    frame = pd.DataFrame(
        reps("base", base) + reps("twin", base * np.exp(rng.normal(0, 0.01, 8))) + reps("slow", base / 1.10)
    )
    row = validity_rows(
        frame,
        {"baseline": "base", "twin": "twin", "injected": "slow", "metric": "decode_tok_s", "effect": 0.1},
        max_spread=0.1,
        reps=3,
    )[0]
    assert row["subsets"] == 56 and row["reps"] == 3
    assert row["power"] == 1.0 and row["false_alarm_rate"] <= 0.1
    assert row["measured_effect"] == pytest.approx(1 - 1 / 1.1, rel=1e-6)
    with pytest.raises(ValueError):
        round_subsets([0, 1], 3)
