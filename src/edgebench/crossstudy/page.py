"""The comparison page a person reads in a minute: the verdicts first, then what differs."""

from __future__ import annotations

import math

import pandas as pd

from edgebench.formatting import three_digits as num

LABEL_ORDER = ("differs", "unresolved", "too few samples", "same")


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


def verdict_lines(table: pd.DataFrame) -> list[str]:
    counts = table["label"].value_counts()
    summary = ", ".join(f"{counts[k]} {k}" for k in LABEL_ORDER if k in counts)
    differs = table[table["label"] == "differs"]
    lines = [f"**{len(table)} figures compared: {summary}.**", ""]
    if differs.empty:
        lines.append("No figure differs beyond both studies' intervals.")
    else:
        shown = ", ".join(f"{r['arm']} {r['metric']} ({r['kind']})" for _, r in differs.head(12).iterrows())
        more = f" and {len(differs) - 12} more" if len(differs) > 12 else ""
        lines.append(f"Differ: {shown}{more}.")
    return lines


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
    same = differences[~differences["differs"] & (differences["kind"] == "machine")]
    if not same.empty:
        lines += ["", "Fingerprint lines that agree: " + ", ".join(same["what"]) + "."]
    return lines


def comparison_markdown(table: pd.DataFrame, differences: pd.DataFrame) -> str:
    lines = ["# Studies compared", ""]
    for (a, b), rows in table.groupby(["study_a", "study_b"], sort=False):
        diffs = differences[(differences["study_a"] == a) & (differences["study_b"] == b)]
        paired = rows[rows["kind"] == "paired ratio"]
        lines += [f"## {b} against {a}", "", *verdict_lines(rows), ""]
        lines += [
            "### Paired within-study ratios",
            "",
            "Each study's own paired ratio (candidate vs baseline, > 1 better), and how the two "
            "compare. What each interval covers: " + covers_text(paired) + ".",
            "",
        ]
        lines += figure_table(paired.sort_values(["label", "arm"]), a, b) + [""]
        lines += ["### What differs between the two studies", "", *difference_lines(diffs), ""]
        absolute = rows[rows["kind"] == "absolute"].sort_values(["label", "table", "arm"])
        lines += ["### Absolute figures (unpaired between studies)", "", *figure_table(absolute, a, b), ""]
    lines += ["Methods: " + "; ".join(sorted(set(table["method"]))) + "."]
    return "\n".join(lines) + "\n"


def covers_text(paired: pd.DataFrame) -> str:
    if paired.empty:
        return "no paired ratios in common"
    a = ", ".join(sorted(set(paired["covers_a"])))
    b = ", ".join(sorted(set(paired["covers_b"])))
    return f"study A {a}; study B {b}"
