import numpy as np
import pandas as pd
import pytest

from edgebench.bench.compare import compare_rows, gate_rows, paired_log_ratios
from edgebench.bench.rep import straggler_reason
from edgebench.bench.validity import blocks_of, smallest_detected, validity_rows
from edgebench.stats import paired_estimate

GATES = {"tolerance": 0.025, "look_every": 2}


def samples(arm, values, status="ok", metric="decode_tok_s", cpu=None):
    return [
        {"arm": arm, "round": r, "status": status, metric: v, "ttft_s": 1 / v, "cpu_s": (cpu or 1.0) * 10}
        for r, v in enumerate(values)
    ]


def test_paired_log_ratios_are_within_round_and_oriented():
    frame = pd.DataFrame(samples("a", [10, 20, 30]) + samples("b", [11, 22, 33]))
    np.testing.assert_allclose(paired_log_ratios(frame, "decode_tok_s", "a", "b"), np.log([1.1] * 3))
    # lower-is-better metric: b has lower ttft, so b is better: positive log ratio
    np.testing.assert_allclose(paired_log_ratios(frame, "ttft_s", "a", "b"), np.log([1.1] * 3))


def test_drift_cancels_in_paired_ratios():
    drift = [10, 13, 16, 19]  # the machine got faster over the rounds
    frame = pd.DataFrame(samples("a", drift) + samples("b", [v * 0.9 for v in drift]))
    row = compare_rows(frame, "a", ["decode_tok_s"])[0]
    assert row["ratio"] == pytest.approx(0.9) and row["verdict"] == "worse"
    assert row["rounds"] == 4 and row["ci_high"] == pytest.approx(0.9)


def test_one_clean_pair_judges_nothing():
    frame = pd.DataFrame(samples("a", [100, 101]) + samples("b", [150, 10]))
    frame.loc[(frame["arm"] == "b") & (frame["round"] == 1), "status"] = "contended"
    row = compare_rows(frame, "a", ["decode_tok_s"])[0]
    assert row["rounds"] == 1 and row["ratio"] == pytest.approx(1.5)
    assert row["verdict"] == "too few pairs" and np.isnan(row["ci_low"])
    gate = gate_rows(frame, "a", ["decode_tok_s"], GATES)[0]
    assert gate["status"] == "too few pairs" and gate["pairs"] == 1  # lost samples, not wide noise
    assert gate["contended_samples"] == 1 and gate["failed_samples"] == 0
    frame.loc[frame["arm"] == "b", "status"] = "contended"
    assert compare_rows(frame, "a", ["decode_tok_s"])[0]["verdict"] == "no clean pairs"


def test_a_large_effect_fails_at_the_first_look_and_a_null_passes():
    rng = np.random.default_rng(3)
    base = 100 * np.exp(rng.normal(0, 0.05, 12))  # drift between rounds, paired away
    noise = rng.normal(0, 0.005, 12)
    frame = pd.DataFrame(
        samples("a", base)
        + samples("slow", base * 0.8 * np.exp(noise))
        + samples("same", base * np.exp(noise))
    )
    rows = {r["arm"]: r for r in gate_rows(frame, "a", ["decode_tok_s"], GATES)}
    assert (
        rows["slow"]["status"] == "fail" and rows["slow"]["looks"] == 1 and rows["slow"]["rounds_used"] == 2
    )
    assert rows["same"]["status"] == "pass"
    for row in rows.values():  # every gate row carries its rounds, ratio, interval and MDE
        assert row["ci_low"] <= row["ratio"] <= row["ci_high"] and 0 < row["mde"] < 0.025


def test_noise_wider_than_the_tolerance_is_ungateable_not_a_verdict():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        samples("a", 100 * np.exp(rng.normal(0, 0.2, 6))) + samples("b", 100 * np.exp(rng.normal(0, 0.2, 6)))
    )
    row = gate_rows(frame, "a", ["decode_tok_s"], GATES)[0]
    assert row["mde"] > 0.025 and row["status"] in ("ungateable", "fail")
    if row["decision"] == "undecided":
        assert row["status"] == "ungateable"


def test_gate_rows_use_clean_samples_only():
    frame = pd.DataFrame(samples("a", [100, 101, 102, 103]) + samples("b", [90, 10, 92, 93]))
    frame.loc[(frame["arm"] == "b") & (frame["round"] == 1), "status"] = "contended"
    row = gate_rows(frame, "a", ["decode_tok_s"], GATES)[0]
    assert row["pairs"] == 3 and row["status"] == "fail"


def test_straggler_rule_uses_direction():
    assert straggler_reason(10.0, [20.0, 21.0], "decode_tok_s", 1.5).startswith("straggler")
    assert straggler_reason(19.0, [20.0, 21.0], "decode_tok_s", 1.5) == ""
    assert straggler_reason(3.0, [1.0, 1.1], "ttft_s", 1.5).startswith("straggler")
    assert straggler_reason(3.0, [], "ttft_s", 1.5) == ""


def test_blocks_are_disjoint_and_drop_a_short_tail():
    assert blocks_of(list(range(7)), 2) == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(ValueError):
        blocks_of([0, 1], 1)


def test_validity_false_alarms_and_power_on_synthetic_calibration():
    rng = np.random.default_rng(0)
    base = 100 * np.exp(rng.normal(0, 0.03, 16))
    frame = pd.DataFrame(
        samples("base", base)
        + samples("twin", base * np.exp(rng.normal(0, 0.003, 16)))
        + samples("sleep", base * 0.95 * np.exp(rng.normal(0, 0.003, 16)))
        + samples("busy", base * 0.95 * np.exp(rng.normal(0, 0.003, 16)), cpu=1.05)
    )
    calibration = {
        "baseline": "base",
        "twin": "twin",
        "injected": ["sleep", "busy"],
        "metric": "decode_tok_s",
        "block_rounds": 4,
    }
    rows = {r["arm"]: r for r in validity_rows(frame, calibration, GATES, {"sleep": 0.05, "busy": 0.05})}
    assert rows["twin"]["check"] == "false_alarm" and rows["twin"]["blocks"] == 4
    assert rows["twin"]["rate"] == 0.0 and rows["twin"]["rate_high"] < 1
    assert rows["sleep"]["rate"] == 1.0 and rows["busy"]["rate"] == 1.0
    assert rows["sleep"]["rate_low"] > 0.3
    assert rows["sleep"]["measured_effect"] == pytest.approx(0.05, abs=0.005)
    assert rows["busy"]["cpu_s_ratio"] == pytest.approx(1.05) and rows["sleep"][
        "cpu_s_ratio"
    ] == pytest.approx(1)
    assert rows["busy"]["covers_effect"] and rows["twin"]["covers_effect"]
    assert {r["smallest_effect_power90"] for r in rows.values()} == {0.05}
    effects = {"sleep": 0.05, "busy": 0.20}  # a claimed effect the session does not show
    rows = {r["arm"]: r for r in validity_rows(frame, calibration, GATES, effects)}
    assert not rows["busy"]["covers_effect"]


def test_a_calibration_miss_beside_an_a_a_offset_says_so():
    rng = np.random.default_rng(1)
    base = 100 * np.exp(rng.normal(0, 0.03, 16))
    # the twin's process runs 6% faster than the baseline's; the injected arm is read beside the
    # baseline, so its 5% loss reads as about 11% and its interval misses 0.95
    frame = pd.DataFrame(
        samples("base", base)
        + samples("twin", base * 1.06 * np.exp(rng.normal(0, 0.003, 16)))
        + samples("sleep", base * 0.95 / 1.06 * np.exp(rng.normal(0, 0.003, 16)))
    )
    calibration = {
        "baseline": "base",
        "twin": "twin",
        "injected": ["sleep"],
        "metric": "decode_tok_s",
        "block_rounds": 4,
    }
    rows = {r["arm"]: r for r in validity_rows(frame, calibration, GATES, {"sleep": 0.05})}
    assert not rows["sleep"]["covers_effect"] and not rows["twin"]["covers_effect"]
    reason = rows["sleep"]["miss_reason"]
    assert reason.startswith("process offset: two processes of one build (base, twin) read "), reason
    assert f"{rows['twin']['whole_session_ratio']:.3f}" in reason
    assert rows["twin"]["whole_session_ratio"] == pytest.approx(1.06, abs=0.01)
    # no offset between the twins: a miss stays unexplained rather than blamed on one
    frame.loc[frame["arm"] == "twin", "decode_tok_s"] /= 1.06
    rows = {r["arm"]: r for r in validity_rows(frame, calibration, GATES, {"sleep": 0.05})}
    assert rows["twin"]["covers_effect"] and not rows["sleep"]["covers_effect"]
    assert rows["sleep"]["miss_reason"] == ""


def test_the_smallest_effect_detected_needs_every_kind_of_loss_of_that_size():
    def power(effect, rate, blocks=20):
        return {"check": "power", "effect": effect, "rate": rate, "blocks": blocks}

    one_kind_short = [power(0.05, 0.8), power(0.05, 0.9), power(0.10, 0.95), power(0.20, 0.9)]
    assert smallest_detected(one_kind_short) == 0.10
    assert smallest_detected([power(0.05, 0.9), power(0.05, 0.95), power(0.1, 1.0)]) == 0.05
    assert np.isnan(smallest_detected([power(0.05, 0.5), power(0.10, 0.9, blocks=0)]))


def duet_session(rng, ratio: float, swaps: int, core_offset: float, sd: float) -> pd.DataFrame:
    """Simulated duets of base and cand with the cores swapped every round, one core slower by
    `core_offset`, and per-round noise shared partly by both arms (drift) and partly not."""
    rows = []
    for r in range(2 * swaps):
        drift = rng.normal(0, 0.1)
        for arm, partner, speed in (("base", "cand", 100.0), ("cand", "base", 100.0 * ratio)):
            core = (r + (arm == "cand")) % 2
            rate = speed * (1 - core_offset * core) * np.exp(drift + rng.normal(0, sd))
            row = {"arm": arm, "partner": partner, "round": r, "slot": 0, "core": core}
            rows.append({**row, "status": "ok", "decode_tok_s": rate, "cpu_s": 1.0})
    return pd.DataFrame(rows)


def test_intervals_keep_their_coverage_under_per_core_offsets():
    """A core 10-25% slower than the other (as seen on shared VMs) is cancelled by the swap: the
    95% interval of the paired ratio still holds the true ratio about 95% of the time."""
    rng = np.random.default_rng(7)
    covered, sessions = 0, 400
    for _ in range(sessions):
        frame = duet_session(rng, 0.9, swaps=6, core_offset=rng.uniform(0.10, 0.25), sd=0.05)
        est = paired_estimate(paired_log_ratios(frame, "decode_tok_s", "base", "cand"))
        covered += est.ci_low <= 0.9 <= est.ci_high
    assert 0.91 <= covered / sessions <= 0.99


def test_duets_pair_by_partner_and_a_core_difference_cancels_over_a_swap():
    rows = []
    for r in range(8):
        core_of = {"base": r % 2, "cand": 1 - r % 2}  # cores swap every round
        for arm, partner, speed in (("base", "cand", 100.0), ("cand", "base", 90.0)):
            slow_core = 0.8 if core_of[arm] == 1 else 1.0  # one vCPU is 20% slower
            rows.append(
                {
                    "arm": arm,
                    "partner": partner,
                    "round": r,
                    "slot": 0,
                    "core": core_of[arm],
                    "status": "ok",
                    "decode_tok_s": speed * slow_core,
                    "cpu_s": 1.0,
                }
            )
    frame = pd.DataFrame(rows)
    logs = paired_log_ratios(frame, "decode_tok_s", "base", "cand")
    assert len(logs) == 4  # one value per swap of two rounds
    np.testing.assert_allclose(logs, np.log(0.9) + 0.5 * np.log(0.8) - 0.5 * np.log(0.8), atol=1e-12)
    row = compare_rows(frame, "base", ["decode_tok_s"])[0]
    assert row["arm"] == "cand" and row["rounds"] == 4 and row["ratio"] == pytest.approx(0.9)
    assert row["core_offset"] == pytest.approx(-0.2)  # core 1 ran 20% slower: reported, then cancelled


def compile_frames(ready_compiled, request_compiled, rounds=8, noise=0.01):
    """Cold reps (ready_s) and warm samples (request_s) of an eager and a compiled arm."""
    rng = np.random.default_rng(0)
    bench = pd.DataFrame(
        samples("eager", [30.0, 32.0], metric="ready_s")
        + samples("compiled", ready_compiled, metric="ready_s")
    )
    drift = 2.0 * np.exp(rng.normal(0, 0.05, rounds))  # the machine drifts, the pairs do not
    warm = pd.DataFrame(
        samples("eager", drift, metric="request_s")
        + samples(
            "compiled",
            drift * request_compiled / 2.0 * np.exp(rng.normal(0, noise, rounds)),
            metric="request_s",
        )
    )
    return bench, warm


def test_break_even_is_compile_time_over_the_time_each_request_saves():
    from edgebench.bench.compile_cost import compile_cost_row

    bench, warm = compile_frames([131.0, 131.0], request_compiled=1.0)
    row = compile_cost_row(bench, warm, "eager", "compiled")
    assert row["compile_s"] == pytest.approx(100.0) and row["ratio"] == pytest.approx(2.0, rel=0.02)
    # ~1 s saved per request (eager requests take ~2 s): ~100 requests recover 100 s
    assert row["break_even_requests"] == pytest.approx(100.0, rel=0.1)
    assert row["break_even_low"] < row["break_even_requests"] < row["break_even_high"]
    assert row["study_requests"] == 8 and row["pairs"] == 8


def test_a_compiled_arm_that_is_not_faster_never_breaks_even():
    from edgebench.bench.compile_cost import compile_cost_row

    bench, warm = compile_frames([131.0, 131.0], request_compiled=2.2)
    row = compile_cost_row(bench, warm, "eager", "compiled")
    assert row["ratio"] < 1 and row["break_even_requests"] == np.inf and row["break_even_high"] == np.inf


@pytest.mark.parametrize(
    ("ready_compiled", "request_compiled", "verdict"),
    [
        ([33.0, 33.0], 1.0, "confirmed"),  # 2 s of compile, 1 s saved per request: pays within 8
        ([131.0, 131.0], 1.0, "refuted"),  # ~100 requests needed, the study sent 8
        ([131.0, 131.0], 2.2, "refuted"),  # slower compiled: never
    ],
)
def test_break_even_verdict_against_the_study_request_count(ready_compiled, request_compiled, verdict):
    from edgebench.bench.compile_cost import compile_cost_row
    from edgebench.items.verify import break_even

    bench, warm = compile_frames(ready_compiled, request_compiled)
    table = pd.DataFrame([compile_cost_row(bench, warm, "eager", "compiled")])
    item = {"starts_from": {"arms": ["eager", "compiled"]}, "expect": {"direction": "below"}}
    assert break_even(table, item)[0] == verdict


def test_break_even_straddling_the_request_count_is_inconclusive():
    from edgebench.bench.compile_cost import compile_cost_row
    from edgebench.items.verify import break_even

    # 1 s of compile, ~0.15 s saved per request, known to +-25%: break-even 5 to 9 requests
    bench, warm = compile_frames([32.0, 32.0], request_compiled=1.9, noise=0.03)
    table = pd.DataFrame([compile_cost_row(bench, warm, "eager", "compiled")])
    row = table.iloc[0]
    assert row["break_even_low"] <= 8 < row["break_even_high"]
    item = {"starts_from": {"arms": ["eager", "compiled"]}, "expect": {"direction": "below"}}
    assert break_even(table, item)[0] == "inconclusive"


def test_noise_table_compares_the_two_timings_of_one_session():
    """Per duet, the paired SD of the common-window rate and of the whole-run rate, from the same
    samples; a noisier timing shows a larger SD and MDE."""
    import numpy as np

    from edgebench.bench.noise import noise_table
    from edgebench.findings import noise_lines

    rng = np.random.default_rng(3)
    rows = []
    for r in range(12):
        shared = rng.normal(0, 0.05)  # drift both arms of a duet see
        lone = rng.normal(0, 0.08)  # the slower arm's lone tail: in its own rate only
        for arm, partner, core in (("base", "twin", r % 2), ("twin", "base", 1 - r % 2)):
            window = 20 * np.exp(shared + rng.normal(0, 0.005))
            rows.append({
                "arm": arm, "partner": partner, "round": r, "slot": 0, "core": core, "status": "ok",
                "decode_tok_s": window, "decode_tok_s_own": window * np.exp(lone if arm == "twin" else 0),
                "pair_wall_s": 8.0, "run_id": "t", "git_commit": "c",
            })  # fmt: skip
    frame = noise_table(pd.DataFrame(rows), "base").set_index("metric")
    assert set(frame.index) == {"decode_tok_s", "decode_tok_s_own"} and (frame["swaps"] == 6).all()
    assert frame.loc["decode_tok_s", "sd_log_per_swap"] < frame.loc["decode_tok_s_own", "sd_log_per_swap"] / 3
    assert frame.loc["decode_tok_s", "mde"] < frame.loc["decode_tok_s_own", "mde"]
    assert frame.loc["decode_tok_s", "seconds_per_swap"] == 16.0
    assert any("common window" in line for line in noise_lines(frame.reset_index()))
    sequential = pd.DataFrame(rows).drop(columns=["partner"])
    assert noise_table(sequential, "base").empty


def test_an_injected_arm_paired_with_the_twin_is_compared_with_the_twin():
    """Interleaved calibration: pairs that share no arm run at once, so some injected arms pair
    with the twin (the baseline under another name) instead of the baseline."""
    rng = np.random.default_rng(1)
    rows = []
    for r in range(8):
        base = 100 * np.exp(rng.normal(0, 0.05))
        twin = 120 * np.exp(rng.normal(0, 0.05))  # a process offset the twin's own pairs share
        pairs = (
            ("base", "twin", base, base),
            ("twin", "slow", twin, twin * 0.9),
            ("base", "busy", base, base * 0.8),
        )
        for slot, (a, b, rate_a, rate_b) in enumerate(pairs):
            for arm, partner, rate in ((a, b, rate_a), (b, a, rate_b)):
                row = {"arm": arm, "partner": partner, "round": r, "slot": slot, "core": slot % 2}
                rows.append(
                    {**row, "status": "ok", "decode_tok_s": rate, "cpu_s": 1.0, "design": "interleaved"}
                )
    calibration = {"baseline": "base", "twin": "twin", "injected": ["slow", "busy"], "metric": "decode_tok_s",
                   "block_rounds": 2}  # fmt: skip
    found = {
        r["arm"]: r for r in validity_rows(pd.DataFrame(rows), calibration, GATES, {"slow": 0.1, "busy": 0.2})
    }
    assert found["slow"]["baseline"] == "twin" and found["busy"]["baseline"] == "base"
    assert found["slow"]["measured_effect"] == pytest.approx(0.1) and found["busy"][
        "measured_effect"
    ] == pytest.approx(0.2)
    assert found["twin"]["baseline"] == "base" and found["slow"]["blocks"] == 4


def test_with_restarted_engines_the_whole_session_interval_is_over_epoch_means():
    """Values within a process epoch share their processes' offsets: the interval counts epochs.
    Eight epochs of four rounds whose twin offset is redrawn each epoch (2%) with little noise
    within one: over all 32 values the interval would be four times too narrow."""
    rng = np.random.default_rng(3)
    rows = []
    for epoch in range(8):
        offset = rng.normal(0, 0.02)
        for r in range(4 * epoch, 4 * epoch + 4):
            rows += [
                {"arm": "base", "round": r, "epoch": epoch, "status": "ok", "cpu_s": 1.0,
                 "decode_tok_s": 100.0},
                {"arm": "twin", "round": r, "epoch": epoch, "status": "ok", "cpu_s": 1.0,
                 "decode_tok_s": 100.0 * np.exp(offset + rng.normal(0, 0.002))},
            ]  # fmt: skip
    frame = pd.DataFrame(rows)
    calibration = {"baseline": "base", "twin": "twin", "injected": []}
    calibration.update(metric="decode_tok_s", block_rounds=4)
    row = validity_rows(frame, calibration, GATES, {})[0]
    assert row["epochs"] == 8 and row["whole_session_rounds"] == 8 and row["blocks"] == 8
    values = paired_log_ratios(frame, "decode_tok_s", "base", "twin")
    means = values.reshape(8, 4).mean(axis=1)
    assert row["sd_log"] == pytest.approx(means.std(ddof=1))
    assert row["paired_sd"] == pytest.approx(values.std(ddof=1))
    pooled = paired_estimate(values)
    assert row["whole_session_ci_high"] - row["whole_session_ci_low"] > 2 * (pooled.ci_high - pooled.ci_low)
