"""Pure fidelity math: KL (exact or top-k bucketed lower bound), top-1 agreement, summaries."""

from __future__ import annotations

import math

import numpy as np

TINY = 1e-12


def kl_exact(ref_logprobs: np.ndarray, arm_logprobs: np.ndarray) -> np.ndarray:
    """KL(ref || arm) per row from full-vocabulary log-probabilities, [positions, vocab]."""
    p = np.exp(ref_logprobs)
    return np.sum(p * (ref_logprobs - arm_logprobs), axis=1)


def kl_topk_bucket(
    ref_logprobs: np.ndarray, arm_top_ids: np.ndarray, arm_top_logprobs: np.ndarray
) -> np.ndarray:
    """Lower bound of KL(ref || arm) from the arm's top-k only.

    The vocabulary is split into the arm's top-k tokens and one bucket holding the rest; KL over
    this coarser partition can only be smaller than the full KL (log-sum inequality), so it is a
    lower bound. ref_logprobs is the reference's full distribution, [positions, vocab].
    """
    rows = np.arange(ref_logprobs.shape[0])[:, None]
    ref_top = ref_logprobs[rows, arm_top_ids]
    finite = np.isfinite(arm_top_logprobs)
    p_top = np.where(finite, np.exp(ref_top), 0.0)
    q_top = np.where(finite, np.exp(arm_top_logprobs), 0.0)
    terms = np.where(finite, p_top * (ref_top - np.where(finite, arm_top_logprobs, 0.0)), 0.0)
    p_rest = np.clip(1.0 - p_top.sum(axis=1), 0.0, 1.0)
    q_rest = np.clip(1.0 - q_top.sum(axis=1), TINY, 1.0)
    rest = np.where(p_rest > TINY, p_rest * (np.log(np.maximum(p_rest, TINY)) - np.log(q_rest)), 0.0)
    return np.maximum(terms.sum(axis=1) + rest, 0.0)


def summarize(
    kl: np.ndarray, top1_agree: np.ndarray, dp: np.ndarray, ref_nll: np.ndarray, arm_nll: np.ndarray
) -> dict:
    """Per-arm summary statistics over all scored positions."""
    n = int(kl.size)
    if n == 0:
        raise ValueError("no scored positions to summarize")
    top1 = float(np.mean(top1_agree))
    return {
        "positions": n,
        "top1": top1,
        "top1_se": math.sqrt(top1 * (1 - top1) / n),
        "kl_mean": float(np.mean(kl)),
        "kl_mean_se": float(np.std(kl, ddof=1) / math.sqrt(n)) if n > 1 else float("nan"),
        "kl_median": float(np.median(kl)),
        "kl_p90": float(np.quantile(kl, 0.90)),
        "kl_p99": float(np.quantile(kl, 0.99)),
        "kl_p999": float(np.quantile(kl, 0.999)),
        "kl_max": float(np.max(kl)),
        "dp_rms": float(np.sqrt(np.mean(dp**2))),
        "ppl_ratio": float(math.exp(np.mean(arm_nll) - np.mean(ref_nll))),
    }
