"""Verification methods: each turns an item's evidence rows into a verdict with its evidence table.

Verdicts: confirmed | refuted | inconclusive | ungateable | too few pairs (samples lost, with
how many were contended or failed) | too few blocks (a calibration with fewer blocks than its
`min_blocks`, 20 by default: the default study's light calibration, not the calibration study).
Retracted rows never reach here.
"""

from __future__ import annotations

import pandas as pd

from edgebench.agent.tables import pair_keys
from edgebench.bench.compare import clean_values, gate_row, lost_samples, paired_log_ratios, planned_pairs
from edgebench.items.checks import CHECKS
from edgebench.items.choices import CHOICES
from edgebench.metrics import lower_is_better
from edgebench.stats import (
    TOO_FEW_PAIRS,
    gate_outcome,
    mcnemar_detectable_difference,
    mde_interval,
    paired_outcomes,
    sequential_paired,
    wilson_interval,
)

DEFAULT_TOLERANCE = 0.025


def _usable(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] != "retracted"] if "status" in frame else frame


def paired_ratio(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """Candidate (second arm) vs baseline (first arm): the same sequential paired analysis as the
    gates. better/worse when a bound excludes 1, same when shown within the tolerance (TOST);
    undecided is `ungateable` when the noise floor (MDE) exceeds the tolerance, else inconclusive."""
    baseline, candidate = item["starts_from"]["arms"][:2]
    name = item["starts_from"]["metric"]
    frame = _usable(frame)
    tolerance = float(item["verify"].get("tolerance", DEFAULT_TOLERANCE))
    look_every = int(item["verify"].get("look_every", 2))
    logs = paired_log_ratios(frame, name, baseline, candidate)
    result = sequential_paired(logs, tolerance, look_every, max(planned_pairs(frame), 2))
    evidence = pd.DataFrame(
        [
            {
                "baseline": baseline,
                "candidate": candidate,
                "metric": name,
                "pairs": len(logs),
                "rounds_used": result.rounds_used,
                "looks": result.looks_taken,
                "ratio": result.ratio,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "mde": result.mde,
                "tolerance": tolerance,
                "decision": result.decision,
                **lost_samples(frame, [baseline, candidate]),
            }
        ]
    )
    if result.decision == "undecided":
        outcome = gate_outcome(result, tolerance)
        return (outcome if outcome in ("ungateable", TOO_FEW_PAIRS) else "inconclusive"), evidence
    return ("confirmed" if result.decision == item["expect"]["direction"] else "refuted"), evidence


def gateable(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """Is the metric gateable on these arms: is the minimum detectable effect of each arm paired with
    the first one, at the study's rounds, within the tolerance? Judged on the MDE's interval (from
    the chi-square interval of the spread it was read from), so a spread read from a few pairs
    decides nothing: it fits when every interval lies within the tolerance, fails when one lies
    wholly beyond it, and is inconclusive otherwise."""
    name = item["starts_from"]["metric"]
    baseline, *others = item["starts_from"]["arms"]
    settings = {"tolerance": item["verify"].get("tolerance", DEFAULT_TOLERANCE), "look_every": 2}
    frame = _usable(frame)
    rows = [gate_row(frame, baseline, other, name, settings) for other in others]
    evidence = pd.DataFrame(rows)
    if (evidence["pairs"] < 2).any():
        return TOO_FEW_PAIRS, evidence
    if evidence["mde"].isna().any():
        return "inconclusive", evidence
    bounds = [mde_interval(mde, pairs) for mde, pairs in zip(evidence["mde"], evidence["pairs"], strict=True)]
    evidence["mde_low"], evidence["mde_high"] = [low for low, _ in bounds], [high for _, high in bounds]
    if (evidence["mde_high"] <= evidence["tolerance"]).all():
        fits = True
    elif (evidence["mde_low"] > evidence["tolerance"]).any():
        fits = False
    else:
        return "inconclusive", evidence
    return ("confirmed" if fits == (item["expect"]["direction"] == "gateable") else "refuted"), evidence


def fidelity_threshold(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """Each arm's top1 or KL against a threshold; within 2 standard errors of it is inconclusive."""
    name = item["starts_from"]["metric"]
    threshold = item["expect"]["threshold"]
    rows = _usable(frame)
    rows = rows[rows["arm"].isin(item["starts_from"]["arms"])]
    evidence = rows[
        ["arm", "status", "positions", "top1", "top1_se", "kl_mean", "kl_mean_se", "kl_p99", "kl_method"]
    ].copy()
    if (rows["status"] != "ok").any() or rows.empty:
        return "inconclusive", evidence
    verdicts = []
    for _, row in rows.iterrows():
        value, se = row[name], row.get(f"{name}_se", 0.0) or 0.0
        if abs(value - threshold) <= 2 * se:
            verdicts.append("inconclusive")
        else:
            holds = value > threshold if item["expect"]["direction"] == "above" else value < threshold
            verdicts.append("confirmed" if holds else "refuted")
    evidence["verdict"] = verdicts
    return _combine(verdicts), evidence


def metric_threshold(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """Clean reps of each arm against a threshold: all reps on one side decide, a straddle is inconclusive."""
    name = item["starts_from"]["metric"]
    threshold = item["expect"]["threshold"]
    below = item["expect"]["direction"] == "below"
    rows, verdicts = [], []
    for arm in item["starts_from"]["arms"]:
        values = clean_values(_usable(frame), arm, name)
        if values.empty:
            verdicts.append("inconclusive")
        elif (values < threshold).all() or (values > threshold).all():
            verdicts.append("confirmed" if (values.iloc[0] < threshold) == below else "refuted")
        else:
            verdicts.append("inconclusive")
        rows.append(
            {
                "arm": arm,
                "metric": name,
                "reps": len(values),
                "median": values.median(),
                "min": values.min(),
                "max": values.max(),
                "threshold": threshold,
                "verdict": verdicts[-1],
            }
        )
    return _combine(verdicts), pd.DataFrame(rows)


def mcnemar(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """Paired agent trials (same task and seed): does the candidate differ from the reference arm?
    The outcome is completion (`success`, the default) or navigation (`reached`)."""
    reference, candidate = item["starts_from"]["arms"][:2]
    alpha = item["verify"].get("alpha", 0.05)
    outcome = item["verify"].get("outcome", "success")
    ok = _usable(frame)
    ok = ok[ok["status"] == "ok"]
    arm, ref = ok[ok["arm"] == candidate], ok[ok["arm"] == reference]
    pairs = paired_outcomes(arm, ref, pair_keys(arm, ref), outcome)
    only_cand, only_ref, p = pairs.only_arm, pairs.only_reference, pairs.p_value
    discordant = (only_cand + only_ref) / pairs.pairs if pairs.pairs else 0.0
    detectable = mcnemar_detectable_difference(pairs.pairs, discordant, alpha)
    evidence = pd.DataFrame(
        [
            {
                "reference": reference,
                "candidate": candidate,
                "outcome": outcome,
                "pairs": pairs.pairs,
                "reference_rate": pairs.reference_rate,
                "candidate_rate": pairs.rate,
                "only_candidate": only_cand,
                "only_reference": only_ref,
                "p_value": p,
                "detectable_difference": detectable,
            }
        ]
    )
    verdict, why = mcnemar_verdict(pairs, p < alpha, detectable, item)
    return verdict, evidence.assign(why=why)


def mcnemar_verdict(pairs, differs: bool, detectable: float, item: dict) -> tuple[str, str]:
    """The verdict on paired outcomes and, when it is inconclusive, why. No difference refutes a
    claimed direction (and confirms "same") only when these pairs could have seen one of
    `detectable_max` and the reference had that much to lose (or, for "better", to gain)."""
    expected = item["expect"]["direction"]
    if not pairs.pairs:
        return "inconclusive", "no paired episodes"
    if differs:
        observed = "better" if pairs.only_arm > pairs.only_reference else "worse"
        return ("confirmed" if observed == expected else "refuted"), ""
    size = item["verify"].get("detectable_max")
    if size is None and expected != "same":
        return "inconclusive", "no difference seen, and the item sets no detectable_max to refute it"
    if size is not None and detectable > size:  # no difference seen, but one this size could hide
        return "inconclusive", f"no difference seen; these pairs detect {detectable:.2f}, not {size:.2f}"
    room = 1 - pairs.reference_rate if expected == "better" else pairs.reference_rate
    change = "gain" if expected == "better" else "lose"
    if room == 0.0:  # a floor (or ceiling): the reference had nothing to lose (or gain)
        rate = pairs.reference_rate
        return "inconclusive", f"the reference's rate is {rate:.2f}: it had nothing to {change}"
    if size is not None and room < size:
        return "inconclusive", (
            f"the reference's rate is {pairs.reference_rate:.2f}, so it cannot {change} "
            f"{size:.2f}: no difference of that size could be tested"
        )
    return ("confirmed" if expected == "same" else "refuted"), ""


MIN_BLOCKS = 20  # the calibration study's floor: fewer blocks leave a rate's interval too wide
TOO_FEW_BLOCKS = "too few blocks"


def calibration(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """The gate's measured false-alarm rate (A/A) and power (each injected loss) against the
    verify thresholds, each rate with its Wilson interval in the evidence."""
    fa_max, power_min = item["verify"].get("false_alarm_max", 0.05), item["verify"].get("power_min", 0.9)
    evidence = frame[
        [
            "check",
            "arm",
            "metric",
            "effect",
            "blocks",
            "block_rounds",
            "fails",
            "rate",
            "rate_low",
            "rate_high",
            "measured_effect",
            "cpu_s_ratio",
            "whole_session_ratio",
        ]
    ].copy()
    if (frame["blocks"] == 0).any():
        return "inconclusive", evidence
    if (frame["blocks"] < item["verify"].get("min_blocks", MIN_BLOCKS)).any():
        return TOO_FEW_BLOCKS, evidence  # a rate from a handful of blocks decides nothing
    false_alarms = frame.loc[frame["check"] == "false_alarm", "rate"]
    power = frame.loc[frame["check"] == "power", "rate"]
    holds = bool((false_alarms <= fa_max).all() and (power >= power_min).all())
    return ("confirmed" if holds else "refuted"), evidence


def ci_width(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """Wilson interval width of each arm's success rate at its trial count, and at a single run per task."""
    threshold = item["expect"]["threshold"]
    ok = _usable(frame)
    ok = ok[ok["status"] == "ok"]
    rows = []
    for arm in item["starts_from"]["arms"]:
        part = ok[ok["arm"] == arm]
        single = part[part["trial"] == 0]
        low, high = wilson_interval(int(part["success"].sum()), len(part))
        s_low, s_high = wilson_interval(int(single["success"].sum()), len(single))
        rows.append(
            {
                "arm": arm,
                "trials": len(part),
                "width": high - low,
                "single_run_trials": len(single),
                "single_run_width": s_high - s_low,
                "threshold": threshold,
            }
        )
    evidence = pd.DataFrame(rows)
    if evidence["single_run_width"].isna().any():
        return "inconclusive", evidence
    wide = bool((evidence["single_run_width"] > threshold).all())
    return ("confirmed" if wide == (item["expect"]["direction"] == "above") else "refuted"), evidence


def fidelity_compare(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """The candidate's (second arm's) metric against the first arm's on the same scored positions:
    better/worse when the difference is beyond 2 combined standard errors; `same` holds when the
    candidate is no worse than that."""
    name = item["starts_from"]["metric"]
    baseline, candidate = item["starts_from"]["arms"][:2]
    rows = _usable(frame).set_index("arm")
    if (
        not {baseline, candidate} <= set(rows.index)
        or (rows.loc[[baseline, candidate], "status"] != "ok").any()
    ):
        return "inconclusive", rows.reset_index()
    diff = float(rows.loc[candidate, name] - rows.loc[baseline, name])
    se = float((rows.loc[candidate, f"{name}_se"] ** 2 + rows.loc[baseline, f"{name}_se"] ** 2) ** 0.5)
    lower = lower_is_better(name)  # the metric registry's direction, never guessed from the name
    worse = diff > 2 * se if lower else diff < -2 * se
    better = diff < -2 * se if lower else diff > 2 * se
    observed = "better" if better else "worse" if worse else "same"
    evidence = pd.DataFrame(
        [
            {
                "baseline": baseline,
                "candidate": candidate,
                "metric": name,
                "baseline_value": rows.loc[baseline, name],
                "candidate_value": rows.loc[candidate, name],
                "difference": diff,
                "se": se,
                "positions": rows.loc[candidate, "positions"],
                "observed": observed,
            }
        ]
    )
    expected = item["expect"]["direction"]
    if expected == "same":
        return ("refuted" if worse else "confirmed"), evidence
    if observed == "same":
        return "inconclusive", evidence
    return ("confirmed" if observed == expected else "refuted"), evidence


def break_even(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """Compiling pays for itself (expect below) when even the slowest compiled request time the
    interval allows recovers the compile time within the study's requests; it does not when even
    the fastest cannot. A missing figure or an interval across the count is inconclusive."""
    eager, compiled = item["starts_from"]["arms"][:2]
    rows = frame[(frame["eager_arm"] == eager) & (frame["compiled_arm"] == compiled)]
    if rows.empty or pd.isna(rows["compile_s"].iloc[0]) or pd.isna(rows["ci_low"].iloc[0]):
        return "inconclusive", rows
    row = rows.iloc[0]
    pays = row["break_even_high"] <= row["study_requests"]
    never = row["break_even_low"] > row["study_requests"]
    if not (pays or never):
        return "inconclusive", rows
    return ("confirmed" if pays == (item["expect"]["direction"] == "below") else "refuted"), rows


def no_retracted_figures(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """H8: the retraction check (a rule every study runs, failing on any retracted figure still
    written in the repository's text) passed."""
    return ("confirmed" if frame["check"].str.startswith("checked").all() else "refuted"), frame


def _combine(verdicts: list[str]) -> str:
    if "refuted" in verdicts:
        return "refuted"
    if "inconclusive" in verdicts or not verdicts:
        return "inconclusive"
    return "confirmed"


METHODS = {
    "paired_ratio": paired_ratio,
    "gateable": gateable,
    "fidelity_threshold": fidelity_threshold,
    "metric_threshold": metric_threshold,
    "mcnemar": mcnemar,
    "calibration": calibration,
    "ci_width": ci_width,
    "fidelity_compare": fidelity_compare,
    "no_retracted_figures": no_retracted_figures,
    "break_even": break_even,
    **CHECKS,
    **CHOICES,
}
