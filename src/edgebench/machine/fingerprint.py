"""The machine fingerprint of a study (machine.parquet): one row per line, static or measured.

Long format on purpose: comparing two studies' machines is a join on `line`, and a line one
machine does not expose is a row that says so rather than a missing column.
"""

from __future__ import annotations

import os
import time

from edgebench.formatting import three_digits
from edgebench.machine import probes, worker
from edgebench.machine.identity import machine_digest, static_identity

STATIC_UNITS = {"memory_total_mb": "MB", "logical_cpus": "CPUs", "threads_per_core": "threads"}


def _row(line: str, value: object, unit: str = "", kind: str = "static", method: str = "") -> dict:
    number = float(value) if isinstance(value, int | float) else _number(str(value))
    text = three_digits(value) if isinstance(value, float) else str(value)
    return {"line": line, "value": text, "number": number, "unit": unit, "kind": kind, "method": method}


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def dtype_rows(rates: dict, probe_s: float) -> list[dict]:
    """bf16 matmul rate and its ratio to float32, both through torch: why bf16 arms run at a
    different speed on two machines whose float32 rates agree."""
    if "error" in rates:
        return [_row("bf16_matmul_rate", f"not measured: {rates['error']}", "", "measured")]
    shape = f"{worker.LINEAR_ROWS}x{worker.LINEAR_IN} @ {worker.LINEAR_IN}x{worker.LINEAR_OUT}"
    method = f"torch linear {shape}, one thread, {probe_s / 2:.1f} s per dtype"
    return [
        _row("bf16_matmul_rate", rates["bfloat16"], "GFLOP/s", "measured", method),
        _row("bf16_over_float32", rates["bfloat16"] / rates["float32"], "x", "measured", method),
    ]


def measured_rows(cores: list[int], probe_s: float) -> list[dict]:
    """Bandwidth, compute, interference, steal and clock, measured on `cores` (first = 'one core')."""
    before, start = probes.cpu_times(), time.perf_counter()
    triad = probes.run_probes("triad", cores[:1], probe_s, str(probes.triad_array_bytes()))[0]
    gemm = probes.run_probes("gemm", cores[:1], probe_s)[0]
    rows = [
        _row(
            "triad_bandwidth",
            triad["gb_s"],
            "GB/s",
            "measured",
            f"numpy a=b+s*c, one thread, {triad['array_mb']:.0f} MB arrays, best of {triad['sweeps']}",
        ),
        _row(
            "gemm_rate",
            gemm["gflops"],
            "GFLOP/s",
            "measured",
            f"float32 {worker.GEMM_N}^3 matmul, one thread, {probe_s:.1f} s",
        ),
    ]
    rows += dtype_rows(probes.run_probes("dtype", cores[:1], probe_s)[0], probe_s)
    if len(cores) > 1:
        probe = probes.interference(cores, probe_s)
        method = (
            f"gemm alone on core {cores[0]}, then on cores {cores} at once (ran on {list(probe.ran_on)}), "
            "then alone again"
        )
        rows += [
            _row("interference_ratio", probe.ratio, "x", "measured", method),
            _row("interference", probe.label, "", "measured", method),
            _row("interference_drift", probe.drift, "share", "measured", "the two alone rates' difference"),
        ]
    else:
        rows.append(_row("interference", "not measured: one usable core", "", "measured"))
    mhz, where = probes.clock_mhz()
    rows += [
        _row(
            "steal_fraction",
            probes.steal_fraction(before, probes.cpu_times()),
            "",
            "measured",
            "/proc/stat steal over the fingerprint's probes",
        ),
        _row("clock_mhz", mhz, "MHz", "measured", where),
        _row("blas", probes.blas_info(), "", "static", "threadpoolctl"),
        _row("probe_cores", ",".join(map(str, cores)), "", "static"),
        _row("fingerprint_s", time.perf_counter() - start, "s", "measured"),
    ]
    return rows


def fingerprint_rows(cores: list[int] | None = None, probe_s: float = 2.0) -> list[dict]:
    """Every line of the fingerprint, each stamped with the machine digest."""
    cores = sorted(os.sched_getaffinity(0)) if cores is None else cores
    identity = static_identity()
    rows = [_row(line, value, STATIC_UNITS.get(line, "")) for line, value in identity.items()]
    rows += measured_rows(cores, probe_s)
    digest = machine_digest(identity)
    return [{"machine_digest": digest, **row} for row in rows]
