"""The engines study's items, on decision tables written here: the best arm within the budget, and an
engine change against a quantization change, each judged by the arms' intervals."""

import pandas as pd
import pytest

from edgebench.items.choices import best_within, engine_vs_quantization


def cell(arm: str, metric: str, value: float, half: float, verdict: str = "met") -> dict:
    return {
        "arm": arm,
        "metric": metric,
        "value": value,
        "low": value - half,
        "high": value + half,
        "n": 8,
        "verdict": verdict,
    }


def item(arms: list[str], **verify) -> dict:
    return {"id": "t", "starts_from": {"table": "decision", "arms": arms}, "verify": verify}


ARMS = ["a/fast-bad", "b/fast", "c/slow"]


def decision(rates: dict[str, tuple[float, float]], kl_verdicts: dict[str, str]) -> pd.DataFrame:
    rows = [cell(arm, "decode_tok_s", rate, half) for arm, (rate, half) in rates.items()]
    rows += [cell(arm, "kl_mean", 0.05, 0.01, verdict) for arm, verdict in kl_verdicts.items()]
    return pd.DataFrame(rows)


def test_the_fastest_within_the_kl_budget_ignores_a_faster_arm_outside_it():
    frame = decision(
        {"a/fast-bad": (50, 1), "b/fast": (30, 1), "c/slow": (20, 1)},
        {"a/fast-bad": "not met", "b/fast": "met", "c/slow": "met"},
    )
    verdict, evidence = best_within(frame, item(ARMS, choose="decode_tok_s", within=["kl_mean"]))
    assert verdict == "confirmed"
    assert evidence["why"].iloc[0].startswith("b/fast at 30")
    assert evidence.set_index("arm")["meets"].to_dict() == {
        "a/fast-bad": False,
        "b/fast": True,
        "c/slow": True,
    }


def test_overlapping_intervals_leave_the_fastest_undecided():
    frame = decision(
        {"a/fast-bad": (50, 1), "b/fast": (30, 6), "c/slow": (25, 6)},
        {"a/fast-bad": "met", "b/fast": "met", "c/slow": "met"},
    )
    frame = frame[frame["arm"] != "a/fast-bad"]
    verdict, _ = best_within(frame, item(ARMS, choose="decode_tok_s", within=["kl_mean"]))
    assert verdict == "inconclusive"


def test_no_arm_within_the_budget_refutes_the_claim_and_says_so():
    frame = decision({"b/fast": (30, 1), "c/slow": (20, 1)}, {"b/fast": "undecided", "c/slow": "not met"})
    verdict, evidence = best_within(frame, item(ARMS, choose="decode_tok_s", within=["kl_mean"]))
    assert verdict == "refuted" and "no arm meets kl_mean" in evidence["why"].iloc[0]


def test_the_smallest_arm_ranks_lower_memory_first():
    rows = [cell("b/fast", "peak_rss_anon_mb", 900, 10), cell("c/slow", "peak_rss_anon_mb", 400, 10)]
    rows += [cell("b/fast", "decode_tok_s", 30, 1), cell("c/slow", "decode_tok_s", 20, 1)]
    verdict, evidence = best_within(
        pd.DataFrame(rows), item(ARMS, choose="peak_rss_anon_mb", within=["decode_tok_s"])
    )
    assert verdict == "confirmed" and evidence["why"].iloc[0].startswith("c/slow at 400")


def test_a_budget_without_the_ranking_metric_is_named():
    frame = decision({"b/fast": (30, 1)}, {"b/fast": "met"})
    with pytest.raises(ValueError, match="peak_rss_anon_mb"):
        best_within(frame, item(ARMS, choose="peak_rss_anon_mb", within=["kl_mean"]))


@pytest.mark.parametrize(
    ("engine_rate", "quant_rate", "expected"),
    [(40, 25, "confirmed"), (25, 40, "refuted"), (31, 30, "inconclusive")],
)
def test_an_engine_change_against_a_quantization_change(engine_rate, quant_rate, expected):
    rows = [
        cell("v/bf16", "decode_tok_s", 20, 1),
        cell("o/fp16", "decode_tok_s", engine_rate, 2),
        cell("l/f16", "decode_tok_s", engine_rate - 5, 2),
        cell("v/int4", "decode_tok_s", quant_rate, 2),
    ]
    spec = item(
        ["v/bf16"], choose="decode_tok_s", engine_changes=["o/fp16", "l/f16"], quantization_changes=["v/int4"]
    )
    verdict, evidence = engine_vs_quantization(pd.DataFrame(rows), spec)
    assert verdict == expected
    assert set(evidence["arm"]) == {"v/bf16", "o/fp16", "v/int4"}  # the best of each kind and the baseline
