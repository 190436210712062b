import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.fidelity.corpus import make_windows, scored_positions
from edgebench.fidelity.stats import kl_exact, kl_topk_bucket, summarize


def log_softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def topk(logprobs, k):
    ids = np.argsort(-logprobs, axis=1)[:, :k]
    return ids, np.take_along_axis(logprobs, ids, axis=1)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 31), st.floats(0.01, 3.0))
def test_bucketed_kl_is_a_lower_bound_of_exact_kl(seed, k, noise):
    rng = np.random.default_rng(seed)
    ref = log_softmax(rng.normal(size=(8, 32)) * 3)
    arm = log_softmax(np.log(np.exp(ref)) + rng.normal(size=ref.shape) * noise)
    ids, values = topk(arm, k)
    assert np.all(kl_topk_bucket(ref, ids, values) <= kl_exact(ref, arm) + 1e-9)


def test_bucketed_kl_is_exact_with_the_full_vocabulary_and_zero_for_identical():
    rng = np.random.default_rng(0)
    ref = log_softmax(rng.normal(size=(4, 16)))
    arm = log_softmax(rng.normal(size=(4, 16)))
    ids, values = topk(arm, 16)
    np.testing.assert_allclose(kl_topk_bucket(ref, ids, values), kl_exact(ref, arm), rtol=1e-9, atol=1e-12)
    ids, values = topk(ref, 5)
    np.testing.assert_allclose(kl_topk_bucket(ref, ids, values), 0.0, atol=1e-12)


def test_summary_statistics():
    kl = np.array([0.0, 0.1, 0.2, 0.3])
    summary = summarize(
        kl,
        np.array([1, 1, 0, 1]),
        np.array([0.1, -0.1, 0.1, -0.1]),
        np.array([1.0, 1.0, 1.0, 1.0]),
        np.array([1.1, 1.1, 1.1, 1.1]),
    )
    assert summary["positions"] == 4 and summary["top1"] == 0.75
    assert summary["top1_se"] == pytest.approx(np.sqrt(0.75 * 0.25 / 4))
    assert summary["kl_mean"] == pytest.approx(0.15) and summary["kl_max"] == pytest.approx(0.3)
    assert summary["dp_rms"] == pytest.approx(0.1) and summary["ppl_ratio"] == pytest.approx(np.exp(0.1))
    with pytest.raises(ValueError):
        summarize(np.array([]), np.array([]), np.array([]), np.array([]), np.array([]))


def test_windows_score_only_after_the_context_prefix():
    windows = make_windows({"doc": list(range(100))}, window_tokens=40, context_tokens=8)
    assert [w["start"] for w in windows] == [0, 40, 80]
    assert scored_positions(windows) == (39 - 8) * 2 + (19 - 8)
    with pytest.raises(ValueError, match="context_tokens"):
        make_windows({"doc": [1, 2, 3]}, window_tokens=16, context_tokens=15)
