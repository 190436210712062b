"""Each arm x metric's history drawn, with its change points marked (altair, offline)."""

from __future__ import annotations

import altair as alt
import pandas as pd


def _figure(frame: pd.DataFrame) -> pd.Series:
    return frame["arm"] + " " + frame["metric"] + " (" + frame["kind"] + ")"


def chart_frame(history: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """The studies' values and the change points in one frame (a facet needs one data source)."""
    values = history.assign(figure=_figure(history), row="study")
    marks = points.assign(figure=_figure(points), row="change point") if not points.empty else points
    frame = pd.concat([values, marks], ignore_index=True)
    frame["finished_at"] = pd.to_datetime(frame["finished_at"], utc=True)
    return frame


def history_chart(history: pd.DataFrame, points: pd.DataFrame) -> alt.FacetChart:
    base = alt.Chart().encode(x=alt.X("finished_at:T", title="study finished"))
    studies = base.transform_filter(alt.datum.row == "study")
    line = studies.mark_line(point=True).encode(
        y=alt.Y("value:Q", scale=alt.Scale(zero=False), title=None),
        tooltip=["study", "git_commit", "value", "low", "high", "n"],
    )
    band = studies.mark_rule(opacity=0.5).encode(y="low:Q", y2="high:Q")
    rule = (
        base.transform_filter(alt.datum.row == "change point")
        .mark_rule(color="firebrick", strokeDash=[4, 3])
        .encode(tooltip=["follows", "change", "pvalue"])
    )
    return (
        alt.layer(band, line, rule, data=chart_frame(history, points))
        .properties(width=300, height=140)
        .facet(facet=alt.Facet("figure:N", title=None), columns=3)
        .resolve_scale(y="independent")
        .properties(title="History: each study's value with its interval; change points in red")
    )
