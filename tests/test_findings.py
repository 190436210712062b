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
    text = findings_markdown({"bench": bench, "verdicts": verdicts}, "# Deployment decision\n\n| x |\n")
    assert "12.0 min" in text and "ISA level: avx2" in text and "Some CPU" in text
    assert "`vllm/w8a8`: onednn_int8" in text and "| H2 | confirmed | every arm moved |" in text
    assert "## Deployment decision" in text and "Totals: 1 confirmed" in text
