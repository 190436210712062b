"""What differs between two studies besides their figures: machine, packages, config, code, model.

A measured fingerprint line (bandwidth, compute rate) always differs a little between runs; it
counts as different when the two values are more than MEASURED_TOLERANCE apart.
"""

from __future__ import annotations

import math

import pandas as pd

from edgebench.crossstudy.load import Study

MEASURED_TOLERANCE = 0.10
NOT_RECORDED = "not recorded"
# Provenance that describes a whole study, read from its rows.
STUDY_COLUMNS = (
    "git_commit",
    "git_dirty",
    "config_digest",
    "code_digest",
    "model",
    "cpu_model",
    "isa_flags",
    "host",
    "machine_digest",
    "cpus_used",
    "threads",
)


def fingerprint_lines(study: Study) -> dict[str, tuple[str, float, str]]:
    """line -> (value, number, kind) from machine.parquet; empty when the study has none."""
    frame = study.table("machine")
    return {r["line"]: (str(r["value"]), float(r["number"]), r["kind"]) for _, r in frame.iterrows()}


def lines_differ(a: tuple[str, float, str] | None, b: tuple[str, float, str] | None) -> bool:
    if a is None or b is None:
        return True
    if a[2] == "measured" and math.isfinite(a[1]) and math.isfinite(b[1]) and a[1] and b[1]:
        return abs(b[1] / a[1] - 1) > MEASURED_TOLERANCE
    return a[0] != b[0]


def fingerprint_rows(a: Study, b: Study) -> list[dict]:
    fa, fb = fingerprint_lines(a), fingerprint_lines(b)
    if not fa and not fb:
        return [_row("machine", "fingerprint", NOT_RECORDED, NOT_RECORDED, a, b, differs=False)]
    rows = []
    for line in sorted(set(fa) | set(fb)):
        va, vb = fa.get(line), fb.get(line)
        rows.append(
            _row(
                "machine",
                line,
                va[0] if va else NOT_RECORDED,
                vb[0] if vb else NOT_RECORDED,
                a,
                b,
                differs=lines_differ(va, vb),
            )
        )
    return rows


def version_rows(a: Study, b: Study) -> list[dict]:
    va, vb = a.versions(), b.versions()
    return [
        _row(
            "versions",
            name,
            va.get(name, NOT_RECORDED),
            vb.get(name, NOT_RECORDED),
            a,
            b,
            differs=va.get(name) != vb.get(name),
        )
        for name in sorted(set(va) | set(vb))
    ]


def provenance_rows(a: Study, b: Study) -> list[dict]:
    ra, rb = a.first_row(), b.first_row()
    rows = []
    for column in STUDY_COLUMNS:
        xa, xb = ra.get(column, NOT_RECORDED), rb.get(column, NOT_RECORDED)
        xa, xb = (NOT_RECORDED if pd.isna(x) else str(x) for x in (xa, xb))
        rows.append(_row("provenance", column, xa, xb, a, b, differs=xa != xb))
    return rows


def model_rows(a: Study, b: Study) -> list[dict]:
    """The builds' source digests (the model each build was made from) and sizes on disk."""
    ba, bb = a.table("builds"), b.table("builds")
    if ba.empty and bb.empty:
        return []
    rows = []
    for build in sorted(set(ba.get("build", [])) | set(bb.get("build", []))):
        da = _build_value(ba, build, "source_digest")
        db = _build_value(bb, build, "source_digest")
        rows.append(_row("model", f"{build} source digest", da, db, a, b, differs=da != db))
    return rows


def _build_value(frame: pd.DataFrame, build: str, column: str) -> str:
    match = frame[frame["build"] == build] if "build" in frame else frame.iloc[0:0]
    if match.empty or column not in match:
        return NOT_RECORDED
    return str(match[column].iloc[0])


def _row(kind: str, what: str, value_a: str, value_b: str, a: Study, b: Study, differs: bool) -> dict:
    return {
        "kind": kind,
        "what": what,
        "study_a": a.name,
        "study_b": b.name,
        "value_a": value_a,
        "value_b": value_b,
        "differs": bool(differs),
    }


def difference_table(studies: list[Study]) -> pd.DataFrame:
    """Every other study against the first: fingerprint lines, versions, provenance, models."""
    reference, rows = studies[0], []
    for other in studies[1:]:
        for make in (fingerprint_rows, version_rows, provenance_rows, model_rows):
            rows += make(reference, other)
    return pd.DataFrame(rows)
