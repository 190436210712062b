"""A study as a results folder: its tables, read once, and the refusal of a folder that is none."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

# A folder is a study when its tables/ holds at least one of these (what compare reads).
MEASURED_TABLES = ("warm", "bench", "fidelity")
OTHER_TABLES = ("compare", "machine", "builds")


class NotAStudy(ValueError):
    """A folder that is not a study's results folder, or studies with nothing in common."""


@dataclass
class Study:
    path: Path
    name: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    def table(self, name: str) -> pd.DataFrame:
        return self.tables.get(name, pd.DataFrame())

    def first_row(self) -> pd.Series:
        """A row of a measured table: its provenance describes the study."""
        for name in MEASURED_TABLES:
            frame = self.table(name)
            if not frame.empty:
                return frame.iloc[0]
        return pd.Series(dtype=object)

    def versions(self) -> dict[str, str]:
        value = self.first_row().get("versions")
        return json.loads(value) if isinstance(value, str) and value else {}


def study_name(path: Path, taken: set[str]) -> str:
    """The folder's name, made unique among the studies compared (a/results, b/results)."""
    name = path.name if path.name not in ("results", "") else f"{path.parent.name}/{path.name}"
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}#{n}", n + 1
    return candidate


def load_study(path: str | Path, taken: set[str] = frozenset()) -> Study:
    """Read a results folder's tables; refuse, naming the folder, one that holds no study."""
    root = Path(path)
    if not root.is_dir():
        raise NotAStudy(f"{root}: not a folder")
    tables_dir = root / "tables"
    present = [n for n in (*MEASURED_TABLES, *OTHER_TABLES) if (tables_dir / f"{n}.parquet").is_file()]
    if not any(n in MEASURED_TABLES for n in present):
        raise NotAStudy(
            f"{root}: not a study's results folder "
            "(no tables/warm.parquet, bench.parquet or fidelity.parquet)"
        )
    tables = {name: pd.read_parquet(tables_dir / f"{name}.parquet") for name in present}
    return Study(root, study_name(root.resolve(), set(taken)), tables)


def load_studies(paths: list[str | Path]) -> list[Study]:
    if len(paths) < 2:
        raise NotAStudy(f"compare needs at least two results folders, got {len(paths)}")
    studies: list[Study] = []
    for path in paths:
        studies.append(load_study(path, {s.name for s in studies}))
    return studies
