"""Rows: every row starts from the arm's identity and the study's provenance."""

from __future__ import annotations

from datetime import UTC, datetime

from edgebench.models.source import model_name
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
        **provenance(
            run_id=config["run_id"],
            model=model_name(config["model"]),
            config_digest=digest_json(config),
            code_digest=code_digest,
            cpus=cpus,
            threads=threads,
        ),
    }
