"""Where edgebench keeps what it can always rebuild (code-digest facts, the charts' JavaScript
bundle): $EDGEBENCH_CACHE_DIR, else $XDG_CACHE_HOME/edgebench, else ~/.cache/edgebench."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "EDGEBENCH_CACHE_DIR"


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "edgebench")
