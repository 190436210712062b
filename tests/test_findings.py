"""findings.md is written from the tables: time span, CPU, kernels, verdicts, decision."""

import json

import pandas as pd

from edgebench.findings import findings_markdown, study_span_min


def rows(arm, start, wall, kernel):
    return {
        "arm": arm,
        "run_id": "t",
        "started_at": start,
        "wall_s": wall,
        "kernel_path": kernel,
        "cpu_model": "Some CPU",
        "host": "h",
        "isa_level": "avx2",
        "isa_flags": json.dumps(["avx2"]),
        "git_commit": "abc",
        "git_dirty": False,
    }


def test_findings_state_span_machine_kernels_verdicts_and_decision():
    bench = pd.DataFrame(
        [
            rows("vllm/bf16", "2026-01-01T00:00:00+00:00", 60, "vllm_bf16"),
            rows("vllm/w8a8", "2026-01-01T00:10:00+00:00", 120, "onednn_int8"),
        ]
    )
    verdicts = pd.DataFrame([{"id": "H2", "verdict": "confirmed", "note": "every arm moved"}])
    assert study_span_min({"bench": bench}) == 12.0
    compare = pd.DataFrame(
        [
            {"measured": "warm", "metric": "decode_tok_s", "arm": "vllm/bf16-twin", "baseline": "vllm/bf16",
             "rounds": 6, "ratio": 0.99, "ci_low": 0.97, "ci_high": 1.01, "sd_log": 0.02, "mde": 0.03,
             "core_offset": -0.12}
        ]
    )  # fmt: skip
    tables = {"bench": bench, "verdicts": verdicts, "compare": compare}
    text = findings_markdown(tables, "# Deployment decision\n\n| x |\n")
    assert (
        "| vllm/bf16-twin vs vllm/bf16 | 6 | 0.990 [0.970, 1.010] | within one session | 0.020 | 0.030 "
        "| -0.120 | one session: not measured | not measured |" in text
    )
    assert "12.0 min" in text and "ISA level: avx2" in text and "Some CPU" in text
    assert "`vllm/w8a8`: onednn_int8" in text and "| H2 | confirmed | every arm moved |" in text
    assert "## Deployment decision" in text and "Totals: 1 confirmed" in text


def test_a_warm_pair_without_a_ratio_says_why_instead_of_nan():
    """An arm the CPU refused has no warm ratio: its row names the comparison's verdict and the
    refusal of the side that never ran, and the baseline's own clean rows add nothing."""
    compare = pd.DataFrame(
        [
            {"measured": "warm", "metric": "decode_tok_s", "arm": "vllm/int4", "baseline": "vllm/bf16",
             "rounds": 0, "ratio": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"),
             "sd_log": float("nan"), "mde": float("nan"), "core_offset": float("nan"),
             "verdict": "no clean pairs"}
        ]
    )  # fmt: skip
    refusal = "vllm/int4 runs W4A16, kernel cpu_gemm_wna16, which needs avx512f; this CPU lacks avx512f"
    samples = [("vllm/int4", "failed", refusal)] * 3 + [
        ("vllm/bf16", "ok", ""),
        ("vllm/bf16", "failed", "partner vllm/int4 is down"),
    ]
    warm = pd.DataFrame(
        [
            {**rows(arm, "2026-01-01T00:00:00+00:00", 10, "vllm_bf16"), "status": status, "error": error}
            for arm, status, error in samples
        ]
    )
    noise = pd.DataFrame(
        [{"arm": "vllm/int4", "baseline": "vllm/bf16", "design": "interleaved", "swaps": 0,
          "sd_log_per_swap": float("nan"), "seconds_per_swap": float("nan"), "mde": float("nan")}]
    )  # fmt: skip
    text = findings_markdown({"compare": compare, "warm_noise": noise, "warm": warm})
    line = next(x for x in text.splitlines() if x.startswith("| vllm/int4 vs vllm/bf16 | 0 |"))
    assert "not measured: no clean pairs; vllm/int4: 3 failed: refused: cpu_gemm_wna16 needs avx512f" in line
    assert "partner" not in line and line.count("|") == 10  # nine cells, as the header has
    assert "| vllm/int4 vs vllm/bf16 | interleaved | 0 | not measured: no swaps |  |  |" in text
    assert "nan" not in text
