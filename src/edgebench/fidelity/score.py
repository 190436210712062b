"""Run an engine over the corpus windows and score it against the stored reference distribution.

KL is exact where the engine returns the whole distribution (transformers, llama.cpp) and a top-k
bucket lower bound where it returns top-k (vLLM prompt_logprobs); for vLLM a short subset is also
scored exactly, to say how far below the exact KL the bound sits.
"""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import numpy as np
import pandas as pd

from edgebench.arm_refusal import require_cpu
from edgebench.engines.base import EngineBoundary, EngineFailed, failure_text
from edgebench.engines.registry import ENGINES
from edgebench.fidelity.stats import kl_exact, kl_topk_bucket, summarize
from edgebench.io import write_parquet
from edgebench.isa import UnsupportedArm
from edgebench.rows import arm_row
from edgebench.tables import rows_frame

GREEDY_TOKENS = 16
BATCH = 4


def reference_logprobs(build_dir: str, windows: list[dict], threads: int) -> np.ndarray:
    """Full-vocabulary log-probabilities of the bf16 reference at every scored position, float16.

    Windows of equal length run in batches. Stored in float16 ([positions, vocab]); log-probs below
    float16's range clip to -65504, which changes KL by less than p * 65504 for p < 1e-28: nothing.
    """
    from edgebench.engines.hf_engine import HfEngine

    engine = HfEngine()
    engine.load(build_dir, {"threads": threads}, max_model_len=0)
    blocks: dict[int, np.ndarray] = {}
    by_length: dict[int, list[int]] = {}
    for i, window in enumerate(windows):
        by_length.setdefault(len(window["ids"]), []).append(i)
    batches = [group[k : k + BATCH] for group in by_length.values() for k in range(0, len(group), BATCH)]
    for done, batch in enumerate(batches, start=1):
        for i, rows in zip(batch, engine.batch_logprobs([windows[i]["ids"] for i in batch]), strict=True):
            blocks[i] = np.maximum(rows[windows[i]["context"] :], -65504.0).astype(np.float16)
        print(f"reference: batch {done}/{len(batches)}", flush=True)
    engine.close()
    return np.concatenate([blocks[i] for i in range(len(windows))])


def reference_greedy(build_dir: str, prompts: list[list[int]], threads: int) -> list[list[int]]:
    from edgebench.engines.hf_engine import HfEngine

    engine = HfEngine()
    engine.load(build_dir, {"threads": threads}, max_model_len=0)
    continuations = [engine.generate(p, GREEDY_TOKENS) for p in prompts]
    engine.close()
    return continuations


def targets(windows: list[dict]) -> np.ndarray:
    """The actual next token at every scored position."""
    return np.concatenate([np.asarray(w["ids"][w["context"] + 1 :]) for w in windows])


def score_windows(ref: np.ndarray, windows: list[dict], results: list) -> tuple[dict, dict, str]:
    """Per-position arrays and summary, window by window (the reference is memory-mapped, and
    `results` may be a generator, so that only one window's whole-vocabulary arrays are held)."""
    parts = {
        "kl": [],
        "top1_agree": [],
        "dp": [],
        "ref_nll": [],
        "arm_nll": [],
        "top1_ref": [],
        "top1_arm": [],
        "p_ref_token": [],
    }
    offset, exact = 0, True
    for window, result in zip(windows, results, strict=True):
        exact = exact and result.full is not None
        skip = window["context"]
        ids = np.asarray(window["ids"][skip + 1 :])
        block = ref[offset : offset + len(ids)].astype(np.float64)
        offset += len(ids)
        rows = np.arange(len(ids))
        if exact:
            arm_full = result.full[skip:].astype(np.float64)
            kl, arm_top1 = kl_exact(block, arm_full), np.argmax(arm_full, axis=1)
        else:
            kl = kl_topk_bucket(block, result.top_ids[skip:], result.top_logprobs[skip:])
            arm_top1 = result.top_ids[skip:, 0]
        ref_target, arm_target = block[rows, ids], result.target_logprobs[skip:]
        parts["kl"].append(kl)
        parts["top1_ref"].append(np.argmax(block, axis=1))
        parts["top1_arm"].append(arm_top1)
        parts["top1_agree"].append(parts["top1_ref"][-1] == arm_top1)
        parts["dp"].append(np.exp(arm_target) - np.exp(ref_target))
        parts["ref_nll"].append(-ref_target)
        parts["arm_nll"].append(-arm_target)
        parts["p_ref_token"].append(np.exp(ref_target))
    per_position = {key: np.concatenate(value) for key, value in parts.items()}
    summary = summarize(
        per_position["kl"],
        per_position["top1_agree"],
        per_position["dp"],
        per_position["ref_nll"],
        per_position["arm_nll"],
    )
    return per_position, summary, "exact" if exact else "topk_bucket"


def exact_subset_gap(engine, window: dict, ref: np.ndarray, positions: int, topk: int, vocab: int) -> dict:
    """Score `positions` positions with the whole vocabulary through vLLM's prompt_logprobs, and with
    the top-k bucket, on the same positions: the bound's shortfall, measured."""
    ids = window["ids"][: window["context"] + positions + 1]
    full_result = engine.prompt_logprobs([ids], vocab)[0]
    skip = window["context"]
    full = np.full((len(ids) - 1, vocab), -np.inf)
    np.put_along_axis(full, full_result.top_ids, full_result.top_logprobs, axis=1)
    block = ref[:positions].astype(np.float64)
    exact = kl_exact(block, np.maximum(full[skip:], -1e30))
    topk_ids = full_result.top_ids[skip:, :topk]
    bucket = kl_topk_bucket(block, topk_ids, full_result.top_logprobs[skip:, :topk])
    return {
        "exact_subset_positions": positions,
        "kl_exact_subset_mean": float(exact.mean()),
        "kl_bucket_subset_mean": float(bucket.mean()),
        "kl_bound_gap": float(1 - bucket.mean() / exact.mean()) if exact.mean() > 0 else 0.0,
    }


def positions_frame(arm_name: str, windows: list[dict], per_position: dict) -> pd.DataFrame:
    """Drill-down rows: where in which document an arm diverges from the reference."""
    docs, positions = [], []
    for window in windows:
        for index in range(window["context"] + 1, len(window["ids"])):
            docs.append(window["doc"])
            positions.append(window["start"] + index)
    return pd.DataFrame(
        {
            "arm": arm_name,
            "doc": docs,
            "position": positions,
            "kl": per_position["kl"],
            "top1_ref": per_position["top1_ref"],
            "top1_arm": per_position["top1_arm"],
            "p_ref_token": per_position["p_ref_token"],
            "logprob_arm_token": -per_position["arm_nll"],  # compares two arms' outputs directly
        }
    )


def scoring_arm(arm_cfg: dict, threads: int) -> dict:
    """The arm as fidelity runs it: `threads` threads, and the engine's fidelity options
    (edgebench.engines.registry), so that arms can score side by side."""
    return {**arm_cfg, "threads": threads, **ENGINES[arm_cfg["engine"]].fidelity_options}


def greedy_agreement(engine, prompts: list[list[int]], expected: list[list[int]]) -> dict:
    """The legacy check: how many greedy continuations match the reference's exactly."""
    continuations = [engine.generate(p, GREEDY_TOKENS) for p in prompts]
    return {
        "greedy_match": sum(a == b for a, b in zip(continuations, expected, strict=True)),
        "greedy_prompts": len(prompts),
    }


def load_for_fidelity(engine, build_dir: str, arm_cfg: dict, settings: dict, vocab: int) -> None:
    if ENGINES[engine.name].fidelity_full_vocab:  # the exact subset asks for every token's logprob
        engine.load(build_dir, arm_cfg, max_model_len=int(settings["window_tokens"]) + 8, max_logprobs=vocab)
    else:
        engine.load(build_dir, arm_cfg, max_model_len=int(settings["window_tokens"]) + 8)


def window_results(engine, windows: list[dict], topk: int):
    """Each window's log-probs as scoring reaches it: in batches of the engine's own size
    (edgebench.engines.registry: vLLM's top-k replies are small, so all at once), one window at a
    time where the engine returns the whole vocabulary (a 256-token window of a 150k vocabulary
    is 300 MB of float64)."""
    size = ENGINES[engine.name].fidelity_batch or len(windows)
    for start in range(0, len(windows), size):
        yield from engine.prompt_logprobs([w["ids"] for w in windows[start : start + size]], topk)


def score_engine(engine, windows: list[dict], ref, settings: dict, row: dict):
    """Teacher-forced scoring of a loaded engine into `row` (and the exact-subset gap where the
    engine gives only the top-k); returns the per-position scores."""
    topk, vocab = int(settings["topk"]), int(ref.shape[1])
    results = window_results(engine, windows, topk)
    per_position, summary, method = score_windows(ref, windows, results)
    row.update(summary, kl_method=method)
    if method == "topk_bucket" and settings["exact_subset_positions"] > 0:
        row.update(exact_subset_gap(engine, windows[0], ref, settings["exact_subset_positions"], topk, vocab))
    return per_position


# a failed arm's positions table: no rows, the same columns
POSITION_COLUMNS = [
    "arm",
    "doc",
    "position",
    "kl",
    "top1_ref",
    "top1_arm",
    "p_ref_token",
    "logprob_arm_token",
]


def run_fidelity_arm(
    config: dict,
    arm_name: str,
    *,
    build_json: str,
    windows_json: str,
    reference_npy: str,
    reference_greedy_json: str,
    summary_out: str,
    positions_out: str,
    code_digest: str,
) -> dict:
    """Score one arm; an engine that cannot load or run its build becomes a failed row, and a
    failure of the scoring itself stops the job with its traceback."""
    from edgebench.engines import make_engine

    settings = config["fidelity"]
    arm_cfg = scoring_arm(config["arms"][arm_name], int(settings["threads_per_arm"]))
    row = arm_row(config, arm_name, code_digest=code_digest)
    row.update(topk=int(settings["topk"]), threads=arm_cfg["threads"])
    corpus = json.loads(Path(windows_json).read_text())
    windows, greedy_prompts = corpus["windows"], corpus["greedy_prompts"]
    expected_greedy = json.loads(Path(reference_greedy_json).read_text())
    ref = np.load(reference_npy, mmap_mode="r")
    vocab = int(ref.shape[1])
    positions = pd.DataFrame(columns=POSITION_COLUMNS)
    start = pd.Timestamp.now(tz="UTC")
    try:
        require_cpu(config, arm_name)  # before the engine starts: it would refuse at load
        engine = EngineBoundary(make_engine(arm_cfg["engine"]))  # every call into it fails as EngineFailed
        engine.import_engine()
        load_for_fidelity(engine, str(Path(build_json).parent), arm_cfg, settings, vocab)
        row["layer_kernels"] = json.dumps(engine.layer_kernels(), sort_keys=True)
        per_position = score_engine(engine, windows, ref, settings, row)
        row.update(greedy_agreement(engine, greedy_prompts, expected_greedy))
        engine.close()
        positions = positions_frame(arm_name, windows, per_position)
        print(
            f"{arm_name}: top1 {row['top1']:.4f}, kl_mean {row['kl_mean']:.5f} ({row['kl_method']}), "
            f"greedy {row['greedy_match']}/{len(greedy_prompts)}",
            flush=True,
        )
    except (EngineFailed, UnsupportedArm) as error:  # a build the engine cannot run is a result
        traceback.print_exc()
        row.update(status="failed", error=failure_text(error))
    row["wall_s"] = (pd.Timestamp.now(tz="UTC") - start).total_seconds()
    write_parquet(positions, positions_out)
    write_parquet(rows_frame("fidelity", [row]), summary_out)
    return row
