"""The contention guard on real reps: a busy loop on the rep's core marks it, a quiet rep stays ok."""

import multiprocessing
import os
import time

import pytest

from edgebench.bench.rep_process import run_worker

from .conftest import hf_spec, require_idle, skip_if_disturbed, usable_cores

BENCH = {"prefill_tokens": 32, "decode_tokens": 64, "max_model_len": 128}
LIMIT = 0.1
CORE = usable_cores()[-1]  # one core this process may use (its affinity), whichever it is


def spec(model_dir):
    return hf_spec(model_dir, BENCH)


def busy_loop(core: int, seconds: float) -> None:
    os.sched_setaffinity(0, [core])
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_quiet_rep_is_ok(tiny_model):
    require_idle([CORE])  # a quiet rep needs a quiet core: another process's load would rightly flag it
    result = run_worker(spec(tiny_model), cores=[CORE], timeout_s=300, interval_s=0.1)
    skip_if_disturbed([result], [CORE], LIMIT, wall="wall_s")
    assert result["status"] == "ok", result["error"]
    assert result["stolen_frac"] < LIMIT
    assert 0 <= result["steal_s"] <= result["wall_s"]  # seconds of the one core the rep ran on
    assert (
        result["ttft_s"] > 0 and result["ready_s"] > result["import_s"] > 0 and result["peak_rss_anon_mb"] > 0
    )


def test_busy_loop_on_the_target_core_is_seen(tiny_model):
    hog = multiprocessing.get_context("spawn").Process(target=busy_loop, args=(CORE, 120.0))
    hog.start()
    try:
        result = run_worker(spec(tiny_model), cores=[CORE], timeout_s=300, interval_s=0.1)
    finally:
        hog.terminate()
        hog.join()
    assert result["status"] == "ok", result["error"]
    assert result["stolen_frac"] > LIMIT  # the rep's own CPU time is excluded; the hog's is not


def test_timeout_becomes_a_failed_result_with_the_reason(tiny_model):
    result = run_worker(spec(tiny_model), cores=[CORE], timeout_s=0.5, interval_s=0.1)
    assert result["status"] == "failed" and "timed out" in result["error"]


def test_worker_crash_becomes_a_failed_result_with_the_log(tmp_path):
    broken = hf_spec(tmp_path / "missing", BENCH)
    result = run_worker(broken, cores=[CORE], timeout_s=300, interval_s=0.1)
    assert result["status"] == "failed" and "exit code 1" in result["error"]
    assert "missing" in result["error"]  # the engine's own error text travels with the row


@pytest.mark.parametrize(
    ("fault", "timeout_s", "expected"),
    [
        ({"kind": "crash"}, 30, "signal SIGABRT"),
        ({"kind": "oom", "memory_limit_mb": 300}, 30, "exit code"),
        # the hang comes after a load of a few seconds; the rep is cut at its timeout either way, and
        # every second of it is waited out
        ({"kind": "hang"}, 10, "timed out after 10 s"),
    ],
)
def test_injected_faults_become_failed_results(tiny_model, fault, timeout_s, expected):
    spec_with_fault = hf_spec(tiny_model, BENCH, fault=fault)
    result = run_worker(spec_with_fault, cores=[CORE], timeout_s=timeout_s, interval_s=0.2)
    assert result["status"] == "failed" and expected in result["error"], result["error"][:500]
