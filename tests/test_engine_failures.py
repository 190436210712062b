"""Errors stay what they are: an engine's failure becomes a failed row, a bug of edgebench's own
scoring or profiling stops the job with its traceback. The engine is the real transformers engine
on the tiny random model; a failure comes from a real load of a folder with no model in it."""

import json

import numpy as np
import pandas as pd
import pytest

from edgebench.diagnostics import decode_profile
from edgebench.engines.base import EngineBoundary, EngineFailed, failure_text
from edgebench.fidelity import score

ARM = "hf/tiny"


class HalfWorkingEngine:
    name = "half"

    def answer(self, value):
        return value

    def refuse(self):
        raise TypeError("the tokenizer refused this prompt")


def test_an_engine_behind_its_boundary_answers_as_itself_and_fails_as_engine_failed():
    engine = EngineBoundary(HalfWorkingEngine())
    assert engine.name == "half" and engine.answer(3) == 3
    with pytest.raises(EngineFailed, match="^TypeError: the tokenizer refused this prompt$") as failed:
        engine.refuse()
    assert isinstance(failed.value.__cause__, TypeError)
    assert failure_text(failed.value) == "TypeError: the tokenizer refused this prompt"


def test_the_callers_own_error_between_engine_calls_stays_what_it_is():
    engine = EngineBoundary(HalfWorkingEngine())
    with pytest.raises(KeyError, match="caller"):
        for value in (engine.answer(1), engine.answer(2)):
            raise KeyError(f"caller after {value}")


@pytest.fixture
def fidelity_inputs(tmp_path, tiny_model, default_config):
    """A two-window corpus, the reference's log-probs and greedy continuations, from the tiny model."""
    rng = np.random.default_rng(0)
    windows = [
        {"doc": "d", "start": 16 * i, "ids": rng.integers(0, 512, 16).tolist(), "context": 4} for i in (0, 1)
    ]
    prompts = [rng.integers(0, 512, 6).tolist()]
    (tmp_path / "windows.json").write_text(json.dumps({"windows": windows, "greedy_prompts": prompts}))
    np.save(tmp_path / "reference.npy", score.reference_logprobs(str(tiny_model), windows, threads=1))
    greedy = score.reference_greedy(str(tiny_model), prompts, threads=1)
    (tmp_path / "greedy.json").write_text(json.dumps(greedy))
    config = {**default_config, "arms": {ARM: {"engine": "hf", "build": "reference"}}}
    config["fidelity"] = {**config["fidelity"], "threads_per_arm": 1}  # the schema's default
    return config, tmp_path


def fidelity_job(config: dict, folder, build_dir) -> dict:
    return score.run_fidelity_arm(
        config,
        ARM,
        build_json=str(build_dir / "build.json"),
        windows_json=str(folder / "windows.json"),
        reference_npy=str(folder / "reference.npy"),
        reference_greedy_json=str(folder / "greedy.json"),
        summary_out=str(folder / "summary.parquet"),
        positions_out=str(folder / "positions.parquet"),
        code_digest="test",
    )


def test_the_reference_scored_against_itself_agrees_everywhere(fidelity_inputs, tiny_model):
    config, folder = fidelity_inputs
    row = fidelity_job(config, folder, tiny_model)
    assert row["status"] == "ok" and row["kl_method"] == "exact"
    assert row["top1"] == 1.0 and row["kl_mean"] < 1e-3  # float16 storage of the reference only
    assert len(pd.read_parquet(folder / "positions.parquet")) == 2 * (16 - 1 - 4)


def test_a_build_the_engine_cannot_load_is_a_failed_row(fidelity_inputs, tmp_path):
    config, folder = fidelity_inputs
    empty = tmp_path / "no-model"
    empty.mkdir()
    row = fidelity_job(config, folder, empty)
    assert row["status"] == "failed" and row["error"].split(":")[0].endswith("Error")
    written = pd.read_parquet(folder / "summary.parquet")
    assert written["status"].tolist() == ["failed"] and written["error"].iloc[0] == row["error"]


def test_a_scoring_bug_stops_the_fidelity_job_instead_of_becoming_a_row(
    fidelity_inputs, tiny_model, monkeypatch
):
    config, folder = fidelity_inputs

    def broken_scoring(*args, **kwargs):
        raise KeyError("a bug in edgebench's scoring")

    monkeypatch.setattr(score, "score_windows", broken_scoring)
    with pytest.raises(KeyError, match="a bug in edgebench's scoring"):
        fidelity_job(config, folder, tiny_model)
    assert not (folder / "summary.parquet").exists()


def profile_job(config: dict, build_dir, out) -> pd.DataFrame:
    return decode_profile.run_decode_profile(
        config, ARM, build_dir=str(build_dir), out=str(out), code_digest="t"
    )


def test_an_engine_that_cannot_load_is_a_failed_profile_row(default_config, tmp_path):
    config = {**default_config, "arms": {ARM: {"engine": "hf", "build": "reference"}}}
    frame = profile_job(config, tmp_path, tmp_path / "profile.parquet")
    assert frame["status"].tolist() == ["failed"] and frame["part"].tolist() == ["(failed)"]
    assert pd.read_parquet(tmp_path / "profile.parquet")["error"].iloc[0] == frame["error"].iloc[0]


def test_a_profiler_bug_stops_the_profile_job(default_config, tiny_model, tmp_path, monkeypatch):
    config = {**default_config, "arms": {ARM: {"engine": "hf", "build": "reference"}}}

    def broken_profiler(generate, layers):
        generate([1, 2, 3], 1)  # the engine answers; the profiler's own arithmetic then breaks
        raise ZeroDivisionError("a bug in edgebench's profiler")

    monkeypatch.setattr(decode_profile, "profile_rows", broken_profiler)
    with pytest.raises(ZeroDivisionError, match="profiler"):
        profile_job(config, tiny_model, tmp_path / "profile.parquet")
    assert not (tmp_path / "profile.parquet").exists()
