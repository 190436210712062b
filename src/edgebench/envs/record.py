"""An environment's record (`environment.json` in its folder): its name, digest, spec and package
versions, or the CPU rule that refused it. Jobs read records, not the config's `environments`
section, so changing one environment's pins reruns only the jobs of the arms that name it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from edgebench.isa import UnsupportedArm

RECORD = "environment.json"


def read_record(path: str | Path) -> dict:
    """A record from its file, with the interpreter of the folder it lies in (none when refused)."""
    path = Path(path)
    record = json.loads(path.read_text())
    python = "" if record.get("refused") else str(path.parent / "bin" / "python")
    return {**record, "python": python}


def records_by_name(paths: list[str]) -> dict[str, dict]:
    return {record["name"]: record for record in (read_record(p) for p in paths)}


def arm_record(records: dict[str, dict], arm: dict) -> dict | None:
    """The record of the environment an arm names (None: the main environment). A job that runs
    an arm in an environment has its record among its inputs; one that lacks it is a bug in the
    workflow, not a failed measurement."""
    name = arm.get("env")
    if name is None:
        return None
    if name not in records:
        raise KeyError(f"the job has no record of environment {name!r}: its rule must list it as input")
    return records[name]


def require_runnable(record: dict | None) -> None:
    """Refuse, by the CPU rule that refused its environment, an arm this CPU cannot run."""
    if record and record.get("refused"):
        raise UnsupportedArm(record["refused"])


def record_python(record: dict | None) -> str:
    """The interpreter an arm's processes run (this one for the main environment, or for an
    environment this CPU refused: its processes only report the refusal)."""
    return record["python"] if record and record["python"] else sys.executable
