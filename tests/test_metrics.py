import pytest

from edgebench.config import ConfigError
from edgebench.items.roadmap import check_item_measures, roadmap_schema
from edgebench.items.verify import METHODS
from edgebench.metrics import BUDGET_METRICS, METRICS, lower_is_better, metric
from edgebench.tables import RAW_KINDS, TABLES, study_tables


def test_registry_declares_unit_direction_and_table_for_every_metric():
    assert {"decode_tok_s", "ttft_s", "peak_rss_anon_mb", "top1", "kl_mean", "agent_success"} <= set(METRICS)
    for m in METRICS.values():
        assert m.direction in ("higher", "lower") and m.unit
        assert m.table in TABLES, f"{m.name} names table {m.table!r}, which is not registered"
        columns = TABLES[m.table].columns
        assert not columns or m.source_column in columns, f"{m.name}: {m.source_column} not in {m.table}"
        if m.interval == "se":
            assert f"{m.source_column}_se" in columns


def test_direction_comes_from_the_registry_not_the_name():
    assert lower_is_better("kl_mean") and lower_is_better("ttft_s") and lower_is_better("ppl_ratio")
    assert not lower_is_better("top1") and not lower_is_better("decode_tok_s")
    assert not lower_is_better("agent_success")


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(KeyError, match="decode_tok_s"):
        metric("tokens_per_sec")


def test_a_budget_metric_has_an_interval():
    for name in BUDGET_METRICS:
        assert METRICS[name].interval != "none", name


def test_every_table_entry_is_complete():
    for name, table in TABLES.items():
        assert table.name == name and table.rule and table.raw in RAW_KINDS
        assert not table.retractable or table.columns, f"{name}: retractions need a column contract"


def test_a_study_makes_a_sectioned_table_only_when_it_gives_the_section():
    plain = {t.name for t in study_tables(set())}
    assert {"bench", "warm", "fidelity", "compare"} <= plain
    assert not plain & {"validity", "agent_trials", "memory_ledger", "decision", "verdicts", "pilot"}
    with_agent = {t.name for t in study_tables({"agent", "calibration"})}
    assert {"agent_trials", "agent_summary", "validity"} <= with_agent


def test_roadmap_schema_enums_are_the_registries():
    item = roadmap_schema()["properties"]["items"]["items"]["properties"]
    assert item["starts_from"]["properties"]["table"]["enum"] == sorted(TABLES)
    assert item["verify"]["properties"]["method"]["enum"] == sorted(METHODS)


def test_an_item_metric_must_be_one_its_table_carries():
    item = {"id": "X", "starts_from": {"table": "fidelity", "metric": "decode_tok_s", "arms": ["a"]}}
    with pytest.raises(ConfigError, match="decode_tok_s"):
        check_item_measures(item, None)
    calibration = {"id": "C", "starts_from": {"table": "validity", "metric": "decode_tok_s", "arms": ["a"]}}
    check_item_measures(calibration, None)  # validity is computed per warm metric
