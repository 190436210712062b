"""Table contract: column lists per table, atomic parquet writes, and joins of raw rows."""

from __future__ import annotations

import os

import pandas as pd

from edgebench.metrics import COLD_METRICS, WARM_METRICS
from edgebench.provenance import PROVENANCE_COLUMNS

STATUSES = ("ok", "failed", "contended", "retracted")

# Every row of every table starts with these: its identity, then its provenance.
ROW_COLUMNS = (
    "arm",
    "engine",
    "build",
    "rep",
    "order_position",
    "status",
    "error",
    "started_at",
    "wall_s",
    "kernel_path",
    *PROVENANCE_COLUMNS,
)

TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "bench": (*ROW_COLUMNS, "study", "round", "stolen_frac", "attempt", *COLD_METRICS),
    "warm": (
        *ROW_COLUMNS,
        "round",
        "round_order",
        "seed",
        "slot",
        "partner",
        "core",
        "settle_s",
        "pair_wall_s",
        "stolen_frac",
        "cpu_s",
        "runqueue_wait_s",
        "steal_s",
        "idle_engines_cpu_s",
        "prefill_s",
        "decode_s",
        *WARM_METRICS,
    ),
    "fidelity": (
        *ROW_COLUMNS,
        "positions",
        "top1",
        "top1_se",
        "kl_mean",
        "kl_mean_se",
        "kl_median",
        "kl_p90",
        "kl_p99",
        "kl_p999",
        "kl_max",
        "dp_rms",
        "ppl_ratio",
        "kl_method",
        "topk",
        "greedy_match",
        "greedy_prompts",
    ),
}

# Agent episodes (edgebench.agent.episode.result_row) with the arm's identity and provenance.
TABLE_COLUMNS["agent_trials"] = (
    *ROW_COLUMNS,
    "policy",
    "task_id",
    "template",
    "variant",
    "already_satisfied",
    "instance",
    "trial",
    "seed",
    "success",
    "goal_met",
    "untouched_if_satisfied",
    "unrelated_unchanged",
    "exact_change",
    "status_ok",
    "reached",
    "final_status",
    "steps",
    "budget",
    "invalid_actions",
    "wall_s",
    "changes",
    "sampling_seed",
)


def check_columns(table: str, frame: pd.DataFrame) -> None:
    """Fail naming the missing columns, so a table never ships without its contract."""
    missing = [c for c in TABLE_COLUMNS[table] if c not in frame.columns]
    if missing:
        raise ValueError(f"table {table!r} lacks columns {missing}")
    bad = sorted(set(frame["status"]) - set(STATUSES))
    if bad:
        raise ValueError(f"table {table!r} has unknown status values {bad}; allowed: {STATUSES}")


def rows_frame(table: str, rows: list[dict]) -> pd.DataFrame:
    """Rows as a frame with the table's columns first (missing ones as NA) and extra columns kept."""
    frame = pd.DataFrame(rows)
    for column in TABLE_COLUMNS[table]:
        if column not in frame.columns:
            frame[column] = pd.NA
    extra = [c for c in frame.columns if c not in TABLE_COLUMNS[table]]
    return frame[[*TABLE_COLUMNS[table], *extra]]


def join_parquet(table: str, paths: list[str | os.PathLike]) -> pd.DataFrame:
    """Concatenate raw row files of one table and check the contract."""
    if not paths:
        raise ValueError(f"no raw files to join into table {table!r}")
    frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    frame = rows_frame(table, frame.to_dict("records"))
    check_columns(table, frame)
    return frame
