"""Paired comparisons and gates, on warm samples or cold reps alike.

Ratios are oriented with the metric registry so that > 1 always means "candidate better". A pair is
the two arms' clean values in the same round, so drift of the machine cancels; the statistics
(t-intervals, group-sequential looks, TOST, minimum detectable effect) live in `edgebench.stats`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from edgebench.metrics import metric
from edgebench.stats import gate_outcome, minimum_detectable_effect, paired_estimate, sequential_paired

CLEAN = "ok"


def clean_values(frame: pd.DataFrame, arm: str, name: str) -> pd.Series:
    """One metric's clean values of an arm, indexed by round (the last attempt of a round)."""
    rows = frame[(frame["arm"] == arm) & (frame["status"] == CLEAN) & frame[name].notna()]
    if "attempt" in rows:
        rows = rows.sort_values("attempt")
    rows = rows.drop_duplicates("round", keep="last")
    return rows.set_index("round")[name].astype(float).sort_index()


def is_duet(frame: pd.DataFrame) -> bool:
    """Paired samples (a duet, or an interleaved pair): each row names its partner."""
    return "partner" in frame.columns and bool(frame["partner"].notna().any())


def swapped(frame: pd.DataFrame) -> bool:
    """Whether a paired value takes a swap: cross-core duets do (each arm on each core once);
    interleaved pairs share one core, so every pair is a value of its own."""
    interleaved = "design" in frame.columns and bool((frame["design"] == "interleaved").any())
    return is_duet(frame) and not interleaved


def duet_table(frame: pd.DataFrame, name: str, baseline: str, candidate: str) -> pd.DataFrame:
    """Clean duets of two arms, one row per duet: `{name}_b`, `{name}_c` and `round`, in order."""
    clean = frame[(frame["status"] == CLEAN) & frame[name].notna()]
    base = clean[(clean["arm"] == baseline) & (clean["partner"] == candidate)]
    cand = clean[(clean["arm"] == candidate) & (clean["partner"] == baseline)]
    return base.merge(cand, on=["round", "slot"], suffixes=("_b", "_c")).sort_values(["round", "slot"])


def aligned_pairs(
    frame: pd.DataFrame, name: str, baseline: str, candidate: str
) -> tuple[np.ndarray, np.ndarray]:
    """Clean (baseline, candidate) values of one column, paired: by duet (same round and slot, each
    the other's partner) when the rows come from duets, else by round. In round order."""
    if is_duet(frame):
        both = duet_table(frame, name, baseline, candidate)
        return both[f"{name}_b"].to_numpy(float), both[f"{name}_c"].to_numpy(float)
    base, cand = clean_values(frame, baseline, name), clean_values(frame, candidate, name)
    rounds = sorted(set(base.index) & set(cand.index))
    return base[rounds].to_numpy(float), cand[rounds].to_numpy(float)


def paired_log_ratios(frame: pd.DataFrame, name: str, baseline: str, candidate: str) -> np.ndarray:
    """Oriented log(candidate/baseline) of every clean pair, in round order. Cross-core duets are
    paired once more: the two rounds of a swap (rounds 2j and 2j+1, the arms on opposite cores) are averaged,
    so a difference between the cores cancels; one value per complete swap."""
    sign = 1.0 if metric(name).direction == "higher" else -1.0
    if not swapped(frame):
        base, cand = aligned_pairs(frame, name, baseline, candidate)
        return sign * np.log(cand / base)
    both = duet_table(frame, name, baseline, candidate)
    by_round = dict(
        zip(both["round"].astype(int), sign * np.log(both[f"{name}_c"] / both[f"{name}_b"]), strict=True)
    )
    return swap_means(by_round)


def swap_means(by_round: dict[int, float]) -> np.ndarray:
    """One value per complete swap: the mean of rounds 2j and 2j+1 (the arms on opposite cores),
    so a difference between the cores cancels. A swap with a round missing gives none."""
    swaps = sorted({r // 2 for r in by_round if 2 * (r // 2) in by_round and 2 * (r // 2) + 1 in by_round})
    return np.array([(by_round[2 * j] + by_round[2 * j + 1]) / 2 for j in swaps])


def core_offset(frame: pd.DataFrame, name: str, baseline: str, candidate: str) -> float:
    """How much faster the higher-numbered core ran than the other in this pair's duets (0.1 = 10%
    faster; negative: slower), from the swap: the pair's log ratio with the candidate on each core.
    The paired value averages it away; this says how large it was. NaN without a whole swap."""
    if not is_duet(frame) or "core" not in frame:
        return math.nan
    both = duet_table(frame, name, baseline, candidate)
    if both.empty:
        return math.nan
    logs = np.log(both[f"{name}_c"].to_numpy(float) / both[f"{name}_b"].to_numpy(float))
    cand_high = both["core_c"].to_numpy() > both["core_b"].to_numpy()
    if not cand_high.any() or cand_high.all():
        return math.nan
    return float(math.exp((logs[cand_high].mean() - logs[~cand_high].mean()) / 2) - 1)


def planned_pairs(frame: pd.DataFrame) -> int:
    """Paired values the study was planned to give: one per round, or one per swap of duets."""
    rounds = int(frame["round"].max()) + 1 if len(frame) else 0
    return rounds // 2 if swapped(frame) else rounds


def candidates(frame: pd.DataFrame, baseline: str) -> list[str]:
    """Arms compared with the baseline: all others, or in duets only those that ran beside it."""
    if "partner" in frame.columns and frame["partner"].notna().any():
        return sorted(set(frame.loc[frame["arm"] == baseline, "partner"].dropna()))
    return sorted(set(frame["arm"]) - {baseline})


def compare_rows(frame: pd.DataFrame, baseline: str, metrics: list[str]) -> list[dict]:
    """One row per (candidate arm, metric): geometric-mean paired ratio with its 95% t-interval."""
    rows = []
    for candidate in candidates(frame, baseline):
        for name in metrics:
            logs = paired_log_ratios(frame, name, baseline, candidate)
            est = paired_estimate(logs)
            if est.n < 2:
                verdict = "too few pairs" if est.n else "no clean pairs"
            else:
                verdict = "better" if est.ci_low > 1 else "worse" if est.ci_high < 1 else "not significant"
            rows.append(
                {
                    "baseline": baseline,
                    "arm": candidate,
                    "metric": name,
                    "direction": metric(name).direction,
                    "measured": metric(name).measured,
                    "rounds": est.n,
                    "ratio": est.ratio,
                    "ci_low": est.ci_low,
                    "ci_high": est.ci_high,
                    "sd_log": est.sd_log,
                    "mde": minimum_detectable_effect(est.sd_log, est.n),
                    "core_offset": core_offset(frame, name, baseline, candidate),
                    "verdict": verdict,
                    "method": "geometric mean of within-round oriented ratios, Student-t 95% interval",
                    **session_spread(frame, name, baseline, candidate),
                }
            )
    return rows


def sessions_of(frame: pd.DataFrame) -> list:
    """The independent warm sessions in a table (cold reps and one-session tables have one)."""
    if "session" not in frame.columns or frame["session"].isna().all():
        return [0]
    return sorted(frame["session"].dropna().unique())


def session_spread(frame: pd.DataFrame, name: str, baseline: str, candidate: str) -> dict:
    """What the ratio's interval covers. One session: that session's engines ("within one
    session"). k sessions: each session's paired ratio, their between-session SD (log), and a
    Student-t interval over the k session means ("across k sessions"), beside the pooled one."""
    sessions = sessions_of(frame)
    if len(sessions) < 2:
        return {
            "sessions": 1,
            "interval_covers": "within one session",
            "between_session_sd_log": math.nan,
            "across_ratio": math.nan,
            "across_ci_low": math.nan,
            "across_ci_high": math.nan,
        }
    means = []
    for session in sessions:
        logs = paired_log_ratios(frame[frame["session"] == session], name, baseline, candidate)
        if len(logs):
            means.append(float(np.mean(logs)))
    across = paired_estimate(np.array(means))
    return {
        "sessions": len(means),
        "interval_covers": f"across {len(means)} sessions",
        "between_session_sd_log": across.sd_log,
        "across_ratio": across.ratio,
        "across_ci_low": across.ci_low,
        "across_ci_high": across.ci_high,
    }


def gate_row(frame: pd.DataFrame, baseline: str, candidate: str, name: str, gates: dict) -> dict:
    """Sequential gate of one candidate on one metric: pass | fail | inconclusive | ungateable."""
    logs = paired_log_ratios(frame, name, baseline, candidate)
    tolerance = float(gates["tolerance"])
    result = sequential_paired(
        logs, tolerance, int(gates["look_every"]), max(planned_pairs(frame), 2), equivalence_first=True
    )
    return {
        "baseline": baseline,
        "arm": candidate,
        "metric": name,
        "measured": metric(name).measured,
        "pairs": len(logs),
        "rounds_used": result.rounds_used,
        "looks": result.looks_taken,
        "looks_planned": result.looks_planned,
        "ratio": result.ratio,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "sd_log": result.sd_log,
        "mde": result.mde,
        "tolerance": tolerance,
        "decision": result.decision,
        "status": gate_outcome(result, tolerance),
        **lost_samples(frame, [baseline, candidate]),
    }


def lost_samples(frame: pd.DataFrame, arms: list[str]) -> dict:
    """How many of the arms' samples were contended or failed: why a pair count is short."""
    rows = frame[frame["arm"].isin(arms)]
    return {
        "contended_samples": int((rows["status"] == "contended").sum()),
        "failed_samples": int((rows["status"] == "failed").sum()),
    }


def gate_rows(frame: pd.DataFrame, baseline: str, metrics: list[str], gates: dict) -> list[dict]:
    return [
        gate_row(frame, baseline, candidate, name, gates)
        for candidate in candidates(frame, baseline)
        for name in metrics
    ]


def compare_tables(cold: pd.DataFrame, warm: pd.DataFrame, gates: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The compare and gates tables: every gated metric of its own table (cold reps or warm
    samples) against the baseline, each row stamped with the run it came from."""
    tables = {"cold": cold, "warm": warm}
    compare, gate = [], []
    for kind, frame in tables.items():
        names = [name for name in gates["metrics"] if metric(name).measured == kind]
        compare += compare_rows(frame, gates["baseline"], names)
        gate += gate_rows(frame, gates["baseline"], names, gates)
    out = pd.DataFrame(compare), pd.DataFrame(gate)
    for frame in out:
        for column in ("run_id", "git_commit", "machine_digest"):  # the study, its code, its machine
            frame[column] = cold[column].iloc[0] if column in cold else ""
    return out
