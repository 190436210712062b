"""The history rule's job: a finished study's summaries into the store, and a note of what went."""

from __future__ import annotations

from pathlib import Path

from edgebench.crossstudy.load import load_study
from edgebench.history.store import append, summary_rows
from edgebench.io import write_text


def append_study(results: str, store: str, note: str) -> Path:
    frame = summary_rows(load_study(results))
    path = append(store, frame)
    first = frame.iloc[0]
    text = (
        f"appended {len(frame)} summaries of study {first['study']} (commit {first['git_commit'][:12]}, "
        f"machine {first['machine_digest']}) to {path}\n"
    )
    write_text(text, Path(note))
    print(text, end="")
    return path
