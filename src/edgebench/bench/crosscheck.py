"""Cross-check edgebench's throughput against vLLM's own latency benchmark, in the same run.

One resident engine of the baseline arm, set up as in the warm session (one thread, pinned to one
core); each round runs vLLM's `benchmarks.latency` (batch 1,
input 16, output tg, its own code and timer, handed this engine) and edgebench's own samples, in an
order that alternates by round. Both time the same request: 16 prompt tokens, tg tokens generated.
The like-for-like figure is the request rate (tokens over the whole request); edgebench's decode
rate leaves the first token out, so its ratio to the tool is shown beside it. Agreement is the
geometric mean of per-round ratios with a t-interval.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from edgebench.bench.contract import EngineSpec
from edgebench.bench.session import ArmFailed, ArmProcess, SessionSettings, single_thread
from edgebench.bench.spec import engine_spec
from edgebench.bench.warm import settings_from
from edgebench.engines.registry import engine_info
from edgebench.rows import arm_row
from edgebench.stats import paired_estimate

AGREEMENT = 0.02  # edgebench must agree with the engine's own tool within 2%


def geometric_mean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values))))


def run_crosscheck(
    spec: EngineSpec, settings: SessionSettings, iters: int, workdir: Path, progress=print
) -> list[dict]:
    """Per-round rows: the tool's and edgebench's request rates and edgebench's decode rate."""
    # The engine as the warm session runs it: one thread, its whole process tree on one core.
    arm = ArmProcess.start("crosscheck", single_thread(spec), settings.cores[:1], workdir)
    tokens = int(spec.bench["decode_tokens"])
    rows = []
    try:
        arm.wait_ready(settings.timeout_s)
        for round_index in range(settings.rounds):
            order = ["tool", "edgebench"] if round_index % 2 == 0 else ["edgebench", "tool"]
            row = {
                "round": round_index,
                "order": ",".join(order),
                "iterations": iters,
                "status": "ok",
                "error": "",
            }
            for who in order:
                if who == "tool":
                    reply = arm.request(
                        {"op": "engine_latency", "iters": iters, "warmup": 1}, settings.timeout_s
                    )
                    row["tool_request_tok_s"] = geometric_mean([tokens / s for s in reply["latencies"]])
                else:
                    arm.request({"op": "warmup"}, settings.timeout_s)
                    samples = [
                        arm.request(
                            {"op": "sample", "index": 1000 + round_index * iters + i}, settings.timeout_s
                        )
                        for i in range(iters)
                    ]
                    row["edgebench_request_tok_s"] = geometric_mean(
                        [tokens / s["request_s"] for s in samples]
                    )
                    row["edgebench_decode_tok_s"] = geometric_mean([s["decode_tok_s"] for s in samples])
            progress(
                f"crosscheck round {round_index + 1}/{settings.rounds}: "
                f"tool {row['tool_request_tok_s']:.2f}, "
                f"edgebench {row['edgebench_request_tok_s']:.2f} (decode {row['edgebench_decode_tok_s']:.2f})"
            )
            rows.append(row)
    except ArmFailed as error:
        rows.append({"round": len(rows), "status": "failed", "error": str(error)})
    finally:
        arm.stop()
    return rows


def agreement_rows(rounds: list[dict], engine: str, tool: str) -> list[dict]:
    """Geometric-mean ratio edgebench / tool with its 95% t-interval, for the like-for-like request
    rate and for edgebench's decode rate."""
    ok = [r for r in rounds if r.get("status") == "ok"]
    out = []
    for metric, column in (
        ("request_tok_s", "edgebench_request_tok_s"),
        ("decode_tok_s", "edgebench_decode_tok_s"),
    ):
        logs = np.array([math.log(r[column] / r["tool_request_tok_s"]) for r in ok])
        est = paired_estimate(logs)
        out.append(
            {
                "engine": engine,
                "tool": tool,
                "edgebench_metric": metric,
                "tool_metric": "request_tok_s",
                "rounds": est.n,
                "ratio": est.ratio,
                "ci_low": est.ci_low,
                "ci_high": est.ci_high,
                "agreement": AGREEMENT,
                "within": bool(abs(est.ratio - 1) <= AGREEMENT) if est.n else False,
                "failed_rounds": len(rounds) - len(ok),
                "error": "; ".join(r.get("error", "") for r in rounds if r.get("status") != "ok"),
            }
        )
    return out


def crosscheck_tables(
    config: dict, check: dict, build_dir: str, code: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The agreement table (edgebench against the engine's own latency benchmark) and its rounds."""
    arm = check["arm"]
    spec = engine_spec(config, arm, build_dir)
    settings = settings_from(config)
    settings.rounds = int(check["rounds"])
    with tempfile.TemporaryDirectory(prefix="edgebench-crosscheck-") as workdir:
        rounds = run_crosscheck(spec, settings, int(check["iterations"]), Path(workdir))
        log = Path(workdir) / "crosscheck.log"
        print(log.read_text(errors="replace")[-3000:] if log.exists() else "", flush=True)
    identity = arm_row(config, arm, code_digest=code, cpus=config["bench"].get("cpus"))
    tool = engine_info(spec.engine).latency_tool
    frame = pd.DataFrame([{**identity, **row} for row in agreement_rows(rounds, spec.engine, tool)])
    per_round = pd.DataFrame([{**identity, **row, "rep": row["round"]} for row in rounds])
    return frame, per_round
