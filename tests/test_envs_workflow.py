"""An arm in its own environment, end to end through Snakemake on a tiny random model: uv creates the
environment once (before any measuring job), the arm's cold rep, its warm engine (paired with a
main-environment arm on one core) and its fidelity score run under the environment's interpreter,
its rows carry the environment's digest and versions, and a second run creates nothing. A broken
engine import in an environment stops the study before anything is measured."""

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from .conftest import ROOT, TINY_MODEL

pytestmark = pytest.mark.workflow

SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "workflow" / "Snakefile")]
TARGETS = ["results/tables/bench.parquet", "results/tables/warm.parquet", "results/tables/fidelity.parquet"]
TIMEOUT_S = 1800  # a first environment downloads its packages into uv's cache


def study_config(environment: dict) -> dict:
    return {
        "run_id": "envs-tiny",
        "roadmap": "none",
        "model": TINY_MODEL,
        "environments": {"pinned": environment},
        "builds": {},
        "arms": {
            "hf/bf16": {"engine": "hf", "build": "reference", "threads": 1},
            "hf/bf16-env": {"engine": "hf", "build": "reference", "threads": 1, "env": "pinned"},
        },
        "bench": {
            "rounds": 1,
            "warm_rounds": 2,
            "prefill_tokens": 16,
            "decode_tokens": 16,
            "max_model_len": 64,
            "warm_design": "interleaved",
            "contention_limit": 0.5,
            "warm_pairs": [["hf/bf16", "hf/bf16-env"]],
        },
        "gates": {"baseline": "hf/bf16", "tolerance": 0.1},
        "fidelity": {"min_positions": 64, "window_tokens": 32, "context_tokens": 8, "topk": 8},
    }


def run_study(workdir: Path, environment: dict, targets: list[str] = TARGETS) -> subprocess.CompletedProcess:
    (workdir / "config").mkdir(exist_ok=True)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(study_config(environment)))
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    return subprocess.run(
        [*SNAKEMAKE, "--directory", str(workdir), "--cores", "2", *targets],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT_S,
    )


def main_pins() -> list[str]:
    """The main environment's own torch and transformers: an environment that differs only in
    being another interpreter's, so the test needs nothing this machine's pip cannot find."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in ("torch", "transformers")]


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("envs")
    run = run_study(workdir, {"requirements": main_pins()})
    if run.returncode != 0:
        logs = "\n".join(
            f"== {p}\n{p.read_text()[-3000:]}" for p in sorted((workdir / "results").rglob("*.log"))
        )
        pytest.fail(f"snakemake failed:\n{run.stderr[-5000:]}\n{logs}")
    return workdir


def environment_records(workdir: Path) -> list[Path]:
    return sorted((workdir / "results" / "envs").glob("*/environment.json"))


def test_the_environment_is_created_once_and_records_its_versions(study):
    records = environment_records(study)
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert record["name"] == "pinned" and record["digest"] == records[0].parent.name
    assert record["versions"]["torch"] == importlib.metadata.version("torch")
    assert (records[0].parent / "bin" / "python").exists()


def test_every_stage_of_the_arm_ran_under_its_environment(study):
    digest = environment_records(study)[0].parent.name
    tables = study / "results" / "tables"
    for table in ("bench", "warm", "fidelity"):
        rows = pd.read_parquet(tables / f"{table}.parquet")
        env_rows, main_rows = rows[rows["arm"] == "hf/bf16-env"], rows[rows["arm"] == "hf/bf16"]
        assert len(env_rows) and len(main_rows), table
        assert (env_rows["environment"] == digest).all(), table
        assert (main_rows["environment"] == "main").all(), table
        # a row the guard marks contended still measured (another process may share the machine)
        assert env_rows["status"].isin(["ok", "contended"]).all(), env_rows[["status", "error"]]
    # the interpreter that ran them: the rep's and the fidelity job's logs name it
    logs = "\n".join(p.read_text() for p in (study / "results" / "logs").rglob("*.log"))
    assert f"under environment pinned ({digest})" in logs


def test_a_second_run_creates_nothing_and_reruns_nothing(study):
    before = {p: p.stat().st_mtime_ns for p in environment_records(study)}
    run = run_study(study, {"requirements": main_pins()})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Nothing to be done" in run.stdout + run.stderr
    assert {p: p.stat().st_mtime_ns for p in environment_records(study)} == before


def test_changing_one_pin_makes_one_new_environment_and_reruns_only_that_arms_jobs(study):
    changed = {"requirements": main_pins(), "remove": ["a-distribution-that-is-not-there"]}
    (study / "config" / "config.yaml").write_text(yaml.safe_dump(study_config(changed)))
    try:
        plan = subprocess.run(
            [*SNAKEMAKE, "--directory", str(study), "--cores", "2", "-n", *TARGETS],
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        (study / "config" / "config.yaml").write_text(
            yaml.safe_dump(study_config({"requirements": main_pins()}))
        )
    assert plan.returncode == 0, plan.stderr[-3000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", plan.stdout + plan.stderr, re.MULTILINE))
    assert counts.get("environment") == "1"  # the one new environment
    assert counts.get("bench_rep") == "1"  # the env arm's one rep; the main arm's stays
    assert counts.get("fidelity_arm") == "1"
    assert "reference_model" not in counts  # nothing upstream of the arm reruns


@pytest.mark.parametrize(
    "environment, said",
    [
        # installs, but holds no transformers: one small package, so creating it costs seconds
        (
            {"requirements": [f"packaging=={importlib.metadata.version('packaging')}"]},
            "'import transformers' fails for engine hf",
        ),
        ({"requirements": ["transformers==0.0.0.dev999"]}, "transformers==0.0.0.dev999"),
    ],
)
def test_a_broken_environment_stops_the_study_before_any_measuring_job(tmp_path, environment, said):
    # The cold reps are the measuring jobs asked for: the study keeps going with the jobs that do not
    # wait for the environments (the reference model), and fidelity's preparation would only add to them.
    run = run_study(tmp_path, environment, ["results/tables/bench.parquet"])
    assert run.returncode != 0
    assert "edgebench: environment 'pinned'" in run.stderr + run.stdout and said in run.stderr + run.stdout
    assert not list((tmp_path / "results" / "raw").rglob("*.parquet"))  # nothing measured
