"""The history store and its change points: a 5% step is found, a flat series gives none."""

import json

import numpy as np
import pandas as pd

from edgebench.cli import main
from edgebench.crossstudy.load import load_study
from edgebench.history import store
from edgebench.history.changes import change_point_table
from tests.studies import write_study


def synthetic_history(points: int = 16, step_at: int = 9, seed: int = 3) -> pd.DataFrame:
    """Two series on one machine: decode with a 5% drop after a vLLM upgrade at `step_at`, and
    prefill with no change at all; 1% noise per study."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(points):
        version = "0.32.0" if i >= step_at else "0.31.0"
        common = {
            "kind": "absolute",
            "table": "warm",
            "arm": "vllm/bf16",
            "machine_digest": "m",
            "study": "default",
            "git_commit": f"{i:040x}",
            "git_dirty": False,
            "versions": json.dumps({"vllm": version}),
            "finished_at": (pd.Timestamp("2026-11-01", tz="UTC") + pd.Timedelta(days=i)).isoformat(),
            "low": np.nan,
            "high": np.nan,
            "n": 10,
        }
        decode = 50.0 * (0.95 if i >= step_at else 1.0) * np.exp(rng.normal(0, 0.01))
        rows.append({**common, "metric": "decode_tok_s", "value": decode})
        rows.append({**common, "metric": "prefill_tok_s", "value": 900.0 * np.exp(rng.normal(0, 0.01))})
    return pd.DataFrame(rows)


def test_a_five_percent_step_is_found_and_nothing_else():
    points = change_point_table(synthetic_history())
    assert len(points) == 1, points
    found = points.iloc[0]
    assert found["metric"] == "decode_tok_s" and found["index"] == 9
    assert -0.07 < found["change"] < -0.03
    assert "vllm 0.31.0 -> 0.32.0" in found["follows"]


def test_a_study_appends_once_per_measurement_keyed_by_machine_study_and_commit(tmp_path):
    study = load_study(write_study(tmp_path / "s1", {"vllm/bf16": 50.0, "vllm/x": 40.0}, seed=1))
    frame = store.summary_rows(study)
    first = store.append(tmp_path / "store", frame)
    again = store.append(tmp_path / "store", store.summary_rows(study))
    assert first == again  # the same measurement rewrites its entry
    assert first.parent.parent.name == "machine=m0" and first.parent.name == "study=s1"
    assert first.name.endswith(f"-{'a' * 12}.parquet")
    loaded = store.load(tmp_path / "store", "m0")
    assert set(loaded["kind"]) == {"absolute", "paired ratio"}
    assert len(loaded) == len(frame)


def test_history_command_draws_the_series_and_names_the_change(tmp_path):
    history = synthetic_history()
    for _, entry in history.groupby(["git_commit", "finished_at"]):
        store.append(tmp_path / "store", entry.reset_index(drop=True))
    out = tmp_path / "out"
    assert main(["history", "--store", str(tmp_path / "store"), "--machine", "m", "--out", str(out)]) == 0
    page = (out / "history.md").read_text()
    assert "1 change point" in page and "vllm 0.31.0 -> 0.32.0" in page
    assert (out / "history.png").stat().st_size > 0 and (out / "history.html").exists()


def test_history_of_a_machine_the_store_does_not_hold_is_refused(tmp_path, capsys):
    (tmp_path / "store").mkdir()
    assert main(["history", "--store", str(tmp_path / "store"), "--machine", "nope"]) == 2
    assert "no history for machine nope" in capsys.readouterr().err
