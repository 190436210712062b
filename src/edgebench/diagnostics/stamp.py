"""Provenance on diagnostic tables (they have no arm of their own, or many)."""

from __future__ import annotations

import os

import pandas as pd

from edgebench.models.source import model_name
from edgebench.provenance import digest_json, provenance


def stamp(frame: pd.DataFrame, config: dict, code_digest: str, threads: int | None = None) -> pd.DataFrame:
    """Every row gets the study's provenance columns; columns the rows already have are kept."""
    columns = provenance(
        run_id=config["run_id"],
        model=model_name(config["model"]),
        config_digest=digest_json(config),
        code_digest=code_digest,
        cpus=None,
        threads=threads or len(os.sched_getaffinity(0)),
    )
    for key, value in columns.items():
        if key not in frame.columns:  # a measured column (e.g. a kernel's threads) wins
            frame[key] = value
    return frame
