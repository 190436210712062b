"""`edgebench compare` as a function: load, compare, write the table, page and chart."""

from __future__ import annotations

from pathlib import Path

from edgebench.charts import save_chart
from edgebench.crossstudy.chart import comparison_chart
from edgebench.crossstudy.differences import difference_table
from edgebench.crossstudy.load import load_studies
from edgebench.crossstudy.page import comparison_markdown
from edgebench.crossstudy.rows import comparison_table
from edgebench.io import write_parquet, write_text


def compare_studies(paths: list[str | Path], out_dir: str | Path) -> dict[str, Path]:
    """Compare every study with the first; write compare_studies.parquet, differences.parquet,
    compare_studies.md and the chart (png, svg, html) under out_dir. Returns the paths."""
    studies = load_studies(paths)
    table = comparison_table(studies)
    differences = difference_table(studies)
    out = Path(out_dir)
    paths_out = {
        "table": out / "compare_studies.parquet",
        "differences": out / "compare_studies_differences.parquet",
        "page": out / "compare_studies.md",
        "png": out / "compare_studies.png",
        "svg": out / "compare_studies.svg",
        "html": out / "compare_studies.html",
    }
    context = {"studies": [str(Path(p).resolve()) for p in paths]}
    write_parquet(table, paths_out["table"], context)
    write_parquet(differences, paths_out["differences"], context)
    write_text(comparison_markdown(table, differences), paths_out["page"])
    save_chart(
        comparison_chart(table),
        png=str(paths_out["png"]),
        svg=str(paths_out["svg"]),
        html=str(paths_out["html"]),
    )
    return paths_out
