import math
import os

import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.config import ConfigError
from edgebench.items.roadmap import load_roadmap, validate_roadmap
from edgebench.items.verdict import evaluate
from edgebench.retractions import apply_retractions, load_retractions, retracted_figures, scan_for_figures

from .conftest import ROOT


def bench_rows(arm, values, metric="decode_tok_s"):
    return [
        {"arm": arm, "round": r, "attempt": 1, "status": "ok", "error": "", metric: v}
        for r, v in enumerate(values)
    ]


def test_shipped_roadmap_validates_against_the_default_arms_and_has_eight_items(default_config):
    items = load_roadmap(ROOT / "config" / "roadmap.yaml", default_config["arms"])
    assert len(items) >= 8
    assert {i["verify"]["method"] for i in items if "verify" in i} >= {
        "paired_ratio",
        "gateable",
        "fidelity_threshold",
        "mcnemar",
    }


def test_an_item_without_verify_is_refused_by_name():
    item = {
        "id": "X1",
        "title": "t",
        "claim": "c",
        "starts_from": {"table": "bench", "arms": ["a"]},
        "expect": {},
    }
    with pytest.raises(ConfigError, match=r"X1.*no `verify` method"):
        validate_roadmap({"items": [item]})
    with pytest.raises(ConfigError, match="not in the config"):
        validate_roadmap({"items": [{**item, "verify": {"method": "gateable"}}]}, arms={"b": {}})


def test_paired_ratio_verdicts_come_from_the_sequential_analysis():
    item = {
        "id": "I",
        "starts_from": {"table": "warm", "metric": "decode_tok_s", "arms": ["base", "cand"]},
        "expect": {"direction": "better"},
        "verify": {"method": "paired_ratio", "tolerance": 0.025},
    }
    base = [100, 120, 90, 110, 105, 95]  # drift between rounds: pairing removes it
    faster = pd.DataFrame(bench_rows("base", base) + bench_rows("cand", [v * 1.76 for v in base]))
    verdict, evidence = evaluate(item, faster, [])[:2]
    assert verdict == "confirmed" and evidence["rounds_used"].iloc[0] == 2  # stops at the first look
    slower = pd.DataFrame(bench_rows("base", base) + bench_rows("cand", [v * 0.7 for v in base]))
    assert evaluate(item, slower, [])[0] == "refuted"
    wobble = [1.3, 0.8, 1.2, 0.75, 1.25, 0.85]  # noise far wider than the tolerance, no clear effect
    noisy = pd.DataFrame(
        bench_rows("base", base) + bench_rows("cand", [v * w for v, w in zip(base, wobble, strict=True)])
    )
    verdict, evidence = evaluate(item, noisy, [])[:2]
    assert verdict == "ungateable" and evidence["mde"].iloc[0] > 0.025
    lost = faster.copy()
    lost.loc[(lost["arm"] == "cand") & (lost["round"] > 0), "status"] = "contended"
    verdict, evidence = evaluate(item, lost, [])[:2]
    assert verdict == "too few pairs" and evidence["contended_samples"].iloc[0] == 5


def test_a_gateable_claim_is_judged_on_the_interval_of_its_mde_not_on_one_reading():
    """Two cold-rep pairs whose spread happens to be small give an MDE within the tolerance, but a
    spread read from two pairs could be many times larger: inconclusive, where a point MDE said
    confirmed (and the next run, with another spread, refuted). Forty such pairs decide it."""
    item = {
        "id": "G",
        "starts_from": {"table": "bench", "metric": "peak_rss_anon_mb", "arms": ["base", "cand"]},
        "expect": {"direction": "gateable"},
        "verify": {"method": "gateable", "tolerance": 0.025},
    }

    def frame(steps):
        base = [3000.0] * len(steps)
        cand = [v * math.exp(step) for v, step in zip(base, steps, strict=True)]
        return pd.DataFrame(
            bench_rows("base", base, "peak_rss_anon_mb") + bench_rows("cand", cand, "peak_rss_anon_mb")
        )

    verdict, evidence = evaluate(item, frame([0.001, -0.0011]), [])[:2]
    row = evidence.iloc[0]
    assert row["mde"] < 0.025 < row["mde_high"] and row["mde_low"] < 0.025, row.to_dict()
    assert verdict == "inconclusive"
    verdict, evidence = evaluate(item, frame([0.001, -0.001] * 20), [])[:2]
    assert verdict == "confirmed" and evidence["mde_high"].iloc[0] <= 0.025
    verdict, evidence = evaluate(item, frame([0.1, -0.1] * 20), [])[:2]
    assert verdict == "refuted" and evidence["mde_low"].iloc[0] > 0.025


def test_retracted_rows_are_marked_and_never_used(tmp_path):
    registry = tmp_path / "retractions.yaml"
    registry.write_text(
        yaml.safe_dump(
            {
                "retractions": [
                    {
                        "id": "R1",
                        "table": "bench",
                        "where": {"arm": "cand", "round": 0},
                        "reason": "ran beside a build",
                        "date": "2026-11-29",
                        "replaced_by": "round 0 rerun",
                    },
                    {
                        "id": "R2",
                        "item": "I",
                        "reason": "wrong band",
                        "date": "2026-11-29",
                        "replaced_by": "I-v2",
                    },
                ]
            }
        )
    )
    entries = load_retractions(registry)
    frame = pd.DataFrame(bench_rows("base", [100, 100, 100]) + bench_rows("cand", [55.5, 130, 130]))
    marked = apply_retractions(frame, "bench", entries)
    row = marked[(marked["arm"] == "cand") & (marked["round"] == 0)].iloc[0]
    assert row["status"] == "retracted" and "R1" in row["error"] and len(marked) == len(frame)
    item = {
        "id": "I",
        "starts_from": {"table": "bench", "metric": "decode_tok_s", "arms": ["base", "cand"]},
        "expect": {"direction": "better"},
        "verify": {"method": "paired_ratio", "tolerance": 0.025},
    }
    verdict, evidence, note = evaluate(item, marked, entries)
    assert evidence["pairs"].iloc[0] == 2  # the retracted rep is not a pair
    assert verdict == "retracted" and "wrong band" in note
    with pytest.raises(ConfigError, match="lacks"):
        registry.write_text(yaml.safe_dump({"retractions": [{"id": "R3", "table": "bench"}]}))
        load_retractions(registry)


def test_figure_scanner_names_file_and_line(tmp_path):
    frame = pd.DataFrame(
        [
            {"arm": "a", "status": "retracted", "decode_tok_s": 615.24, "ttft_s": 0.5},
            {"arm": "b", "status": "ok", "decode_tok_s": 489.0, "ttft_s": 0.5},
        ]
    )
    figures = retracted_figures(frame)
    assert "615.2" in figures and "489.0" not in figures
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text(
        "# Notes\n\nDecode reached 615.2 tok/s.\nNot 1615.2 or 615.25.\n"
    )
    (tmp_path / "mod.py").write_text(
        '"""Measured 615 tok/s once."""\nx = 615.2  # the code itself may hold it\n# 615.24 in a comment\n'
    )
    (tmp_path / "config.yaml").write_text("rate: 615.2\n# was 615.2\n")
    found = scan_for_figures(tmp_path, figures)
    assert "docs/notes.md:3: 615.2" in found
    assert any(f.startswith("mod.py:1:") for f in found) and any(f.startswith("mod.py:3:") for f in found)
    assert "config.yaml:2: 615.2" in found and not any(f.startswith("config.yaml:1:") for f in found)
    assert not any(":4:" in f and "notes.md" in f for f in found)


def test_the_repository_holds_no_retracted_figure():
    entries = load_retractions(ROOT / "config" / "retractions.yaml")
    assert all("id" in e for e in entries)


ITEM_KEYS = ["id", "title", "claim", "starts_from", "expect", "verify"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(ITEM_KEYS),
            st.one_of(
                st.none(),
                st.text(max_size=5),
                st.integers(),
                st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
            ),
            max_size=6,
        ),
        max_size=3,
    )
)
def test_malformed_roadmaps_fail_with_a_config_error(items):
    try:
        validate_roadmap({"items": items})
    except ConfigError as error:
        assert "roadmap" in str(error)


def test_an_arm_that_could_not_run_makes_the_item_unmeasurable_and_says_why():
    from edgebench.items.verdict import evaluate

    item = {
        "id": "X",
        "starts_from": {"table": "warm", "metric": "decode_tok_s", "arms": ["a", "b"]},
        "expect": {"direction": "better"},
        "verify": {"method": "paired_ratio"},
    }
    frame = pd.DataFrame(
        [{"arm": "a", "status": "ok", "error": "", "decode_tok_s": 10.0, "round": r} for r in range(4)]
        + [
            {"arm": "b", "status": "failed", "error": "W4A8 needs AMX", "decode_tok_s": None, "round": r}
            for r in range(4)
        ]
    )
    verdict, evidence, note = evaluate(item, frame, [])
    assert verdict == "unmeasurable" and note == "b could not run: W4A8 needs AMX"
    assert evidence.to_dict("records") == [{"arm": "b", "failed_rows": 4, "error": "W4A8 needs AMX"}]


def test_a_refused_arm_makes_the_note_the_refusal_not_the_log_around_it():
    from edgebench.isa import UnsupportedArm, require_kernel
    from edgebench.items.verdict import evaluate

    refusal = pytest.raises(UnsupportedArm, require_kernel, "int4_scaled_mm_cpu", {"avx2"}, "the arm").value
    error = f"load failed: exited with 1; log tail:\nTraceback ...\nedgebench.isa.UnsupportedArm: {refusal}\n"
    item = {
        "id": "X",
        "starts_from": {"table": "warm", "metric": "decode_tok_s", "arms": ["a", "b"]},
        "expect": {"direction": "better"},
        "verify": {"method": "paired_ratio"},
    }
    rows = [{"arm": "a", "status": "ok", "error": ""}, {"arm": "b", "status": "failed", "error": error}]
    frame = pd.DataFrame(rows)
    verdict, evidence, note = evaluate(item, frame, [])
    assert verdict == "unmeasurable" and note == f"b could not run: {refusal}"
    assert "lacks amx_int8, amx_tile, avx512f" in note and "Traceback" not in note
    assert evidence["error"].iloc[0] == error  # the whole text stays in the evidence


def test_an_int4_arm_refuses_to_load_by_the_flag_its_kernel_lacks():
    from edgebench.engines.vllm_engine import UnsupportedArm, check_supported

    with pytest.raises(UnsupportedArm, match="W4A8.*this CPU lacks amx_int8, amx_tile"):
        check_supported({"int4_w4a8": True}, {"avx512f", "avx2"})
    with pytest.raises(UnsupportedArm, match="W4A16.*this CPU lacks avx512f"):
        check_supported({"int4_w4a8": False}, {"avx2"})
    assert check_supported({"int4_w4a8": True}, {"amx_tile", "amx_int8", "avx512f"}) == "int4_scaled_mm_cpu"
    assert check_supported({"int4_w4a8": False}, {"avx2", "avx512f"}) == "cpu_gemm_wna16"
    assert check_supported({}, {"avx2"}, {"method": "tiny-random", "bits": 16}) == "vllm_bf16"


def agent_pairs(reference: list[tuple[bool, bool]], candidate: list[tuple[bool, bool]]) -> pd.DataFrame:
    """Trials of two arms on the same seeds; each outcome is (reached, success)."""
    rows = []
    for arm, outcomes in (("ref", reference), ("cand", candidate)):
        for i, (reached, success) in enumerate(outcomes):
            rows.append(
                {"arm": arm, "status": "ok", "error": "", "task_id": f"t{i}", "trial": 0}
                | {"reached": reached, "success": success}
            )
    return pd.DataFrame(rows)


def agent_item(outcome: str, direction: str) -> dict:
    return {
        "id": "X",
        "starts_from": {"table": "agent_trials", "arms": ["ref", "cand"]},
        "expect": {"direction": direction},
        "verify": {"method": "mcnemar", "outcome": outcome, "alpha": 0.05, "detectable_max": 0.2},
    }


def test_navigation_can_survive_while_completion_drops():
    # 80 pairs: both arms reach the screen every time; the candidate completes 20 fewer tasks.
    frame = agent_pairs([(True, True)] * 80, [(True, True)] * 60 + [(True, False)] * 20)
    verdict, evidence, _ = evaluate(agent_item("reached", "same"), frame, [])
    assert verdict == "confirmed" and evidence["outcome"].item() == "reached"
    assert evidence["detectable_difference"].item() < 0.2  # no discordant pair: a 0.2 drop would show
    verdict, evidence, _ = evaluate(agent_item("success", "worse"), frame, [])
    assert verdict == "confirmed" and evidence["only_reference"].item() == 20
    assert evaluate(agent_item("success", "same"), frame, [])[0] == "refuted"


def test_same_at_a_floor_is_inconclusive():
    # 76 pairs, neither arm ever completes: no difference, and none could be lost.
    frame = agent_pairs([(False, False)] * 76, [(False, False)] * 76)
    verdict, evidence, _ = evaluate(agent_item("success", "same"), frame, [])
    assert verdict == "inconclusive" and evidence["reference_rate"].item() == 0.0
    # the same pairs once the reference completes some: the candidate keeping them is a finding
    some = [(True, True)] * 30 + [(False, False)] * 46
    frame = agent_pairs(some, some)
    assert evaluate(agent_item("success", "same"), frame, [])[0] == "confirmed"


def test_same_is_inconclusive_when_the_pairs_could_not_have_seen_a_difference_of_the_given_size():
    # 10 pairs, 4 discordant each way: no difference shown, but a 0.2 difference could hide here.
    outcomes = [(True, True)] * 3 + [(True, False)] * 4 + [(False, False)] * 3
    flipped = [(True, True)] * 3 + [(False, False)] * 4 + [(True, False)] * 3
    frame = agent_pairs(outcomes, [(r, not s if i >= 3 else s) for i, (r, s) in enumerate(flipped)])
    verdict, evidence, _ = evaluate(agent_item("reached", "same"), frame, [])
    assert evidence["p_value"].item() >= 0.05 and evidence["detectable_difference"].item() > 0.2
    assert verdict == "inconclusive"


def test_the_pairs_needed_for_a_difference_fall_as_the_difference_grows():
    from edgebench.stats import mcnemar_detectable_difference, mcnemar_pairs_needed

    needed = [mcnemar_pairs_needed(d, 0.3) for d in (0.1, 0.2, 0.3)]
    assert needed[0] > needed[1] > needed[2] > 0
    assert 70 < needed[1] < 80  # 0.2 at 30% discordance, alpha 0.05 two-sided, 90% power
    assert abs(mcnemar_detectable_difference(round(needed[1]), 0.3) - 0.2) < 0.005
    assert mcnemar_detectable_difference(2, 0.3) == float("inf")


def test_agent_summary_gives_navigation_and_completion_with_intervals_and_mcnemar_each():
    from edgebench.agent.tables import summary_rows

    frame = agent_pairs([(True, True)] * 8 + [(False, False)] * 2, [(True, True)] * 4 + [(True, False)] * 6)
    frame = frame.assign(template="wifi_on", already_satisfied=False, invalid_actions=0, steps=3)
    rows = {row["arm"]: row for row in summary_rows(frame, "ref") if row["scope"] == "all"}
    cand = rows["cand"]
    assert (cand["success_rate"], cand["reached_rate"]) == (0.4, 1.0)
    assert cand["success_ci_low"] < 0.4 < cand["success_ci_high"] and cand["reached_ci_low"] < 1.0
    assert (cand["success_only_arm"], cand["success_only_reference"]) == (0, 4)
    assert (cand["reached_only_arm"], cand["reached_only_reference"]) == (2, 0)
    assert rows["ref"]["mcnemar_vs"] == "" and cand["mcnemar_vs"] == "ref"


def test_every_seed_item_is_on_the_roadmap_with_a_verdict_path(default_config):
    items = load_roadmap(ROOT / "config" / "roadmap.yaml", default_config["arms"])
    ids = {item["id"] for item in items}
    seed = {f"H{n}" for n in range(1, 9)} | {f"I{n}" for n in range(0, 11)}
    prefixed = {i for i in ids for s in seed if i == s or i.startswith(f"{s}-")}
    assert {s for s in seed if any(i == s or i.startswith(f"{s}-") for i in prefixed)} == seed
    assert any(i.startswith("embedding-copy") for i in ids) and any(i.startswith("rejected-") for i in ids)
    for item in items:
        assert "verify" in item or (item["reproducible"] is False and len(item["reason"]) >= 20), item["id"]


def test_a_non_reproducible_item_needs_a_reason_and_no_method():
    base = {"id": "X", "title": "t", "claim": "c", "reproducible": False}
    with pytest.raises(ConfigError, match="reason"):
        validate_roadmap({"items": [base]})
    validate_roadmap({"items": [{**base, "reason": "this CPU lacks AMX (checked in /proc/cpuinfo)"}]})
    with pytest.raises(ConfigError):
        validate_roadmap({"items": [{**base, "reason": "x" * 30, "verify": {"method": "measured"}}]})


def test_items_of_another_study_and_unreproducible_items_still_get_rows():
    from edgebench.items.roadmap import items_elsewhere, items_in_study
    from edgebench.items.verdict import elsewhere_row, not_reproducible

    agent = {"id": "A", "title": "t", "claim": "c", "study": "config/agent.yaml"}
    agent |= {
        "starts_from": {"table": "agent_trials", "arms": ["a"]},
        "expect": {},
        "verify": {"method": "mcnemar"},
    }
    gone = {
        "id": "G",
        "title": "t",
        "claim": "c",
        "reproducible": False,
        "reason": "no AMX on this CPU, checked",
    }
    assert set(items_in_study([agent, gone], {"run_id", "bench"})) == {"G"}
    assert [i["id"] for i in items_elsewhere([agent, gone], {"run_id"})] == ["A"]
    assert set(items_in_study([agent, gone], {"run_id", "agent"})) == {"A", "G"}
    row = elsewhere_row(agent)
    assert row["verdict"] == "in another study" and "config/agent.yaml" in row["note"]
    verdict, evidence, note = not_reproducible(gone)
    assert verdict == "not reproducible" and evidence["reason"].item() == gone["reason"]
    # the reason states a requirement; the note adds what the machine running the study has
    cores = len(os.sched_getaffinity(0))
    assert note.startswith(gone["reason"]) and f"{cores} usable cores" in note


def test_harness_checks_turn_rows_into_verdicts():
    from edgebench.items.checks import load_excess, measured, order_rotates

    def rep(arm, rnd, pos, status="ok", error="", **metrics):
        return {"arm": arm, "round": rnd, "order_position": pos, "status": status, "error": error} | metrics

    rows = [rep("a", 0, 0, peak_rss_anon_mb=900.0, rss_anon_filled_ctx_mb=700.0, ready_s=9.0)]
    rows += [rep("a", 1, 1, peak_rss_anon_mb=910.0, rss_anon_filled_ctx_mb=700.0, ready_s=8.0)]
    rows += [rep("b", 0, 1, "failed", "needs AMX"), rep("b", 1, 0, "failed", "needs AMX")]
    frame = pd.DataFrame(rows)
    item = {"starts_from": {"arms": ["a", "b"]}, "verify": {"metrics": ["ready_s", "peak_rss_anon_mb"]}}
    assert order_rotates(frame, item)[0] == "confirmed"
    stuck = frame.assign(order_position=0)
    assert order_rotates(stuck, item)[0] == "refuted"
    assert measured(frame, {**item, "starts_from": {"arms": ["a"]}})[0] == "confirmed"
    assert (
        measured(frame.assign(ready_s=float("nan")), {**item, "starts_from": {"arms": ["a"]}})[0] == "refuted"
    )
    verdict, evidence = load_excess(frame, {"starts_from": {"arms": ["a"]}})
    assert verdict == "measured" and evidence["load_excess_mb"].item() == 205.0


def test_fidelity_compare_and_parts_add_up():
    from edgebench.items.checks import parts_add_up
    from edgebench.items.verify import fidelity_compare

    def arm(name, kl, se):
        return {"arm": name, "status": "ok", "kl_mean": kl, "kl_mean_se": se, "positions": 8000}

    item = {"starts_from": {"metric": "kl_mean", "arms": ["base", "cand"]}, "expect": {"direction": "same"}}
    assert (
        fidelity_compare(pd.DataFrame([arm("base", 0.10, 0.01), arm("cand", 0.11, 0.01)]), item)[0]
        == "confirmed"
    )
    assert (
        fidelity_compare(pd.DataFrame([arm("base", 0.10, 0.01), arm("cand", 0.20, 0.01)]), item)[0]
        == "refuted"
    )
    better = {**item, "expect": {"direction": "better"}}
    assert (
        fidelity_compare(pd.DataFrame([arm("base", 0.30, 0.01), arm("cand", 0.10, 0.01)]), better)[0]
        == "confirmed"
    )
    parts = pd.DataFrame(
        [
            {"arm": "a", "status": "ok", "part": p, "us": us, "whole_us": 100.0}
            for p, us in (("gemm", 60.0), ("attention_kernel", 25.0), ("remainder", 15.0))
        ]
    )
    limit = {"starts_from": {"arms": ["a"]}, "verify": {"max_remainder": 0.2}}
    verdict, evidence = parts_add_up(parts, limit)
    assert verdict == "measured" and evidence["remainder_share"].item() == 0.15
    assert parts_add_up(parts, {**limit, "verify": {"max_remainder": 0.1}})[0] == "inconclusive"


def test_an_evidence_table_without_an_arm_column_still_charts():
    from edgebench.items.verdict import evidence_chart

    evidence = pd.DataFrame([{"threads": 1, "wait_policy": "active", "region_us": 0.6, "share": 0.002}])
    chart = evidence_chart({"id": "X", "title": "t"}, evidence).to_dict()
    assert chart["encoding"]["y"]["field"] == "label" and chart["encoding"]["x"]["field"] == "share"


def test_a_measured_figure_in_a_user_guide_is_found_outside_marked_examples(tmp_path):
    from edgebench.retractions import figures_in_guides

    (tmp_path / "README.md").write_text(
        "It decodes at 23.4 tok/s here.\n"
        "<!-- example -->\nA row reads 812 MB.\n<!-- /example -->\n"
        "```bash\nsleep 5s\n```\n"
        "Use 2 cores and group size 64.\n"
    )
    assert figures_in_guides(tmp_path, ("README.md",)) == ["README.md:1: 23.4 tok/s"]
    (tmp_path / "README.md").write_text("The default study took 22.4 min.\n")
    assert figures_in_guides(tmp_path, ("README.md",)) == ["README.md:1: 22.4 min"]


def test_the_shipped_guides_state_no_measured_figure():
    from edgebench.retractions import figures_in_guides

    assert figures_in_guides(ROOT) == []


def test_an_arm_that_cannot_run_is_evidence_for_the_order_item_not_a_reason_to_give_up():
    """H2's claim includes the failure rows a refused arm leaves: the item is judged, not
    `unmeasurable`; any other method still is unmeasurable on such an arm."""
    from edgebench.items.verdict import evaluate

    rows = [
        {"arm": arm, "round": r, "order_position": (r + k) % 2, "status": status, "error": error}
        for r in range(2)
        for k, (arm, status, error) in enumerate([("a", "ok", ""), ("b", "failed", "lacks avx512f")])
    ]
    frame = pd.DataFrame(rows)
    item = {
        "id": "H2",
        "starts_from": {"table": "bench", "arms": ["a", "b"]},
        "verify": {"method": "order_rotates"},
    }
    assert evaluate(item, frame, [])[0] == "confirmed"
    other = {**item, "verify": {"method": "measured", "metrics": ["ready_s"]}}
    assert evaluate(other, frame, [])[0] == "unmeasurable"


def test_a_calibration_on_a_few_blocks_decides_nothing():
    """The default study's light calibration has 2 blocks per check: 0 of 2 false alarms is no
    evidence of a rate at most 5%. Its item says so; 20 blocks decide."""
    from edgebench.items.verify import TOO_FEW_BLOCKS, calibration

    def checks(blocks, fails_twin, fails_slow):
        rows = []
        for check, arm, fails in (("false_alarm", "twin", fails_twin), ("power", "slow", fails_slow)):
            rows.append(
                {"check": check, "arm": arm, "metric": "decode_tok_s", "effect": 0.05 * (check == "power"),
                 "blocks": blocks, "block_rounds": 4, "fails": fails, "rate": fails / blocks,
                 "rate_low": 0.0, "rate_high": 1.0, "measured_effect": 0.05, "cpu_s_ratio": 1.0,
                 "whole_session_ratio": 0.95}
            )  # fmt: skip
        return pd.DataFrame(rows)

    item = {"verify": {"method": "calibration", "false_alarm_max": 0.05, "power_min": 0.9}}
    assert calibration(checks(2, 0, 2), item)[0] == TOO_FEW_BLOCKS
    assert calibration(checks(20, 0, 19), item)[0] == "confirmed"
    assert calibration(checks(20, 3, 19), item)[0] == "refuted"
    assert calibration(checks(2, 0, 2), {"verify": {**item["verify"], "min_blocks": 2}})[0] == "confirmed"


def test_no_difference_refutes_a_drop_only_when_the_reference_had_that_much_to_lose():
    # 88 pairs, 7 discordant (3 and 4): a 0.2 drop would have shown.
    def pairs(reference_successes):
        ref = [(True, True)] * reference_successes + [(False, False)] * (88 - reference_successes)
        cand = [(True, False)] * 4 + [(True, True)] * (reference_successes - 4)
        cand += [(True, True)] * 3 + [(False, False)] * (88 - reference_successes - 3)
        return agent_pairs(ref, cand)

    verdict, evidence, why = evaluate(agent_item("success", "worse"), pairs(40), [])
    assert verdict == "refuted" and evidence["detectable_difference"].item() < 0.2 and why == ""
    verdict, _, why = evaluate(agent_item("success", "worse"), pairs(9), [])  # completes 0.10
    assert verdict == "inconclusive" and "0.10" in why and "lose" in why
    without = agent_item("success", "worse")
    del without["verify"]["detectable_max"]
    assert evaluate(without, pairs(40), [])[0] == "inconclusive"
