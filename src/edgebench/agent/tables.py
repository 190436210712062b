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


def summary_rows(trials: pd.DataFrame, reference_arm: str | None) -> list[dict]:
    """One row per (arm, scope): success with its Wilson 95% interval and, against the reference
    arm on the same seeds (task_id, trial), McNemar's exact test."""
    rows = []
    ok = trials[trials["status"] == "ok"]
    for arm, frame in ok.groupby("arm", sort=True):
        for scope in scopes(ok):
            part = _scope(frame, scope)
            if part.empty:  # a baseline meant for other templates has no trials here: no row
                continue
            n, wins = len(part), int(part["success"].sum())
            low, high = wilson_interval(wins, n)
            row = {
                "arm": arm,
                "policy": "llm" if not arm.startswith("baseline/") else arm.split("/", 1)[1],
                "scope": scope,
                "trials": n,
                "successes": wins,
                "success_rate": wins / n if n else float("nan"),
                "ci_low": low,
                "ci_high": high,
                "reached_rate": float(part["reached"].mean()) if n else float("nan"),
                "invalid_per_step": float(part["invalid_actions"].sum() / max(part["steps"].sum(), 1)),
                "mcnemar_vs": "",
                "only_arm": 0,
                "only_reference": 0,
                "p_value": float("nan"),
            }
            if reference_arm and arm != reference_arm and not arm.startswith("baseline/"):
                ref = _scope(ok[ok["arm"] == reference_arm], scope)
                pairs = paired_outcomes(part, ref, ["task_id", "trial"])
                row.update(
                    mcnemar_vs=reference_arm,
                    only_arm=pairs.only_arm,
                    only_reference=pairs.only_reference,
                    p_value=pairs.p_value,
                )
            rows.append(row)
    return rows
