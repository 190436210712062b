"""One probe in a process of its own, pinned to one core: `python -m edgebench.machine.worker
KIND CORE SECONDS START_AT [ARRAY_BYTES]` prints one JSON line. The parent sets BLAS to one thread before
numpy loads; the probe runs for a fixed wall time, so probes started together overlap."""

from __future__ import annotations

import functools
import json
import os
import sys
import time

from edgebench.procfs import last_cpu

GEMM_N = 256  # the fixed shape: float32 256x256 @ 256x256, in cache on any current CPU
# torch's linear for the dtype probe: 256 prompt tokens through one 1024 -> 1024 layer, as a prefill does
LINEAR_ROWS, LINEAR_IN, LINEAR_OUT = 256, 1024, 1024


def wait_until(start_at: float) -> None:
    """Probes started together begin their timed work at one wall-clock instant, after imports."""
    delay = start_at - time.time()
    if delay > 0:
        time.sleep(delay)


def timed_calls(call, seconds: float) -> tuple[int, float]:
    """How many times `call` ran in `seconds` of wall time, and the exact time it took."""
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        call()
        count += 1
    return count, elapsed


def gemm_rate(seconds: float, start_at: float = 0.0) -> dict:
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((GEMM_N, GEMM_N), dtype=np.float32)
    b = rng.standard_normal((GEMM_N, GEMM_N), dtype=np.float32)
    out = np.empty_like(a)
    np.matmul(a, b, out=out)  # first call loads the BLAS kernels: not counted
    wait_until(start_at)
    count, elapsed = timed_calls(functools.partial(np.matmul, a, b, out=out), seconds)
    rate = 2 * GEMM_N**3 * count / elapsed / 1e9
    return {"gflops": rate, "calls": count, "elapsed_s": elapsed, "ran_on": last_cpu()}


def linear_rate(dtype_name: str, seconds: float) -> float:
    """GFLOP/s of torch's linear in one dtype on one thread (the first call, which picks and loads
    the kernel, not counted)."""
    import torch

    torch.set_num_threads(1)
    dtype = getattr(torch, dtype_name)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(LINEAR_ROWS, LINEAR_IN, generator=generator).to(dtype)
    weight = torch.randn(LINEAR_OUT, LINEAR_IN, generator=generator).to(dtype)
    torch.nn.functional.linear(x, weight)
    count, elapsed = timed_calls(functools.partial(torch.nn.functional.linear, x, weight), seconds)
    return 2 * LINEAR_ROWS * LINEAR_IN * LINEAR_OUT * count / elapsed / 1e9


def dtype_rates(seconds: float, start_at: float = 0.0) -> dict:
    """torch's float32 and bfloat16 linear rates, half the time each: a CPU without native bf16
    instructions runs bf16 through a slower path, and so does every bf16 arm on it."""
    try:
        import torch  # noqa: F401 - the probe is torch's, where the engines' bf16 runs
    except ImportError:
        return {"error": "torch is not installed in the study's environment"}
    wait_until(start_at)
    return {name: linear_rate(name, seconds / 2) for name in ("float32", "bfloat16")}


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
    elif kind == "dtype":
        result = dtype_rates(seconds, start_at)
    elif kind == "triad":
        result = triad_bandwidth(seconds, int(argv[4]))
    else:
        print(f"unknown probe {kind!r}; known: gemm, dtype, triad", file=sys.stderr)
        return 2
    print(json.dumps({"kind": kind, "core": core, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
