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
