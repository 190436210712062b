"""edgebench compare: figures between studies with their intervals and labels, what differs, and
the refusal of folders that are not studies."""

import math

import pandas as pd
import pytest

from edgebench.cli import main
from edgebench.crossstudy import between
from edgebench.crossstudy.run import compare_studies
from tests.studies import write_study

MACHINE_A = {"digest": "m1", "lines": {"cpu_model": "X", "triad_bandwidth": 30.0, "gemm_rate": 50.0}}
MACHINE_B = {"digest": "m2", "lines": {"cpu_model": "X", "triad_bandwidth": 15.0, "gemm_rate": 51.0}}


def test_a_slower_machine_differs_in_rates_but_its_paired_ratio_is_the_same(tmp_path):
    a = write_study(tmp_path / "a", {"vllm/bf16": 50.0, "vllm/w4a16": 40.0}, seed=1, machine=MACHINE_A)
    b = write_study(
        tmp_path / "b",
        {"vllm/bf16": 25.0, "vllm/w4a16": 20.0},
        seed=2,
        machine=MACHINE_B,
        versions={"vllm": "0.31.0"},
    )
    written = compare_studies([a, b], tmp_path / "out")
    table = pd.read_parquet(written["table"]).set_index(["kind", "arm", "metric"])
    bf16 = table.loc[("absolute", "vllm/bf16", "decode_tok_s")]
    assert bf16["label"] == "differs"
    assert bf16["ci_low"] < 0.5 < bf16["ci_high"] or abs(bf16["ratio"] - 0.5) < 0.02
    assert "Welch" in bf16["method"]
    paired = table.loc[("paired ratio", "vllm/w4a16 vs vllm/bf16", "decode_tok_s")]
    assert paired["label"] == "same", paired["why"]
    assert paired["value_a"] == pytest.approx(0.8, abs=0.02)
    assert paired["value_b"] == pytest.approx(0.8, abs=0.02)
    assert paired["ci_low"] < 1 < paired["ci_high"]
    assert paired["covers_a"] == "within one session"
    differences = pd.read_parquet(written["differences"])
    differing = set(differences.loc[differences["differs"], "what"])
    assert {"triad_bandwidth", "vllm", "machine_digest"} <= differing
    assert "gemm_rate" not in differing and "cpu_model" not in differing  # 2% apart, and equal
    page = written["page"].read_text()
    verdicts = page[: page.index("### Paired within-study ratios")]  # the verdicts come first
    assert "Paired within-study ratios** (2): 2 same" in verdicts
    assert "Fingerprint lines that differ**: triad_bandwidth (30.0 vs 15.0)" in verdicts
    assert "vllm/bf16 decode_tok_s (absolute)" in verdicts and "e+0" not in page


def test_a_real_change_in_the_paired_ratio_is_labelled_differs(tmp_path):
    a = write_study(tmp_path / "a", {"vllm/bf16": 50.0, "vllm/w4a16": 40.0}, seed=1)
    b = write_study(tmp_path / "b", {"vllm/bf16": 50.0, "vllm/w4a16": 45.0}, seed=2)
    table = pd.read_parquet(compare_studies([a, b], tmp_path / "out")["table"])
    row = table[(table["kind"] == "paired ratio") & (table["metric"] == "decode_tok_s")].iloc[0]
    assert row["label"] == "differs"
    assert row["ratio"] == pytest.approx(45 / 40, rel=0.03)


def test_one_clean_sample_is_too_few_and_says_which_study():
    one = between.sample_estimate([10.0])
    many = between.sample_estimate([10.0, 10.5, 9.5])
    verdict, why = between.label(one, many, ("first", "second"))
    assert verdict == "too few samples" and "first has 1 clean value" in why


def test_overlapping_intervals_with_a_gap_beyond_an_mde_are_unresolved():
    a = between.Estimate(1.0, 0.9, 1.1, 5, 0.05, 4, 0.05)
    b = between.Estimate(1.08, 0.98, 1.19, 5, 0.05, 4, 0.05)
    assert between.label(a, b, ("a", "b"))[0] == "unresolved"


def test_the_ratio_interval_between_studies_widens_with_either_studys_error():
    tight = between.sample_estimate([10.0, 10.1, 9.9, 10.05, 9.95])
    loose = between.sample_estimate([10.0, 12.0, 8.0, 11.0, 9.0])
    _, low_t, high_t = between.ratio_between(tight, tight)
    _, low_l, high_l = between.ratio_between(tight, loose)
    assert math.log(high_l / low_l) > math.log(high_t / low_t)


def test_a_folder_that_is_not_a_study_is_refused_in_one_line_naming_it(tmp_path, capsys):
    a = write_study(tmp_path / "a", {"vllm/bf16": 50.0}, seed=1)
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(a), str(tmp_path / "empty"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(tmp_path / "empty") in err[0]
    assert not (tmp_path / "out").exists()


def test_studies_with_nothing_in_common_are_refused_naming_the_folder(tmp_path, capsys):
    a = write_study(tmp_path / "a", {"vllm/bf16": 50.0, "vllm/x": 40.0}, seed=1)
    b = write_study(tmp_path / "b", {"llamacpp/q4": 50.0, "llamacpp/q8": 40.0}, seed=2)
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "shares no arm and metric" in err and str(b) in err


def test_k_sessions_give_a_between_session_sd_and_an_interval_across_them():
    from edgebench.bench.compare import compare_rows
    from tests.studies import warm_rows

    one = pd.DataFrame(
        compare_rows(warm_rows({"vllm/bf16": 50.0, "x": 40.0}, 10, 0.01, 5), "vllm/bf16", ["decode_tok_s"])
    ).iloc[0]
    assert one["interval_covers"] == "within one session" and one["sessions"] == 1
    assert math.isnan(one["between_session_sd_log"])
    three = pd.DataFrame(
        compare_rows(
            warm_rows({"vllm/bf16": 50.0, "x": 40.0}, 10, 0.01, 5, sessions=3), "vllm/bf16", ["decode_tok_s"]
        )
    ).iloc[0]
    assert three["interval_covers"] == "across 3 sessions" and three["sessions"] == 3
    assert three["between_session_sd_log"] > 0
    # three session means give a t-interval on 2 degrees of freedom: wider than the pooled one
    assert three["across_ci_high"] / three["across_ci_low"] > three["ci_high"] / three["ci_low"]
    assert three["across_ci_low"] < 0.8 < three["across_ci_high"]


def test_a_study_of_k_sessions_is_compared_by_its_interval_across_them(tmp_path):
    rates = {"vllm/bf16": 50.0, "vllm/w4a16": 40.0}
    a = write_study(tmp_path / "a", rates, seed=1, sessions=3)
    b = write_study(tmp_path / "b", rates, seed=2)
    table = pd.read_parquet(compare_studies([a, b], tmp_path / "out")["table"])
    row = table[(table["kind"] == "paired ratio") & (table["metric"] == "decode_tok_s")].iloc[0]
    assert row["covers_a"] == "across 3 sessions" and row["n_a"] == 3
    assert row["covers_b"] == "within one session" and row["n_b"] == 10
