"""One engine registry: everything that names engines reads it."""

import importlib
import re

import pytest

from edgebench.config import load_schema
from edgebench.diagnostics.imports import ENGINE_ENTRY
from edgebench.engines.base import Engine
from edgebench.engines.registry import ENGINES, can_load, ledger_function
from edgebench.provenance import TRACKED_PACKAGES

from .conftest import set_at


def test_every_entry_names_a_class_a_ledger_and_an_import_that_exist():
    for name, info in ENGINES.items():
        cls = getattr(importlib.import_module(info.module), info.cls)
        assert cls.name == name and all(
            hasattr(cls, m) for m in Engine.__annotations__ or ("load", "generate")
        )
        assert callable(ledger_function(name)) and info.package in TRACKED_PACKAGES
        assert ENGINE_ENTRY[name] == info.import_statement


def test_the_schema_and_the_build_rules_come_from_the_registry():
    arms = load_schema()["properties"]["arms"]
    assert arms["additionalProperties"]["properties"]["engine"]["enum"] == list(ENGINES)
    assert arms["propertyNames"]["pattern"].startswith(f"^({'|'.join(ENGINES)})/")
    assert can_load("vllm", None) and can_load("vllm", "gptq") and not can_load("vllm", "gguf")
    assert can_load("hf", None) and not can_load("hf", "gptq")
    assert can_load("llamacpp", "gguf") and not can_load("llamacpp", None)


def test_features_and_options_are_the_engines_own(monkeypatch):
    """A feature a study asks of an arm is refused by the registry's rule, naming the engines that
    have it; duet and fidelity options come from the entry, so a new engine needs no branch elsewhere."""
    import dataclasses

    from edgebench.bench.contract import EngineSpec
    from edgebench.bench.session import single_thread
    from edgebench.engines import registry
    from edgebench.fidelity.score import scoring_arm

    for info in ENGINES.values():
        assert info.features <= set(registry.FEATURES)
    assert registry.check_feature("w", "llamacpp/q", {"engine": "llamacpp"}, "agent").count("vllm") == 1
    assert registry.check_feature("w", "vllm/bf16", {"engine": "vllm"}, "agent") is None
    assert "not an arm" in registry.check_feature("w", "nope", None, "crosscheck")
    spec = EngineSpec(engine="hf", build_dir="b", options={"threads": 2}, vocab_size=8, bench={})
    assert single_thread(spec).options == {"threads": 1, "threads_bind": "nobind"}
    # An engine whose entry asks for duet and scoring options gets them, with no other change.
    monkeypatch.setitem(
        registry.ENGINES,
        "hf",
        dataclasses.replace(ENGINES["hf"], duet_options={"x": 1}, fidelity_options={"y": 2}),
    )
    assert single_thread(spec).options["x"] == 1
    assert scoring_arm({"engine": "hf", "threads": 2}, 1) == {"engine": "hf", "threads": 1, "y": 2}


def test_each_engine_names_its_kernel_by_its_own_rule(monkeypatch):
    """Rows and engines ask the registry which kernel an arm runs; an engine with a rule of its own
    needs no branch in edgebench.rows."""
    import dataclasses

    from edgebench.engines import registry
    from edgebench.rows import arm_kernel

    config = {
        "arms": {
            "hf/bf16": {"engine": "hf", "build": "reference"},
            "llamacpp/q": {"engine": "llamacpp", "build": "q", "use_extra_bufts": True},
            "llamacpp/p": {"engine": "llamacpp", "build": "q"},
            "vllm/g": {"engine": "vllm", "build": "g", "int4_w4a8": False},
        },
        "builds": {"q": {"method": "gguf"}, "g": {"method": "gptq", "bits": 4}},
    }
    kernels = {arm: arm_kernel(config, arm, set()) for arm in config["arms"]}
    assert kernels == {
        "hf/bf16": "hf_torch",
        "llamacpp/q": "llamacpp_cpu_repacked",
        "llamacpp/p": "llamacpp_cpu",
        "vllm/g": "cpu_gemm_wna16",
    }
    other = dataclasses.replace(ENGINES["hf"], kernel_rule="edgebench.isa:llamacpp_kernel")
    monkeypatch.setitem(registry.ENGINES, "hf", other)
    assert arm_kernel(config, "hf/bf16", set()) == "llamacpp_cpu"


def test_an_engine_with_its_own_environment_runs_there_unless_the_study_says_otherwise(default_config):
    from edgebench.config import validate_config
    from edgebench.engines.registry import ENGINES

    config = set_at(
        default_config, ("builds", "ov-int4"), {"method": "openvino", "bits": 4, "group_size": 64}
    )
    config["arms"]["openvino/int4"] = {"engine": "openvino", "build": "ov-int4", "threads": 1, "bench": False}
    checked = validate_config(config, read_model=False)
    assert checked["arms"]["openvino/int4"]["env"] == "openvino"
    assert checked["builds"]["ov-int4"]["env"] == "openvino"  # its converter runs there too
    spec = checked["environments"]["openvino"]
    assert spec["requirements"] == ENGINES["openvino"].environment["requirements"]
    # a study's own entry of that name wins over the registry's
    config["environments"] = {"openvino": {"requirements": ["openvino-genai==2026.4.1"]}}
    checked = validate_config(config, read_model=False)
    assert checked["environments"]["openvino"]["requirements"] == ["openvino-genai==2026.4.1"]


@pytest.mark.parametrize(
    ("build", "arm_engine", "message"),
    [
        (
            {"method": "openvino", "bits": 32},
            "openvino",
            "config.builds.b.bits: 32 is not one method openvino makes",
        ),
        (
            {"method": "ortgenai", "bits": 16},
            "ortgenai",
            "config.builds.b.bits: 16 is not one method ortgenai makes",
        ),
        ({"method": "ortgenai", "bits": 4}, "openvino", "engine 'openvino' cannot run build 'b'"),
        (
            {"method": "gptq", "bits": 4, "group_size": 64},
            "ortgenai",
            "engine 'ortgenai' cannot run build 'b'",
        ),
    ],
)
def test_a_converter_build_is_checked_against_its_method_and_engine(
    default_config, build, arm_engine, message
):
    from edgebench.config import ConfigError, validate_config

    config = set_at(default_config, ("builds", "b"), build)
    config["arms"][f"{arm_engine}/b"] = {"engine": arm_engine, "build": "b", "bench": False}
    with pytest.raises(ConfigError, match=re.escape(message)):
        validate_config(config, read_model=False)


def test_an_engine_without_constrained_generation_is_refused_the_agent_suite_by_name():
    from edgebench.engines.registry import check_feature

    for engine in ("openvino", "ortgenai", "vllm"):  # each decodes actions under the screen's schema
        assert check_feature("config.agent.arms", f"{engine}/a", {"engine": engine}, "agent") is None
    why = check_feature("config.agent.arms", "llamacpp/q4", {"engine": "llamacpp"}, "agent")
    assert why and "runs on 'llamacpp', which lacks the phone-agent suite" in why
    assert "engines with it: vllm, openvino, ortgenai" in why
