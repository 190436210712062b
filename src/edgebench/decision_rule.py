"""The decision rule's job: read the measured tables, judge every build, write table and page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from edgebench.agent.tables import study_rows
from edgebench.decision import decision_frame, decision_markdown
from edgebench.io import write_parquet, write_text
from edgebench.memory_split import memory_note


def with_memory_notes(frame: pd.DataFrame, arms: dict, builds: pd.DataFrame | None) -> pd.DataFrame:
    """A memory requirement's rows carry what the memory is (weights, reserved KV cache, runtime)."""
    if frame.empty or builds is None:
        return frame
    frame = frame.assign(note="")
    memory = frame["metric"] == "peak_rss_anon_mb"
    frame.loc[memory, "note"] = [
        memory_note(arms[r["arm"]], float(r["value"]), builds) for _, r in frame[memory].iterrows()
    ]
    return frame


def write_decision(
    inputs: dict[str, str],
    requirements: dict,
    arms: list[str],
    others: list[str],
    table: str,
    md: str,
    arm_configs: dict | None = None,
) -> None:
    """Judge the deployable builds (`arms`) and, for reference, the non-deployable ones (`others`)."""
    builds_path = inputs.pop("builds", None)
    builds = pd.read_parquet(builds_path) if builds_path and arm_configs else None
    tables = {name: pd.read_parquet(path) for name, path in inputs.items() if Path(path).exists()}
    tables = {name: frame[frame["status"] != "retracted"] for name, frame in tables.items()}
    if "agent_trials" in tables:
        tables["agent_trials"] = study_rows(tables["agent_trials"])
    frame = with_memory_notes(decision_frame(tables, requirements, arms), arm_configs or {}, builds)
    other = with_memory_notes(decision_frame(tables, requirements, others), arm_configs or {}, builds)
    first = next(iter(tables.values()))
    both = pd.concat([frame.assign(deployable=True), other.assign(deployable=False)], ignore_index=True)
    if not both.empty:
        both["run_id"], both["git_commit"] = first["run_id"].iloc[0], first["git_commit"].iloc[0]
        both["isa_level"] = first["isa_level"].iloc[0] if "isa_level" in first else ""
    write_parquet(both, table)
    page = decision_markdown(frame, other)
    write_text(page, Path(md))
    print(page)
