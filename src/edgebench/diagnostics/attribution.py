"""Decode attribution: one decode step's GEMM time, summed over the model's layers at batch 1,
against the measured decode step of the arm that runs that kernel."""

from __future__ import annotations

import pandas as pd

from edgebench.engines.registry import supports

PER_LAYER = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def arm_kernel(arm: dict, builds_method: str | None) -> str | None:
    """The kernel study's name for the GEMM path an arm runs (None: not in the study, whose
    kernels are those of the engines with the `kernel_study` feature)."""
    if arm.get("env") or not supports(arm["engine"], "kernel_study"):
        return None  # the study times the main environment's kernels only
    if arm["build"] == "reference":
        return "vllm_bf16"
    if builds_method == "w8a8":
        return "vllm_int8"
    if builds_method in ("gptq", "rtn"):
        return "vllm_w4a8" if arm.get("int4_w4a8") else "vllm_wna16"
    return None


def decode_attribution(
    kernels: pd.DataFrame, bench: pd.DataFrame, arms: dict, model_config: dict, builds: dict | None = None
) -> pd.DataFrame:
    """Per vLLM arm and kernel thread count: the GEMM seconds of one decode step (hot and cold
    bounds), the measured step (1 / median clean decode tok/s), and the GEMM share. (vLLM's auto
    binding reserves a core for the front end, so its worker may run fewer OpenMP threads than the
    machine has cores: every thread count the kernel study timed gets a row.)
    vLLM fuses q/k/v and gate/up into one call each; the study times them apart, so the sum is
    an estimate of the same bytes and FLOPs, not of the fused call's overheads. An arm benchmarked
    without a clean rep keeps its GEMM rows, with the measured step left NaN rather than vanishing;
    arms with no bench rows (calibration-only) are left out."""
    layers = int(model_config["num_hidden_layers"])
    ok = kernels[(kernels["status"] == "ok") & (kernels["m"] == 1)]
    benched = bench[bench["arm"].map(lambda a: bool(arms.get(a, {}).get("bench")))]  # not calibration arms
    clean = benched[benched["status"] == "ok"]
    rows = []
    for arm_name, arm in arms.items():
        method = (builds or {}).get(arm["build"], {}).get("method", "gptq")
        kernel = arm_kernel(arm, method)
        if kernel is None or arm_name not in set(benched["arm"]):
            continue
        decode = clean.loc[clean["arm"] == arm_name, "decode_tok_s"].median()
        for threads, at in ok[ok["kernel"] == kernel].groupby("threads"):
            times = at.set_index("layer")
            if not set(PER_LAYER) | {"lm_head"} <= set(times.index):
                continue
            for bound, column in (("cold", "us"), ("hot", "us_hot")):
                per_step_us = layers * times.loc[list(PER_LAYER), column].sum() + times.loc["lm_head", column]
                rows.append(
                    {
                        "arm": arm_name,
                        "kernel": kernel,
                        "bound": bound,
                        "threads": int(threads),
                        "layers": layers,
                        "gemm_s": per_step_us / 1e6,
                        "decode_step_s": 1.0 / decode,
                        "gemm_share": per_step_us / 1e6 * decode,
                        "non_gemm_s": 1.0 / decode - per_step_us / 1e6,
                    }
                )
    return pd.DataFrame(rows)
