"""Pilot: where does the throughput variance live, and which pairing removes most of it?

Designs on the same build, each with resident engine processes of one arm (an A/A study):
- sequential: `processes` engine processes (2 threads, both cores) sampled one at a time in
  shuffled rounds. A two-way decomposition of log decode tok/s (process x round) separates a fixed
  per-process offset (which no number of rounds removes if an arm has one process), slow drift of the
  machine (round effect, cancelled by pairing within a round) and the residual.
- duet: the same number of single-thread engine processes, every pair of them sampled at the same
  time each round, one per core, cores drawn per duet (Bulej et al.); a pair shares whatever
  disturbs the machine.
- interleaved: the same engines, both arms of every pair on one core taking turns a few decode
  tokens at a time, pairs that share no process on the other cores at the same time.

The paired SD of each design's paired values sets how many values a gate needs, and the SD per
machine second (SD times the square root of what a value costs) which design buys most for a
fixed budget: the summary marks that one `best`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from edgebench.bench.compare import is_duet, swap_means, swapped
from edgebench.bench.contract import EngineSpec
from edgebench.bench.session import SessionSettings, run_session
from edgebench.bench.spec import engine_spec
from edgebench.bench.warm import settings_from
from edgebench.provenance import PROVENANCE_COLUMNS
from edgebench.rows import arm_row
from edgebench.stats import minimum_detectable_effect


def variance_components(frame: pd.DataFrame, value: str = "decode_tok_s") -> dict:
    """Two-way ANOVA without replication on log values (rows: process, columns: round), complete
    rounds only: SDs of the process offset, the round (drift) effect and the residual."""
    table = frame.pivot_table(index="process", columns="round", values=value).dropna(axis=1)
    logs = np.log(table.to_numpy(dtype=float))
    p, r = logs.shape
    if p < 2 or r < 2:
        raise ValueError(f"need >= 2 processes and >= 2 complete rounds, got {p} x {r}")
    grand = logs.mean()
    ms_process = r * ((logs.mean(axis=1) - grand) ** 2).sum() / (p - 1)
    ms_round = p * ((logs.mean(axis=0) - grand) ** 2).sum() / (r - 1)
    resid = logs - logs.mean(axis=1, keepdims=True) - logs.mean(axis=0, keepdims=True) + grand
    ms_resid = (resid**2).sum() / ((p - 1) * (r - 1))
    return {
        "processes": p,
        "rounds": r,
        "sd_process": math.sqrt(max(ms_process - ms_resid, 0) / r),
        "sd_round": math.sqrt(max(ms_round - ms_resid, 0) / p),
        "sd_residual": math.sqrt(ms_resid),
        "cv_unpaired": float(np.std(logs, ddof=1)),
    }


def pair_logs(frame: pd.DataFrame, a: str, b: str, value: str) -> np.ndarray:
    """log(a/b) of every paired value of two processes: per round for sequential rows and for
    interleaved pairs (one core each pair), per swap (two rounds, the cores exchanged) for
    cross-core duets, as the study's comparisons take them."""
    if not is_duet(frame):
        table = frame.pivot_table(index="round", columns="process", values=value).dropna()
        return np.log(table[a] / table[b]).to_numpy()
    left = frame[(frame["process"] == a) & (frame["partner"] == b)]
    right = frame[(frame["process"] == b) & (frame["partner"] == a)]
    both = left.merge(right, on=["round", "slot"], suffixes=("_a", "_b"))
    by_round = dict(
        zip(both["round"].astype(int), np.log(both[f"{value}_a"] / both[f"{value}_b"]), strict=True)
    )
    if not swapped(frame):
        return np.array([by_round[r] for r in sorted(by_round)])
    return swap_means(by_round)


def paired_log_ratios(frame: pd.DataFrame, value: str = "decode_tok_s") -> np.ndarray:
    """Paired log ratios of every pair of processes, each pair's own offset removed (so the spread
    is what a paired comparison of two arms would see over its values). Paired rows pair with the
    partner they ran beside; sequential rows with every other process of the round."""
    diffs = []
    for a, b in itertools.combinations(sorted(frame["process"].unique()), 2):
        d = pair_logs(frame, a, b, value)
        if len(d) > 1:
            diffs.append(d - d.mean())
    return np.concatenate(diffs) if diffs else np.array([])


def seconds_per_value(part: pd.DataFrame, design: str) -> float:
    """Machine seconds one paired value costs: two samples in turn (sequential, both cores each),
    a swap of two duets (both cores each), or one interleaved pair (one core; the other cores run
    other pairs meanwhile)."""
    settle = part["settle_s"].fillna(0)
    if design == "sequential":
        return float(2 * (part["wall_s"] + settle).mean())
    per_pair = (part["pair_wall_s"] + settle).mean()
    if design == "interleaved":
        return float(per_pair / part["concurrent_pairs"].mean())
    return float(2 * per_pair)


def run_design(
    spec: EngineSpec, processes: int, design: str, settings: SessionSettings, workdir: Path, progress
) -> pd.DataFrame:
    """`processes` resident engines of one arm, sampled in `design` (duets: every pair each round)."""
    names = [f"{design[0]}{i}" for i in range(processes)]
    paired = design in ("duet", "interleaved")
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]] if paired else []
    settings = dataclasses.replace(settings, design=design, pairs=pairs)
    rows = run_session({name: spec for name in names}, settings, workdir, progress)
    frame = pd.DataFrame(rows).rename(columns={"arm": "process"})
    frame["design"] = design
    return frame


def summarize(samples: pd.DataFrame, tolerance: float, max_rounds: int) -> pd.DataFrame:
    """One row per design and metric: variance components, paired SD, MDE at `max_rounds` rounds,
    and the design's sample throughput (pairs per minute of wall time)."""
    rows = []
    for design, part in samples.groupby("design"):
        clean = part[part["status"] == "ok"]
        for value in ("decode_tok_s", "prefill_tok_s"):
            paired = paired_log_ratios(clean, value)
            sd_pair = float(np.std(paired, ddof=1)) if len(paired) > 1 else math.nan
            row = {
                "design": design,
                "metric": value,
                "paired_sd": sd_pair,
                "mde_at_max_rounds": minimum_detectable_effect(sd_pair, max_rounds),
                "tolerance": tolerance,
                "max_rounds": max_rounds,
                "mean_rate": float(clean[value].mean()),
            }
            try:
                row.update(variance_components(clean, value))
            except ValueError as error:
                row["note"] = str(error)
            row["seconds_per_pair"] = seconds_per_value(part, design)
            # what a fixed budget of machine time buys: designs of different lengths compare here
            row["sd_per_machine_second"] = sd_pair * math.sqrt(row["seconds_per_pair"])
            rows.append(row)
    summary = pd.DataFrame(rows)
    if len(summary):
        decode = summary[summary["metric"] == "decode_tok_s"]
        best = (
            decode.loc[decode["sd_per_machine_second"].idxmin(), "design"]
            if decode["sd_per_machine_second"].notna().any()
            else ""
        )
        summary["best"] = (summary["design"] == best) & (summary["metric"] == "decode_tok_s")
    return summary


def pilot_tables(
    config: dict, pilot: dict, build_dir: str, tolerance: float, code: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both designs' samples of the pilot arm, and the summary that picks the design."""
    spec = engine_spec(config, pilot["arm"], build_dir)
    settings = settings_from(config)
    settings.rounds = int(pilot["rounds"])
    with tempfile.TemporaryDirectory(prefix="edgebench-pilot-") as workdir:
        samples = pd.concat(
            [
                run_design(spec, int(pilot["processes"]), design, settings, Path(workdir), print)
                for design in pilot["designs"]
            ],
            ignore_index=True,
        )
    identity = arm_row(config, pilot["arm"], code_digest=code, cpus=config["bench"].get("cpus"))
    summary = summarize(samples, tolerance, int(config["bench"]["warm_rounds"]))
    for frame in (samples, summary):
        for key in PROVENANCE_COLUMNS:
            frame[key] = identity[key]
    return samples, summary
