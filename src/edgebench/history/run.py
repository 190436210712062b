"""`edgebench history` as a function: one machine's series, their change points, a page and a chart."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from edgebench.charts import save_chart
from edgebench.crossstudy.load import NotAStudy
from edgebench.formatting import three_digits
from edgebench.history import store
from edgebench.history.changes import change_point_table
from edgebench.history.chart import history_chart
from edgebench.io import write_parquet, write_text
from edgebench.machine.identity import machine_digest


def history_markdown(history: pd.DataFrame, points: pd.DataFrame, machine: str) -> str:
    studies = history.drop_duplicates(["study", "finished_at"]).sort_values("finished_at")
    lines = [
        f"# History of machine `{machine}`",
        "",
        f"{len(studies)} studies, {history.groupby(['kind', 'arm', 'metric']).ngroups} series; "
        f"{len(points)} change point{'s' * (len(points) != 1)} (Apache Otava, p < 0.001).",
        "",
    ]
    if not points.empty:
        lines += [
            "| arm | metric | kind | after study | change | p | follows |",
            "|---|---|---|---|---|---|---|",
        ]
        for _, p in points.iterrows():
            lines.append(
                f"| {p['arm']} | {p['metric']} | {p['kind']} | {p['study_after']} ({p['finished_at'][:16]}) "
                f"| {p['change']:+.1%} | {p['pvalue']:.2g} | {p['follows']} |"
            )
        lines.append("")
    lines += ["## Studies", "", "| finished | study | commit | dirty |", "|---|---|---|---|"]
    for _, s in studies.iterrows():
        lines.append(
            f"| {s['finished_at'][:16]} | {s['study']} | {s['git_commit'][:10]} | {s['git_dirty']} |"
        )
    latest = history[history["finished_at"] == studies["finished_at"].iloc[-1]]
    lines += ["", "## Latest values", "", "| arm | metric | kind | value [95% CI] |", "|---|---|---|---|"]
    for _, r in latest.sort_values(["kind", "arm", "metric"]).iterrows():
        lines.append(
            f"| {r['arm']} | {r['metric']} | {r['kind']} | {three_digits(r['value'])} "
            f"[{three_digits(r['low'])}, {three_digits(r['high'])}] |"
        )
    return "\n".join(lines) + "\n"


def history_report(store_path: str | Path, machine: str | None, out_dir: str | Path) -> dict[str, Path]:
    """Change points of one machine's history (default: this machine's digest); refuses a store
    with no entry for it, naming the store and the machines it has."""
    machine = machine or machine_digest()
    history = store.load(store_path, machine)
    if history.empty:
        known = sorted(p.name.removeprefix("machine=") for p in Path(store_path).glob("machine=*"))
        raise NotAStudy(f"{store_path}: no history for machine {machine} (machines there: {known or 'none'})")
    points = change_point_table(history)
    out = Path(out_dir)
    paths = {
        name: out / f"history.{ext}"
        for name, ext in (
            ("page", "md"),
            ("table", "parquet"),
            ("png", "png"),
            ("svg", "svg"),
            ("html", "html"),
        )
    }
    write_parquet(points, paths["table"], {"history": str(store_path), "machine": machine})
    write_text(history_markdown(history, points, machine), paths["page"])
    save_chart(
        history_chart(history, points), png=str(paths["png"]), svg=str(paths["svg"]), html=str(paths["html"])
    )
    return paths
