"""Reproduce one roadmap item from its raw rows and write its verdict (markdown, parquet, chart)."""

from __future__ import annotations

import json
import os

import altair as alt
import pandas as pd

from edgebench.agent.tables import study_rows
from edgebench.charts import save_chart
from edgebench.decision import root_cause
from edgebench.io import write_parquet, write_text
from edgebench.isa import isa_level, refusal_in
from edgebench.items.checks import JUDGES_FAILED_ARMS
from edgebench.items.verify import METHODS
from edgebench.machine.identity import static_identity
from edgebench.procfs import cpu_flags
from edgebench.retractions import apply_retractions

VALUE_COLUMNS = (
    "failed_rows",
    "share",
    "remainder_share",
    "load_excess_mb",
    "unexplained_share",
    "difference",
    "ratio",
    "rate",
    "mde",
    "top1",
    "kl_mean",
    "median",
    "single_run_width",
    "power",
    "p_value",
)


def load_evidence(paths: list[str], table: str, retractions: list[dict]) -> pd.DataFrame:
    if table == "retracted_figures":  # the retraction check's one-line report
        return pd.DataFrame([{"check": open(p, encoding="utf-8").read().strip()} for p in paths])
    frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    if table == "agent_trials":  # items judge the study's strategy, not those compared with it
        frame = study_rows(frame)
    return apply_retractions(frame, table, retractions)


def failed_arms(item: dict, frame: pd.DataFrame) -> pd.DataFrame:
    """The item's arms whose rows all failed (none ok), with their first error."""
    rows = []
    if "status" in frame and "arm" in frame:
        for arm in item["starts_from"].get("arms", []):
            part = frame[frame["arm"] == arm]
            if (part["status"] == "failed").any() and not (part["status"] == "ok").any():
                errors = [e for e in part.get("error", pd.Series(dtype=str)).dropna().astype(str) if e]
                rows.append(
                    {"arm": arm, "failed_rows": len(part), "error": errors[0] if errors else "none recorded"}
                )
    return pd.DataFrame(rows)


def evaluate(item: dict, frame: pd.DataFrame, retractions: list[dict]) -> tuple[str, pd.DataFrame, str]:
    """The item's verdict and a note. `unmeasurable` when one of its arms could not run at all (the
    note says why): no statistics on an arm that produced only failures. A retraction overrides."""
    withdrawn = [r for r in retractions if r.get("item") == item["id"]]
    failed = failed_arms(item, frame)
    if item["verify"]["method"] in JUDGES_FAILED_ARMS:  # the failure rows are the evidence
        failed = failed.iloc[0:0]
    if withdrawn:
        note = "; ".join(
            f"{r['id']} ({r['date']}): {r['reason']} (replaced by {r['replaced_by']})" for r in withdrawn
        )
        evidence = METHODS[item["verify"]["method"]](frame, item)[1] if failed.empty else pd.DataFrame()
        return "retracted", evidence, note
    if not failed.empty:
        note = "; ".join(
            f"{row.arm} could not run: {refusal_in(row.error) or root_cause(row.error, 400)}"
            for row in failed.itertuples()
        )
        return "unmeasurable", failed, note
    verdict, evidence = METHODS[item["verify"]["method"]](frame, item)
    why = evidence.pop("why").iloc[0] if "why" in evidence and not evidence.empty else ""
    return verdict, evidence, why


def evidence_chart(item: dict, evidence: pd.DataFrame) -> alt.Chart:
    title = f"{item['id']}: {item['title']}"
    if evidence.select_dtypes("number").columns.empty:  # a reason, not figures
        text = evidence.astype(str).agg(": ".join, axis=1).to_frame("text")
        return (
            alt.Chart(text).mark_text(align="left", x=5).encode(y=alt.Y("text:N", axis=None), text="text:N")
        )
    value = next(
        (c for c in VALUE_COLUMNS if c in evidence.columns), evidence.select_dtypes("number").columns[0]
    )
    label = next((c for c in ("arm", "candidate", "metric", "policy") if c in evidence.columns), None)
    if label is None:  # e.g. one row per thread count and wait policy: the first two columns name it
        label = "label"
        evidence = evidence.assign(label=evidence.iloc[:, :2].astype(str).agg(" ".join, axis=1))
    return (
        alt.Chart(evidence)
        .mark_bar()
        .encode(
            y=alt.Y(f"{label}:N", title=None),
            x=alt.X(f"{value}:Q", title=value),
            tooltip=list(evidence.columns),
        )
        .properties(title=title, width=360, height=30 * max(len(evidence), 1))
    )


def _how_lines(item: dict) -> list[str]:
    if "verify" not in item:
        return ["- Not reproducible on this machine or stack (the reason above is what was checked)."]
    settings = {k: v for k, v in item["verify"].items() if k != "method"}
    start = item["starts_from"]
    return [
        f"- Starts from: table `{start['table']}`, metric `{start.get('metric', '-')}`, "
        f"arms {', '.join(f'`{a}`' for a in start['arms'])}",
        f"- Expect: `{json.dumps(item['expect'], sort_keys=True)}`",
        f"- Method: `{item['verify']['method']}` {json.dumps(settings)}",
    ]


def render_markdown(item: dict, verdict: str, evidence: pd.DataFrame, provenance: dict, note: str) -> str:
    lines = [
        f"# {item['id']}: {item['title']}",
        "",
        f"**Verdict: {verdict}**"
        + (f" ({'retraction' if verdict == 'retracted' else 'why'}: {note})" if note else ""),
        "",
        f"- Claim: {item['claim']}",
        *_how_lines(item),
        "",
        "## Evidence",
        "",
        evidence.to_markdown(index=False, floatfmt=".4g"),
        "",
        "## Provenance",
        "",
        *(f"- {key}: `{value}`" for key, value in provenance.items()),
        "",
    ]
    return "\n".join(lines)


def machine_note() -> str:
    """What the machine running the study has, read now: a reason states a requirement, and the
    note says how this machine compares with it."""
    identity = static_identity()
    memory_gib = float(identity["memory_total_mb"]) / 1024
    return (
        f"this study's machine: {len(os.sched_getaffinity(0))} usable cores of {identity['logical_cpus']}, "
        f"{memory_gib:.1f} GiB of memory, {identity['cpu_model']}, ISA level {isa_level(cpu_flags())}"
    )


def not_reproducible(item: dict) -> tuple[str, pd.DataFrame, str]:
    """An item this machine or stack cannot run: its verdict row carries the reason (a requirement)
    and what the machine running the study has."""
    note = f"{item['reason']} ({machine_note()})"
    return "not reproducible", pd.DataFrame([{"item": item["id"], "reason": item["reason"]}]), note


def elsewhere_row(item: dict) -> dict:
    """The verdicts row of an item another study reproduces (never a silent gap)."""
    study = item.get("study", "a study that makes its table")
    note = f"reproduced by {study} (its table `{item['starts_from']['table']}` is not made by this study)"
    return {
        "id": item["id"],
        "title": item["title"],
        "claim": item["claim"],
        "verdict": "in another study",
        "method": item["verify"]["method"],
        "retraction": "",
        "note": note,
        "evidence": "[]",
    }


def write_verdict(item: dict, paths: list[str], retractions: list[dict], out: dict) -> dict:
    if not item.get("reproducible", True):
        frame = pd.DataFrame()
        verdict, evidence, note = not_reproducible(item)
    else:
        frame = load_evidence(paths, item["starts_from"]["table"], retractions)
        verdict, evidence, note = evaluate(item, frame, retractions)
    provenance = {
        key: ", ".join(sorted(map(str, frame[key].dropna().unique())))
        for key in ("run_id", "git_commit", "config_digest", "code_digest")
        if key in frame.columns
    }
    provenance["evidence_rows"] = len(frame)
    provenance["retracted_rows_excluded"] = (
        int((frame.get("status") == "retracted").sum()) if "status" in frame else 0
    )
    write_text(render_markdown(item, verdict, evidence, provenance, note), out["md"])
    row = {
        "id": item["id"],
        "title": item["title"],
        "claim": item["claim"],
        "verdict": verdict,
        "method": item["verify"]["method"] if "verify" in item else "none",
        "retraction": note if verdict == "retracted" else "",
        "note": note,
        "evidence": evidence.to_json(orient="records"),
        **{k: str(v) for k, v in provenance.items()},
    }
    write_parquet(pd.DataFrame([row]), out["table"])
    save_chart(evidence_chart(item, evidence), png=out["png"], svg=out["svg"], html=out["html"])
    return row


def render_index(verdicts: pd.DataFrame, retractions: list[dict]) -> str:
    """The items index with verdicts, and the retractions list (struck-through entries)."""
    lines = ["# Roadmap items", "", "| item | title | verdict | method |", "|---|---|---|---|"]
    for _, row in verdicts.sort_values("id").iterrows():
        link = f"[{row['id']}]({row['id']}/verdict.md)"
        lines.append(f"| {link} | {row['title']} | **{row['verdict']}** | {row['method']} |")
    lines += ["", "# Retractions", ""]
    if not retractions:
        lines.append("None.")
    for entry in retractions:
        target = (
            f"item {entry['item']}" if "item" in entry else f"table {entry['table']} where {entry['where']}"
        )
        lines.append(f"- ~~{entry['id']}: {target}~~ ({entry['date']}): {entry['reason']}")
        lines.append(f"  replaced by: {entry['replaced_by']}")
    return "\n".join(lines) + "\n"
