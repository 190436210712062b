"""One scheduled rep: spec for the worker, the guarded run, and the finished row."""

from __future__ import annotations

import json
import os
from pathlib import Path

from edgebench.bench.runner import run_worker
from edgebench.rows import arm_row
from edgebench.schedule import schedule


def slot_of(config: dict, arm_name: str, rep: int):
    arms = [a for a, spec in config["arms"].items() if spec["bench"]]
    for slot in schedule(arms, config["bench"]["rounds"]):
        if slot.arm == arm_name and slot.round == rep:
            return slot
    raise KeyError(f"arm {arm_name!r} rep {rep} is not scheduled")


def measure_rep(config: dict, arm_name: str, rep: int, build_dir: str, code_digest: str) -> dict:
    """Run rep `rep` of an arm in a fresh, pinned, guarded process; always returns a row."""
    bench = config["bench"]
    arm = config["arms"][arm_name]
    slot = slot_of(config, arm_name, rep)
    row = arm_row(config, arm_name, code_digest=code_digest, rep=rep, order_position=slot.order_position)
    model_config = json.loads((Path(build_dir) / "config.json").read_text())
    cores = bench.get("cpus") or sorted(os.sched_getaffinity(0))
    spec = {
        "engine": arm["engine"],
        "build_dir": str(Path(build_dir).resolve()),
        "arm": arm,
        "vocab_size": int(model_config["vocab_size"]),
        "bench": bench,
    }
    print(
        f"rep {rep} of {arm_name} (round {slot.round}, position {slot.order_position}) on cores {cores}",
        flush=True,
    )
    result = run_worker(spec, cores, float(bench["timeout_s"]), float(bench["sample_interval_s"]))
    if result["status"] == "ok" and result["stolen_frac"] > float(bench["contention_limit"]):
        result["status"] = "contended"
    row.update(result)
    row.update(round=slot.round, attempt=1)
    print(f"rep {rep} of {arm_name}: {row['status']} in {row['wall_s']:.1f} s", flush=True)
    return row
