import numpy as np
import pandas as pd
import pytest

from edgebench.engines.base import WindowLogprobs
from edgebench.fidelity.ranking import ranking_rows
from edgebench.fidelity.score import score_windows
from edgebench.fidelity.stats import kl_exact


def log_softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def test_kl_and_top1_on_a_hand_computed_example():
    # reference (0.5, 0.25, 0.25) vs arm (0.25, 0.5, 0.25):
    # KL = 0.5 ln 2 + 0.25 ln 0.5 + 0 = 0.25 ln 2
    ref = np.log(np.array([[0.5, 0.25, 0.25]]))
    arm = np.log(np.array([[0.25, 0.5, 0.25]]))
    assert kl_exact(ref, arm)[0] == pytest.approx(0.25 * np.log(2))
    window = {"doc": "d", "start": 0, "ids": [0, 0], "context": 0}
    result = WindowLogprobs(np.array([[1, 0, 2]]), arm[:, [1, 0, 2]], arm[:, 0], full=arm)
    per_position, summary, method = score_windows(ref.astype(np.float16), [window], [result])
    assert method == "exact" and summary["top1"] == 0.0  # argmax 0 vs 1
    assert summary["kl_mean"] == pytest.approx(0.25 * np.log(2), rel=5e-3)  # reference stored as float16
    assert summary["dp_rms"] == pytest.approx(0.25, rel=1e-3)  # p(token 0): 0.5 -> 0.25
    assert summary["ppl_ratio"] == pytest.approx(2.0, rel=1e-3)


def test_windows_score_only_after_their_context_and_bucket_without_full():
    rng = np.random.default_rng(0)
    ids = [3, 1, 4, 1, 5, 9]
    window = {"doc": "d", "start": 0, "ids": ids, "context": 2}
    arm_full = log_softmax(rng.normal(size=(5, 10)))
    top = np.argsort(-arm_full, axis=1)[:, :3]
    result = WindowLogprobs(top, np.take_along_axis(arm_full, top, axis=1), arm_full[np.arange(5), ids[1:]])
    ref = log_softmax(rng.normal(size=(3, 10))).astype(np.float16)  # positions 2..4 only
    per_position, summary, method = score_windows(ref, [window], [result])
    assert method == "topk_bucket" and summary["positions"] == 3
    exact = kl_exact(ref.astype(np.float64), arm_full[2:])
    assert np.all(per_position["kl"] <= exact + 1e-9)


def test_ranking_separates_where_greedy_ties():
    fidelity = pd.DataFrame(
        [
            {
                "arm": "llamacpp/q4_0",
                "build": "q40",
                "status": "ok",
                "kl_mean": 0.08,
                "kl_mean_se": 0.002,
                "top1": 0.85,
                "top1_se": 0.004,
                "greedy_match": 3,
                "greedy_prompts": 12,
                "kl_method": "exact",
            },
            {
                "arm": "llamacpp/q4_1",
                "build": "q41",
                "status": "ok",
                "kl_mean": 0.03,
                "kl_mean_se": 0.001,
                "top1": 0.91,
                "top1_se": 0.003,
                "greedy_match": 3,
                "greedy_prompts": 12,
                "kl_method": "exact",
            },
            {
                "arm": "llamacpp/f16",
                "build": "f16",
                "status": "ok",
                "kl_mean": 0.0001,
                "kl_mean_se": 0.00001,
                "top1": 0.998,
                "top1_se": 0.0005,
                "greedy_match": 12,
                "greedy_prompts": 12,
                "kl_method": "exact",
            },
        ]
    )
    builds = pd.DataFrame({"build": ["q40", "q41", "f16"], "bits_per_weight": [4.5, 5.0, 16.0]})
    ranking = ranking_rows(fidelity, builds).set_index("arm")
    assert ranking["rank_kl"].to_dict() == {"llamacpp/f16": 1, "llamacpp/q4_1": 2, "llamacpp/q4_0": 3}
    assert (
        ranking.loc["llamacpp/q4_1", "greedy_ties_next"]
        and ranking.loc["llamacpp/q4_1", "kl_separated_from_next"]
    )


def test_arms_score_on_their_own_thread_count_and_vllm_unpinned():
    """Two arms score side by side: a vLLM engine must not pin itself to the cores the other uses."""
    from edgebench.engines.vllm_engine import vllm_env
    from edgebench.fidelity.score import scoring_arm

    vllm = scoring_arm({"engine": "vllm", "build": "reference", "threads_bind": "0-1", "threads": 2}, 1)
    assert vllm["threads"] == 1 and vllm["threads_bind"] == "nobind"
    env = vllm_env(vllm)
    assert env["OMP_NUM_THREADS"] == "1" and env["VLLM_CPU_OMP_THREADS_BIND"] == "nobind"
    hf = scoring_arm({"engine": "hf", "build": "reference", "threads": 2}, 1)
    assert hf == {"engine": "hf", "build": "reference", "threads": 1}


def test_whole_vocabulary_engines_score_one_window_at_a_time():
    """A window of a 150k vocabulary is 300 MB of float64: engines that return it are asked one
    window at a time, and each window is scored before the next is asked for."""
    from edgebench.engines.base import top_k
    from edgebench.fidelity.score import window_results

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 500))
    assert (top_k(x, 20) == np.argsort(-x, axis=1)[:, :20]).all()
    assert (top_k(x[:, :5], 20) == np.argsort(-x[:, :5], axis=1)).all()

    class Engine:
        def __init__(self, name):
            self.name, self.calls = name, []

        def prompt_logprobs(self, windows, topk):
            self.calls.append(len(windows))
            return [f"result of {w[0]}" for w in windows]

    windows = [{"ids": [i, i + 1]} for i in range(5)]
    for name, calls in (("llamacpp", [1] * 5), ("hf", [1] * 5), ("vllm", [5])):
        engine = Engine(name)
        lazy = window_results(engine, windows, 20)
        assert engine.calls == []  # nothing asked before scoring reaches it
        assert list(lazy) == [f"result of {i}" for i in range(5)] and engine.calls == calls
