"""Ranking check: KL and top-1 order builds that the legacy greedy check cannot tell apart."""

from __future__ import annotations

import pandas as pd


def ranking_rows(fidelity: pd.DataFrame, builds: pd.DataFrame) -> pd.DataFrame:
    """One row per arm with its rank by KL, by top-1 and by greedy match, and whether its KL is
    separated (beyond 2 standard errors) from the next arm's while greedy_match ties with it."""
    ok = fidelity[fidelity["status"] == "ok"].merge(
        builds[["build", "bits_per_weight"]], on="build", how="left"
    )
    ok = ok.sort_values("kl_mean").reset_index(drop=True)
    ok["rank_kl"] = ok["kl_mean"].rank(method="min").astype(int)
    ok["rank_top1"] = ok["top1"].rank(ascending=False, method="min").astype(int)
    ok["rank_greedy"] = ok["greedy_match"].rank(ascending=False, method="min").astype(int)
    separated, greedy_tie = [], []
    for i in range(len(ok)):
        if i + 1 == len(ok):
            separated.append(False)
            greedy_tie.append(False)
            continue
        a, b = ok.iloc[i], ok.iloc[i + 1]
        gap = b["kl_mean"] - a["kl_mean"]
        separated.append(bool(gap > 2 * (a["kl_mean_se"] ** 2 + b["kl_mean_se"] ** 2) ** 0.5))
        greedy_tie.append(bool(a["greedy_match"] == b["greedy_match"]))
    ok["kl_separated_from_next"] = separated
    ok["greedy_ties_next"] = greedy_tie
    columns = [
        "arm",
        "build",
        "bits_per_weight",
        "kl_mean",
        "kl_mean_se",
        "top1",
        "top1_se",
        "greedy_match",
        "greedy_prompts",
        "kl_method",
        "rank_kl",
        "rank_top1",
        "rank_greedy",
        "kl_separated_from_next",
        "greedy_ties_next",
    ]
    return ok[[c for c in columns if c in ok.columns]]
