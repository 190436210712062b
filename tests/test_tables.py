import os

import pandas as pd
import pytest

from edgebench.io import write_parquet
from edgebench.provenance import PROVENANCE_COLUMNS, digest_json, provenance
from edgebench.tables import TABLE_COLUMNS, check_columns, join_parquet, rows_frame


def test_every_table_carries_provenance_and_identity_columns():
    for columns in TABLE_COLUMNS.values():
        for required in (
            "arm",
            "engine",
            "build",
            "rep",
            "order_position",
            "status",
            "error",
            "started_at",
            "wall_s",
            *PROVENANCE_COLUMNS,
        ):
            assert required in columns


def test_provenance_values():
    row = provenance(
        run_id="r", model="m", config_digest=digest_json({"a": 1}), code_digest="c", cpus=[0], threads=1
    )
    assert row["git_commit"] and row["cpus_used"] == "0" and '"python"' in row["versions"]
    assert digest_json({"a": 1, "b": 2}) == digest_json({"b": 2, "a": 1})


def test_atomic_write_leaves_no_temp_files_and_round_trips(tmp_path):
    frame = rows_frame("bench", [{"arm": "vllm/x", "status": "ok", "decode_tok_s": 12.5}])
    path = tmp_path / "sub" / "t.parquet"
    write_parquet(frame, path)
    assert os.listdir(path.parent) == ["t.parquet"]
    assert pd.read_parquet(path)["decode_tok_s"].iloc[0] == 12.5


def test_join_checks_the_contract(tmp_path):
    good = tmp_path / "a.parquet"
    write_parquet(rows_frame("bench", [{"arm": "vllm/x", "status": "ok"}]), good)
    assert len(join_parquet("bench", [good, good])) == 2
    bad = tmp_path / "b.parquet"
    write_parquet(rows_frame("bench", [{"arm": "vllm/x", "status": "weird"}]), bad)
    with pytest.raises(ValueError, match="weird"):
        join_parquet("bench", [bad])
    with pytest.raises(ValueError, match="lacks columns"):
        check_columns("fidelity", pd.DataFrame({"arm": ["x"], "status": ["ok"]}))


def test_tables_carry_the_jobs_provenance_once_as_metadata(tmp_path):
    from types import SimpleNamespace

    from edgebench.io import table_context
    from edgebench.jobs import start_job

    job = SimpleNamespace(
        rule="warm_table", log=[], params={"code": "abc", "config": {"run_id": "r1", "bench": {}}}
    )
    context = start_job(job)
    path = tmp_path / "t.parquet"
    write_parquet(pd.DataFrame({"x": [1, 2]}), path)
    assert table_context(path) == context and context["rule"] == "warm_table" and context["run_id"] == "r1"
    assert list(pd.read_parquet(path).columns) == ["x"]  # constant provenance is not repeated per row
