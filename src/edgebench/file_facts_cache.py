"""What the code-digest reader found in a file (its imports, the config keys it reads), kept on
disk between processes and keyed by the file's content.

Every Snakefile parse digests some forty rules' import closures, and reading the syntax trees of
the package's modules is about a third of a parse (a dry run, a lint, each cluster job's own
parse). The facts of a file depend only on its bytes, its path and the package it sits in, so the
key is a hash of those: an edit, however small and however soon after the last parse, is a new
key, and a stale entry can never stand in for an edited file. The file also records a hash of the
reader's own source, so a change to how facts are read discards every entry.

The cache is only a shortcut: a cache folder that cannot be read or written, or a file that is
not valid JSON, means the facts are read from the source as before.
"""

from __future__ import annotations

import atexit
import hashlib
import json
from pathlib import Path

from edgebench.cache_dir import cache_dir
from edgebench.io import write_text

MAX_ENTRIES = 4000  # beyond this a write keeps only what its own process used


def cache_file() -> Path:
    """The cache's file, in edgebench's cache folder."""
    return cache_dir() / "file-facts.json"


def file_key(path: Path, package: Path, content: bytes) -> str:
    return hashlib.sha256(b"%s\0%s\0%s" % (str(path).encode(), str(package).encode(), content)).hexdigest()


class FileFactsCache:
    """Facts by key, loaded once per process and written back at its exit when it learned any."""

    def __init__(self, path: Path, reader_digest: str):
        self.path, self.reader_digest = path, reader_digest
        self.loaded: dict[str, dict] | None = None
        self.used: dict[str, dict] = {}
        self.learned = False

    def _entries(self) -> dict[str, dict]:
        if self.loaded is None:
            self.loaded = self._read()
        return self.loaded

    def _read(self) -> dict[str, dict]:
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # none yet, unreadable or half-written by an old version
            return {}
        if not isinstance(stored, dict) or stored.get("reader") != self.reader_digest:
            return {}
        entries = stored.get("facts")
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str) -> dict | None:
        found = self._entries().get(key)
        if found is not None:
            self.used[key] = found
        return found

    def put(self, key: str, facts: dict) -> None:
        self._entries()[key] = self.used[key] = facts
        if not self.learned:
            self.learned = True
            atexit.register(self.save)

    def save(self) -> None:
        """Merge with what other processes wrote meanwhile, then replace the file atomically."""
        entries = {**self._read(), **self.used}
        if len(entries) > MAX_ENTRIES:
            entries = dict(self.used)
        try:
            write_text(json.dumps({"reader": self.reader_digest, "facts": entries}), self.path)
        except OSError:  # a read-only or full cache folder: the next parse reads the source again
            pass
