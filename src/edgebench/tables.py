"""The table registry: every table's name, the rule and config section that make it, its column
contract, what an item's verdict reads for it, the charts drawn from it, and whether its rows can
be retracted; plus atomic joins of raw rows.

Its metrics (name, unit, direction) live in `edgebench.metrics`, keyed by table. The roadmap
schema's table enum, the items' inputs, the study's final outputs and the retraction check all
read this registry, so adding a table is its entry here and the rule that makes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pandas as pd

from edgebench.metrics import COLD_METRICS, METRICS, WARM_METRICS
from edgebench.provenance import PROVENANCE_COLUMNS

STATUSES = ("ok", "failed", "contended", "retracted")

# Every row of every raw table starts with these: its identity, then its provenance.
ROW_COLUMNS = (
    "arm",
    "engine",
    "build",
    "rep",
    "order_position",
    "status",
    "error",
    "started_at",
    "wall_s",
    "kernel_path",  # the kernel the engine's rule picks for the arm on this CPU (also on a refusal)
    "layer_kernels",  # what the loaded model's layers ran, per layer type, read from the engine
    *PROVENANCE_COLUMNS,
)

WARM_COLUMNS = (
    *ROW_COLUMNS,
    "session",  # which of the study's independent warm sessions (bench.warm_sessions)
    "round",
    "round_order",
    "seed",
    "design",  # duet, interleaved or sequential (edgebench.bench.session)
    "slot",
    "partner",
    "core",
    "concurrent_pairs",  # pairs sampled at the same time, one per core
    "settle_s",
    "pair_wall_s",
    "stolen_frac",
    "cpu_s",
    "runqueue_wait_s",
    "steal_s",
    "idle_engines_cpu_s",
    "injected",  # an inject_alternate calibration arm: its loss was on in this sample (else empty)
    "prefill_s",
    "decode_s",
    "window_s",
    "window_tokens",
    *WARM_METRICS,
)

FIDELITY_COLUMNS = (
    *ROW_COLUMNS,
    "positions",
    "top1",
    "top1_se",
    "kl_mean",
    "kl_mean_se",
    "kl_median",
    "kl_p90",
    "kl_p99",
    "kl_p999",
    "kl_max",
    "dp_rms",
    "ppl_ratio",
    "kl_method",
    "topk",
    "greedy_match",
    "greedy_prompts",
)

# Agent episodes (edgebench.agent.episode.result_row) with the arm's identity and provenance.
AGENT_TRIAL_COLUMNS = (
    *ROW_COLUMNS,
    "policy",
    "strategy",  # how the LLM's actions were decoded: free, structured or check
    "study_strategy",  # agent.strategy (verdicts and budgets), not one of agent.other_strategies
    "task_id",
    "template",
    "variant",
    "already_satisfied",
    "instance",
    "trial",
    "seed",
    "success",
    "goal_met",
    "untouched_if_satisfied",
    "unrelated_unchanged",
    "exact_change",
    "status_ok",
    "reached",
    "final_status",
    "steps",
    "budget",
    "invalid_actions",
    "wall_s",
    "changes",
    "sampling_seed",
)

# What an item's verdict reads for a table: its cold reps, its arms' fidelity summaries, its arms'
# agent trials, a check's one-line report, or the joined table itself.
RAW_KINDS = ("reps", "fidelity_summaries", "agent_trials", "check", "joined")


@dataclass(frozen=True)
class Table:
    name: str
    rule: str  # the rule that writes it
    section: str = ""  # the config section a study gives to make it; "" = every study
    columns: tuple[str, ...] = ()  # its contract, checked when raw rows are joined
    raw: str = "joined"  # one of RAW_KINDS
    charts: tuple[str, ...] = ()  # charts drawn from it (png, svg and html under charts/)
    chart_rule: str = "chart"  # the rule that draws them: the generic one, or the table's own
    retractable: bool = False  # retractions may name its rows
    final: bool = True  # among a study's outputs (False: made only when asked for, or a check)
    metrics_of: str = ""  # a table computed per metric of another table (validity: warm's)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(name for name, m in METRICS.items() if m.table in (self.name, self.metrics_of))

    @property
    def value_columns(self) -> tuple[str, ...]:
        """What an item may name as its metric: the contract's columns and the table's metrics."""
        return (*self.columns, *self.metrics, *(METRICS[m].source_column for m in self.metrics))


def _tables(*tables: Table) -> dict[str, Table]:
    return {table.name: table for table in tables}


TABLES = _tables(
    Table(
        "bench",
        "study_table",
        columns=(*ROW_COLUMNS, "study", "round", "stolen_frac", "steal_s", "attempt", *COLD_METRICS),
        raw="reps",
        retractable=True,
    ),
    Table("warm", "warm_table", columns=WARM_COLUMNS, charts=("warm",), retractable=True),
    Table(
        "fidelity",
        "fidelity_table",
        columns=FIDELITY_COLUMNS,
        raw="fidelity_summaries",
        charts=("fidelity",),
        retractable=True,
    ),
    Table("warm_noise", "warm_noise"),
    Table("machine", "machine_fingerprint"),
    Table("compare", "compare_and_gates"),
    Table("gates", "compare_and_gates", charts=("gates",)),
    Table("validity", "validity", section="calibration", charts=("validity",), metrics_of="warm"),
    Table("crosscheck", "crosscheck", section="crosscheck"),
    Table("compile_cost", "compile_cost", section="compiled"),
    Table(
        "agent_trials",
        "agent_tables",
        section="agent",
        columns=AGENT_TRIAL_COLUMNS,
        raw="agent_trials",
        retractable=True,
    ),
    Table("agent_summary", "agent_tables", section="agent", charts=("agent_summary",)),
    Table("agent_throughput", "agent_tables", section="agent"),
    Table("builds", "builds_table", charts=("pareto",), chart_rule="pareto_chart"),
    Table("fidelity_positions", "fidelity_positions_table", charts=("fidelity_positions",)),
    Table(
        "fidelity_ranking", "fidelity_ranking", charts=("fidelity_ranking",), chart_rule="fidelity_ranking"
    ),
    Table("memory_ledger", "memory_ledger_table", section="diagnostics", charts=("memory_ledger",)),
    Table("imports", "imports", section="diagnostics", charts=("imports",)),
    Table("import_summary", "import_summary", section="diagnostics"),
    Table("kernels", "kernels", section="diagnostics", charts=("kernels",)),
    Table("decode_attribution", "decode_attribution", section="diagnostics"),
    Table("decode_profile", "decode_profile_table", section="diagnostics"),
    Table("omp_regions", "omp_regions", section="diagnostics"),
    Table("decision", "decision", section="requirements", charts=("decision", "tradeoff")),
    Table("verdicts", "verdicts_table", section="roadmap"),
    Table("pilot", "pilot", final=False),
    Table("retracted_figures", "retraction_check", raw="check", final=False),
)

# The column contracts, by table (tables whose columns are their rule's own have none).
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {name: t.columns for name, t in TABLES.items() if t.columns}
RETRACTABLE = tuple(name for name, t in TABLES.items() if t.retractable)
GENERIC_CHARTS = tuple(chart for t in TABLES.values() if t.chart_rule == "chart" for chart in t.charts)
# The table each generic chart is drawn from (a table may have several charts).
CHART_TABLES = {chart: t.name for t in TABLES.values() if t.chart_rule == "chart" for chart in t.charts}


def table(name: str) -> Table:
    try:
        return TABLES[name]
    except KeyError:
        raise KeyError(f"unknown table {name!r}; known tables: {sorted(TABLES)}") from None


def study_tables(sections: set[str]) -> list[Table]:
    """The tables a study makes: those of every study, and those whose section it gives."""
    return [t for t in TABLES.values() if t.final and (not t.section or t.section in sections)]


def check_columns(table: str, frame: pd.DataFrame) -> None:
    """Fail naming the missing columns, so a table never ships without its contract."""
    missing = [c for c in TABLE_COLUMNS[table] if c not in frame.columns]
    if missing:
        raise ValueError(f"table {table!r} lacks columns {missing}")
    bad = sorted(set(frame["status"]) - set(STATUSES))
    if bad:
        raise ValueError(f"table {table!r} has unknown status values {bad}; allowed: {STATUSES}")


def rows_frame(table: str, rows: list[dict]) -> pd.DataFrame:
    """Rows as a frame with the table's columns first (missing ones as NA) and extra columns kept."""
    frame = pd.DataFrame(rows)
    for column in TABLE_COLUMNS[table]:
        if column not in frame.columns:
            frame[column] = pd.NA
    extra = [c for c in frame.columns if c not in TABLE_COLUMNS[table]]
    return frame[[*TABLE_COLUMNS[table], *extra]]


def join_parquet(table: str, paths: list[str | os.PathLike]) -> pd.DataFrame:
    """Concatenate raw row files of one table and check the contract."""
    if not paths:
        raise ValueError(f"no raw files to join into table {table!r}")
    frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    frame = rows_frame(table, frame.to_dict("records"))
    check_columns(table, frame)
    return frame
