"""A workflow job's context, built once when its script starts.

`start_job(snakemake)` sends the script's output to the rule's log and records who is writing: the
rule, run id, digests of the code it can run and the config sections it reads, the commit, host,
CPU and package versions. Every table the job writes (edgebench.io.write_parquet) carries this
context once, as parquet metadata under the key `edgebench`; rows keep only what varies.
"""

from __future__ import annotations

from datetime import UTC, datetime

from edgebench.envs.record import arm_record, records_by_name
from edgebench.provenance import digest_json, package_versions, study_provenance
from edgebench.scriptlog import redirect_to_log

_CONTEXT: dict = {}
_ENVIRONMENTS: dict[str, dict] = {}


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
    # The records of the environments its arms run in (rules list them as the input `envs`).
    _ENVIRONMENTS.clear()
    _ENVIRONMENTS.update(records_by_name(list(getattr(getattr(sm, "input", None), "envs", None) or [])))
    return dict(_CONTEXT)


def resume_job(context: dict, environments: dict[str, dict]) -> None:
    """In a process started under an arm's environment: the job's context, with this process's own
    package versions, and its environment records."""
    _CONTEXT.clear()
    _CONTEXT.update({**context, "versions": package_versions()})
    _ENVIRONMENTS.clear()
    _ENVIRONMENTS.update(environments)


def current_context() -> dict:
    return dict(_CONTEXT)


def current_environments() -> dict[str, dict]:
    return dict(_ENVIRONMENTS)


def environment_of(arm: dict) -> dict | None:
    """The record of the environment an arm runs in (None: the main environment)."""
    return arm_record(_ENVIRONMENTS, arm)
