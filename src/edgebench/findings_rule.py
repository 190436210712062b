"""The findings rule's job: read the tables it is given and write findings.md."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from edgebench.findings import findings_markdown
from edgebench.io import write_text


def write_findings(inputs: dict[str, str], out: str) -> None:
    decision = Path(inputs.pop("decision_md")).read_text() if "decision_md" in inputs else ""
    tables = {name: pd.read_parquet(path) for name, path in inputs.items()}
    text = findings_markdown(tables, decision)
    write_text(text, Path(out))
    print(text)
