"""The report's first page (Snakemake's workflow description): the decision first, then how this
study measured, written from its own config, so it can never describe a design the study did not
run, then its findings. reStructuredText, which the report renders."""

from __future__ import annotations

import re

import pandas as pd

from edgebench.decision import cell_text, headline

# What each warm design does, as the config names it.
WARM_DESIGNS = {
    "interleaved": (
        "both arms of a pair resident on one core, taking turns {burst} decode tokens at a time, "
        "another pair on the other core"
    ),
    "duet": "two arms at once, one per core, cores swapped every round",
    "sequential": "one arm at a time",
}


def inline(markdown: str) -> str:
    """Markdown's inline code and bold as reStructuredText: `x` is emphasis there, and markup
    does not nest, so code inside bold stays bold text."""
    unnested = re.sub(r"\*\*(.+?)\*\*", lambda m: "**" + m.group(1).replace("`", "") + "**", markdown)
    return re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", unnested)


def decision_section(frame: pd.DataFrame | None) -> list[str]:
    if frame is None or frame.empty:
        return ["No deployment budget was given (config section ``requirements``): no decision.", ""]
    requirements = list(dict.fromkeys(frame["requirement"]))
    lines = [*(inline(line) for line in headline(frame)), "", ".. list-table::", "   :header-rows: 1", ""]
    lines += ["   * - build", "     - verdict", *(f"     - {req}" for req in requirements)]
    for arm, rows in frame.groupby("arm", sort=False):
        cells = {r["requirement"]: cell_text(r) for _, r in rows.iterrows()}
        lines += [f"   * - {arm}", f"     - **{rows['build_verdict'].iloc[0]}**"]
        lines += [f"     - {cells[req]}" for req in requirements]
    return [*lines, ""]


def design_section(config: dict, model: str) -> list[str]:
    """How this study measured: from its config sections, nothing fixed."""
    bench = config["bench"]
    design = bench.get("warm_design", "duet")
    warm = WARM_DESIGNS[design].format(burst=bench.get("burst_tokens", 4))
    arms = [a for a, spec in config["arms"].items() if spec.get("bench", True)]
    lines = [
        f"Model ``{model}``. {len(arms)} benchmarked arms: {', '.join(f'``{a}``' for a in arms)}.",
        "",
        f"- Start-up and memory: {bench['rounds']} cold reps per arm, each a fresh process, in "
        "rotated arm order, every sample watched by the contention guard.",
        f"- Throughput: resident engines over {bench['warm_rounds']} warm rounds in the "
        f"``{design}`` design ({warm}), {bench.get('warm_sessions', 1)} session(s).",
        f"- Comparisons: paired against ``{config['gates']['baseline']}``, with Student-t intervals "
        f"and a tolerance of {config['gates']['tolerance']:g}.",
    ]
    calibration = config.get("calibration")
    if calibration:
        injected = ", ".join(f"``{a}``" for a in calibration["injected"])
        alternating = [a for a in calibration["injected"] if config["arms"][a].get("inject_alternate")]
        lines.append(
            f"- Calibration in this study: the A/A twin ``{calibration['twin']}`` and injected "
            f"losses {injected}, in blocks of {calibration['block_rounds']} rounds"
            + (
                f"; {', '.join(f'``{a}``' for a in alternating)} turn their loss on and off by "
                "round and are read against their own rounds without it."
                if alternating
                else "."
            )
        )
    else:
        lines.append("- No gate calibration in this study (config section ``calibration``).")
    if config.get("fidelity"):
        lines.append("- Fidelity: teacher-forced over the shipped corpus against the bf16 reference.")
    return [*lines, ""]


def page(config: dict, model: str, decision: pd.DataFrame | None, findings: str) -> str:
    title = f"edgebench study {config['run_id']}"
    lines = [title, "=" * len(title), "", "Decision", "--------", "", *decision_section(decision)]
    lines += ["How this study measured", "-----------------------", "", *design_section(config, model)]
    lines += ["Findings", "--------", ""]
    if findings.strip():
        lines += ["::", "", *(f"   {line}" if line.strip() else "" for line in findings.splitlines())]
    else:
        lines.append("No findings were written.")
    # raw: the report renders the page as a Jinja template first, and findings may hold braces
    return "{% raw %}\n" + "\n".join(lines) + "\n{% endraw %}\n"
