"""What an environment is (its requirements, what to remove, the Python it runs) and its digest.

The digest names the environment's folder: the same spec in any study is the same folder, so a
second study creates nothing, and changing one pin makes a new folder that only the arms naming it
depend on. A local wheel or folder enters the digest by its content, so a rebuilt wheel at the same
path is a new environment.
"""

from __future__ import annotations

import hashlib
import json
import platform
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

# How environments are made (edgebench.envs.create); part of every digest.
CREATION = "uv pip install --compile-bytecode, edgebench editable"


def is_local(requirement: str) -> bool:
    """A wheel file or a project folder, as opposed to a PyPI requirement."""
    return requirement.endswith(".whl") or requirement.startswith((".", "/", "~"))


def requirement_problem(requirement: str) -> str | None:
    """Why a requirement cannot be installed, read from the text and the disk (None: it may)."""
    if is_local(requirement):
        path = Path(requirement).expanduser()
        if not path.exists():
            return f"{requirement!r} does not exist"
        if path.is_dir() and not any((path / name).is_file() for name in ("pyproject.toml", "setup.py")):
            return f"{requirement!r} is a folder without pyproject.toml or setup.py"
        return None
    try:
        Requirement(requirement)
    except InvalidRequirement as error:
        first_line = str(error).splitlines()[0]
        return f"{requirement!r} is not a pip requirement ({first_line})"
    return None


def _content_digest(path: Path) -> str:
    """A wheel's bytes, or a folder's files (its build inputs), as a short digest."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and _source(p))
    for file in files:
        h.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        h.update(file.read_bytes())
    return h.hexdigest()[:16]


def _source(path: Path) -> bool:
    """Files of a project folder that its build reads (not its caches or build outputs)."""
    skipped = {".git", "__pycache__", "build", "dist", ".venv"}
    return not skipped.intersection(path.parts) and not path.name.endswith(".pyc")


def normalized(spec: dict) -> dict:
    """The fields that define an environment, with local requirements' contents in them."""
    requirements = [str(r) for r in spec.get("requirements", [])]
    return {
        "python": platform.python_version(),
        "requirements": requirements,
        "remove": sorted(str(r) for r in spec.get("remove", [])),
        "needs_flags": sorted(spec.get("needs_flags", [])),
        "needs_vendor": spec.get("needs_vendor", ""),
        "edgebench": str(Path(__file__).resolve().parents[1]),  # the checkout installed into it
        "layout": CREATION,  # how edgebench creates it: a change there is a new environment
        "local": {
            r: _content_digest(Path(r).expanduser())
            for r in requirements
            if is_local(r) and Path(r).expanduser().exists()
        },
    }


def environment_digest(spec: dict) -> str:
    text = json.dumps(normalized(spec), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def arm_environment(config: dict, arm_name: str) -> str | None:
    """The name of the environment an arm runs in (None: the main one)."""
    return config["arms"][arm_name].get("env")


def environment_digests(config: dict) -> dict[str, str]:
    """Each environment an arm or a build of the study names, by name: its digest."""
    names = {arm_environment(config, arm) for arm in config["arms"]}
    names |= {spec.get("env") for spec in config.get("builds", {}).values()}
    names -= {None}
    return {name: environment_digest(config["environments"][name]) for name in sorted(names)}


def cpu_refusal(name: str, spec: dict, flags: set[str], vendor: str) -> str | None:
    """Why this CPU cannot run the environment's engine (None: it can), naming what is missing."""
    missing = sorted(set(spec.get("needs_flags", [])) - flags)
    if missing:
        return (
            f"environment {name!r} needs {', '.join(spec['needs_flags'])}; this CPU lacks "
            f"{', '.join(missing)} in /proc/cpuinfo, so the arm is not measured here"
        )
    wanted = spec.get("needs_vendor")
    if wanted and wanted != vendor:
        return (
            f"environment {name!r} needs a CPU whose vendor_id is {wanted}; this CPU's is "
            f"{vendor or 'unknown'} in /proc/cpuinfo, so the arm is not measured here"
        )
    return None
