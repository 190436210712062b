"""One engine registry: everything that names engines reads it."""

import importlib

from edgebench.config import load_schema
from edgebench.diagnostics.imports import ENGINE_ENTRY
from edgebench.engines.base import Engine
from edgebench.engines.registry import ENGINES, can_load, ledger_function
from edgebench.provenance import TRACKED_PACKAGES


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
