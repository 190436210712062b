"""Agent trial rows with provenance, and the per-arm summary with Wilson intervals and McNemar."""

from __future__ import annotations

import pandas as pd

from edgebench.stats import paired_outcomes, wilson_interval

KINDS = ("all", "needs_change", "already_satisfied")


def scopes(frame: pd.DataFrame) -> list[str]:
    """Overall, per variant kind, and per task family (template)."""
    return [*KINDS, *(f"template:{t}" for t in sorted(frame["template"].unique()))]


def _scope(frame: pd.DataFrame, scope: str) -> pd.DataFrame:
    if scope == "all":
        return frame
    if scope.startswith("template:"):
        return frame[frame["template"] == scope.split(":", 1)[1]]
    return frame[frame["already_satisfied"] == (scope == "already_satisfied")]


# Completion: the end state is right (`success`); navigation: the agent reached the screen where the
# task is done (`reached`), whether or not it then finished it.
OUTCOMES = ("success", "reached")


def _rate_columns(part: pd.DataFrame, outcome: str) -> dict:
    n, hits = len(part), int(part[outcome].astype(bool).sum())
    low, high = wilson_interval(hits, n)
    return {
        f"{outcome}_count": hits,
        f"{outcome}_rate": hits / n if n else float("nan"),
        f"{outcome}_ci_low": low,
        f"{outcome}_ci_high": high,
    }


def summary_rows(trials: pd.DataFrame, reference_arm: str | None) -> list[dict]:
    """One row per (arm, scope): completion (success) and navigation (reached) rates with Wilson 95%
    intervals and, against the reference arm on the same seeds (task_id, trial), McNemar's exact test
    on each."""
    rows = []
    ok = trials[trials["status"] == "ok"]
    for arm, frame in ok.groupby("arm", sort=True):
        for scope in scopes(ok):
            part = _scope(frame, scope)
            if part.empty:  # a baseline meant for other templates has no trials here: no row
                continue
            row = {
                "arm": arm,
                "policy": "llm" if not arm.startswith("baseline/") else arm.split("/", 1)[1],
                "scope": scope,
                "trials": len(part),
                **_rate_columns(part, "success"),
                **_rate_columns(part, "reached"),
                "invalid_per_step": float(part["invalid_actions"].sum() / max(part["steps"].sum(), 1)),
                "mcnemar_vs": "",
            }
            for outcome in OUTCOMES:
                row.update({f"{outcome}_only_arm": 0, f"{outcome}_only_reference": 0})
                row[f"{outcome}_p_value"] = float("nan")
            if reference_arm and arm != reference_arm and not arm.startswith("baseline/"):
                ref = _scope(ok[ok["arm"] == reference_arm], scope)
                row["mcnemar_vs"] = reference_arm
                for outcome in OUTCOMES:
                    pairs = paired_outcomes(part, ref, ["task_id", "trial"], outcome)
                    row.update(
                        {
                            f"{outcome}_only_arm": pairs.only_arm,
                            f"{outcome}_only_reference": pairs.only_reference,
                            f"{outcome}_p_value": pairs.p_value,
                        }
                    )
            rows.append(row)
    return rows


def throughput_rows(trials: pd.DataFrame) -> list[dict]:
    """Per LLM arm: the whole lockstep batch against a sample of its episodes run one at a time.
    An arm without the measurement (W4A8 emulated in torch: its timings are not the kernel's) has
    no row."""
    rows = []
    columns = [c for c in trials.columns if c.startswith("throughput_")]
    llm = trials[(trials["status"] == "ok") & ~trials["arm"].str.startswith("baseline/")]
    for arm, frame in llm.groupby("arm", sort=True):
        first = frame.iloc[0]
        if "throughput_speedup" not in frame or pd.isna(first["throughput_speedup"]):
            continue
        rows.append(
            {
                "arm": arm,
                "model": first["model"],
                **{c.removeprefix("throughput_"): first[c] for c in columns},
            }
        )
    return rows
