"""Verification methods for items that check the harness itself or read a diagnosis off a
diagnostics table (the statistical comparisons are in verify.py). Each returns (verdict, evidence).

A diagnosis item's verdict is `measured` when its table holds the figures it names and they add up
(the parts of an attribution sum to the whole, within the remainder it reports), else
`inconclusive`; a diagnosis has no direction to confirm.
"""

from __future__ import annotations

import math

import pandas as pd

from edgebench.bench.compare import clean_values


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] == "ok"] if "status" in frame else frame


def order_rotates(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """H2: across the cold rounds every arm runs at more than one position in the order, and an
    arm that failed left rows with its error instead of vanishing."""
    rows = []
    for arm in item["starts_from"]["arms"]:
        part = frame[frame["arm"] == arm]
        failed = part[part["status"] == "failed"]
        rows.append(
            {
                "arm": arm,
                "rounds": int(part["round"].nunique()),
                "positions": int(part["order_position"].nunique()),
                "failed_rows": len(failed),
                "failed_rows_with_error": int((failed["error"].astype(str) != "").sum()),
            }
        )
    evidence = pd.DataFrame(rows)
    rotates = bool(((evidence["positions"] > 1) | (evidence["rounds"] < 2)).all())
    recorded = bool((evidence["failed_rows"] == evidence["failed_rows_with_error"]).all())
    return ("confirmed" if rotates and recorded else "refuted"), evidence


def measured(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """H3: every clean rep of each arm carries a finite, positive value of each named metric."""
    rows = []
    for arm in item["starts_from"]["arms"]:
        part = _ok(frame[frame["arm"] == arm])
        for name in item["verify"]["metrics"]:
            values = pd.to_numeric(part[name], errors="coerce") if name in part else pd.Series(dtype=float)
            rows.append(
                {
                    "arm": arm,
                    "metric": name,
                    "reps": len(part),
                    "measured": int((values > 0).sum()),
                    "median": float(values.median()) if len(values) else math.nan,
                }
            )
    evidence = pd.DataFrame(rows)
    complete = bool(((evidence["reps"] > 0) & (evidence["measured"] == evidence["reps"])).all())
    return ("confirmed" if complete else "refuted"), evidence


def strict_oracle(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """H1: the checker baselines land where a strict, state-based oracle puts them: the scripted
    policy passes everything, doing nothing passes exactly the already-satisfied variants, a round
    trip fails every already-satisfied toggle, typing without saving fails every add-alarm task."""
    ok = _ok(frame)
    toggles = ok["template"].str.endswith(("_on", "_off")) & (ok["template"] != "alarm_off")
    checks = [
        ("scripted", "every variant", ok["arm"] == "baseline/scripted", 1.0),
        (
            "do_nothing",
            "already satisfied",
            (ok["arm"] == "baseline/do_nothing") & ok["already_satisfied"],
            1.0,
        ),
        ("do_nothing", "needs change", (ok["arm"] == "baseline/do_nothing") & ~ok["already_satisfied"], 0.0),
        (
            "round_trip",
            "already-satisfied toggles",
            (ok["arm"] == "baseline/round_trip") & ok["already_satisfied"] & toggles,
            0.0,
        ),
        (
            "type_never_save",
            "add_alarm needing a change",
            (ok["arm"] == "baseline/type_never_save")
            & (ok["template"] == "add_alarm")
            & ~ok["already_satisfied"].astype(bool),
            0.0,
        ),
    ]
    rows = []
    for policy, scope, mask, expected in checks:
        part = ok[mask]
        rate = float(part["success"].mean()) if len(part) else math.nan
        rows.append(
            {"policy": policy, "scope": scope, "episodes": len(part), "rate": rate, "expected": expected}
        )
    evidence = pd.DataFrame(rows)
    holds = bool(((evidence["episodes"] > 0) & (evidence["rate"] == evidence["expected"])).all())
    return ("confirmed" if holds else "refuted"), evidence


def load_excess(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """I0: per arm, the peak RssAnon over a cold rep (loading and repacking included) against the
    RssAnon after a prompt filled the context (steady state); the excess is what a blocked repack
    could remove at load time."""
    rows = []
    for arm in item["starts_from"]["arms"]:
        peak = clean_values(frame, arm, "peak_rss_anon_mb")
        steady = clean_values(frame, arm, "rss_anon_filled_ctx_mb")
        rows.append(
            {
                "arm": arm,
                "reps": len(peak),
                "peak_mb": peak.median(),
                "steady_mb": steady.median(),
                "load_excess_mb": (peak - steady).median(),
            }
        )
    evidence = pd.DataFrame(rows)
    return ("measured" if evidence["load_excess_mb"].notna().all() else "inconclusive"), evidence


def kernel_ratio(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """I2: one decode step's GEMM time at batch 1 (every per-layer GEMM of the kernel study times
    the layers, plus the LM head) of the first kernel against the second, per thread count."""
    first, second = item["verify"]["kernels"]
    ok = _ok(frame)
    ok = ok[ok["m"] == 1]
    rows = []
    for threads, part in ok.groupby("threads"):
        totals = part.groupby("kernel")["us"].sum()
        if first in totals and second in totals:
            rows.append(
                {
                    "threads": int(threads),
                    f"{first}_us": totals[first],
                    f"{second}_us": totals[second],
                    "ratio": totals[first] / totals[second],
                }
            )
    evidence = pd.DataFrame(rows)
    if evidence.empty:
        return "inconclusive", pd.DataFrame([{"kernels": f"{first}, {second}", "rows": 0}])
    slower = bool((evidence["ratio"] > 1).all())
    faster = bool((evidence["ratio"] < 1).all())
    if not (slower or faster):
        return "inconclusive", evidence
    return ("confirmed" if slower == (item["expect"]["direction"] == "worse") else "refuted"), evidence


def ledger_explains(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """I7: each process's ledger leaves at most `max_unexplained` of its measured RssAnon
    unexplained."""
    limit = float(item["verify"].get("max_unexplained", 0.1))
    rows = []
    for (arm, process), part in frame.groupby(["arm", "process"]):
        if arm not in item["starts_from"]["arms"]:
            continue
        total = part.loc[part["kind"] == "measured", "mb"].sum()
        unexplained = part.loc[part["kind"] == "unexplained", "mb"].sum()
        rows.append(
            {
                "arm": arm,
                "process": process,
                "measured_mb": total,
                "unexplained_mb": unexplained,
                "unexplained_share": unexplained / total if total else math.nan,
            }
        )
    evidence = pd.DataFrame(rows)
    if evidence.empty:
        return "inconclusive", pd.DataFrame([{"arms": ", ".join(item["starts_from"]["arms"]), "rows": 0}])
    holds = bool((evidence["unexplained_share"].abs() <= limit).all())
    return ("confirmed" if holds else "refuted"), evidence


def parts_add_up(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """I5, I10: an attribution table's parts, per arm, against the whole they attribute; the
    remainder is reported as a part of its own, so the parts always sum to the measured whole, and
    the verdict asks that the remainder stays within `max_remainder` of it."""
    limit = float(item["verify"].get("max_remainder", 0.25))
    ok = _ok(frame)
    ok = ok[ok["arm"].isin(item["starts_from"]["arms"])]
    rows = []
    for arm, part in ok.groupby("arm"):
        whole = float(part["whole_us"].iloc[0])
        rows.append(
            {
                "arm": arm,
                "whole_us": whole,
                "parts_us": float(part["us"].sum()),
                "remainder_us": float(part.loc[part["part"] == "remainder", "us"].sum()),
                **{f"{row.part}_us": row.us for row in part.itertuples() if row.part != "remainder"},
            }
        )
    evidence = pd.DataFrame(rows)
    if evidence.empty:
        return "inconclusive", pd.DataFrame([{"arms": ", ".join(item["starts_from"]["arms"]), "rows": 0}])
    evidence["remainder_share"] = evidence["remainder_us"] / evidence["whole_us"]
    sums = (evidence["parts_us"] - evidence["whole_us"]).abs() <= 1e-6 * evidence["whole_us"]
    small = evidence["remainder_share"].abs() <= limit
    return ("measured" if bool((sums & small).all()) else "inconclusive"), evidence


def per_step_cost(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    """rejected-megakernel: the cost of one OpenMP parallel region, per thread count and wait
    policy, times the regions of a decode step, as a share of that step; the item holds when that
    share stays under `threshold` (the seed's 2-3%: not worth replacing the execution model)."""
    ok = _ok(frame)
    evidence = ok[["threads", "wait_policy", "region_us", "regions_per_step", "step_us", "share"]].copy()
    if evidence.empty:
        return "inconclusive", evidence
    below = bool((evidence["share"] < item["expect"]["threshold"]).all())
    return ("confirmed" if below == (item["expect"]["direction"] == "below") else "refuted"), evidence


# Methods whose claim is about what an arm that cannot run leaves behind: its failure rows are
# their evidence, so such an arm does not make the item `unmeasurable`.
JUDGES_FAILED_ARMS = frozenset({"order_rotates"})

CHECKS = {
    "order_rotates": order_rotates,
    "measured": measured,
    "strict_oracle": strict_oracle,
    "load_excess": load_excess,
    "kernel_ratio": kernel_ratio,
    "ledger_explains": ledger_explains,
    "parts_add_up": parts_add_up,
    "per_step_cost": per_step_cost,
}
