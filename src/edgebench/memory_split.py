"""What a build's memory is, for a memory requirement it does not meet: the weights (the build's
files), the KV cache the engine reserves by the arm's setting, and the runtime (the rest), with the
setting a user would change. An estimate from the build's bytes and the configured cache, said so."""

from __future__ import annotations

import math

import pandas as pd

from edgebench.formatting import three_digits

MIB = 2**20


def kv_reserved_mb(arm: dict) -> tuple[float, str]:
    """The KV cache the engine reserves up front, and the arm setting that sizes it."""
    if arm["engine"] == "vllm":
        gib = int(arm.get("kv_cache_gib", 1))
        return gib * 1024.0, f"kv_cache_gib: {gib} (VLLM_CPU_KVCACHE_SPACE)"
    return 0.0, ""


def memory_note(arm: dict, measured_mb: float, builds: pd.DataFrame) -> str:
    """One line splitting a measured peak into weights, reserved KV cache and runtime."""
    rows = builds[builds["build"] == arm["build"]]
    if rows.empty or not math.isfinite(measured_mb):
        return ""
    weights = float(rows["bytes_on_disk"].iloc[0]) / MIB
    kv, setting = kv_reserved_mb(arm)
    runtime = max(measured_mb - weights - kv, 0.0)
    parts = [f"weights {three_digits(weights)} MiB (the build's files)"]
    if setting:
        parts.append(f"KV cache {three_digits(kv)} MiB reserved ({setting})")
    parts.append(f"runtime {three_digits(runtime)} MiB (the rest)")
    change = f"; a smaller {setting.split(':')[0]} lowers it" if setting else ""
    return "about " + " + ".join(parts) + change
