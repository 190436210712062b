"""One scheduled rep: spec for the worker, the guarded run, the straggler rule, the finished rows."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, replace

import pandas as pd

from edgebench.arm_refusal import refusal
from edgebench.bench.rep_process import run_worker
from edgebench.bench.spec import engine_spec
from edgebench.metrics import metric
from edgebench.rows import arm_row


def straggler_reason(value: float, clean_values: list[float], name: str, k: float) -> str:
    """Non-empty when `value` is more than k times worse than the median of the clean values."""
    if not clean_values or value != value:  # no baseline yet, or NaN
        return ""
    median = statistics.median(clean_values)
    slow = value < median / k if metric(name).direction == "higher" else value > median * k
    return (
        f"straggler: {name} {value:.4g} is over {k}x worse than the clean median {median:.4g}" if slow else ""
    )


def earlier_clean_values(paths: list[str], name: str) -> list[float]:
    values = []
    for path in paths:
        frame = pd.read_parquet(path)
        values += frame.loc[frame["status"] == "ok", name].dropna().astype(float).tolist()
    return values


@dataclass(frozen=True)
class RepJob:
    """One bench_rep job: the config sections it reads, which rep of which arm, the rep's slot in the
    rotated schedule (round, order_position; computed by the DAG), its build, its code digest."""

    config: dict
    study: str
    arm: str
    rep: int
    slot: dict
    build_dir: str
    code_digest: str


def run_attempt(job: RepJob, attempt: int) -> dict:
    config, study, arm_name, rep, slot = job.config, job.study, job.arm, job.rep, job.slot
    build_dir, code_digest = job.build_dir, job.code_digest
    bench = config["bench"]
    row = arm_row(
        config,
        arm_name,
        code_digest=code_digest,
        rep=rep,
        order_position=slot["order_position"],
        cpus=bench.get("cpus"),
    )
    cores = bench.get("cpus") or sorted(os.sched_getaffinity(0))
    fault = next(
        (
            f
            for f in bench["faults"]
            if f["arm"] == arm_name and f["rep"] == rep and f["study"] == study and attempt == 1
        ),
        None,
    )
    spec = replace(engine_spec(config, arm_name, build_dir), fault=fault)
    print(
        f"{study} rep {rep} of {arm_name} (round {slot['round']}, position {slot['order_position']}, "
        f"attempt {attempt}) on cores {cores}",
        flush=True,
    )
    refused = refusal(config, arm_name)
    if refused:  # the worker would refuse it at load: no process started only to say so
        result = refused_result(refused)
    else:
        result = run_worker(spec, cores, float(bench["timeout_s"]), float(bench["sample_interval_s"]))
    if result["status"] == "ok" and result["stolen_frac"] > float(bench["contention_limit"]):
        result["status"] = "contended"
    row.update(result)
    row.update(study=study, round=slot["round"], attempt=attempt)
    print(f"{arm_name} rep {rep} attempt {attempt}: {row['status']} in {row['wall_s']:.1f} s", flush=True)
    return row


def refused_result(error: str) -> dict:
    """The worker's result fields for a rep the CPU rule refused before it started."""
    return {
        "status": "failed",
        "error": error,
        "wall_s": 0.0,
        "peak_rss_anon_mb": float("nan"),
        "stolen_frac": 0.0,
        "steal_s": 0.0,
        "rss_samples": 0,
    }


def measure_rep(job: RepJob, earlier: list[str]) -> list[dict]:
    """Run a rep in a fresh, pinned, guarded process; a straggler is re-run once and both attempts
    are kept. `earlier` are this arm's previous rep files in the same study."""
    bench = job.config["bench"]
    name, k = bench["straggler_metric"], float(bench["straggler_k"])
    clean = earlier_clean_values(earlier, name)
    rows = [run_attempt(job, attempt=1)]
    reason = (
        straggler_reason(float(rows[0].get(name, float("nan"))), clean, name, k)
        if rows[0]["status"] == "ok"
        else ""
    )
    if reason:
        rows[0].update(status="contended", error=f"{reason}; re-run once")
        rows.append(run_attempt(job, attempt=2))
        again = straggler_reason(float(rows[1].get(name, float("nan"))), clean, name, k)
        if again and rows[1]["status"] == "ok":
            rows[1].update(status="contended", error=f"{again}; still slow after one re-run")
    return rows
