"""The same DAG through a real (single-node, local) SLURM cluster and profiles/slurm."""

import importlib.metadata
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from edgebench.tables import TABLE_COLUMNS

from .conftest import ROOT
from .slurm_cluster import available, slurm_cluster

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.skipif(
        not available(),
        reason="needs root, slurm-wlm and munge (make test installs them), and no real /etc/slurm/slurm.conf",
    ),
]


def run_through_sbatch(tmp_path, workdir) -> tuple[subprocess.CompletedProcess, str]:
    """The study's bench table through the SLURM profile: Snakemake's run and the cluster's job log."""
    with slurm_cluster(tmp_path / "cluster") as env:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "--snakefile",
                str(ROOT / "workflow" / "Snakefile"),
                "--directory",
                str(workdir),
                "--profile",
                str(ROOT / "profiles" / "slurm"),
                "--slurm-init-seconds-before-status-checks",
                "1",
                "--seconds-between-status-checks",
                "2",  # a test cluster answers at once; the default 10 s adds up over serial reps
                "results/tables/bench.parquet",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=1500,
        )
        completed = (tmp_path / "cluster" / "jobcomp.txt").read_text() if run.returncode == 0 else ""
    return run, completed


@pytest.fixture(scope="module")
def sbatch_study(tmp_path_factory):
    """One study through sbatch for every test here: an arm in an environment of its own (created
    by a cluster job in the shared results folder, its reps run under its interpreter) and an arm
    in the main environment whose one rep crashes. One round: every sbatch job costs the plugin's
    status-check cycle, and one rep of each kind shows what the profile must carry."""
    tmp_path = tmp_path_factory.mktemp("sbatch")
    workdir = tmp_path / "study"
    shutil.copytree(ROOT / ".test" / "kill" / "config", workdir / "config")
    config = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in ("torch", "transformers")]
    config["environments"] = {"pinned": {"requirements": pins}}
    config["arms"]["hf/bf16-env"] = {**config["arms"].pop("hf/bf16"), "env": "pinned"}
    config["bench"]["rounds"] = 1
    config["bench"]["faults"] = [{"arm": "hf/bf16-crash", "rep": 0, "kind": "crash"}]
    config["gates"]["baseline"] = "hf/bf16-env"
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run, completed = run_through_sbatch(tmp_path, workdir)
    assert run.returncode == 0, run.stderr[-4000:]
    return workdir, completed


def test_study_runs_through_sbatch_with_the_slurm_profile(sbatch_study):
    workdir, completed = sbatch_study
    # every job but the local ones went through sbatch: the environment, the reference build and the
    # two reps (the environments check and the join run where Snakemake runs: the Snakefile's localrules)
    jobs = re.findall(r"JobId=(\d+) .*?JobState=(\w+)", completed)
    assert len(jobs) == 4 and all(state == "COMPLETED" for _, state in jobs), completed[-2000:]
    bench = pd.read_parquet(workdir / "results" / "tables" / "bench.parquet")
    assert list(bench.columns[: len(TABLE_COLUMNS["bench"])]) == list(TABLE_COLUMNS["bench"])
    crash = bench[bench["arm"] == "hf/bf16-crash"]
    assert len(crash) == 1 and crash.iloc[0]["status"] == "failed", crash.to_dict()
    assert crash.iloc[0]["error"], crash.to_dict()


def test_an_arm_in_its_own_environment_runs_through_sbatch(sbatch_study):
    workdir, _ = sbatch_study
    records = list((workdir / "results" / "envs").glob("*/environment.json"))
    assert len(records) == 1
    bench = pd.read_parquet(workdir / "results" / "tables" / "bench.parquet")
    own = bench[bench["arm"] == "hf/bf16-env"]
    assert len(own) == 1 and (own["environment"] == records[0].parent.name).all()
    assert own["status"].isin(["ok", "contended"]).all(), own[["status", "error"]].to_string()
    assert (own["ready_s"] > 0).all()
    main = bench[bench["arm"] == "hf/bf16-crash"]
    assert (main["environment"] != records[0].parent.name).all()
