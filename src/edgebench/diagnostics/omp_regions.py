"""The cost of entering one OpenMP parallel region (item rejected-megakernel): a C loop of empty
`#pragma omp parallel` regions, built here with gcc against GNU OpenMP (the runtime torch's CPU
build uses), at each thread count and OMP_WAIT_POLICY. Times the parallel regions a decode step
enters (from the decode profile), it is the share of the step a single-region execution model
could save at most."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import pandas as pd

REGIONS = 200_000  # the most regions one run times
PROBE_REGIONS = 2_000  # a first short run that sizes the timed ones
RUN_TARGET_S = 0.5  # each timed run lasts about this long, whatever one region costs here

SOURCE = r"""
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    volatile int sink = 0;
    for (long i = 0; i < 1000; i++) {
        #pragma omp parallel
        { if (omp_get_thread_num() < 0) sink++; }
    }
    double start = omp_get_wtime();
    for (long i = 0; i < n; i++) {
        #pragma omp parallel
        { if (omp_get_thread_num() < 0) sink++; }
    }
    printf("%.6f\n", (omp_get_wtime() - start) / n * 1e6);
    return sink;
}
"""


COMPILE_TIMEOUT_S = 120  # one small C file
RUN_TIMEOUT_S = 120  # a run is sized to RUN_TARGET_S; this only catches a hung binary


def build_benchmark(workdir: Path) -> Path:
    compiler = shutil.which("gcc")
    if compiler is None:
        raise FileNotFoundError(
            "gcc is not installed: the OpenMP region benchmark is built with gcc -fopenmp"
        )
    source, binary = workdir / "omp_regions.c", workdir / "omp_regions"
    source.write_text(SOURCE)
    subprocess.run(
        [compiler, "-O2", "-fopenmp", str(source), "-o", str(binary)], check=True, timeout=COMPILE_TIMEOUT_S
    )
    return binary


def run_regions(binary: Path, env: dict, regions: int) -> float:
    """One run of the binary: the mean cost of one of `regions` parallel regions, in microseconds."""
    result = subprocess.run(
        [str(binary), str(regions)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=RUN_TIMEOUT_S,
    )
    return float(result.stdout)


def regions_per_run(probe_us: float) -> int:
    """As many regions as fill RUN_TARGET_S at the probed cost, between PROBE_REGIONS and REGIONS: a
    passive region that wakes sleeping threads costs far more than a spinning one, and a fixed count
    made the slow policies take most of the job's time."""
    wanted = int(RUN_TARGET_S * 1e6 / max(probe_us, 1e-3))
    return max(PROBE_REGIONS, min(REGIONS, wanted))


def region_us(binary: Path, threads: int, policy: str, repeats: int = 5) -> float:
    """Median over repeats of the mean cost of one parallel region, in microseconds."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": policy, "OMP_PROC_BIND": "true"}
    regions = regions_per_run(run_regions(binary, env, PROBE_REGIONS))
    return statistics.median(run_regions(binary, env, regions) for _ in range(repeats))


def omp_rows(threads: list[int], profile: pd.DataFrame) -> list[dict]:
    """Per thread count and wait policy: one region's cost, and that cost times the regions of the
    profiled decode step (first profiled arm) as a share of the step."""
    step = profile[(profile["status"] == "ok") & (profile["part"] == "remainder")].iloc[0]
    with tempfile.TemporaryDirectory(prefix="edgebench-omp-") as tmp:
        binary = build_benchmark(Path(tmp))
        rows = []
        for count in threads:
            for policy in ("ACTIVE", "PASSIVE"):
                cost = region_us(binary, count, policy)
                rows.append(
                    {
                        "threads": count,
                        "wait_policy": policy.lower(),
                        "region_us": cost,
                        "profiled_arm": step["arm"],
                        "regions_per_step": step["parallel_regions_per_step"],
                        "step_us": step["whole_us"],
                        "share": cost * step["parallel_regions_per_step"] / step["whole_us"],
                    }
                )
                print(f"OpenMP region, {count} thread(s), {policy}: {cost:.3f} us", flush=True)
    return rows
