import pytest

from edgebench.metrics import METRICS, best_index, better, metric, ratio_oriented


def test_registry_declares_unit_and_direction_for_every_metric():
    assert {
        "prefill_tok_s",
        "decode_tok_s",
        "ttft_s",
        "ready_s",
        "import_s",
        "peak_rss_anon_mb",
        "rss_anon_filled_ctx_mb",
    } <= set(METRICS)
    for m in METRICS.values():
        assert m.direction in ("higher", "lower") and m.unit


def test_best_respects_direction():
    assert best_index("decode_tok_s", [10.0, 30.0, 20.0]) == 1
    assert best_index("ttft_s", [0.5, 0.2, 0.9]) == 1
    assert best_index("peak_rss_anon_mb", [900.0, 1200.0]) == 0
    assert better("ready_s", 1.0, 2.0) and not better("decode_tok_s", 1.0, 2.0)


def test_oriented_ratio_is_above_one_when_candidate_is_better():
    assert ratio_oriented("decode_tok_s", 110.0, 100.0) == pytest.approx(1.1)
    assert ratio_oriented("ttft_s", 0.5, 1.0) == pytest.approx(2.0)


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(KeyError, match="decode_tok_s"):
        metric("tokens_per_sec")
    with pytest.raises(ValueError):
        best_index("decode_tok_s", [])
