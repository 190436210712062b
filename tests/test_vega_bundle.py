"""The offline chart page's JavaScript bundle comes from a disk cache across processes, and the page
is byte for byte the one altair writes without it."""

import os
import subprocess
import sys

import altair as alt
import pandas as pd

from edgebench.cache_dir import CACHE_ENV
from edgebench.charts import save_chart

CHART = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_point().encode(x="x:Q", y="y:Q")

SAVE_IN_A_FRESH_PROCESS = """
import sys
import altair as alt, pandas as pd
from edgebench.charts import save_chart
chart = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_point().encode(x="x:Q", y="y:Q")
out = sys.argv[1]
save_chart(chart, png=out + ".png", svg=out + ".svg", html=out + ".html")
"""


def test_the_cached_page_is_the_page_altair_writes_and_a_fresh_process_reads_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    CHART.save(str(tmp_path / "plain.html"), inline=True)
    save_chart(CHART, png=str(tmp_path / "a.png"), svg=str(tmp_path / "a.svg"), html=str(tmp_path / "a.html"))
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "plain.html").read_bytes()
    [cached] = list((tmp_path / "cache").glob("vega-bundle-*.js"))
    assert cached.read_text() in (tmp_path / "a.html").read_text()
    # another process takes the bundle from the file: a marker put in it shows up in that page
    cached.write_text(cached.read_text() + "\n/* edgebench-cache-marker */")
    run = subprocess.run(
        [sys.executable, "-c", SAVE_IN_A_FRESH_PROCESS, str(tmp_path / "b")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, CACHE_ENV: str(tmp_path / "cache")},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "edgebench-cache-marker" in (tmp_path / "b.html").read_text()


def test_a_cache_that_cannot_be_written_still_gives_the_page(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv(CACHE_ENV, str(blocked))
    save_chart(CHART, png=str(tmp_path / "a.png"), svg=str(tmp_path / "a.svg"), html=str(tmp_path / "a.html"))
    CHART.save(str(tmp_path / "plain.html"), inline=True)
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "plain.html").read_bytes()
