"""vl-convert's JavaScript bundle (vega, vega-lite, vega-embed), cached on disk across processes.

An offline chart page inlines the bundle. vl-convert builds it once per process, which takes
seconds of one core, and every chart job is a process of its own, so a study paid that in every
chart and item job for the same bytes. The bundle depends only on vl-convert's version and the
vega-lite version asked for, which name the cache file: another version writes another file.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from edgebench.cache_dir import cache_dir
from edgebench.io import write_text


def cached_bundle(build, vl_version: str | None, version: str, where: Path) -> str:
    """The bundle for `vl_version` from `where`, else from `build(vl_version=...)`, then kept there.
    A cache that cannot be written costs only the time: the page is the same."""
    path = where / f"vega-bundle-vlconvert{version}-vl{vl_version or 'default'}.js"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    text = build(vl_version=vl_version)
    try:
        write_text(text, path)
    except OSError as error:
        print(f"vega bundle not cached at {path}: {error}", file=sys.stderr)
    return text


@contextlib.contextmanager
def disk_cached_bundle(where: Path | None = None) -> Iterator[None]:
    """While open, altair's inline HTML takes vl-convert's bundle through the disk cache (altair
    asks vl_convert.javascript_bundle for it; the bytes it gets are the ones vl-convert built)."""
    import vl_convert

    original = vl_convert.javascript_bundle
    where = where or cache_dir()

    def bundle(snippet=None, vl_version=None):
        if snippet is not None:  # a bundle around the caller's own code: not the shared one
            return original(snippet, vl_version=vl_version)
        return cached_bundle(original, vl_version, vl_convert.__version__, where)

    vl_convert.javascript_bundle = bundle
    try:
        yield
    finally:
        vl_convert.javascript_bundle = original
