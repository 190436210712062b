"""The warm-session coordinator on tiny transformers engines: recorded shuffled order, a row per
sample, a killed arm process turning into failed rows while the rounds go on."""

import itertools
import json

from edgebench.bench.session import SessionSettings, round_order, run_session

from .conftest import hf_spec

BENCH = {"prefill_tokens": 32, "decode_tokens": 16, "max_model_len": 128}


def spec(model_dir, **extra):
    return hf_spec(model_dir, BENCH, **extra)


def settings(rounds):
    return SessionSettings(rounds=rounds, seed=7, cores=[0, 1], timeout_s=120, contention_limit=1.0)


def test_round_orders_are_seeded_shuffles():
    arms = ["a", "b", "c", "d"]
    orders = [round_order(arms, 7, r) for r in range(6)]
    assert all(sorted(o) == arms for o in orders) and len(set(map(tuple, orders))) > 1
    assert orders == [round_order(arms, 7, r) for r in range(6)]  # reproducible from (seed, round)


def test_every_sample_is_a_row_in_the_recorded_order(tiny_model, tmp_path):
    specs = {name: spec(tiny_model) for name in ("hf/a", "hf/b", "hf/c")}
    rows = run_session(specs, settings(3), tmp_path, progress=lambda message: None)
    assert len(rows) == 9
    for r in range(3):
        in_round = sorted((row for row in rows if row["round"] == r), key=lambda row: row["order_position"])
        order = json.loads(in_round[0]["round_order"])
        assert [row["arm"] for row in in_round] == order == round_order(list(specs), 7, r)
    for row in rows:
        assert row["status"] == "ok", row["error"]
        assert row["decode_tok_s"] > 0 and row["prefill_tok_s"] > 0 and row["cpu_s"] >= 0
        assert row["idle_engines_cpu_s"] >= 0 and row["runqueue_wait_s"] >= 0 and 0 <= row["stolen_frac"] <= 1


def test_a_killed_arm_becomes_failed_rows_and_the_rounds_go_on(tiny_model, tmp_path):
    specs = {
        "hf/healthy": spec(tiny_model),
        "hf/dies": spec(tiny_model, fault={"kind": "crash", "sample": 1}),
    }
    rows = run_session(specs, settings(3), tmp_path, progress=lambda message: None)
    by = {(row["arm"], row["round"]): row for row in rows}
    assert len(rows) == 6
    assert all(by[("hf/healthy", r)]["status"] == "ok" for r in range(3))
    assert by[("hf/dies", 0)]["status"] == "ok"
    for r in (1, 2):
        assert by[("hf/dies", r)]["status"] == "failed" and "exited" in by[("hf/dies", r)]["error"]


def test_duets_sample_two_arms_at_once_on_separate_cores(tiny_model, tmp_path):
    specs = {name: spec(tiny_model) for name in ("hf/a", "hf/b", "hf/c")}
    pairs = [("hf/a", "hf/b"), ("hf/a", "hf/c")]
    settings = SessionSettings(
        rounds=2, seed=3, cores=[0, 1], timeout_s=120, contention_limit=1.0, design="duet", pairs=pairs
    )
    rows = run_session(specs, settings, tmp_path, progress=lambda message: None)
    assert len(rows) == 2 * 2 * 2
    for _, group in itertools.groupby(
        sorted(rows, key=lambda row: (row["round"], row["slot"])), key=lambda row: (row["round"], row["slot"])
    ):
        first, second = list(group)
        assert first["partner"] == second["arm"] and second["partner"] == first["arm"]
        assert {first["core"], second["core"]} == {0, 1} and first["wall_s"] == second["wall_s"]
        assert first["status"] == second["status"] == "ok", first["error"]
        assert first["decode_tok_s"] > 0 and second["decode_tok_s"] > 0
    assert {(row["arm"], row["partner"]) for row in rows if row["arm"] == "hf/a"} == {
        ("hf/a", "hf/b"),
        ("hf/a", "hf/c"),
    }
