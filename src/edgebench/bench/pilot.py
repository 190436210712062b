"""Pilot: where does the throughput variance live, and which pairing removes most of it?

Two designs on the same build, each with resident engine processes of one arm:
- sequential: `processes` engine processes (2 threads, both cores) sampled one at a time in
  shuffled rounds. A two-way decomposition of log decode tok/s (process x round) separates a fixed
  per-process offset (which no number of rounds removes if an arm has one process), slow drift of the
  machine (round effect, cancelled by pairing within a round) and the residual.
- duet: the same number of single-thread engine processes, every pair of them sampled at the same
  time each round, one per core, cores drawn per duet (Bulej et al.); a pair shares whatever
  disturbs the machine.

The paired SD of the within-round log ratio of each design sets how many rounds a gate needs.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

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


def paired_log_ratios(frame: pd.DataFrame, value: str = "decode_tok_s") -> np.ndarray:
    """Within-round log ratios of every pair of processes (each pair's own offset removed, so the
    spread is what a paired comparison of two arms would see over rounds). Duet rows pair with the
    partner they ran beside; sequential rows with every other process of the round."""
    diffs = []
    for a, b in itertools.combinations(sorted(frame["process"].unique()), 2):
        if "partner" in frame.columns and frame["partner"].notna().any():
            left = frame[(frame["process"] == a) & (frame["partner"] == b)]
            right = frame[(frame["process"] == b) & (frame["partner"] == a)]
            both = left.merge(right, on=["round", "slot"], suffixes=("_a", "_b"))
            d = np.log(both[f"{value}_a"] / both[f"{value}_b"]).to_numpy()
        else:
            table = frame.pivot_table(index="round", columns="process", values=value).dropna()
            d = np.log(table[a] / table[b]).to_numpy()
        if len(d) > 1:
            diffs.append(d - d.mean())
    return np.concatenate(diffs) if diffs else np.array([])


def run_design(
    spec: EngineSpec, processes: int, design: str, settings: SessionSettings, workdir: Path, progress
) -> pd.DataFrame:
    """`processes` resident engines of one arm, sampled in `design` (duets: every pair each round)."""
    names = [f"{design[0]}{i}" for i in range(processes)]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]] if design == "duet" else []
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
            # wall seconds one paired observation costs: two samples in turn, or one duet
            per_pair = part["wall_s"] + part["settle_s"].fillna(0)
            row["seconds_per_pair"] = float(per_pair.mean() * (1 if design == "duet" else 2))
            rows.append(row)
    return pd.DataFrame(rows)


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
                for design in ("sequential", "duet")
            ],
            ignore_index=True,
        )
    identity = arm_row(config, pilot["arm"], code_digest=code, cpus=config["bench"].get("cpus"))
    summary = summarize(samples, tolerance, int(config["bench"]["warm_rounds"]))
    for frame in (samples, summary):
        for key in PROVENANCE_COLUMNS:
            frame[key] = identity[key]
    return samples, summary
