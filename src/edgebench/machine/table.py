"""The machine fingerprint rule's job: measure, stamp provenance, write machine.parquet."""

from __future__ import annotations

import os

import pandas as pd

from edgebench.io import write_parquet
from edgebench.jobs import current_context
from edgebench.machine.fingerprint import fingerprint_rows


def write_fingerprint(out: str, cpus: list[int] | None, config: dict) -> pd.DataFrame:
    """The fingerprint on the study's benchmark cores (bench.cpus, else this process's affinity)."""
    cores = list(cpus) if cpus else sorted(os.sched_getaffinity(0))
    frame = pd.DataFrame(fingerprint_rows(cores))
    context = current_context()
    for column in ("run_id", "git_commit", "host"):
        frame[column] = context.get(column, config.get(column, ""))
    write_parquet(frame, out)
    print(frame[["line", "value", "unit"]].to_string())
    return frame
