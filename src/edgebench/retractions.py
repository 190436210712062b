"""Withdrawn results: a registry in config/retractions.yaml, applied when tables are joined, and a
scanner that fails when a retracted figure still appears in the repository's text."""

from __future__ import annotations

import ast
import io
import math
import re
import tokenize
from pathlib import Path

import pandas as pd

from edgebench.config import ConfigError, read_config_file
from edgebench.metrics import METRICS
from edgebench.tables import RETRACTABLE, TABLE_COLUMNS

# The columns whose values a retracted row's figures are read from: every registered metric's.
FIGURE_COLUMNS = frozenset(m.source_column for m in METRICS.values())

REQUIRED = ("id", "reason", "date", "replaced_by")
SCANNED = {".md", ".rst", ".py", ".yaml", ".yml", ".smk", ".txt"}
SKIP_DIRS = {".git", ".venv", "results", ".snakemake", "__pycache__", ".pytest_cache", ".ruff_cache", "data"}


def load_retractions(path: str | Path, item_ids: set[str] | None = None) -> list[dict]:
    """The registry, checked: every entry names a table rows can be retracted from and columns it
    has, or an item of the roadmap (when `item_ids` is given). Nothing unknown is accepted silently."""
    path = Path(path)
    if not path.exists():
        return []
    raw = read_config_file(path)
    entries = raw.get("retractions") or []
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: retractions must be a list, got {type(entries).__name__}")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: retractions[{i}] must be a mapping, got {entry!r}")
        missing = [k for k in REQUIRED if k not in entry]
        if missing:
            raise ConfigError(f"{path}: retractions[{i}] lacks {missing}")
        if ("table" in entry) == ("item" in entry):
            raise ConfigError(
                f"{path}: retractions[{i}] ({entry['id']}) names either a table (with where) or an item"
            )
        if "table" in entry and not isinstance(entry.get("where"), dict):
            raise ConfigError(
                f"{path}: retractions[{i}] ({entry['id']}) needs a `where` mapping of column: value"
            )
        entry["date"] = str(entry["date"])
        check_target(entry, f"{path}: retractions[{i}] ({entry['id']})", item_ids)
    return entries


def check_target(entry: dict, where: str, item_ids: set[str] | None) -> None:
    if "item" in entry:
        if item_ids is not None and entry["item"] not in item_ids:
            raise ConfigError(
                f"{where}.item: {entry['item']!r} is not an item of the roadmap ({sorted(item_ids)})"
            )
        return
    table = entry["table"]
    if table not in RETRACTABLE:
        raise ConfigError(
            f"{where}.table: {table!r} is not a table rows can be retracted from ({sorted(RETRACTABLE)})"
        )
    unknown = [c for c in entry["where"] if c not in TABLE_COLUMNS[table]]
    if unknown:
        raise ConfigError(f"{where}.where: {unknown} are not columns of table {table!r}")


def matches(frame: pd.DataFrame, where: dict) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for column, value in where.items():
        if column not in frame.columns:
            return pd.Series(False, index=frame.index)
        mask &= frame[column] == value
    return mask


def apply_retractions(frame: pd.DataFrame, table: str, entries: list[dict]) -> pd.DataFrame:
    """Mark matching rows `retracted` with the reason; they stay in the table, struck from use."""
    frame = frame.copy()
    for entry in entries:
        if entry.get("table") != table:
            continue
        mask = matches(frame, entry["where"])
        frame.loc[mask, "status"] = "retracted"
        frame.loc[mask, "error"] = f"retracted {entry['id']} ({entry['date']}): {entry['reason']}"
    return frame


def retracted_figures(frame: pd.DataFrame) -> set[str]:
    """Printed forms of the metric values in retracted rows that are specific enough to search for."""
    figures: set[str] = set()
    rows = frame[frame["status"] == "retracted"] if "status" in frame else frame.iloc[0:0]
    # A per-trial outcome (success, reached) is a flag, not a figure anyone would print.
    columns = [c for c in rows.columns if c in FIGURE_COLUMNS and rows[c].dtype != bool]
    for value in rows[columns].to_numpy().ravel():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if not math.isfinite(number) or number == 0:
            continue
        for text in (f"{number:.1f}", f"{number:.2f}", f"{number:.3f}", f"{round(number)}"):
            if sum(ch.isdigit() for ch in text) >= 3 and text.strip("0.") != "":
                figures.add(text)
    return figures


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """The human text of a file: all of Markdown/rst/txt; comments and docstrings of Python; comments
    of YAML and Snakemake files."""
    text = path.read_text(errors="replace")
    if path.suffix in (".md", ".rst", ".txt"):
        return list(enumerate(text.splitlines(), start=1))
    if path.suffix == ".py":
        lines = []
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.COMMENT:
                    lines.append((token.start[0], token.string))
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node, clean=False)
                    if doc and node.body:
                        start = node.body[0].lineno
                        lines += [(start + i, line) for i, line in enumerate(doc.splitlines())]
        except (SyntaxError, tokenize.TokenError):
            return list(enumerate(text.splitlines(), start=1))
        return lines
    return [(i, line.split("#", 1)[1]) for i, line in enumerate(text.splitlines(), start=1) if "#" in line]


def scan_for_figures(root: Path, figures: set[str]) -> list[str]:
    """`file:line: figure` for every retracted figure still written in the repository's prose."""
    if not figures:
        return []
    found = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in SCANNED or SKIP_DIRS & set(path.relative_to(root).parts):
            continue
        for number, line in prose_lines(path):
            for figure in figures:
                start = line.find(figure)
                while start != -1:
                    before = line[start - 1] if start else " "
                    after = line[start + len(figure) : start + len(figure) + 2] + "  "
                    # a whole number, not part of a longer one (1615.2, 615.25, 615.2 inside 615.25)
                    longer = after[0].isdigit() or (after[0] == "." and after[1].isdigit())
                    if not (before.isdigit() or before == ".") and not longer:
                        found.append(f"{path.relative_to(root)}:{number}: {figure}")
                        break
                    start = line.find(figure, start + 1)
    return sorted(set(found))


# A measured figure: a number with a unit. The user guides explain how to get figures, never state them.
MEASURED_FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:tok/s|MB|GB|MiB|GiB|min|ms|s)(?![\w/])")
EXAMPLE_START, EXAMPLE_END = "<!-- example -->", "<!-- /example -->"
GUIDES = ("README.md", "config/README.md")


def figures_in_guides(root: Path, guides: tuple[str, ...] = GUIDES) -> list[str]:
    """`file:line: figure` for each measured figure in the user guides outside a marked example
    (between `<!-- example -->` and `<!-- /example -->`) and outside code blocks (commands)."""
    found = []
    for name in guides:
        path = root / name
        if not path.is_file():
            continue
        in_example = in_code = False
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            in_example = (in_example or EXAMPLE_START in line) and EXAMPLE_END not in line
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if in_example or in_code:
                continue
            found += [f"{name}:{number}: {m.group(0)}" for m in MEASURED_FIGURE.finditer(line)]
    return found


def check_repository(root: Path, table_paths: list[str]) -> str:
    """Fail, naming file and line, while a retracted figure is still written in the repository or a
    user guide states a measured figure; else the line the check writes."""
    figures = set()
    for path in table_paths:
        figures |= retracted_figures(pd.read_parquet(path))
    found = scan_for_figures(root, figures)
    if found:
        raise SystemExit("retracted figures still written in the repository:\n  " + "\n  ".join(found))
    stated = figures_in_guides(root)
    if stated:
        raise SystemExit(
            "measured figures in the user guides (the pipeline writes findings.md; mark an example "
            "with <!-- example --> ... <!-- /example -->):\n  " + "\n  ".join(stated)
        )
    return f"checked {len(figures)} retracted figures and the guides: none found in the repository's text\n"
