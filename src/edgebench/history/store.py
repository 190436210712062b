"""The history store: a folder of parquet files, one per finished study, keyed by machine digest,
study and commit (`{store}/machine={digest}/study={run_id}/{finished}-{commit}.parquet`).

A study appends its summaries once per measurement: the file is named by the measurement's end and
the commit, so rerunning the rule on the same tables rewrites the same file instead of adding one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from edgebench.crossstudy.load import Study
from edgebench.crossstudy.rows import fidelity_estimates, paired_estimates, sample_estimates
from edgebench.findings import study_span_end
from edgebench.io import write_parquet

KEY_COLUMNS = ("machine_digest", "study", "git_commit")


def study_identity(study: Study) -> dict:
    row = study.first_row()
    return {
        "machine_digest": str(row.get("machine_digest", "") or "unknown"),
        "study": str(row.get("run_id", study.name)),
        "git_commit": str(row.get("git_commit", "unknown")),
        "git_dirty": bool(row.get("git_dirty", False)),
        "versions": json.dumps(study.versions(), sort_keys=True),
        "finished_at": study_span_end(study.tables).isoformat(),
    }


def _estimate_row(kind: str, table: str, arm: str, metric: str, est) -> dict:
    """One summary row: what was estimated, and the estimate with its interval and n."""
    return {
        "kind": kind,
        "table": table,
        "arm": arm,
        "metric": metric,
        "value": est.value,
        "low": est.low,
        "high": est.high,
        "n": est.n,
    }


def summary_rows(study: Study) -> pd.DataFrame:
    """One row per arm x metric: absolute figures (geometric mean or the row's value) and the
    study's paired ratios, each with its interval and n."""
    absolute = {**sample_estimates(study), **fidelity_estimates(study)}
    rows = [
        _estimate_row("absolute", table, arm, metric, est) for (table, arm, metric), est in absolute.items()
    ]
    rows += [
        {**_estimate_row("paired ratio", "compare", arm, metric, est), "covers": covers}
        for (arm, metric), (est, covers) in paired_estimates(study).items()
    ]
    frame = pd.DataFrame(rows)
    for key, value in study_identity(study).items():
        frame[key] = value
    return frame


def entry_path(store: Path, frame: pd.DataFrame) -> Path:
    first = frame.iloc[0]
    stamp = first["finished_at"].replace(":", "").replace("+", "Z")[:17]
    return (
        store
        / f"machine={first['machine_digest']}"
        / f"study={first['study']}"
        / (f"{stamp}-{first['git_commit'][:12]}.parquet")
    )


def append(store: str | Path, frame: pd.DataFrame) -> Path:
    """Write one study's summaries into the store (atomically); returns the file written."""
    path = entry_path(Path(store), frame)
    write_parquet(frame, path, {"history": "edgebench summaries of one study"})
    return path


def load(store: str | Path, machine: str | None = None) -> pd.DataFrame:
    """Every entry of the store, or one machine's; empty when there is none."""
    root = Path(store)
    pattern = f"machine={machine}/*/*.parquet" if machine else "machine=*/*/*.parquet"
    files = sorted(root.glob(pattern))
    if not files:
        return pd.DataFrame()
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
