"""The machine's static identity, read from /proc and /sys: what its digest is made of.

The digest keys a machine across studies (history, compare), so it holds only what does not change
between runs on one machine: CPU model and flags, logical CPUs, threads per core, caches, memory,
kernel and host. Measured rates are never part of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import socket
from pathlib import Path

CPU_ROOT = Path("/sys/devices/system/cpu")


def cpuinfo_field(name: str, text: str | None = None) -> str:
    """The first value of one /proc/cpuinfo field ("" where the machine does not expose it)."""
    try:
        text = Path("/proc/cpuinfo").read_text() if text is None else text
    except OSError:
        return ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    return ""


def cache_sizes(root: Path = CPU_ROOT) -> dict[str, str]:
    """Cache size per level and type of CPU 0, e.g. {"L1d": "48K", "L2": "2048K", "L3": "32768K"}."""
    sizes = {}
    for index in sorted((root / "cpu0" / "cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        sizes[f"L{level}{suffix}"] = size
    return sizes


def cache_bytes(text: str) -> int:
    """'32768K' or '32M' as bytes (0 for an empty or unreadable size)."""
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    text = text.strip()
    if not text:
        return 0
    if text[-1].upper() in units:
        return int(float(text[:-1]) * units[text[-1].upper()])
    return int(text)


def threads_per_core(root: Path = CPU_ROOT) -> int:
    """Logical CPUs that share CPU 0's physical core, as the kernel reports them (1 if unknown)."""
    try:
        siblings = (root / "cpu0" / "topology" / "thread_siblings_list").read_text().strip()
    except OSError:
        return 1
    count = 0
    for part in siblings.split(","):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    return count


def memory_total_mb() -> float:
    with contextlib.suppress(OSError):  # no /proc/meminfo (not Linux): the line reads nan
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024, 0)
    return float("nan")


def static_identity() -> dict[str, str]:
    """The machine's static lines, each a string, as the fingerprint and the digest show them."""
    flags = sorted(cpuinfo_field("flags").split())
    lines = {
        "host": socket.gethostname(),
        "cpu_model": cpuinfo_field("model name") or platform.processor() or "unknown",
        "cpu_flags": " ".join(flags),
        "logical_cpus": str(os.cpu_count() or 0),
        "threads_per_core": str(threads_per_core()),
        "memory_total_mb": f"{memory_total_mb():.0f}",
        "kernel": platform.release(),
    }
    lines.update({f"cache_{level}": size for level, size in cache_sizes().items()})
    return lines


def machine_digest(identity: dict[str, str] | None = None) -> str:
    """A short digest of the static identity: the key that joins a study's rows to its machine."""
    identity = static_identity() if identity is None else identity
    text = json.dumps(identity, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
