"""Create one environment with `uv`: a virtual environment of the main environment's Python, the
spec's requirements with edgebench itself (editable, so its engines, workers and vLLM plugin are the
checkout's), the spec's removals, then a check that each engine naming it imports. The folder
appears whole or not at all: it is built beside its final name and renamed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from edgebench.envs.record import RECORD
from edgebench.envs.sources import pip_settings, uv_source_args
from edgebench.envs.spec import cpu_refusal, environment_digest, normalized
from edgebench.io import write_text
from edgebench.machine.identity import cpuinfo_field
from edgebench.procfs import cpu_flags

REPOSITORY = Path(__file__).resolve().parents[3]  # edgebench's checkout (installed editable here)
INSTALL_TIMEOUT_S = 1800  # resolving and downloading a whole engine stack on a slow link
IMPORT_TIMEOUT_S = 600  # an engine's first import compiles bytecode of thousands of files


class EnvironmentNotCreated(RuntimeError):
    """An environment that cannot be created, or whose engine does not import: one line saying so."""


def write_record(folder: Path, record: dict) -> None:
    """The record last: a folder without one is an environment that was never finished."""
    folder.mkdir(parents=True, exist_ok=True)
    write_text(json.dumps(record, indent=2, sort_keys=True), folder / RECORD)


def uv_binary() -> str:
    """uv from the main environment (requirements.txt installs it), else from PATH."""
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.is_file() else shutil.which("uv")
    if not found:
        raise EnvironmentNotCreated("uv is not installed: `make setup` installs it into .venv")
    return found


def _run(command: list[str], timeout_s: float, what: str) -> str:
    print("+", " ".join(command), flush=True)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as error:
        raise EnvironmentNotCreated(f"{what}: no answer within {timeout_s:.0f} s") from error
    print(result.stdout[-4000:], result.stderr[-8000:], sep="\n", flush=True)
    if result.returncode != 0:
        last = [line for line in result.stderr.splitlines() if line.strip()]
        raise EnvironmentNotCreated(f"{what}: {' '.join(last[-3:])[:600]}")
    return result.stdout


def _install(uv: str, python: str, spec: dict, name: str) -> None:
    fields = normalized(spec)
    requirements, remove = fields["requirements"], fields["remove"]
    sources = uv_source_args(pip_settings())
    _run(
        # bytecode compiled at install, as pip does for the main environment: where processes may not
        # write .pyc files (PYTHONDONTWRITEBYTECODE), every cold rep would otherwise compile its imports
        [
            uv,
            "pip",
            "install",
            "--compile-bytecode",
            "--python",
            python,
            *sources,
            *requirements,
            "-e",
            str(REPOSITORY),
        ],  # fmt: skip
        INSTALL_TIMEOUT_S,
        f"environment {name!r} ({', '.join(requirements)})",
    )
    if remove:
        _run([uv, "pip", "uninstall", "--python", python, *remove], 300, f"environment {name!r}: remove")


def check_imports(python: str, statements: dict[str, str], name: str) -> None:
    """Each engine's import statement (by engine), in a fresh process of the environment."""
    for engine, statement in statements.items():
        try:
            result = subprocess.run(
                [python, "-c", statement], capture_output=True, text=True, timeout=IMPORT_TIMEOUT_S
            )
        except subprocess.TimeoutExpired as error:
            raise EnvironmentNotCreated(
                f"environment {name!r}: {statement!r} ({engine}) did not finish in {IMPORT_TIMEOUT_S} s"
            ) from error
        if result.returncode != 0:
            last = [line for line in result.stderr.splitlines() if line.strip()][-1:]
            raise EnvironmentNotCreated(
                f"environment {name!r}: {statement!r} fails for engine {engine}: {' '.join(last)[:400]}"
            )


def _installed_versions(python: str) -> dict[str, str]:
    code = (
        "import json; from edgebench.provenance import package_versions; "
        "print(json.dumps(package_versions()))"
    )
    return json.loads(_run([python, "-c", code], 300, "reading the environment's versions").splitlines()[-1])


def refuse_on_this_cpu(name: str, spec: dict, folder: Path) -> bool:
    """Write a refusal record, and say so, when this CPU lacks what the environment needs."""
    refused = cpu_refusal(name, spec, cpu_flags(), cpuinfo_field("vendor_id"))
    if refused:
        print(refused, flush=True)
        write_record(folder, {"name": name, "digest": environment_digest(spec), "refused": refused})
    return bool(refused)


def create_environment(name: str, spec: dict, folder: Path, import_statements: dict[str, str]) -> dict:
    """Create the environment at `folder` (its name is the spec's digest) and return its record."""
    uv = uv_binary()
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    started = time.monotonic()
    _run([uv, "venv", "--relocatable", "--python", sys.executable, str(partial)], 300, "uv venv")
    python = str(partial / "bin" / "python")
    _install(uv, python, spec, name)
    check_imports(python, import_statements, name)
    record = {
        "name": name,
        "digest": environment_digest(spec),
        "spec": normalized(spec),
        "versions": _installed_versions(python),
        "create_s": round(time.monotonic() - started, 1),
    }
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    write_record(folder, record)
    return record
