"""The machine fingerprint: its lines, its digest, and the interference probe that tells two
independent cores from one core shared."""

import math
import os

import pandas as pd
import pytest

from edgebench.machine import fingerprint, identity, probes
from edgebench.machine.fingerprint import fingerprint_rows
from edgebench.procfs import CpuTimes

from .conftest import require_idle

USABLE = sorted(os.sched_getaffinity(0))


def test_the_digest_keys_static_lines_only_and_changes_with_them():
    lines = identity.static_identity()
    assert {"cpu_model", "cpu_flags", "logical_cpus", "kernel", "memory_total_mb"} <= set(lines)
    assert identity.machine_digest(lines) == identity.machine_digest(dict(lines))
    other = {**lines, "cpu_flags": lines["cpu_flags"] + " amx_tile"}
    assert identity.machine_digest(other) != identity.machine_digest(lines)


def test_cache_sizes_read_as_bytes():
    assert identity.cache_bytes("32768K") == 32 * 1024 * 1024
    assert identity.cache_bytes("2M") == 2 * 1024 * 1024
    assert identity.cache_bytes("") == 0


def test_steal_fraction_is_the_steal_share_of_the_elapsed_ticks():
    before = {0: CpuTimes(busy=150, idle=800, steal=50)}
    after = {0: CpuTimes(busy=300, idle=1600, steal=150)}
    assert probes.steal_fraction(before, after) == pytest.approx(100 / 1050)


def test_every_line_carries_the_machine_digest_and_the_measured_lines_are_positive():
    rows = pd.DataFrame(fingerprint_rows(USABLE[:2], probe_s=0.3))
    assert rows["machine_digest"].nunique() == 1
    assert rows["machine_digest"].iloc[0] == identity.machine_digest()
    measured = rows.set_index("line")["number"]
    assert measured["triad_bandwidth"] > 0 and measured["gemm_rate"] > 0
    # torch's bf16 path, whatever this CPU's: its rate and its ratio to float32 through the same call
    assert measured["bf16_matmul_rate"] > 0 and measured["bf16_over_float32"] > 0
    assert {"steal_fraction", "clock_mhz", "cache_L1d", "kernel", "interference"} <= set(rows["line"]) or len(
        USABLE
    ) < 2


def test_a_dtype_probe_without_torch_is_a_row_that_says_so():
    rows = fingerprint.dtype_rows({"error": "torch is not installed in the study's environment"}, 1.0)
    assert [r["line"] for r in rows] == ["bf16_matmul_rate"]
    assert rows[0]["value"].startswith("not measured: torch is not installed")
    assert math.isnan(rows[0]["number"])


# The two alone rates of one probe may differ this much before its ratio says nothing: a ratio is
# read against a core whose speed held still.
DRIFT_LIMIT = 0.25


def skip_if_drifted(*readings: probes.Interference) -> None:
    """Skip, naming the rates, when the core's speed changed during a probe: another guest on the
    host's sibling hyperthread or a clock change, which no test controls (and which shows as no steal)."""
    for reading in readings:
        if reading.drift > DRIFT_LIMIT:
            pytest.skip(f"the core's speed changed during the probe: alone {reading.alone_gflops} GFLOP/s")


def test_two_probes_pinned_to_one_core_read_as_one_core_shared():
    core = USABLE[-1]
    shared = probes.interference([core, core], seconds=1.0)
    # each of two probes on one core gets about half of it; a busy neighbour only lowers it further
    if shared.ratio >= probes.SHARED_BELOW:
        skip_if_drifted(shared)
    assert shared.ratio < probes.SHARED_BELOW, shared
    assert shared.label == "one core shared"


def skip_cores_shared_on_the_host(apart: probes.Interference, shared: probes.Interference) -> None:
    """Skip, naming the rates, a reading whose probes ran on the two cores they were pinned to while
    the cores' speed held, yet still slowed each other: the host runs these two vCPUs on one physical
    core (sibling hyperthreads) or loads them from another guest. A guest's topology does not show
    that, and no test controls it."""
    pytest.skip(
        f"cores {apart.cores} each ran their probe ({apart.ran_on}) and still got {apart.ratio:.2f} of "
        f"the alone rate (one core shared: {shared.ratio:.2f}): the host does not give these two vCPUs "
        "a physical core each"
    )


def test_two_cores_alone_read_higher_than_one_core_shared():
    if len(USABLE) < 2:
        pytest.skip(f"one usable core ({USABLE}): nothing to pair")
    cores = USABLE[:2]
    require_idle(cores)  # the two-core probe reads interference only from the probes themselves
    apart = probes.interference(cores, seconds=1.0)
    shared = probes.interference([cores[0], cores[0]], seconds=1.0)
    # each probe ran where it was pinned: two cores, then one core twice
    assert apart.ran_on == tuple(cores) and shared.ran_on == (cores[0], cores[0]), (apart, shared)
    # the same probe, the same core count: only sharing one core can halve each rate
    if apart.ratio <= shared.ratio + 0.2:
        skip_if_drifted(apart, shared)
        skip_cores_shared_on_the_host(apart, shared)  # the pinning held (asserted above)
    assert apart.ratio > shared.ratio + 0.2, (apart, shared)
    assert apart.label != "one core shared"


def test_the_ratio_reads_the_together_rates_against_both_alone_rates():
    # the core sped up between the two alone runs: the ratio uses their mean and the drift says so
    reading = probes.Interference((0, 0), (60.0, 100.0), (40.0, 40.0))
    assert reading.ratio == pytest.approx(0.5) and reading.label == "one core shared"
    assert reading.drift == pytest.approx(0.5)
    assert probes.Interference((0, 1), (80.0, 80.0), (80.0, 76.0)).drift == 0.0
