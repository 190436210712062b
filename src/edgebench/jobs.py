"""A workflow job's context, built once when its script starts.

`start_job(snakemake)` sends the script's output to the rule's log and records who is writing: the
rule, run id, digests of the code it can run and the config sections it reads, the commit, host,
CPU and package versions. Every table the job writes (edgebench.io.write_parquet) carries this
context once, as parquet metadata under the key `edgebench`; rows keep only what varies.
"""

from __future__ import annotations

from datetime import UTC, datetime

from edgebench.provenance import digest_json, study_provenance
from edgebench.scriptlog import redirect_to_log

_CONTEXT: dict = {}


def job_context(rule: str, code_digest: str, config: dict) -> dict:
    return {
        "rule": rule,
        **study_provenance(
            run_id=config.get("run_id", ""), config_digest=digest_json(config), code_digest=code_digest
        ),
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def start_job(sm) -> dict:
    """Redirect the script's output to its log and set the context every writer stamps."""
    if sm.log:
        redirect_to_log(sm.log[0])
    params = dict(sm.params.items()) if hasattr(sm.params, "items") else {}
    _CONTEXT.clear()
    _CONTEXT.update(job_context(sm.rule, params.get("code", ""), params.get("config") or {}))
    return dict(_CONTEXT)


def current_context() -> dict:
    return dict(_CONTEXT)
