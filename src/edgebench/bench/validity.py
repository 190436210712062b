"""Calibration of the harness: how often the gate cries wolf (A/A) and how often it sees a known,
injected slowdown (power), at the study's rep count.

Both rates are estimated by re-running the gate on every subset of `reps` rounds (or a seeded
sample of subsets when there are many) drawn from the calibration chain's rounds.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pandas as pd

from edgebench.bench.compare import aa_spread, clean_reps, gate_rows, geometric_mean, paired_ratios

MAX_SUBSETS = 500


def round_subsets(rounds: list[int], reps: int, seed: int = 0) -> list[tuple[int, ...]]:
    if reps > len(rounds):
        raise ValueError(f"cannot draw subsets of {reps} reps from {len(rounds)} rounds")
    combos = list(itertools.combinations(sorted(rounds), reps))
    if len(combos) > MAX_SUBSETS:
        combos = random.Random(seed).sample(combos, MAX_SUBSETS)
    return combos


def gate_outcomes(
    frame: pd.DataFrame, baseline: str, candidate: str, name: str, reps: int, max_spread: float
):
    """Gate status of `candidate` vs `baseline` on every subset of rounds."""
    rounds = sorted(
        set(frame.loc[frame["arm"] == baseline, "round"]) & set(frame.loc[frame["arm"] == candidate, "round"])
    )
    outcomes = []
    for subset in round_subsets(rounds, reps):
        part = frame[frame["round"].isin(subset) & frame["arm"].isin([baseline, candidate])]
        outcomes.append(gate_rows(part, baseline, [name], max_spread)[0]["status"])
    return outcomes


def cv(values: pd.Series) -> float:
    return float(np.std(values, ddof=1) / np.mean(values)) if len(values) > 1 else float("nan")


def validity_rows(frame: pd.DataFrame, calibration: dict, max_spread: float, reps: int) -> list[dict]:
    base, twin, slow, name = (calibration[k] for k in ("baseline", "twin", "injected", "metric"))
    aa = gate_outcomes(frame, base, twin, name, reps, max_spread)
    injected = gate_outcomes(frame, base, slow, name, reps, max_spread)
    effect_ratio = geometric_mean(paired_ratios(frame, name, base, slow))
    base_values = clean_reps(frame, base, name)
    return [
        {
            "metric": name,
            "baseline": base,
            "reps": reps,
            "rounds": int(frame["round"].nunique()),
            "subsets": len(aa),
            "effect": float(calibration["effect"]),
            "measured_effect": 1 - effect_ratio,
            "baseline_cv": cv(base_values),
            "baseline_spread": aa_spread(base_values),
            "max_spread": max_spread,
            "false_alarm_rate": aa.count("fail") / len(aa) if aa else float("nan"),
            "aa_ungateable_rate": aa.count("ungateable") / len(aa) if aa else float("nan"),
            "power": injected.count("fail") / len(injected) if injected else float("nan"),
            "injected_ungateable_rate": injected.count("ungateable") / len(injected)
            if injected
            else float("nan"),
            "method": "gate re-run on every subset of `reps` calibration rounds",
        }
    ]
