"""The fingerprint's measured lines: memory bandwidth, compute rate, core interference, steal and
clock. Each probe runs in fresh processes pinned to one core each, with BLAS on one thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from edgebench.machine.identity import CPU_ROOT, cache_bytes, cache_sizes
from edgebench.procfs import CpuTimes, read_proc_stat

ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
# Interference labels: the mean rate of probes run together, as a fraction of one probe alone.
SHARED_BELOW = 0.75  # two probes on one physical core get about half each
INDEPENDENT_FROM = 0.9
START_DELAY_S = 2.0  # time for every probe process to start and import numpy before the common start


class ProbeError(RuntimeError):
    """A probe process failed or printed no result: the fingerprint names it and the error."""


@dataclass(frozen=True)
class Interference:
    cores: tuple[int, ...]
    alone_gflops: tuple[float, float]  # before and after the probes run together
    together_gflops: tuple[float, ...]
    ran_on: tuple[int, ...] = ()  # the CPU each together probe last ran on, read by the probe itself

    @property
    def ratio(self) -> float:
        """Mean rate of the probes run together over the mean rate of one alone (1.0: no interference)."""
        alone = sum(self.alone_gflops) / len(self.alone_gflops)
        return sum(self.together_gflops) / len(self.together_gflops) / alone

    @property
    def drift(self) -> float:
        """How far the two alone rates disagree, as a share of their mean: the core's own change of
        speed over the probe (a busy sibling hyperthread on the host shows as no steal)."""
        before, after = self.alone_gflops
        return abs(before - after) / ((before + after) / 2)

    @property
    def label(self) -> str:
        if self.ratio < SHARED_BELOW:
            return "one core shared"
        if self.ratio >= INDEPENDENT_FROM:
            return "cores independent"
        return "cores interfere partly"


def _start(kind: str, core: int, seconds: float, start_at: float, *extra: str) -> subprocess.Popen:
    env = {**os.environ, **ONE_THREAD}
    command = [sys.executable, "-m", "edgebench.machine.worker", kind, str(core), str(seconds), str(start_at)]
    command += list(extra)
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _collect(proc: subprocess.Popen, timeout_s: float) -> dict:
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=10)
        raise ProbeError(f"probe {proc.args[3:5]} ran past {timeout_s:.0f} s") from None
    if proc.returncode != 0 or not out.strip():
        raise ProbeError(f"probe {proc.args[3:5]} exited {proc.returncode}: {err.strip()[-300:]}")
    return json.loads(out.strip().splitlines()[-1])


def run_probes(kind: str, cores: list[int], seconds: float, *extra: str) -> list[dict]:
    """The same probe on each listed core at once (a core listed twice runs two probes on it); each
    waits, after its imports, for one common start instant so that the timed work overlaps."""
    start_at = time.time() + START_DELAY_S
    procs = [_start(kind, core, seconds, start_at, *extra) for core in cores]
    # interpreter start and numpy import dominate the spare time; the probe itself runs `seconds`
    return [_collect(proc, timeout_s=seconds + 60) for proc in procs]


def triad_array_bytes(caches: dict[str, str] | None = None) -> int:
    """Each array 4x the last-level cache (at least 64 MB, at most 512 MB): a sweep streams memory."""
    caches = cache_sizes() if caches is None else caches
    last = max((cache_bytes(size) for size in caches.values()), default=0)
    return int(min(max(4 * last, 64 << 20), 512 << 20))


def interference(cores: list[int], seconds: float) -> Interference:
    """The GEMM probe on the first core alone, then on every listed core at the same time, then
    alone again: the together rates are read against both alone rates, so a drift of the core's
    speed during the probe is bracketed and stated (`drift`), not taken for interference."""
    before = run_probes("gemm", cores[:1], seconds)[0]["gflops"]
    together = run_probes("gemm", cores, seconds)
    after = run_probes("gemm", cores[:1], seconds)[0]["gflops"]
    rates, ran_on = tuple(r["gflops"] for r in together), tuple(r["ran_on"] for r in together)
    return Interference(tuple(cores), (before, after), rates, ran_on)


def cpu_times() -> dict[int, CpuTimes]:
    return read_proc_stat()


def steal_fraction(before: dict[int, CpuTimes], after: dict[int, CpuTimes]) -> float:
    """Share of the machine's CPU time the hypervisor took between two readings (NaN if none)."""
    steal = sum(after[c].steal - before[c].steal for c in after if c in before)
    total = sum(
        (after[c].busy + after[c].idle + after[c].steal) - (before[c].busy + before[c].idle + before[c].steal)
        for c in after
        if c in before
    )
    return steal / total if total > 0 else float("nan")


def clock_mhz(root: Path = CPU_ROOT) -> tuple[float, str]:
    """Mean current clock over the CPUs and where it was read; NaN where nothing exposes it."""
    readings = []
    for path in sorted(root.glob("cpu[0-9]*/cpufreq/scaling_cur_freq")):
        try:
            readings.append(int(path.read_text()) / 1000)
        except (OSError, ValueError):
            continue
    if readings:
        return sum(readings) / len(readings), "cpufreq scaling_cur_freq"
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return float("nan"), "not exposed"
    mhz = [float(line.split(":")[1]) for line in text.splitlines() if line.startswith("cpu MHz")]
    return (sum(mhz) / len(mhz), "/proc/cpuinfo cpu MHz") if mhz else (float("nan"), "not exposed")


def blas_info() -> str:
    """Which BLAS numpy runs and the kernel it picked (OPENBLAS_CORETYPE can force an older one)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl absent)"
    import numpy  # noqa: F401  (loads the BLAS threadpoolctl reports)

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return "; ".join(
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture', '')}".strip() for i in blas
    )
