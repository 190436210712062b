"""A long study must never lose finished work: SIGKILL mid-benchmark, injected crashes, bad input."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgebench.config import ConfigError, validate_config

from .conftest import ROOT, set_at

SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "workflow" / "Snakefile")]
TARGET = "results/tables/bench.parquet"


def reps(workdir: Path) -> dict[str, float]:
    return {
        str(p.relative_to(workdir)): p.stat().st_mtime
        for p in (workdir / "results" / "raw").rglob("rep*.parquet")
    }


@pytest.mark.workflow
def test_sigkill_mid_benchmark_keeps_finished_reps_and_reruns_the_interrupted_one(tmp_path):
    shutil.copytree(ROOT / ".test" / "kill" / "config", tmp_path / "config")
    run = [*SNAKEMAKE, "--directory", str(tmp_path), "--cores", "2", TARGET]
    # a process killed outright cannot remove its temp folders: they stay in this test's folder
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = subprocess.Popen(
        run,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    deadline = time.monotonic() + 600
    while len(reps(tmp_path)) < 2 and time.monotonic() < deadline:  # two reps done, the third running
        time.sleep(0.5)
    time.sleep(2)
    os.killpg(proc.pid, signal.SIGKILL)  # Snakemake, the rep script and its engine process, all at once
    proc.wait()
    kept = reps(tmp_path)
    assert len(kept) >= 2, "the study did not get far enough before the kill"
    assert not (tmp_path / TARGET).exists()

    unlock = [*SNAKEMAKE, "--directory", str(tmp_path), "--cores", "1", "--unlock"]
    subprocess.run(unlock, check=True, capture_output=True, timeout=300)
    rerun = subprocess.run(run, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    after = reps(tmp_path)
    assert all(after[path] == mtime for path, mtime in kept.items()), "a finished rep was recomputed"
    assert len(after) == 4
    bench = pd.read_parquet(tmp_path / TARGET)
    assert len(bench.drop_duplicates(["arm", "round"])) == 4
    assert not list((tmp_path / "results").rglob("*.tmp"))  # no half-written files left behind
    # the injected crash is a failed row with its cause, and the study went on around it
    crashed = bench[(bench["arm"] == "hf/bf16-crash") & (bench["round"] == 1)]
    assert (crashed["status"] == "failed").all() and crashed["error"].str.contains("SIGABRT").all()
    healthy = bench[bench["arm"] == "hf/bf16"]
    assert healthy["status"].isin(["ok", "contended"]).all(), healthy[["status", "error"]].to_string()


BASE = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
JUNK = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def paths(value, prefix=()):
    if isinstance(value, dict):
        for key, sub in value.items():
            yield (*prefix, key)
            yield from paths(sub, (*prefix, key))


PATHS = list(paths(BASE))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), JUNK)
def test_malformed_configs_fail_with_a_message_naming_the_key(path, junk):
    config = set_at(BASE, path, junk)
    try:
        validate_config(config)
    except ConfigError as error:
        assert any(str(part) in str(error) for part in path), (path, str(error))


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=200))
def test_garbage_where_a_build_is_expected_is_a_clear_error(tmp_path_factory, garbage):
    from edgebench.models.build_record import read_build_json

    folder = tmp_path_factory.mktemp("build")
    with pytest.raises(FileNotFoundError, match="not a finished build"):
        read_build_json(folder)
    (folder / "build.json").write_bytes(garbage)
    try:
        info = read_build_json(folder)
    except ValueError as error:  # JSON errors are ValueErrors and name the file
        assert "build.json" in str(error)
    else:
        assert isinstance(info, dict)
