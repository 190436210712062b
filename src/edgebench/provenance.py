"""Provenance stamped on every row: who measured what, where, with which code."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import socket
import subprocess
from pathlib import Path

from edgebench.engines.registry import ENGINES
from edgebench.isa import isa_columns
from edgebench.machine.identity import cpuinfo_field, machine_digest

TRACKED_PACKAGES = (
    "torch",
    *(info.package for info in ENGINES.values()),
    *(package for info in ENGINES.values() for package in info.tool_packages),
    "gptqmodel",
    "zentorch",
)

# Set in the processes edgebench starts under an arm's environment: its digest, for their own rows.
ENVIRONMENT_VARIABLE = "EDGEBENCH_ENVIRONMENT"
MAIN = "main"

GIT_TIMEOUT_S = 30  # a status over a slow network file system, never a hang

PROVENANCE_COLUMNS = (
    "run_id",
    "model",
    "git_commit",
    "git_dirty",
    "config_digest",
    "code_digest",
    "host",
    "machine_digest",
    "cpu_model",
    "isa_level",
    "isa_flags",
    "cpus_used",
    "threads",
    "versions",
    "environment",
)


def package_versions() -> dict[str, str]:
    """Installed versions of the stack, without importing the (slow) packages themselves."""
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def git_state(repo: Path) -> tuple[str, bool]:
    """HEAD commit and whether tracked files differ from it; ("unknown", True) outside a checkout."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=GIT_TIMEOUT_S,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            timeout=GIT_TIMEOUT_S,
        ).stdout.strip()
        return commit, bool(dirty)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, FileNotFoundError):
        return "unknown", True


def cpu_model() -> str:
    return cpuinfo_field("model name") or platform.processor() or "unknown"


def digest_json(value: object) -> str:
    """Stable short digest of a JSON-able value (config, arm options)."""
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def digest_files(paths: list[Path]) -> str:
    """Short digest of file contents, in sorted path order: what code produced a number."""
    h = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def study_provenance(*, run_id: str, config_digest: str, code_digest: str) -> dict[str, object]:
    """What is constant for one job: the run, the code and config digests, commit, host, CPU and
    package versions (a table carries it once as metadata; rows carry it as columns)."""
    commit, dirty = git_state(Path(__file__).resolve().parents[2])
    return {
        "run_id": run_id,
        "git_commit": commit,
        "git_dirty": dirty,
        "config_digest": config_digest,
        "code_digest": code_digest,
        "host": socket.gethostname(),
        "machine_digest": machine_digest(),
        "cpu_model": cpu_model(),
        **isa_columns(),
        "versions": package_versions(),
    }


def provenance(
    *,
    run_id: str,
    model: str,
    config_digest: str,
    code_digest: str,
    cpus: list[int] | None,
    threads: int,
    environment: dict | None = None,
) -> dict[str, object]:
    """The provenance columns as one dict, ready to merge into a row (`model`: the study's model).
    `environment`: the record of the environment the row's arm ran in, whose versions the row
    carries (None: this process's own environment, the main one unless this process runs in one)."""
    used = cpus if cpus is not None else sorted(os.sched_getaffinity(0))
    row = study_provenance(run_id=run_id, config_digest=config_digest, code_digest=code_digest)
    versions = environment["versions"] if environment else row["versions"]
    return {
        **row,
        "model": model,
        "cpus_used": ",".join(str(c) for c in used),
        "threads": int(threads),
        "versions": json.dumps(versions, sort_keys=True),
        "environment": environment["digest"] if environment else os.environ.get(ENVIRONMENT_VARIABLE, MAIN),
    }
