"""The decision rule's job: read the measured tables, judge every build, write table and page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from edgebench.agent.tables import study_rows
from edgebench.decision import decision_frame, decision_markdown
from edgebench.io import write_parquet, write_text


def write_decision(inputs: dict[str, str], requirements: dict, arms: list[str], table: str, md: str) -> None:
    tables = {name: pd.read_parquet(path) for name, path in inputs.items() if Path(path).exists()}
    tables = {name: frame[frame["status"] != "retracted"] for name, frame in tables.items()}
    if "agent_trials" in tables:
        tables["agent_trials"] = study_rows(tables["agent_trials"])
    frame = decision_frame(tables, requirements, arms)
    first = next(iter(tables.values()))
    if not frame.empty:
        frame["run_id"], frame["git_commit"] = first["run_id"].iloc[0], first["git_commit"].iloc[0]
        frame["isa_level"] = first["isa_level"].iloc[0] if "isa_level" in first else ""
    write_parquet(frame, table)
    write_text(decision_markdown(frame), Path(md))
    print(decision_markdown(frame))
