"""Rows: every row starts from the arm's identity and the study's provenance."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from edgebench.engines.registry import kernel_of
from edgebench.engines.vllm_engine import build_facts
from edgebench.jobs import environment_of
from edgebench.models.source import model_name
from edgebench.procfs import cpu_flags
from edgebench.provenance import digest_json, provenance


def arm_row(
    config: dict,
    arm_name: str,
    *,
    code_digest: str,
    rep: int = 0,
    order_position: int = 0,
    cpus: list[int] | None = None,
) -> dict:
    """Identity + provenance columns for one row of arm `arm_name`; callers add measurements.
    `cpus` are the cores a measurement was pinned to (bench.cpus); None: this process's affinity."""
    arm = config["arms"][arm_name]
    threads = len(cpus) if cpus else int(arm.get("threads", 2))
    return {
        "arm": arm_name,
        "engine": arm["engine"],
        "build": arm["build"],
        "rep": int(rep),
        "order_position": int(order_position),
        "status": "ok",
        "error": "",
        "started_at": datetime.now(UTC).isoformat(),
        "wall_s": float("nan"),
        "kernel_path": arm_kernel(config, arm_name, cpu_flags()),
        **provenance(
            run_id=config["run_id"],
            model=model_name(config["model"]),
            config_digest=digest_json(config),
            code_digest=code_digest,
            cpus=cpus,
            threads=threads,
            environment=environment_of(arm),
        ),
    }


def arm_kernel(config: dict, arm_name: str, flags: set[str]) -> str:
    """The kernel an arm's quantized layers run (bf16 for the reference): the rule each engine
    applies when it loads, so a refused arm's rows name the kernel it was refused for."""
    arm = config["arms"][arm_name]
    build = config.get("builds", {}).get(arm["build"], {})
    if build.get("method") == "existing" and (Path(build["path"]) / "config.json").is_file():
        facts = build_facts(Path(build["path"]))  # what the checkpoint says, not a guess
    else:
        facts = {"method": build.get("method"), "bits": build.get("bits", 16 if not build else 4)}
    return kernel_of(arm["engine"], arm, facts, flags)
