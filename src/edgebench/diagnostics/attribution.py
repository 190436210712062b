"""Decode attribution: one decode step's GEMM time, summed over the model's layers at batch 1,
against the measured decode step of the arm that runs that kernel."""

from __future__ import annotations

import pandas as pd

PER_LAYER = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def arm_kernel(arm: dict, builds_method: str | None) -> str | None:
    """The kernel study's name for the GEMM path a vLLM arm runs (None: not in the study)."""
    if arm["engine"] != "vllm":
        return None
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
    """Per vLLM arm: the GEMM seconds of one decode step (hot and cold bounds, at the study's
    largest thread count), the measured step (1 / median clean decode tok/s), and the GEMM share.
    vLLM fuses q/k/v and gate/up into one call each; the study times them apart, so the sum is
    an estimate of the same bytes and FLOPs, not of the fused call's overheads."""
    layers = int(model_config["num_hidden_layers"])
    ok = kernels[(kernels["status"] == "ok") & (kernels["m"] == 1)]
    threads = int(ok["threads"].max()) if len(ok) else 0
    ok = ok[ok["threads"] == threads]
    clean = bench[(bench["status"] == "ok") & (bench["study"] == "bench")]
    rows = []
    for arm_name, arm in arms.items():
        method = (builds or {}).get(arm["build"], {}).get("method", "gptq")
        kernel = arm_kernel(arm, method)
        decode = clean.loc[clean["arm"] == arm_name, "decode_tok_s"].median()
        times = ok[ok["kernel"] == kernel].set_index("layer")
        if kernel is None or pd.isna(decode) or not set(PER_LAYER) | {"lm_head"} <= set(times.index):
            continue
        step_s = 1.0 / decode
        for bound, column in (("cold", "us"), ("hot", "us_hot")):
            gemm_s = (layers * times.loc[list(PER_LAYER), column].sum() + times.loc["lm_head", column]) / 1e6
            rows.append(
                {
                    "arm": arm_name,
                    "kernel": kernel,
                    "bound": bound,
                    "threads": threads,
                    "layers": layers,
                    "gemm_s": gemm_s,
                    "decode_step_s": step_s,
                    "gemm_share": gemm_s / step_s,
                    "non_gemm_s": step_s - gemm_s,
                }
            )
    return pd.DataFrame(rows)
