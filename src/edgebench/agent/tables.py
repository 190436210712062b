"""Agent trial rows with provenance, and the per-arm, per-strategy summary with Wilson intervals and
McNemar."""

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


def pair_keys(*frames: pd.DataFrame) -> list[str]:
    """Trials pair on task and trial (hence seed) and, where rows say how they were decoded, on the
    strategy: an arm's episodes meet the reference's under the same strategy only."""
    keys = ["task_id", "trial"]
    return [*keys, "strategy"] if all("strategy" in f for f in frames) else keys


def with_strategy(trials: pd.DataFrame) -> pd.DataFrame:
    """Every row names its strategy; the scripted baselines have none ("")."""
    trials = trials.copy()
    trials["strategy"] = trials["strategy"].fillna("") if "strategy" in trials else ""
    return trials


def study_rows(trials: pd.DataFrame) -> pd.DataFrame:
    """The episodes a budget is judged on: every arm's under the study's strategy (`agent.strategy`),
    not the reference arm's runs under the other strategies it is compared with."""
    if "study_strategy" not in trials:
        return trials
    return trials[trials["study_strategy"].fillna(True).astype(bool)]


def summary_rows(trials: pd.DataFrame, reference_arm: str | None) -> list[dict]:
    """One row per (arm, strategy, scope): completion (success) and navigation (reached) rates with
    Wilson 95% intervals, invalid actions and machine seconds per step, and, against the reference
    arm under the same strategy on the same seeds (task_id, trial), McNemar's exact test on each."""
    rows = []
    ok = with_strategy(trials[trials["status"] == "ok"])
    for (arm, strategy), frame in ok.groupby(["arm", "strategy"], sort=True):
        reference = ok[(ok["arm"] == reference_arm) & (ok["strategy"] == strategy)]
        for scope in scopes(ok):
            part = _scope(frame, scope)
            if part.empty:  # a baseline meant for other templates has no trials here: no row
                continue
            row = {
                "arm": arm,
                "strategy": strategy,
                "policy": "llm" if not arm.startswith("baseline/") else arm.split("/", 1)[1],
                "scope": scope,
                "trials": len(part),
                **_rate_columns(part, "success"),
                **_rate_columns(part, "reached"),
                "invalid_per_step": float(part["invalid_actions"].sum() / max(part["steps"].sum(), 1)),
                "s_per_step": _seconds_per_step(frame),
                **_calibration_columns(frame),
                **_mcnemar_columns(part, _scope(reference, scope), arm, reference_arm),
            }
            rows.append(row)
    return rows


def _calibration_columns(frame: pd.DataFrame) -> dict:
    """The verify strategy's calibration on its arm (threshold, hit and false-yes rates with their
    intervals): one set per arm and strategy, the same on every row of it."""
    columns = [c for c in frame.columns if c.startswith("verify_")]
    return {c: frame[c].iloc[0] for c in columns if frame[c].notna().any()}


def _seconds_per_step(frame: pd.DataFrame) -> float:
    """Machine seconds per step of a strategy's whole lockstep batch (every scope shares it)."""
    if "strategy_wall_s" not in frame or frame["strategy_wall_s"].isna().all():
        return float("nan")
    return float(frame["strategy_wall_s"].iloc[0] / max(frame["steps"].sum(), 1))


def _mcnemar_columns(
    part: pd.DataFrame, reference: pd.DataFrame, arm: str, reference_arm: str | None
) -> dict:
    columns: dict = {"mcnemar_vs": ""}
    for outcome in OUTCOMES:
        columns.update({f"{outcome}_only_arm": 0, f"{outcome}_only_reference": 0})
        columns[f"{outcome}_p_value"] = float("nan")
    if not reference_arm or arm == reference_arm or arm.startswith("baseline/"):
        return columns
    columns["mcnemar_vs"] = reference_arm
    for outcome in OUTCOMES:
        pairs = paired_outcomes(part, reference, pair_keys(part, reference), outcome)
        columns.update(
            {
                f"{outcome}_only_arm": pairs.only_arm,
                f"{outcome}_only_reference": pairs.only_reference,
                f"{outcome}_p_value": pairs.p_value,
            }
        )
    return columns


def throughput_rows(trials: pd.DataFrame) -> list[dict]:
    """Per LLM arm: the whole lockstep batch against a sample of its episodes run one at a time.
    An arm without the measurement (W4A8 emulated in torch: its timings are not the kernel's) has
    no row."""
    rows = []
    columns = [c for c in trials.columns if c.startswith("throughput_")]
    llm = trials[(trials["status"] == "ok") & ~trials["arm"].str.startswith("baseline/")]
    for arm, frame in llm.groupby("arm", sort=True):
        if "throughput_speedup" not in frame or frame["throughput_speedup"].isna().all():
            continue
        first = frame[frame["throughput_speedup"].notna()].iloc[0]  # the study strategy's rows
        rows.append(
            {
                "arm": arm,
                "model": first["model"],
                **{c.removeprefix("throughput_"): first[c] for c in columns},
            }
        )
    return rows
