"""Editing a package module reruns exactly the rules that use it (Snakemake does not track imports)."""

import re
import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.workflow
TARGET = "results/tables/compare.parquet"


def snakemake(checkout, workdir, *extra) -> str:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(checkout / "workflow" / "Snakefile"),
            "--directory",
            str(workdir),
            "--cores",
            "2",
            *extra,
            TARGET,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout


def planned_jobs(checkout, workdir) -> dict[str, int]:
    out = snakemake(checkout, workdir, "--dry-run")
    table = out.split("Job stats:")[1].split("\n\n")[0] if "Job stats:" in out else ""
    return {name: int(n) for name, n in re.findall(r"^(\w+)\s+(\d+)$", table, re.M) if name != "total"}


def test_editing_a_module_reruns_only_its_dependent_rules(tmp_path):
    checkout = tmp_path / "checkout"
    for part in ("workflow", "src"):
        shutil.copytree(ROOT / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__"))
    workdir = tmp_path / "study"
    shutil.copytree(ROOT / ".test" / "kill" / "config", workdir / "config")
    snakemake(checkout, workdir)
    assert planned_jobs(checkout, workdir) == {}

    compare = checkout / "src" / "edgebench" / "bench" / "compare.py"
    compare.write_text(compare.read_text() + "\n# a changed comparison method\n")
    assert planned_jobs(checkout, workdir) == {"compare_and_gates": 1}

    guard = checkout / "src" / "edgebench" / "bench" / "guard.py"
    guard.write_text(guard.read_text() + "\n# a changed contention guard\n")
    # the guard judges cold reps and warm samples alike
    assert planned_jobs(checkout, workdir) == {
        "bench_rep": 6,
        "study_table": 1,
        "warm_session": 1,
        "warm_table": 1,
        "compare_and_gates": 1,
    }
