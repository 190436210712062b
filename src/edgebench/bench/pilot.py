"""Pilot: where does the throughput variance live, and which pairing removes most of it?

Two designs on the same build, each with resident engine processes of one arm:
- sequential: `processes` engine processes (2 threads, both cores) sampled one at a time in
  shuffled rounds. A two-way decomposition of log decode tok/s (process x round) separates a fixed
  per-process offset (which no number of rounds removes if an arm has one process), slow drift of the
  machine (round effect, cancelled by pairing within a round) and the residual.
- duet: two engine processes with one thread each run their samples at the same time, one per
  core, cores swapped every round (Bulej et al.); the pair shares whatever disturbs the machine.

The paired SD of the within-round log ratio of each design sets how many rounds a gate needs.
"""

from __future__ import annotations

import itertools
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from edgebench.bench.session import ArmFailed, ArmProcess, SessionSettings, run_session
from edgebench.procfs import children_of, set_tree_affinity
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
    spread is what a paired comparison of two arms would see over rounds)."""
    table = frame.pivot_table(index="round", columns="process", values=value).dropna()
    diffs = []
    for a, b in itertools.combinations(table.columns, 2):
        d = np.log(table[a] / table[b]).to_numpy()
        diffs.append(d - d.mean())
    return np.concatenate(diffs) if diffs else np.array([])


def run_sequential(spec: dict, processes: int, settings: SessionSettings, workdir: Path, progress) -> pd.DataFrame:
    specs = {f"p{i}": spec for i in range(processes)}
    rows = run_session(specs, settings, workdir, progress)
    frame = pd.DataFrame(rows).rename(columns={"arm": "process"})
    frame["design"] = "sequential"
    return frame


def run_duet(spec: dict, settings: SessionSettings, workdir: Path, progress) -> pd.DataFrame:
    """Two single-thread engines sampled at the same time, one per core, cores swapped each round."""
    spec = {**spec, "arm": {**spec["arm"], "threads_bind": "nobind", "threads": 1}}
    cores = settings.cores[:2]
    if len(cores) < 2:
        raise ValueError(f"a duet needs two cores, got {settings.cores}")
    arms = [ArmProcess.start(f"d{i}", spec, [cores[i]], workdir) for i in range(2)]
    rows = []
    try:
        for arm in arms:
            arm.wait_ready(settings.timeout_s)
        for round_index in range(settings.rounds):
            placement = cores if round_index % 2 == 0 else cores[::-1]
            for arm, core in zip(arms, placement, strict=True):
                set_tree_affinity([arm.proc.pid, *children_of(arm.proc.pid)], [core])
            for arm in arms:
                arm.send({"op": "warmup"})
            for arm in arms:
                arm.receive(settings.timeout_s)
            t0 = time.perf_counter()
            for arm in arms:
                arm.send({"op": "sample", "index": round_index})
            replies = [arm.receive(settings.timeout_s) for arm in arms]
            wall = time.perf_counter() - t0
            for arm, core, reply in zip(arms, placement, replies, strict=True):
                rows.append({"process": arm.name, "round": round_index, "core": core, "wall_s": wall, **reply})
            progress(f"duet round {round_index + 1}/{settings.rounds}: "
                     + ", ".join(f"{r['process']}@{r['core']} {r['decode_tok_s']:.2f}" for r in rows[-2:]))
    except ArmFailed as error:
        progress(f"duet stopped: {str(error)[:300]}")
    finally:
        for arm in arms:
            arm.stop()
    frame = pd.DataFrame(rows)
    frame["design"] = "duet"
    frame["status"] = "ok"
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
            row = {"design": design, "metric": value, "paired_sd": sd_pair,
                   "mde_at_max_rounds": minimum_detectable_effect(sd_pair, max_rounds),
                   "tolerance": tolerance, "max_rounds": max_rounds,
                   "mean_rate": float(clean[value].mean())}
            try:
                row.update(variance_components(clean, value))
            except ValueError as error:
                row["note"] = str(error)
            # wall seconds one paired observation costs: two samples in turn, or one duet round
            per_round = part.groupby("round")["wall_s"].first() if design == "duet" else 2 * part["wall_s"]
            row["seconds_per_pair"] = float(per_round.mean())
            rows.append(row)
    return pd.DataFrame(rows)
