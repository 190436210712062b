import pytest

from edgebench.bench.guard import stolen_fraction
from edgebench.procfs import CpuTimes


def times(busy, steal=0):
    return {0: CpuTimes(busy=busy[0], idle=0, steal=steal), 1: CpuTimes(busy=busy[1], idle=0, steal=0)}


def test_quiet_rep_steals_nothing():
    # 10 s on 2 cores at 100 ticks/s; the rep itself used all 1500 busy ticks
    assert stolen_fraction(times((0, 0)), times((800, 700)), [0, 1], 1500, 10.0, 100) == 0.0


def test_foreign_busy_time_and_steal_count_against_capacity():
    frac = stolen_fraction(times((0, 0)), times((1000, 1000), steal=100), [0, 1], 1500, 10.0, 100)
    assert frac == pytest.approx((500 + 100) / 2000)


def test_only_the_target_cores_count():
    frac = stolen_fraction(times((0, 0)), times((600, 2000)), [0], 500, 10.0, 100)
    assert frac == pytest.approx(100 / 1000)


def test_bad_inputs_are_errors():
    with pytest.raises(ValueError):
        stolen_fraction(times((0, 0)), times((0, 0)), [0], 0, 0.0, 100)


def test_root_cause_finds_why_the_engine_died():
    from edgebench.bench.rep_process import root_cause

    log = "INFO loading\nERROR Worker proc VllmWorker-0 died unexpectedly (exit code: -4)\n"
    log += "EngineDeadError: see above\n"
    assert "died unexpectedly (exit code: -4)" in root_cause(log)
    assert root_cause("all fine\n") == "no error line in the worker log"
