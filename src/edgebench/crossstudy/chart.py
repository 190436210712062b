"""Each arm's figures across studies, with intervals: one panel per metric (altair, offline)."""

from __future__ import annotations

import altair as alt
import pandas as pd


def long_form(table: pd.DataFrame) -> pd.DataFrame:
    """One row per study and figure: value and interval, for the chart."""
    parts = []
    for suffix, study in (("a", "study_a"), ("b", "study_b")):
        part = table[
            ["kind", "table", "arm", "metric", study, f"value_{suffix}", f"low_{suffix}", f"high_{suffix}"]
        ]
        parts.append(
            part.set_axis(["kind", "table", "arm", "metric", "study", "value", "low", "high"], axis=1)
        )
    frame = pd.concat(parts, ignore_index=True).drop_duplicates(["kind", "arm", "metric", "study"])
    frame["figure"] = frame["metric"] + " (" + frame["kind"] + ")"
    return frame


def comparison_chart(table: pd.DataFrame) -> alt.FacetChart:
    frame = long_form(table)
    base = alt.Chart(frame).encode(
        y=alt.Y("arm:N", title=None),
        yOffset="study:N",
        color=alt.Color("study:N", title="study"),
        tooltip=["study", "arm", "figure", "value", "low", "high"],
    )
    points = base.mark_point(filled=True).encode(x=alt.X("value:Q", title=None, scale=alt.Scale(zero=False)))
    bars = base.mark_rule().encode(x="low:Q", x2="high:Q")
    return (
        (bars + points)
        .properties(width=260, height=alt.Step(14))
        .facet(facet=alt.Facet("figure:N", title=None), columns=3)
        .resolve_scale(x="independent", y="independent")
        .properties(title="Each arm across studies: value and 95% interval")
    )
