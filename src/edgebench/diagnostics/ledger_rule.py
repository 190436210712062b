"""The memory_ledger rule: one arm's ledger in a fresh process; a failure is a row, not a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from edgebench.arm_refusal import refusal
from edgebench.bench.contract import EngineSpec
from edgebench.bench.rep_process import root_cause
from edgebench.bench.spec import engine_spec
from edgebench.diagnostics.ledger import LEDGER_COLUMNS
from edgebench.io import write_parquet
from edgebench.rows import arm_row


def run_memory_ledger(
    config: dict, arm_name: str, *, build_json: str, out: str, code_digest: str, timeout_s: float = 1800
) -> pd.DataFrame:
    spec = engine_spec(config, arm_name, str(Path(build_json).parent))
    base = arm_row(config, arm_name, code_digest=code_digest, cpus=config["bench"].get("cpus"))
    print(f"memory ledger: {arm_name} ({spec.build_dir})", flush=True)
    refused = refusal(config, arm_name)  # the ledger process would refuse it at load
    rows, error = ([], refused) if refused else ledger_process(spec, timeout_s)
    if error:
        rows = [{column: None for column in LEDGER_COLUMNS} | {"component": "(failed)", "mb": float("nan")}]
    frame = pd.DataFrame(
        [{**base, **row, "status": "failed" if error else "ok", "error": error} for row in rows]
    )
    write_parquet(frame, out)
    shown = [c for c in ("process", "component", "kind", "mb") if c in frame]
    print(frame[shown].to_string())
    return frame


def ledger_process(spec: EngineSpec, timeout_s: float) -> tuple[list[dict], str]:
    """The ledger's rows from a fresh process, or none and why that process failed."""
    with tempfile.TemporaryDirectory(prefix="edgebench-ledger-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec.to_json()))
        try:
            proc = subprocess.run(
                [spec.python, "-m", "edgebench.diagnostics.ledger", str(spec_path), str(out_path)],
                timeout=timeout_s,
                check=False,
                env=os.environ.copy(),
                stderr=subprocess.PIPE,
                text=True,
            )
        except subprocess.TimeoutExpired:
            return [], f"ledger process timed out after {timeout_s} s"
        print(proc.stderr, file=sys.stderr, flush=True)  # the ledger process's log stays in the rule's
        if proc.returncode != 0:
            return [], f"ledger process exited {proc.returncode}: {root_cause(proc.stderr)}"
        return json.loads(out_path.read_text()), ""
