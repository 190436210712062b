"""One probe in a process of its own, pinned to one core: `python -m edgebench.machine.worker
KIND CORE SECONDS START_AT [ARRAY_BYTES]` prints one JSON line. The parent sets BLAS to one thread before
numpy loads; the probe runs for a fixed wall time, so probes started together overlap."""

from __future__ import annotations

import json
import os
import sys
import time

GEMM_N = 256  # the fixed shape: float32 256x256 @ 256x256, in cache on any current CPU


def wait_until(start_at: float) -> None:
    """Probes started together begin their timed work at one wall-clock instant, after imports."""
    delay = start_at - time.time()
    if delay > 0:
        time.sleep(delay)


def gemm_rate(seconds: float, start_at: float = 0.0) -> dict:
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((GEMM_N, GEMM_N), dtype=np.float32)
    b = rng.standard_normal((GEMM_N, GEMM_N), dtype=np.float32)
    out = np.empty_like(a)
    np.matmul(a, b, out=out)  # first call loads the BLAS kernels: not counted
    wait_until(start_at)
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        np.matmul(a, b, out=out)
        count += 1
    return {"gflops": 2 * GEMM_N**3 * count / elapsed / 1e9, "calls": count, "elapsed_s": elapsed}


def triad_bandwidth(seconds: float, array_bytes: int) -> dict:
    """a = b + s*c in two numpy passes (c*s into a, then a+b into a): 5 arrays' bytes per sweep.
    The best sweep, so that a page fault or a tick of another process does not count."""
    import numpy as np

    n = max(array_bytes // 8, 1 << 16)
    a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)
    best, sweeps, start = float("inf"), 0, time.perf_counter()
    while sweeps < 3 or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - t0)
        sweeps += 1
    return {"gb_s": 5 * 8 * n / best / 1e9, "sweeps": sweeps, "array_mb": 8 * n / 1e6}


def main(argv: list[str]) -> int:
    kind, core, seconds, start_at = argv[0], int(argv[1]), float(argv[2]), float(argv[3])
    os.sched_setaffinity(0, {core})
    if kind == "gemm":
        result = gemm_rate(seconds, start_at)
    elif kind == "triad":
        result = triad_bandwidth(seconds, int(argv[4]))
    else:
        print(f"unknown probe {kind!r}; known: gemm, triad", file=sys.stderr)
        return 2
    print(json.dumps({"kind": kind, "core": core, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
