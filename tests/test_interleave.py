"""The interleaved warm design: two arms of a pair share one core and take turns a few decode
tokens at a time, another pair on the other core; each arm timed over its own bursts, and the
guard's verdict given to the pair as a whole."""

import itertools
import math
import random
from operator import itemgetter

import numpy as np
import pandas as pd
import pytest

from edgebench.bench.compare import paired_log_ratios, planned_pairs
from edgebench.bench.interleave import burst_rate, concurrent_groups, first_fit
from edgebench.bench.noise import noise_rows
from edgebench.bench.session import SessionSettings, run_session

from .conftest import hf_spec, require_idle, skip_if_disturbed
from .test_session import hogging

BENCH = {"prefill_tokens": 32, "decode_tokens": 16, "max_model_len": 128}


def test_pairs_that_share_no_arm_run_together_one_per_core():
    order = [("a", "b"), ("a", "c"), ("d", "e"), ("b", "c"), ("f", "g")]
    groups = concurrent_groups(order, 2)
    assert groups == [[("a", "b"), ("d", "e")], [("a", "c"), ("f", "g")], [("b", "c")]]
    for group in concurrent_groups(order, 3):
        arms = [arm for pair in group for arm in pair]
        assert len(arms) == len(set(arms)) and len(group) <= 3
    assert sorted(itertools.chain(*concurrent_groups(order, 1))) == sorted(order)


@pytest.mark.parametrize("seed", range(6))
def test_a_round_takes_as_few_groups_as_its_busiest_arm_allows(seed):
    """The default study's pairs: bf16 is in three of them, so three groups is the fewest, in any
    shuffled order (the first fit of some orders needs four)."""
    pairs = [
        ("bf16", "w4a16"),
        ("w4a16", "w4a8"),
        ("bf16", "twin"),
        ("twin", "slow-sleep"),
        ("bf16", "slow-busy"),
    ]
    order = [pairs[i] for i in random.Random(seed).sample(range(len(pairs)), len(pairs))]
    groups = concurrent_groups(order, 2)
    assert len(groups) == 3 and sorted(itertools.chain(*groups)) == sorted(pairs)
    assert all(len({arm for pair in group for arm in pair}) == 2 * len(group) for group in groups)
    assert groups[0][0] == order[0]  # the shuffle still decides what runs first
    stuck = [pairs[3], pairs[1], pairs[0], pairs[4], pairs[2]]  # an order a study round ran in four
    assert len(first_fit(stuck, 2)) == 4 and len(concurrent_groups(stuck, 2)) == 3


def test_an_arm_is_timed_over_its_own_bursts_only():
    # 4 tokens a burst at 10 ms a step; the partner's turns (the gaps) are not counted, and the
    # first token (the short prompt's prefill, 50 ms) is not a decode step
    bursts = [
        {"t0": 0.0, "stamps": [0.05, 0.06, 0.07, 0.08]},
        {"t0": 1.0, "stamps": [1.01, 1.02, 1.03, 1.04]},
        {"t0": 2.0, "stamps": [2.01]},
    ]
    rate, seconds, tokens = burst_rate(bursts)
    assert tokens == 3 + 4 + 1 and seconds == pytest.approx(0.03 + 0.04 + 0.01)
    assert rate == pytest.approx(100.0)
    assert math.isnan(burst_rate([{"t0": 0.0, "stamps": [0.1]}])[0])


def test_the_hf_decode_stream_runs_only_when_pulled(tiny_model):
    from edgebench.engines.hf_engine import HfEngine

    engine = HfEngine()
    engine.load(str(tiny_model), {"threads": 1}, 128)
    stream = engine.decode_stream(list(range(1, 17)), 12)
    first = list(itertools.islice(stream, 5))
    rest = list(stream)
    assert len(first) == 5 and len(rest) == 7
    assert all(b > a for a, b in itertools.pairwise(first + rest))


# Guard tests need pairs of a second or more: /proc/stat counts in 10 ms ticks, so on a pair of
# 0.1 s one stray tick of anything (the coordinator's own turn-taking) is already 10% of the core.
LONG = {"prefill_tokens": 32, "decode_tokens": 400, "max_model_len": 512}


TWO_PAIRS = [("hf/a", "hf/b"), ("hf/c", "hf/d")]


def _interleaved(tiny_model, tmp_path, cores, rounds=2, limit=1.0, bench=BENCH, faults=None, pairs=None):
    pairs, faults = pairs or TWO_PAIRS, faults or {}
    specs = {name: hf_spec(tiny_model, bench, fault=faults.get(name)) for pair in pairs for name in pair}
    settings = SessionSettings(
        rounds=rounds,
        seed=3,
        cores=cores,
        timeout_s=120,
        contention_limit=limit,
        design="interleaved",
        pairs=pairs,
        burst_tokens=4,
    )
    return run_session(specs, settings, tmp_path, progress=lambda message: None)


def _by_pair(rows):
    key = itemgetter("round", "slot")
    return [list(group) for _, group in itertools.groupby(sorted(rows, key=key), key=key)]


def test_interleaved_pairs_share_a_core_take_turns_and_run_beside_another_pair(
    tiny_model, tmp_path, two_cores
):
    rows = _interleaved(tiny_model, tmp_path, two_cores)
    assert len(rows) == 2 * 4
    for first, second in _by_pair(rows):
        assert first["partner"] == second["arm"] and first["core"] == second["core"]
        assert first["status"] == second["status"] == "ok", first["error"]
        assert first["stolen_frac"] == second["stolen_frac"]  # one verdict for the pair
        assert first["bursts"] == second["bursts"] == 4 and first["window_tokens"] == 15
        assert first["leads"] != second["leads"] and first["concurrent_pairs"] == 2
        assert first["decode_tok_s"] > 0 and second["decode_tok_s"] > 0
    for r in range(2):  # the two pairs of a round on different cores, swapped the next round
        cores = {row["arm"]: row["core"] for row in rows if row["round"] == r}
        assert cores["hf/a"] != cores["hf/c"]
    assert {row["core"] for row in rows if row["arm"] == "hf/a"} == set(two_cores)
    leads = {row["round"]: row["leads"] for row in rows if row["arm"] == "hf/a"}
    assert leads[0] != leads[1]  # which arm starts alternates by round


def test_a_busy_loop_on_one_core_flags_the_pair_on_that_core_only(tiny_model, tmp_path, two_cores):
    loaded, other = two_cores
    require_idle([other])  # the pair on the other core is the control: nothing else may load it
    with hogging([[loaded]], low_priority=False):
        rows = _interleaved(tiny_model, tmp_path, two_cores, limit=0.25, bench=LONG)
    assert min(r["pair_wall_s"] for r in rows) > 0.5, rows  # long enough to resolve the limit
    on_loaded = [r for r in rows if r["core"] == loaded]
    on_other = [r for r in rows if r["core"] == other]
    skip_if_disturbed(on_other, [other], limit=0.25)
    assert all(r["status"] == "contended" for r in on_loaded), rows
    assert min(r["stolen_frac"] for r in on_loaded) > max(r["stolen_frac"] for r in on_other), rows
    assert all(r["status"] == "ok" for r in on_other), rows


def test_an_engine_that_pins_itself_off_its_core_flags_its_pair_not_the_others(
    tiny_model, tmp_path, two_cores
):
    # hf/b re-applies the mask it started with (every session core) before each sample, as
    # OpenVINO's thread pool does: it no longer runs on the core its pair was given
    rows = _interleaved(tiny_model, tmp_path, two_cores, faults={"hf/b": {"repin": True}})
    moved = [r for r in rows if r["arm"] in ("hf/a", "hf/b")]
    assert all(r["status"] == "contended" for r in moved), moved
    assert all("hf/b: the engine left its cores" in r["error"] for r in moved), moved
    assert all("left its cores" not in r["error"] for r in rows if r["arm"] in ("hf/c", "hf/d")), rows


def test_engines_of_other_pairs_are_stopped_while_a_group_is_measured(tiny_model, tmp_path, two_cores):
    # hf/e burns CPU even while idle: the pairs measured while it waits must not see it
    pairs = [*TWO_PAIRS, ("hf/e", "hf/f")]
    bench = {**LONG, "decode_tokens": 160}
    faults = {"hf/e": {"idle_spin": True}}
    # one round: with this seed its first group is the two other pairs while hf/e waits (a later
    # round's lone pair is not measured beside anything)
    rows = _interleaved(
        tiny_model, tmp_path, two_cores, rounds=1, limit=0.25, bench=bench, faults=faults, pairs=pairs
    )
    beside = [r for r in rows if r["arm"] not in ("hf/e", "hf/f") and r["concurrent_pairs"] == 2]
    waiting = [r for r in beside if not any(o["arm"] == "hf/e" and o["round"] == r["round"]
                                            and o["concurrent_pairs"] == 2 for o in rows)]  # fmt: skip
    assert waiting, rows  # some group ran while hf/e waited
    assert all(r["idle_engines_cpu_s"] == 0 for r in waiting), waiting
    # their guard verdicts also need cores free of other processes and of the hypervisor's steal,
    # which this test does not control
    skip_if_disturbed(waiting, two_cores, limit=0.25)
    assert all(r["status"] == "ok" for r in waiting), waiting


def _frame(design):
    rows = []
    for r in range(4):
        for arm, partner, rate in (("base", "cand", 100.0), ("cand", "base", 95.0 + r)):
            core = r % 2 if arm == "base" or design == "interleaved" else 1 - r % 2
            rows.append(
                {"arm": arm, "partner": partner, "round": r, "slot": 0, "core": core, "status": "ok",
                 "decode_tok_s": rate, "pair_wall_s": 10.0, "design": design, "concurrent_pairs": 2}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_an_interleaved_pair_is_a_paired_value_of_its_own():
    interleaved, duet = _frame("interleaved"), _frame("duet")
    logs = paired_log_ratios(interleaved, "decode_tok_s", "base", "cand")
    assert np.allclose(logs, np.log([0.95, 0.96, 0.97, 0.98])) and planned_pairs(interleaved) == 4
    assert len(paired_log_ratios(duet, "decode_tok_s", "base", "cand")) == 2 and planned_pairs(duet) == 2
    (row,) = noise_rows(interleaved, "base")
    assert row["swaps"] == 4 and row["seconds_per_swap"] == pytest.approx(5.0)  # one core of two
    assert row["design"].startswith("interleaved") and math.isnan(row["core_offset"])
    duet_rows = noise_rows(duet.drop(columns="concurrent_pairs"), "base")
    assert duet_rows[0]["seconds_per_swap"] == pytest.approx(20.0)  # a swap: two duets, both cores


def test_a_pair_with_an_arm_down_runs_alone_and_the_live_pairs_pack_together():
    from types import SimpleNamespace

    from edgebench.bench.interleave import round_groups

    arms = {name: SimpleNamespace(alive=name != "w4a8") for name in ("bf16", "w4a16", "w4a8", "twin", "slow")}
    order = [("w4a16", "w4a8"), ("bf16", "twin"), ("w4a16", "slow")]
    assert round_groups(order, arms, 2) == [[("bf16", "twin"), ("w4a16", "slow")], [("w4a16", "w4a8")]]
