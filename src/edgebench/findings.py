"""results/findings.md: what the study found, written from its tables (never typed into docs).

It states the study's wall time from the rows' own timestamps, the CPU and its ISA level, each
arm's kernel path, the item verdicts with their notes, and the deployment decision.
"""

from __future__ import annotations

import json

import pandas as pd

from edgebench.decision import failures_said


def _span(tables: dict[str, pd.DataFrame]) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """First measurement's start and last one's end, over every row that has timestamps."""
    starts, ends = [], []
    for frame in tables.values():
        if "started_at" not in frame or frame.empty:
            continue
        start = pd.to_datetime(frame["started_at"], utc=True, errors="coerce")
        wall = pd.to_numeric(frame.get("wall_s", 0), errors="coerce").fillna(0)
        starts.append(start.min())
        ends.append((start + pd.to_timedelta(wall, unit="s")).max())
    return (min(starts), max(ends)) if starts else None


def study_span_min(tables: dict[str, pd.DataFrame]) -> float:
    """Minutes from the first measurement's start to the last one's end, over every row."""
    span = _span(tables)
    return (span[1] - span[0]).total_seconds() / 60 if span else float("nan")


def study_span_end(tables: dict[str, pd.DataFrame]) -> pd.Timestamp:
    """When the study's last measurement ended (the epoch when no row has a timestamp)."""
    span = _span(tables)
    return span[1] if span else pd.Timestamp(0, tz="UTC")


def machine_lines(frame: pd.DataFrame) -> list[str]:
    row = frame.iloc[0]
    flags = json.loads(row["isa_flags"]) if isinstance(row.get("isa_flags"), str) else []
    return [
        f"- CPU: {row.get('cpu_model', '?')} on host {row.get('host', '?')}",
        f"- ISA level: {row.get('isa_level', '?')} (flags: {', '.join(flags) or 'none of the tracked ones'})",
        f"- commit {row.get('git_commit', '?')}{' (dirty)' if row.get('git_dirty') else ''}",
    ]


def kernel_lines(frame: pd.DataFrame) -> list[str]:
    if "kernel_path" not in frame:
        return []
    paths = frame.groupby("arm")["kernel_path"].first()
    return [f"- `{arm}`: {path}" for arm, path in paths.items()]


def duet_lines(compare: pd.DataFrame, warm: pd.DataFrame | None = None) -> list[str]:
    """Every warm decode comparison: ratio and interval, per-swap paired SD, MDE, core offset."""
    rows = compare[(compare["measured"] == "warm") & (compare["metric"] == "decode_tok_s")]
    lines = [
        "| arm vs baseline | swaps | ratio [95% CI] | covers | per-swap SD (log) | MDE | core offset "
        "| across sessions [95% CI] | between-session SD (log) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in rows.iterrows():
        if pd.isna(r["ratio"]):  # a pair with no ratio says why, never "nan"
            cells = [f"{r['arm']} vs {r['baseline']}", str(r["rounds"]), no_ratio(r, warm), *[""] * 6]
            lines.append("| " + " | ".join(cells) + " |")
            continue
        offset = r.get("core_offset", float("nan"))
        shown = "none: one core" if pd.isna(offset) else f"{offset:+.3f}"  # interleaved pairs share a core
        lines.append(
            f"| {r['arm']} vs {r['baseline']} | {r['rounds']} | {r['ratio']:.3f} [{r['ci_low']:.3f}, "
            f"{r['ci_high']:.3f}] | {within_label(r)} "
            f"| {r['sd_log']:.3f} | {r['mde']:.3f} | {shown} | {across_cell(r)} |"
        )
    return lines


def no_ratio(row: pd.Series, warm: pd.DataFrame | None) -> str:
    """Why a warm pair has no ratio: the comparison's own verdict and, for a side whose every
    sample failed, what its first failure said (a CPU refusal names the flag)."""
    reason = str(row.get("verdict", "") or "no ratio")
    for arm in (row["arm"], row["baseline"]) if warm is not None else ():
        samples = warm[warm["arm"] == arm]
        failed = samples[samples["status"] == "failed"]
        if len(failed) and len(failed) == len(samples):
            reason += f"; {arm}: {failures_said(failed)}"
    return f"not measured: {reason}"


def within_label(row: pd.Series) -> str:
    k = session_count(row)
    return "within one session" if k < 2 else f"within sessions (pairs of {k} sessions pooled)"


def session_count(row: pd.Series) -> int:
    value = row.get("sessions", 1)
    return 1 if pd.isna(value) else int(value)


def across_cell(row: pd.Series) -> str:
    """The across-sessions interval and the between-session SD, or why there is none."""
    k = session_count(row)
    if k < 2:
        return "one session: not measured | not measured"
    return (
        f"{row['across_ratio']:.3f} [{row['across_ci_low']:.3f}, {row['across_ci_high']:.3f}] "
        f"(across {k} sessions) | {row['between_session_sd_log']:.4f}"
    )


def noise_lines(noise: pd.DataFrame) -> list[str]:
    """Each duet's steadiness per way of timing it (the warm design's own pilot, on this run)."""
    lines = [
        "| arm vs baseline | timing | swaps | per-swap SD (log) | s per swap | MDE |",
        "|---|---|---|---|---|---|",
    ]
    for _, r in noise.iterrows():
        if not r["swaps"]:  # the pair never ran (its failures are in the paired table above)
            pair = f"{r['arm']} vs {r['baseline']}"
            lines.append(f"| {pair} | {r['design']} | 0 | not measured: no swaps |  |  |")
            continue
        lines.append(
            f"| {r['arm']} vs {r['baseline']} | {r['design']} | {r['swaps']} | {r['sd_log_per_swap']:.3f} "
            f"| {r['seconds_per_swap']:.1f} | {r['mde']:.3f} |"
        )
    return lines


def fingerprint_lines(machine: pd.DataFrame) -> list[str]:
    """The machine fingerprint (machine.parquet) as a table: what two studies' machines differ in."""
    digest = machine["machine_digest"].iloc[0]
    lines = [f"Machine digest `{digest}` (every measured row carries it, and every table its metadata).", ""]
    lines += ["| line | value | unit | how |", "|---|---|---|---|"]
    for _, r in machine.iterrows():
        value = str(r["value"])
        value = value if len(value) <= 80 else value[:77] + "..."  # the flag list
        lines.append(f"| {r['line']} | {value} | {r['unit']} | {r.get('method', '') or ''} |")
    return lines


def verdict_lines(verdicts: pd.DataFrame) -> list[str]:
    lines = ["| item | verdict | note |", "|---|---|---|"]
    for _, row in verdicts.iterrows():
        note = str(row.get("note", "") or "").replace("|", "/").replace("\n", " ")[:300]
        lines.append(f"| {row['id']} | {row['verdict']} | {note} |")
    counts = verdicts["verdict"].value_counts()
    lines += ["", "Totals: " + ", ".join(f"{n} {v}" for v, n in counts.items())]
    return lines


def findings_markdown(tables: dict[str, pd.DataFrame], decision_md: str = "") -> str:
    """The findings page from the study's tables (`verdicts` and the measured tables)."""
    derived = ("verdicts", "compare", "warm_noise", "machine")
    measured = {k: v for k, v in tables.items() if k not in derived}
    first = next((f for f in measured.values() if not f.empty), None)
    lines = ["# Findings", ""]
    if first is not None:
        span = study_span_min(measured)
        lines += [f"Study `{first['run_id'].iloc[0]}`: {span:.1f} min of measurement.", ""]
        lines += ["## Machine", "", *machine_lines(first), ""]
    if "machine" in tables and not tables["machine"].empty:
        lines += ["## Machine fingerprint", "", *fingerprint_lines(tables["machine"]), ""]
    if first is not None:
        arms = pd.concat([f for f in measured.values() if "kernel_path" in f], ignore_index=True)
        lines += ["## Kernel path per arm", "", *kernel_lines(arms), ""]
    if "compare" in tables and not tables["compare"].empty:
        lines += ["## Warm decode, paired", "", *duet_lines(tables["compare"], tables.get("warm")), ""]
    if "warm_noise" in tables and not tables["warm_noise"].empty:
        lines += ["## How steady the warm session was", "", *noise_lines(tables["warm_noise"]), ""]
    if "verdicts" in tables and not tables["verdicts"].empty:
        lines += ["## Roadmap items", "", *verdict_lines(tables["verdicts"]), ""]
    if decision_md:
        lines += [decision_md.replace("# Deployment decision", "## Deployment decision", 1)]
    return "\n".join(lines).rstrip() + "\n"
