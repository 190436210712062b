"""Measured ceilings the kernels are judged against: STREAM-style bandwidth and bf16 matmul peak."""

from __future__ import annotations

import time

import torch


def last_level_cache_bytes(path: str = "/sys/devices/system/cpu/cpu0/cache/index3/size") -> int:
    """Size of the last-level cache (e.g. '307200K'); 32 MiB when sysfs does not say."""
    try:
        text = open(path).read().strip()
    except OSError:
        return 32 * 2**20
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def _best_s(fn, repeats: int) -> float:
    """Fastest of `repeats` timed calls after a warm-up: a ceiling is what the machine can do, so
    (as STREAM reports) the best run counts, not one that a neighbour on the host slowed down."""
    fn()  # first touch and warm-up, never counted
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def stream_gb_s(threads: int, array_bytes: int, repeats: int = 10) -> dict[str, float]:
    """copy (c = a) and triad (a = b + s*c) bandwidth in GB/s over float32 arrays of `array_bytes`
    each; bytes counted as STREAM does (2 and 3 arrays per element, no write-allocate)."""
    torch.set_num_threads(threads)
    n = array_bytes // 4
    a, b, c = torch.rand(n), torch.rand(n), torch.empty(n)
    copy_s = _best_s(lambda: c.copy_(a), repeats)
    triad_s = _best_s(lambda: torch.add(b, c, alpha=3.0, out=a), repeats)
    return {"copy": 2 * n * 4 / copy_s / 1e9, "triad": 3 * n * 4 / triad_s / 1e9}


def bf16_matmul_gflop_s(threads: int, max_size: int = 2048, repeats: int = 10, call_s: float = 0.05) -> float:
    """Peak-like bf16 GEMM throughput: a square matmul big enough to be compute-bound. The size
    doubles from 256 until one call takes `call_s`: where the CPU has no bf16 instructions
    (AVX2 only) torch's fallback is so slow that the largest size would take minutes."""
    torch.set_num_threads(threads)
    size = 256
    while True:
        a = torch.randn(size, size, dtype=torch.bfloat16)
        b = torch.randn(size, size, dtype=torch.bfloat16)
        start = time.perf_counter()
        torch.matmul(a, b)
        if size >= max_size or time.perf_counter() - start >= call_s:
            break
        size *= 2
    return 2 * size**3 / _best_s(lambda: torch.matmul(a, b), repeats) / 1e9
