"""Where `uv` finds packages: the same indexes, find-links folders and constraints that pip is
configured with on this machine (pip's configuration files and PIP_* variables), so an environment
gets the same CPU torch wheel the main environment got, wherever pip was told to find it."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

PIP_CONFIG_TIMEOUT_S = 60

# pip's option -> uv's option; pip allows several values separated by white space.
OPTIONS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}


def pip_settings(python: str = sys.executable) -> dict[str, list[str]]:
    """pip's configured values of OPTIONS, from `pip config list` and the environment."""
    result = subprocess.run(
        [python, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        timeout=PIP_CONFIG_TIMEOUT_S,
        check=False,
    )
    settings: dict[str, list[str]] = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition("=")
        option = key.rsplit(".", 1)[-1]
        if option in OPTIONS:
            settings.setdefault(option, []).extend(shlex.split(value.strip().strip("'\"")))
    for option in OPTIONS:
        variable = "PIP_" + option.upper().replace("-", "_")
        settings.setdefault(option, []).extend(os.environ.get(variable, "").split())
    return {option: list(dict.fromkeys(values)) for option, values in settings.items() if values}


def _reachable(value: str) -> bool:
    """A local index or folder that is not there is skipped, as pip skips it (with a warning)."""
    if value.startswith("file://"):
        return Path(value.removeprefix("file://")).exists()
    if "://" in value:
        return True
    return Path(value).exists()


def uv_source_args(settings: dict[str, list[str]]) -> list[str]:
    """uv's arguments for pip's settings. With more than one index, uv picks the best version
    across all of them, as pip does, rather than the first index that has the package."""
    args: list[str] = []
    for option, values in settings.items():
        for value in values:
            if _reachable(value):
                args += [OPTIONS[option], value]
    if "--extra-index-url" in args or "--find-links" in args:
        args += ["--index-strategy", "unsafe-best-match"]
    return args
