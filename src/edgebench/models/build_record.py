"""build.json: what a build is, how it was made, and what it cost."""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

from edgebench.io import write_text

BUILD_FIELDS = (
    "build",
    "method",
    "bits",
    "group_size",
    "sym",
    "format",
    "bits_per_weight",
    "parameters",
    "bytes_on_disk",
    "build_s",
    "peak_rss_mb",
    "source",
    "source_digest",
)


def file_digest(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            h.update(block)
    return h.hexdigest()


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def peak_rss_mb() -> float:
    """Peak resident memory of this process and its waited-for children (ru_maxrss is in KiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0


@contextmanager
def stopwatch():
    """Yields a dict whose 'seconds' is filled when the block ends."""
    box = {"seconds": float("nan")}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["seconds"] = time.perf_counter() - start


def write_build_json(out_dir: Path, info: dict) -> dict:
    """Complete and write build.json; refuses an entry that lacks a documented field."""
    info = {"bytes_on_disk": dir_bytes(out_dir), "peak_rss_mb": peak_rss_mb(), **info}
    missing = [f for f in BUILD_FIELDS if f not in info]
    if missing:
        raise ValueError(f"build.json for {out_dir} lacks fields {missing}")
    write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", Path(out_dir) / "build.json")
    return info


def read_build_json(build_dir: Path) -> dict:
    path = Path(build_dir) / "build.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: {build_dir} is not a finished build")
    try:
        info = json.loads(path.read_text(errors="replace"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error}); delete the build folder and rerun") from None
    if not isinstance(info, dict):
        raise ValueError(f"{path} holds {type(info).__name__}, not a build description; delete and rerun")
    return info


@contextmanager
def fresh_build_dir(out_dir: Path):
    """Build into an empty temp folder beside out_dir and swap it in only on success, so a failed or
    killed build never leaves a half-written checkpoint mixed with an older one."""
    out_dir = Path(out_dir)
    tmp = out_dir.parent / f".{out_dir.name}.building"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)
