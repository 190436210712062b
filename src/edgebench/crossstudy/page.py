"""The comparison page a person reads in a minute: the verdicts first, then what differs."""

from __future__ import annotations

import math

import pandas as pd

from edgebench.formatting import three_digits as num

LABEL_ORDER = ("differs", "unresolved", "same", "too few samples")


def interval(value: float, low: float, high: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{num(value)} (no interval)"
    return f"{num(value)} [{num(low)}, {num(high)}]"


def figure_line(r: pd.Series) -> str:
    what = f"{r['arm']} {r['metric']}" + (f" ({r['table']})" if r["kind"] == "absolute" else "")
    return (
        f"| {what} | {interval(r['value_a'], r['low_a'], r['high_a'])} (n={r['n_a']}) "
        f"| {interval(r['value_b'], r['low_b'], r['high_b'])} (n={r['n_b']}) "
        f"| {interval(r['ratio'], r['ci_low'], r['ci_high'])} | **{r['label']}**: {r['why']} |"
    )


def figure_table(rows: pd.DataFrame, a: str, b: str) -> list[str]:
    lines = [f"| figure | {a} | {b} | {b} / {a} [95% CI] | label |", "|---|---|---|---|---|"]
    return lines + [figure_line(r) for _, r in rows.iterrows()]


def label_counts(rows: pd.DataFrame) -> str:
    counts = rows["label"].value_counts()
    return ", ".join(f"{counts[k]} {k}" for k in LABEL_ORDER if k in counts) or "none"


def by_label(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows in the order a reader needs them: what differs first, too few samples last."""
    rank = {label: i for i, label in enumerate(LABEL_ORDER)}
    return rows.assign(_rank=rows["label"].map(rank)).sort_values(["_rank", "table", "arm", "metric"])


def verdict_lines(rows: pd.DataFrame, differences: pd.DataFrame) -> list[str]:
    paired, absolute = rows[rows["kind"] == "paired ratio"], rows[rows["kind"] == "absolute"]
    lines = [
        f"- **Paired within-study ratios** ({len(paired)}): {label_counts(paired)}.",
        f"- **Absolute figures** ({len(absolute)}): {label_counts(absolute)}.",
    ]
    differs = by_label(rows[rows["label"] == "differs"])
    if differs.empty:
        lines.append("- No figure differs.")
    else:
        shown = "; ".join(
            f"{r['arm']} {r['metric']} ({r['kind']}) {num(r['ratio'])}x"
            for _, r in differs.head(15).iterrows()
        )
        more = f"; and {len(differs) - 15} more" if len(differs) > 15 else ""
        lines.append(f"- **Differ** (second study over the first): {shown}{more}.")
    lines.append(f"- **Fingerprint lines that differ**: {fingerprint_summary(differences)}.")
    return lines


def fingerprint_summary(differences: pd.DataFrame) -> str:
    machine = differences[differences["kind"] == "machine"]
    missing = sorted({side for side in ("value_a", "value_b") if (machine[side] == "not recorded").all()})
    if missing:
        names = [machine[side.replace("value", "study")].iloc[0] for side in missing]
        return (
            f"none can be compared: {' and '.join(names)} recorded no fingerprint (machine.parquet); "
            "see the provenance lines below for what its rows record"
        )
    differing = machine[machine["differs"]]
    if differing.empty:
        return "none"
    return ", ".join(f"{r['what']} ({r['value_a']} vs {r['value_b']})" for _, r in differing.iterrows())


def difference_lines(differences: pd.DataFrame) -> list[str]:
    differing = differences[differences["differs"]]
    if differing.empty:
        return [
            "Nothing recorded differs: machine fingerprint, package versions, config, code and models agree."
        ]
    lines = ["| kind | line | study A | study B |", "|---|---|---|---|"]
    for _, r in differing.iterrows():
        va, vb = (str(v) if len(str(v)) <= 60 else str(v)[:57] + "..." for v in (r["value_a"], r["value_b"]))
        lines.append(f"| {r['kind']} | {r['what']} | {va} | {vb} |")
    same = differences[~differences["differs"] & differences["kind"].isin(["machine", "provenance"])]
    if not same.empty:
        agree = ", ".join(f"{r['what']} ({str(r['value_a'])[:40]})" for _, r in same.iterrows())
        lines += ["", f"Agree: {agree}."]
    return lines


def comparison_markdown(table: pd.DataFrame, differences: pd.DataFrame) -> str:
    lines = ["# Studies compared", ""]
    for (a, b), rows in table.groupby(["study_a", "study_b"], sort=False):
        diffs = differences[(differences["study_a"] == a) & (differences["study_b"] == b)]
        paired = rows[rows["kind"] == "paired ratio"]
        lines += [f"## {b} against {a}", "", *verdict_lines(rows, diffs), ""]
        lines += [
            "### Paired within-study ratios",
            "",
            "Each study's own paired ratio (candidate vs baseline, > 1 better), and how the two "
            "compare. What each interval covers: " + covers_text(paired) + ".",
            "",
        ]
        lines += figure_table(by_label(paired), a, b) + [""]
        lines += ["### What differs between the two studies", "", *difference_lines(diffs), ""]
        absolute = by_label(rows[rows["kind"] == "absolute"])
        lines += ["### Absolute figures (unpaired between studies)", "", *figure_table(absolute, a, b), ""]
    lines += ["Methods: " + "; ".join(sorted(set(table["method"]))) + "."]
    return "\n".join(lines) + "\n"


def covers_text(paired: pd.DataFrame) -> str:
    if paired.empty:
        return "no paired ratios in common"
    a = ", ".join(sorted(set(paired["covers_a"])))
    b = ", ".join(sorted(set(paired["covers_b"])))
    return f"study A {a}; study B {b}"
