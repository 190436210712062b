"""GGUF builds carry no config.json: the bench and the ledger read their source build's."""

import json

import pytest

from edgebench.models.hf_config import model_config


def test_gguf_build_reads_its_source_builds_config(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "config.json").write_text(json.dumps({"vocab_size": 49152}))
    (tmp_path / "gguf-q4_0").mkdir()
    (tmp_path / "gguf-q4_0" / "build.json").write_text(json.dumps({"source": "reference"}))
    assert model_config(tmp_path / "gguf-q4_0")["vocab_size"] == 49152
    assert model_config(tmp_path / "reference")["vocab_size"] == 49152


def test_a_build_with_neither_config_nor_source_is_named_in_the_error(tmp_path):
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "build.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="odd"):
        model_config(tmp_path / "odd")
