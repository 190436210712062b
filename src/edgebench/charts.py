"""Altair charts of the joined tables; PNG/SVG through vl-convert, HTML inlined to open offline."""

from __future__ import annotations

import altair as alt
import pandas as pd

from edgebench.io import atomic_path
from edgebench.metrics import metric
from edgebench.vega_bundle import disk_cached_bundle


def _rep_spread(frame: pd.DataFrame, name: str) -> alt.Chart:
    m = metric(name)
    title = f"{name} ({m.unit}, {m.direction} is better)"
    base = alt.Chart(frame[frame[name].notna()]).encode(y=alt.Y("arm:N", title=None))
    points = base.mark_point(filled=True, size=60).encode(
        x=alt.X(f"{name}:Q", title=title, scale=alt.Scale(zero=False)),
        color=alt.Color("status:N", scale=alt.Scale(domain=["ok", "contended", "failed"])),
        tooltip=["arm", "round", "order_position", "status", alt.Tooltip(f"{name}:Q", format=".2f")],
    )
    median = base.mark_tick(color="black", thickness=2, size=24).encode(x=f"median({name}):Q")
    return (points + median).properties(width=360, height=28 * frame["arm"].nunique())


def warm_chart(frame: pd.DataFrame) -> alt.Chart:
    """Warm decode and prefill throughput per arm: one dot per sample, black tick at the median."""
    clean = frame[frame["status"].isin(["ok", "contended"])]
    chart = alt.hconcat(_rep_spread(clean, "decode_tok_s"), _rep_spread(clean, "prefill_tok_s"))
    failed = int((frame["status"] == "failed").sum())
    retracted = int((frame["status"] == "retracted").sum())
    return chart.properties(
        title=f"Warm throughput, one dot per sample ({failed} failed, {retracted} retracted not shown)"
    )


def validity_chart(frame: pd.DataFrame) -> alt.Chart:
    """False-alarm rate (A/A twin) and power (injected losses) with Wilson 95% intervals."""
    base = alt.Chart(frame).encode(y=alt.Y("arm:N", title=None), color=alt.Color("check:N"))
    rate = base.mark_point(filled=True, size=80).encode(
        x=alt.X("rate:Q", title="share of blocks where the gate failed", scale=alt.Scale(domain=[0, 1])),
        tooltip=[
            "check",
            "arm",
            "blocks",
            "block_rounds",
            "fails",
            alt.Tooltip("measured_effect:Q", format=".3f"),
            alt.Tooltip("cpu_s_ratio:Q", format=".3f"),
        ],
    )
    interval = base.mark_rule(strokeWidth=2).encode(x="rate_low:Q", x2="rate_high:Q")
    return (interval + rate).properties(
        width=360,
        height=40 * max(len(frame), 1),
        title="Gate calibration: false alarms and power, Wilson 95%",
    )


def fidelity_chart(frame: pd.DataFrame) -> alt.Chart:
    """Top-1 agreement (±1 SE) and mean KL per arm against the bf16 reference."""
    ok = frame[frame["status"] == "ok"].copy()  # failed and retracted arms are omitted (see the table)
    ok["top1_lo"], ok["top1_hi"] = ok["top1"] - ok["top1_se"], ok["top1"] + ok["top1_se"]
    ok["kl_lo"], ok["kl_hi"] = ok["kl_mean"] - ok["kl_mean_se"], ok["kl_mean"] + ok["kl_mean_se"]
    base = alt.Chart(ok).encode(y=alt.Y("arm:N", title=None))
    top1 = base.mark_bar().encode(
        x=alt.X("top1:Q", title="top-1 agreement with reference", scale=alt.Scale(domain=[0, 1])),
        tooltip=["arm", "positions", alt.Tooltip("top1:Q", format=".4f")],
    ) + base.mark_errorbar().encode(x="top1_lo:Q", x2="top1_hi:Q")
    kl = base.mark_bar(color="#d62728").encode(
        x=alt.X("kl_mean:Q", title="mean KL(ref || arm), nats (top-k lower bound)"),
        tooltip=[
            "arm",
            "kl_method",
            alt.Tooltip("kl_mean:Q", format=".5f"),
            alt.Tooltip("kl_p99:Q", format=".4f"),
        ],
    ) + base.mark_errorbar().encode(x="kl_lo:Q", x2="kl_hi:Q")
    height = 28 * max(len(ok), 1)
    return alt.hconcat(
        top1.properties(width=300, height=height), kl.properties(width=300, height=height)
    ).properties(title="Fidelity against the bf16 reference, teacher-forced over the shipped corpus")


def gates_chart(frame: pd.DataFrame) -> alt.Chart:
    """Each arm's paired ratio to the baseline (dot) with its interval at the stopping look (line),
    against the tolerance band (gray); colour = gate status."""
    shown = frame.dropna(subset=["ratio"]).copy()
    shown["band_low"], shown["band_high"] = 1 - shown["tolerance"], 1 / (1 - shown["tolerance"])
    base = alt.Chart(shown).encode(y=alt.Y("arm:N", title=None))
    band = base.mark_bar(opacity=0.25, color="gray", size=14).encode(
        x=alt.X("band_low:Q", title="oriented ratio to baseline (>1 = better)", scale=alt.Scale(type="log")),
        x2="band_high:Q",
    )
    interval = base.mark_rule(strokeWidth=2).encode(x="ci_low:Q", x2="ci_high:Q")
    ratio = base.mark_point(filled=True, size=70).encode(
        x="ratio:Q",
        color=alt.Color(
            "status:N",
            scale=alt.Scale(
                domain=["pass", "fail", "inconclusive", "ungateable", "too few pairs"],
                range=["#2ca02c", "#d62728", "#ff7f0e", "#7f7f7f"],
            ),
        ),
        tooltip=[
            "arm",
            "metric",
            "rounds_used",
            alt.Tooltip("ratio:Q", format=".3f"),
            alt.Tooltip("mde:Q", format=".4f"),
            "status",
        ],
    )
    return (
        (band + interval + ratio)
        .properties(width=300, height=24 * max(shown["arm"].nunique(), 1))
        .facet(facet=alt.Facet("metric:N", title=None), columns=2)
        .properties(
            title=f"Gates vs {frame['baseline'].iloc[0] if len(frame) else '?'}: ratio, interval, tolerance"
        )
    )


def agent_chart(frame: pd.DataFrame) -> alt.Chart:
    """Completion and navigation per arm and strategy with Wilson 95% intervals, baselines beside
    LLM arms, by variant kind."""
    shown = frame[frame["scope"].isin(["all", "needs_change", "already_satisfied"])].copy()
    strategy = shown["strategy"].fillna("") if "strategy" in shown else ""
    shown["cell"] = shown["arm"].where(strategy == "", shown["arm"] + " (" + strategy + ")")
    long = pd.concat(
        [
            shown[["arm", "cell", "scope", "trials"]].assign(
                outcome=label,
                rate=shown[f"{outcome}_rate"],
                ci_low=shown[f"{outcome}_ci_low"],
                ci_high=shown[f"{outcome}_ci_high"],
                p_value=shown[f"{outcome}_p_value"],
            )
            for outcome, label in (("success", "completion"), ("reached", "navigation"))
        ],
        ignore_index=True,
    )
    base = alt.Chart(long).encode(
        y=alt.Y("outcome:N", title=None), color=alt.Color("outcome:N", title="rate of")
    )
    bars = base.mark_bar().encode(
        x=alt.X("rate:Q", title="rate (Wilson 95% CI)", scale=alt.Scale(domain=[0, 1])),
        tooltip=[
            "cell",
            "scope",
            "outcome",
            "trials",
            alt.Tooltip("rate:Q", format=".2f"),
            alt.Tooltip("p_value:Q", format=".3f", title="McNemar p vs reference"),
        ],
    )
    errors = base.mark_errorbar(color="black").encode(x="ci_low:Q", x2="ci_high:Q")
    return (
        (bars + errors)
        .properties(width=200, height=40)
        .facet(
            row=alt.Row("cell:N", title=None),
            column=alt.Column("scope:N", title=None, sort=["all", "needs_change", "already_satisfied"]),
        )
        .properties(title="Phone agent: completion (end state right) and navigation (task screen reached)")
    )


def pareto_frame(
    builds: pd.DataFrame, bench: pd.DataFrame, fidelity: pd.DataFrame, arms: list[str] | None = None
) -> pd.DataFrame:
    """One row per arm (only `arms`, the user's builds, when given): its build's bits per weight,
    median clean warm decode tok/s, and fidelity."""
    decode = (
        bench[bench["status"] == "ok"].groupby("arm")["decode_tok_s"].median().rename("decode_tok_s_median")
    )
    fid = fidelity[fidelity["status"] == "ok"].set_index("arm")[["top1", "kl_mean"]]
    chosen, arms = arms, bench[["arm", "build"]].drop_duplicates().set_index("arm")
    frame = arms.join(decode).join(fid, how="outer").reset_index()
    if chosen is not None:
        frame = frame[frame["arm"].isin(chosen)]
    return frame.merge(builds[["build", "bits_per_weight", "format"]], on="build", how="left")


def pareto_chart(frame: pd.DataFrame) -> alt.Chart:
    """Bits per weight against fidelity and against decode speed: a Pareto view at a glance."""
    base = alt.Chart(frame).encode(
        x=alt.X("bits_per_weight:Q", title="bits per weight (scales and zeros included)"),
        color=alt.Color("arm:N"),
        tooltip=[
            "arm",
            "build",
            "format",
            alt.Tooltip("bits_per_weight:Q", format=".2f"),
            alt.Tooltip("top1:Q", format=".4f"),
            alt.Tooltip("decode_tok_s_median:Q", format=".1f"),
        ],
    )
    fidelity = base.mark_point(filled=True, size=90).encode(
        y=alt.Y("top1:Q", title="top-1 agreement", scale=alt.Scale(zero=False))
    )
    speed = base.mark_point(filled=True, size=90, shape="diamond").encode(
        y=alt.Y("decode_tok_s_median:Q", title="median decode tok/s (clean reps)")
    )
    return alt.hconcat(
        fidelity.properties(width=300, height=260), speed.properties(width=300, height=260)
    ).properties(title="Builds: size against fidelity and speed")


def kl_ecdf_chart(positions: pd.DataFrame) -> alt.Chart:
    """Distribution of per-position KL for every arm, as an ECDF on a log axis (tails visible)."""
    frame = positions[["arm", "kl"]].copy()
    frame["kl"] = frame["kl"].clip(lower=1e-7)
    frame = frame.sort_values(["arm", "kl"])
    order = frame.groupby("arm").cumcount()
    size = frame.groupby("arm")["kl"].transform("size")
    frame["ecdf"] = (order + 1) / size
    sampled = frame[order % (size // 400).clip(lower=1) == 0]  # about 400 points per arm
    return (
        alt.Chart(sampled)
        .mark_line()
        .encode(
            x=alt.X(
                "kl:Q",
                title="KL(ref || arm) per position, nats (clipped at 1e-7)",
                scale=alt.Scale(type="log"),
            ),
            y=alt.Y("ecdf:Q", title="fraction of positions"),
            color="arm:N",
            tooltip=["arm", alt.Tooltip("kl:Q", format=".2e"), alt.Tooltip("ecdf:Q", format=".3f")],
        )
        .properties(width=480, height=300, title="Per-position KL distribution (ECDF)")
    )


def ranking_chart(frame: pd.DataFrame) -> alt.Chart:
    """KL (with 2 SE) against the legacy greedy check: arms the greedy count ties, KL separates."""
    shown = frame.copy()
    shown["kl_lo"] = (shown["kl_mean"] - 2 * shown["kl_mean_se"]).clip(lower=1e-7)
    shown["kl_hi"] = shown["kl_mean"] + 2 * shown["kl_mean_se"]
    base = alt.Chart(shown).encode(y=alt.Y("arm:N", sort=alt.EncodingSortField("kl_mean"), title=None))
    kl = base.mark_point(filled=True, size=70).encode(
        x=alt.X("kl_mean:Q", title="mean KL (log, ±2 SE)", scale=alt.Scale(type="log")), color="kl_method:N"
    ) + base.mark_errorbar().encode(x="kl_lo:Q", x2="kl_hi:Q")
    greedy = base.mark_bar().encode(
        x=alt.X("greedy_match:Q", title="greedy continuations reproduced (of 12)")
    )
    return alt.hconcat(kl.properties(width=300), greedy.properties(width=200)).properties(
        title="KL ranks builds; the legacy greedy check saturates"
    )


def memory_ledger_chart(frame: pd.DataFrame) -> alt.Chart:
    """Stacked RssAnon per arm and process: baseline, attributed components, unexplained."""
    parts = frame[
        (frame["status"] == "ok") & frame["kind"].isin(["baseline", "attributed", "unexplained"])
    ].copy()
    parts["who"] = parts["arm"] + " · " + parts["process"]
    parts["mb"] = parts["mb"].clip(lower=0)  # a negative unexplained (over-attribution) shows as 0 here
    failed = int((frame["status"] == "failed").groupby(frame["arm"]).any().sum()) if len(frame) else 0
    return (
        alt.Chart(parts)
        .mark_bar()
        .encode(
            y=alt.Y("who:N", title=None),
            x=alt.X("sum(mb):Q", title="RssAnon, MiB"),
            color=alt.Color("component:N", title="component", scale=alt.Scale(scheme="tableau20")),
            order=alt.Order("kind:N"),
            tooltip=["arm", "process", "component", "kind", "method", alt.Tooltip("mb:Q", format=".1f")],
        )
        .properties(
            width=480,
            height=26 * max(parts["who"].nunique(), 1),
            title=f"Where RssAnon goes, per arm and process ({failed} failed arms not shown)",
        )
    )


def imports_chart(frame: pd.DataFrame) -> alt.Chart:
    """Median import time per entry point, and the modules that cost the most by their own time."""
    ok = frame[frame["status"] == "ok"]
    totals = ok[ok["module"] == "(total)"].groupby("entry", as_index=False)["cumulative_s"].median()
    modules = ok[ok["module"] != "(total)"].groupby(["entry", "module"], as_index=False)["self_s"].median()
    top = modules.sort_values("self_s", ascending=False).groupby("entry").head(8)
    left = (
        alt.Chart(totals)
        .mark_bar()
        .encode(
            y=alt.Y("entry:N", title=None),
            x=alt.X("cumulative_s:Q", title="import time, s (median, -X importtime)"),
            tooltip=["entry", alt.Tooltip("cumulative_s:Q", format=".2f")],
        )
        .properties(width=260, height=26 * max(len(totals), 1))
    )
    right = (
        alt.Chart(top)
        .mark_bar()
        .encode(
            y=alt.Y("module:N", title=None, sort="-x"),
            x=alt.X("self_s:Q", title="self time, s"),
            color=alt.Color("entry:N"),
            tooltip=["entry", "module", alt.Tooltip("self_s:Q", format=".3f")],
        )
        .properties(width=260, height=14 * max(top["module"].nunique(), 1))
    )
    return alt.hconcat(left, right).properties(title="What a rep pays before it can load a model")


def kernels_chart(frame: pd.DataFrame) -> alt.Chart:
    """Roofline at the largest thread count: GFLOP/s against arithmetic intensity, cold caches,
    under the measured STREAM-triad slope and bf16 matmul peak."""
    threads = int(frame["threads"].max())
    at = frame[frame["threads"] == threads]
    bandwidth = float(at.loc[at["kernel"] == "stream_triad", "gb_s"].iloc[0])
    peak = float(at.loc[at["kernel"] == "bf16_matmul_peak", "gflop_s"].iloc[0])
    points = at[
        (at["status"] == "ok") & at["m"].notna() & ~at["kernel"].str.startswith(("stream", "bf16_matmul_p"))
    ]
    points = points.assign(intensity=points["gflop_s"] / points["gb_s"])
    grid = [0.1 * 1.25**i for i in range(45)]
    roof = pd.DataFrame({"intensity": grid, "gflop_s": [min(peak, bandwidth * x) for x in grid]})
    line = (
        alt.Chart(roof)
        .mark_line(color="black")
        .encode(
            x=alt.X("intensity:Q", scale=alt.Scale(type="log"), title="FLOP per byte moved"),
            y=alt.Y("gflop_s:Q", scale=alt.Scale(type="log"), title="GFLOP/s"),
        )
    )
    dots = (
        alt.Chart(points)
        .mark_point(filled=True, size=50)
        .encode(
            x="intensity:Q",
            y="gflop_s:Q",
            color=alt.Color("kernel:N"),
            shape=alt.Shape("m:O", title="batch"),
            tooltip=[
                "kernel",
                "layer",
                "m",
                alt.Tooltip("us:Q", format=".1f"),
                alt.Tooltip("gb_s:Q", format=".1f"),
                alt.Tooltip("pct_of_ceiling:Q", format=".0f"),
            ],
        )
    )
    return (line + dots).properties(
        width=480,
        height=320,
        title=(
            f"Kernels vs measured ceilings, {threads} threads "
            f"(triad {bandwidth:.1f} GB/s, bf16 peak {peak:.0f} GFLOP/s)"
        ),
    )


def deployable_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The decision's deployable builds (a table without the column has only those)."""
    return frame[frame["deployable"].astype(bool)] if "deployable" in frame else frame


def budget_chart(frame: pd.DataFrame) -> alt.Chart:
    """Each deployable build's value (dot) and 95% interval (line) against each requirement's bound
    (red rule), one panel per requirement; colour = that cell's verdict."""
    shown = deployable_rows(frame).dropna(subset=["value"]).copy()
    shown["label"] = shown["requirement"] + " (" + shown["unit"] + ")"
    base = alt.Chart().encode(y=alt.Y("arm:N", title=None))
    interval = base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title=None), x2="high:Q")
    value = base.mark_point(filled=True, size=70).encode(
        x="value:Q",
        color=alt.Color(
            "verdict:N",
            scale=alt.Scale(domain=["met", "not met", "undecided"], range=["#2ca02c", "#d62728", "#ff7f0e"]),
        ),
        tooltip=["arm", "requirement", alt.Tooltip("value:Q", format=".3g"), "low", "high", "verdict"],
    )
    bound = alt.Chart().mark_rule(color="#d62728", strokeDash=[4, 3]).encode(x="bound:Q")
    return (
        alt.layer(interval, value, bound, data=shown)
        .properties(width=260, height=24 * max(shown["arm"].nunique(), 1))
        .facet(facet=alt.Facet("label:N", title=None), columns=2)
        .resolve_scale(x="independent")
        .properties(title="Each build against the budget: value, 95% interval, bound")
    )


def tradeoff_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per deployable arm: decode rate and mean KL with their intervals, and memory."""
    shown = deployable_rows(frame).dropna(subset=["value"])
    wide = {}
    for name in ("decode_tok_s", "kl_mean", "peak_rss_anon_mb"):
        cells = shown[shown["metric"] == name].set_index("arm")[["value", "low", "high", "bound"]]
        wide[name] = cells.add_prefix(f"{name}_")
    joined = (
        wide["decode_tok_s"].join(wide["kl_mean"], how="inner").join(wide["peak_rss_anon_mb"], how="left")
    )
    joined = joined.reset_index()
    joined["engine"] = joined["arm"].str.split("/").str[0]
    return joined


def tradeoff_chart(frame: pd.DataFrame) -> alt.Chart:
    """Fidelity (mean KL, lower is better) against decode rate, each with its 95% interval, the point's
    size its peak memory, colour its engine; the budget's bounds as dashed rules."""
    data = tradeoff_frame(frame)
    if data.empty:
        return (
            alt.Chart(pd.DataFrame({"x": []}))
            .mark_point()
            .properties(title="Fidelity against decode rate: the budget needs decode_tok_s and kl_mean")
        )
    x = alt.X("decode_tok_s_value:Q", title="decode tok/s (one thread, warm)", scale=alt.Scale(zero=False))
    y = alt.Y("kl_mean_value:Q", title="mean KL vs bf16 reference (nats)", scale=alt.Scale(type="symlog"))
    base = alt.Chart(data)
    points = base.mark_point(filled=True, opacity=0.8).encode(
        x=x,
        y=y,
        color=alt.Color("engine:N"),
        size=alt.Size("peak_rss_anon_mb_value:Q", title="peak RssAnon (MiB)"),
        tooltip=[
            "arm",
            alt.Tooltip("decode_tok_s_value:Q", format=".3g"),
            alt.Tooltip("kl_mean_value:Q", format=".3g"),
            alt.Tooltip("peak_rss_anon_mb_value:Q", format=".3g"),
        ],
    )
    across = base.mark_rule().encode(x="decode_tok_s_low:Q", x2="decode_tok_s_high:Q", y=y, color="engine:N")
    down = base.mark_rule().encode(y="kl_mean_low:Q", y2="kl_mean_high:Q", x=x, color="engine:N")
    labels = base.mark_text(align="left", dx=6, dy=-6, fontSize=9).encode(x=x, y=y, text="arm:N")
    bounds = data.iloc[:1]
    kl_bound = alt.Chart(bounds).mark_rule(color="#d62728", strokeDash=[4, 3]).encode(y="kl_mean_bound:Q")
    rate_bound = (
        alt.Chart(bounds).mark_rule(color="#d62728", strokeDash=[4, 3]).encode(x="decode_tok_s_bound:Q")
    )
    return alt.layer(across, down, points, labels, kl_bound, rate_bound).properties(
        width=520,
        height=360,
        title="Fidelity against decode rate, size = memory; dashed: the budget's bounds",
    )


CHARTS = {
    "decision": budget_chart,
    "tradeoff": tradeoff_chart,
    "warm": warm_chart,
    "validity": validity_chart,
    "fidelity": fidelity_chart,
    "gates": gates_chart,
    "agent_summary": agent_chart,
    "fidelity_positions": kl_ecdf_chart,
    "memory_ledger": memory_ledger_chart,
    "imports": imports_chart,
    "kernels": kernels_chart,
}


def _atomic_save(chart: alt.Chart, path: str, **kwargs) -> None:
    with atomic_path(path) as tmp:
        chart.save(str(tmp), **kwargs)


def save_chart(chart: alt.Chart, *, png: str, svg: str, html: str) -> None:
    _atomic_save(chart, png, scale_factor=2)
    _atomic_save(chart, svg)
    with disk_cached_bundle():
        _atomic_save(chart, html, inline=True)
