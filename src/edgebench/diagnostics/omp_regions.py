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

REGIONS = 200_000

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
RUN_TIMEOUT_S = 120  # REGIONS empty parallel regions take well under a second on any thread count


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


def region_us(binary: Path, threads: int, policy: str, repeats: int = 5) -> float:
    """Median over repeats of the mean cost of one parallel region, in microseconds."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": policy, "OMP_PROC_BIND": "true"}
    values = [
        float(
            subprocess.run(
                [str(binary), str(REGIONS)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=RUN_TIMEOUT_S,
            ).stdout
        )
        for _ in range(repeats)
    ]
    return statistics.median(values)


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
