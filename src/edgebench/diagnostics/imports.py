"""Import cost per entry point, from `python -X importtime` in a fresh interpreter per rep."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pandas as pd

from edgebench.engines.registry import ENGINES

# "import time:       325 |        912 |   encodings.aliases"
_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( *)(\S+)\s*$")


def parse_importtime(text: str) -> list[dict]:
    """Rows (module, depth, self_s, cumulative_s) from `-X importtime` stderr; other lines ignored.

    depth 0 is a module the statement imported directly (the tree is printed children first, two
    spaces per level below the column's single leading space).
    """
    rows = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            self_us, cumulative_us, indent, module = match.groups()
            rows.append(
                {
                    "module": module,
                    "depth": (len(indent) - 1) // 2,
                    "self_s": int(self_us) / 1e6,
                    "cumulative_s": int(cumulative_us) / 1e6,
                }
            )
    return rows


def entry_total_s(rows: list[dict]) -> float:
    """Time the statement spent importing: the cumulative times of its depth-0 modules."""
    return sum(r["cumulative_s"] for r in rows if r["depth"] == 0)


def measure_entry(statement: str, *, python: str = sys.executable, timeout_s: float = 300) -> dict:
    """Run one statement under -X importtime in a fresh interpreter; wall time and parsed rows.

    A statement that fails (module not installed) returns its error instead of rows.
    """
    started = time.perf_counter()
    proc = subprocess.run(
        [python, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    wall_s = time.perf_counter() - started
    rows = parse_importtime(proc.stderr)
    error = ""
    if proc.returncode != 0:
        last = [line for line in proc.stderr.splitlines() if line and not _LINE.match(line)]
        error = f"exit {proc.returncode}: {last[-1] if last else 'no message'}"
    return {"wall_s": wall_s, "rows": rows, "error": error}


def import_rows(entries: dict[str, str], reps: int) -> list[dict]:
    """Every module of every entry and rep, plus one `(total)` row per entry and rep."""
    rows = []
    for entry, statement in entries.items():
        for rep in range(reps):
            print(f"importtime: {entry!r} rep {rep + 1}/{reps}", flush=True)
            result = measure_entry(statement)
            status = "failed" if result["error"] else "ok"
            common = {
                "entry": entry,
                "rep": rep,
                "status": status,
                "error": result["error"],
                "process_wall_s": result["wall_s"],
            }
            total = entry_total_s(result["rows"])
            rows.append({**common, "module": "(total)", "depth": -1, "self_s": total, "cumulative_s": total})
            rows += [{**common, **r} for r in result["rows"]]
    return rows


# The statement each engine's `import_engine()` runs inside a rep (what `import_s` times).
ENGINE_ENTRY = {name: info.import_statement for name, info in ENGINES.items()}


SUMMARY_COLUMNS = [
    "engine",
    "entry",
    "importtime_s",
    "process_wall_s",
    "bench_import_s",
    "bench_ready_s",
    "reps",
    "share_of_ready",
]


def import_summary(imports: pd.DataFrame, bench: pd.DataFrame) -> pd.DataFrame:
    """Per engine: the median -X importtime total and process wall of the statement its reps pay,
    beside the bench medians of import_s and ready_s (clean reps), and the share of ready_s. With
    no clean rep of a profiled engine it has no rows, and still its columns."""
    totals = imports[(imports["module"] == "(total)") & (imports["status"] == "ok")]
    summary = totals.groupby("entry").agg(
        importtime_s=("cumulative_s", "median"), process_wall_s=("process_wall_s", "median")
    )
    clean = bench[bench["status"] == "ok"]
    rows = []
    for engine, reps in clean.groupby("engine"):
        entry = ENGINE_ENTRY.get(engine)
        if entry not in summary.index:
            continue
        rows.append(
            {
                "engine": engine,
                "entry": entry,
                **summary.loc[entry].to_dict(),
                "bench_import_s": reps["import_s"].median(),
                "bench_ready_s": reps["ready_s"].median(),
                "reps": len(reps),
            }
        )
    frame = pd.DataFrame(rows, columns=SUMMARY_COLUMNS[:-1])
    frame["share_of_ready"] = frame["importtime_s"] / frame["bench_ready_s"]
    return frame
