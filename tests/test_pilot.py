"""The variance pilot's summary on synthetic samples: paired values the way each design gives
them, what a value costs in machine time, and the design that buys the most for a fixed budget."""

import itertools

import numpy as np
import pandas as pd
import pytest

from edgebench.bench.pilot import pair_logs, summarize


def _paired_rows(design, sd, pair_wall_s, concurrent, rounds=8, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(rounds):
        for slot, (a, b) in enumerate(itertools.combinations(["p0", "p1", "p2", "p3"], 2)):
            noise = rng.normal(0, sd)
            for name, partner, rate in ((a, b, 10 * np.exp(noise)), (b, a, 10.0)):
                rows.append(
                    {"process": name, "partner": partner, "round": r, "slot": slot, "status": "ok",
                     "decode_tok_s": rate, "prefill_tok_s": 100.0, "wall_s": pair_wall_s,
                     "pair_wall_s": pair_wall_s, "settle_s": 0.0, "concurrent_pairs": concurrent,
                     "design": design}
                )  # fmt: skip
    return rows


def _sequential_rows(sd, wall_s, rounds=8, seed=1):
    rng = np.random.default_rng(seed)
    return [
        {"process": f"p{i}", "round": r, "status": "ok", "decode_tok_s": 10 * np.exp(rng.normal(0, sd)),
         "prefill_tok_s": 100.0, "wall_s": wall_s, "settle_s": 0.0, "design": "sequential"}
        for r in range(rounds) for i in range(4)
    ]  # fmt: skip


def test_a_duet_value_is_a_swap_and_an_interleaved_value_is_a_pair():
    duet = pd.DataFrame(_paired_rows("duet", 0.05, 10.0, 1))
    inter = pd.DataFrame(_paired_rows("interleaved", 0.05, 10.0, 2))
    assert len(pair_logs(duet, "p0", "p1", "decode_tok_s")) == 4  # 8 rounds, 4 swaps
    logs = pair_logs(inter, "p0", "p1", "decode_tok_s")
    assert len(logs) == 8 and np.all(np.abs(logs) < 0.5)


def test_the_summary_picks_the_design_with_the_least_sd_per_machine_second():
    samples = pd.DataFrame(
        _paired_rows("duet", 0.05, 10.0, 1)  # a swap: 2 duets of 10 s on both cores = 20 s
        + _paired_rows("interleaved", 0.03, 20.0, 2, seed=3)  # 20 s on one core of two = 10 s
        + _sequential_rows(0.10, 5.0)  # 2 samples of 5 s in turn = 10 s
    )
    summary = summarize(samples, 0.025, 12).set_index(["design", "metric"])
    decode = summary.xs("decode_tok_s", level="metric")
    assert decode.loc["duet", "seconds_per_pair"] == pytest.approx(20.0)
    assert decode.loc["interleaved", "seconds_per_pair"] == pytest.approx(10.0)
    assert decode.loc["sequential", "seconds_per_pair"] == pytest.approx(10.0)
    expected = decode["paired_sd"] * np.sqrt(decode["seconds_per_pair"])
    assert np.allclose(decode["sd_per_machine_second"], expected)
    assert decode["best"].sum() == 1 and decode["best"].idxmax() == decode["sd_per_machine_second"].idxmin()
    assert decode.loc["interleaved", "best"]
    assert not summary.xs("prefill_tok_s", level="metric")["best"].any()
