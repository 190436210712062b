"""The engine line protocol fails only as the engine's own failure (ArmFailed), never hangs on a
partial line, and a coordinator bug is never turned into a failed sample."""

import os
import subprocess
import sys
import time

import pytest

from edgebench.bench import interleave
from edgebench.bench.arm_process import ArmFailed, ArmProcess
from edgebench.bench.session import SessionSettings, run_session

from .conftest import hf_spec

BENCH = {"prefill_tokens": 32, "decode_tokens": 16, "max_model_len": 128}


def fake_engine(tmp_path, code: str) -> ArmProcess:
    """An 'engine' that runs `code` instead of serving: its stdout is the protocol under test."""
    log = tmp_path / "engine.log"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
    )
    return ArmProcess("fake/arm", proc, log)


def test_a_partial_line_times_out_instead_of_blocking(tmp_path):
    # half a reply, then nothing until asked to exit (as an engine stuck mid-write would be)
    code = "import sys; sys.stdout.write('{\"half\": '); sys.stdout.flush(); sys.stdin.readline()"
    arm = fake_engine(tmp_path, code)
    started = time.perf_counter()
    with pytest.raises(ArmFailed, match="no answer within 1 s"):
        arm.receive(1.0)
    assert time.perf_counter() - started < 30  # never a blocking read: the timeout, then the stop
    assert arm.proc.poll() is not None


def test_a_reply_split_across_writes_is_read_whole(tmp_path):
    code = (
        "import sys, time\n"
        "for part in ('{\"a\"', ': 1}\\n'):\n"
        "    sys.stdout.write(part); sys.stdout.flush(); time.sleep(0.2)\n"
    )
    arm = fake_engine(tmp_path, code)
    assert arm.receive(10.0) == {"a": 1}


def test_a_garbled_reply_is_the_engines_failure_and_says_what_it_read(tmp_path):
    code = "import sys; print('Segmentation fault in kernel', flush=True); sys.stdin.readline()"
    arm = fake_engine(tmp_path, code)
    with pytest.raises(ArmFailed, match="garbled reply.*Segmentation fault"):
        arm.receive(10.0)


def test_an_engine_that_exits_is_the_engines_failure(tmp_path):
    arm = fake_engine(tmp_path, "import sys; sys.exit(3)")
    with pytest.raises(ArmFailed, match="exited with 3"):
        arm.receive(10.0)


def interleaved_settings(cores: list[int]) -> SessionSettings:
    return SessionSettings(
        rounds=2,
        seed=3,
        cores=cores,
        timeout_s=120,
        contention_limit=1.0,
        design="interleaved",
        pairs=[("hf/a", "hf/b")],
        burst_tokens=4,
    )


def test_a_coordinator_bug_stops_the_session_with_its_traceback(tiny_model, tmp_path, monkeypatch):
    def broken_record(self, name, reply):
        raise KeyError("a bug in the coordinator")

    monkeypatch.setattr(interleave.PairRun, "record", broken_record)
    specs = {name: hf_spec(tiny_model, BENCH) for name in ("hf/a", "hf/b")}
    core = sorted(os.sched_getaffinity(0))[:1]
    with pytest.raises(KeyError, match="a bug in the coordinator"):
        run_session(specs, interleaved_settings(core), tmp_path, progress=lambda message: None)


def test_an_engine_that_dies_in_an_interleaved_pair_becomes_failed_rows(tiny_model, tmp_path):
    specs = {
        "hf/a": hf_spec(tiny_model, BENCH),
        "hf/b": hf_spec(tiny_model, BENCH, fault={"kind": "crash", "sample": 1}),
    }
    core = sorted(os.sched_getaffinity(0))[:1]
    rows = run_session(specs, interleaved_settings(core), tmp_path, progress=lambda message: None)
    by = {(row["arm"], row["round"]): row for row in rows}
    assert by[("hf/a", 0)]["status"] == by[("hf/b", 0)]["status"] == "ok"
    assert by[("hf/b", 1)]["status"] == "failed" and "exited" in by[("hf/b", 1)]["error"]
    assert len(rows) == 4  # the healthy arm's rounds go on
