"""Run an engine over the corpus windows and score it against the stored reference distribution."""

from __future__ import annotations

import json
import os
import tempfile
import traceback
from pathlib import Path

import numpy as np
import pandas as pd

from edgebench.fidelity.stats import kl_topk_bucket, summarize
from edgebench.rows import arm_row
from edgebench.tables import rows_frame, write_parquet_atomic


def reference_logprobs(build_dir: str, windows: list[dict], threads: int) -> np.ndarray:
    """Full-vocabulary log-probabilities of the bf16 reference at every scored position, float16.

    Stored in float16 ([positions, vocab]); log-probs below float16's range clip to -65504, which
    changes KL by less than p * 65504 for p < 1e-28: nothing.
    """
    from edgebench.engines.hf_engine import HfEngine

    engine = HfEngine()
    engine.load(build_dir, {"threads": threads}, max_model_len=0)
    blocks = []
    for i, window in enumerate(windows, start=1):
        full = engine.full_logprobs(window["ids"])[window["context"] :]
        blocks.append(np.maximum(full, -65504.0).astype(np.float16))
        if i % 10 == 0 or i == len(windows):
            print(f"reference: {i}/{len(windows)} windows", flush=True)
    engine.close()
    return np.concatenate(blocks)


def arm_topk(engine, windows: list[dict], topk: int) -> dict[str, np.ndarray]:
    """The arm's top-k ids/log-probs and target log-prob at every scored position."""
    results = engine.prompt_logprobs([w["ids"] for w in windows], topk)
    parts = {"top_ids": [], "top_logprobs": [], "target_logprobs": []}
    for window, result in zip(windows, results, strict=True):
        skip = window["context"]
        parts["top_ids"].append(result.top_ids[skip:])
        parts["top_logprobs"].append(result.top_logprobs[skip:])
        parts["target_logprobs"].append(result.target_logprobs[skip:])
    return {key: np.concatenate(value) for key, value in parts.items()}


def targets(windows: list[dict]) -> np.ndarray:
    """The actual next token at every scored position."""
    return np.concatenate([np.asarray(w["ids"][w["context"] + 1 :]) for w in windows])


def score_arm(ref: np.ndarray, arm: dict[str, np.ndarray], target_ids: np.ndarray, chunk: int = 512):
    """Per-position and summary fidelity of one arm. KL is a top-k bucket lower bound."""
    kls, agree, dps, ref_nll = [], [], [], []
    for start in range(0, ref.shape[0], chunk):
        block = ref[start : start + chunk].astype(np.float64)
        ids = arm["top_ids"][start : start + chunk]
        kls.append(kl_topk_bucket(block, ids, arm["top_logprobs"][start : start + chunk]))
        agree.append(np.argmax(block, axis=1) == ids[:, 0])
        ref_target = block[np.arange(block.shape[0]), target_ids[start : start + chunk]]
        ref_nll.append(-ref_target)
        dps.append(np.exp(arm["target_logprobs"][start : start + chunk]) - np.exp(ref_target))
    per_position = {
        "kl": np.concatenate(kls),
        "top1_agree": np.concatenate(agree),
        "dp": np.concatenate(dps),
    }
    summary = summarize(
        per_position["kl"],
        per_position["top1_agree"],
        per_position["dp"],
        np.concatenate(ref_nll),
        -arm["target_logprobs"],
    )
    return summary, per_position


def save_npy_atomic(array: np.ndarray, path: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".ref.", suffix=".npy", dir=os.path.dirname(path) or ".")
    with os.fdopen(fd, "wb") as handle:
        np.save(handle, array)
    os.replace(tmp, path)


def positions_frame(
    arm_name: str, windows: list[dict], ref: np.ndarray, arm: dict, per_position: dict
) -> pd.DataFrame:
    """Drill-down rows: where in which document an arm diverges from the reference."""
    docs, positions = [], []
    for window in windows:
        for index in range(window["context"] + 1, len(window["ids"])):
            docs.append(window["doc"])
            positions.append(window["start"] + index)
    target_ids = targets(windows)
    return pd.DataFrame(
        {
            "arm": arm_name,
            "doc": docs,
            "position": positions,
            "kl": per_position["kl"],
            "top1_ref": np.argmax(ref, axis=1),
            "top1_arm": arm["top_ids"][:, 0],
            "p_ref_token": np.exp(ref[np.arange(len(target_ids)), target_ids].astype(np.float64)),
        }
    )


def run_fidelity_arm(
    config: dict,
    arm_name: str,
    *,
    build_json: str,
    windows_json: str,
    reference_npy: str,
    summary_out: str,
    positions_out: str,
    code_digest: str,
) -> dict:
    """Score one arm; an engine that cannot load or run its build becomes a failed row."""
    from edgebench.engines import make_engine

    settings = config["fidelity"]
    arm_cfg = config["arms"][arm_name]
    row = arm_row(config, arm_name, code_digest=code_digest)
    row.update(kl_method="topk_bucket", topk=int(settings["topk"]))
    windows = json.loads(Path(windows_json).read_text())
    ref = np.load(reference_npy, mmap_mode="r")
    positions = pd.DataFrame(columns=["arm", "doc", "position", "kl", "top1_ref", "top1_arm", "p_ref_token"])
    start = pd.Timestamp.now(tz="UTC")
    try:
        engine = make_engine(arm_cfg["engine"])
        engine.import_engine()
        engine.load(str(Path(build_json).parent), arm_cfg, max_model_len=int(settings["window_tokens"]) + 8)
        arm = arm_topk(engine, windows, int(settings["topk"]))
        engine.close()
        summary, per_position = score_arm(ref, arm, targets(windows))
        row.update(summary)
        positions = positions_frame(arm_name, windows, ref, arm, per_position)
        print(f"{arm_name}: top1 {summary['top1']:.4f}, kl_mean {summary['kl_mean']:.5f}", flush=True)
    except Exception as error:  # a build the engine cannot run is a result, not a crash
        traceback.print_exc()
        row.update(status="failed", error=f"{type(error).__name__}: {error}"[-2000:])
    row["wall_s"] = (pd.Timestamp.now(tz="UTC") - start).total_seconds()
    write_parquet_atomic(positions, positions_out)
    write_parquet_atomic(rows_frame("fidelity", [row]), summary_out)
    return row
