"""The agent's action spaces as each engine's constrained generation takes them: compact JSON (no
free whitespace, which a small model fills its token budget with) for OpenVINO GenAI and ORT GenAI,
as vLLM's structured outputs decode it; a pattern passes as a pattern."""

import json
import re

from edgebench.agent.action_schema import action_schema
from edgebench.engines.openvino_engine import compact_json_grammar
from edgebench.engines.ortgenai_engine import guidance


def test_openvino_gets_a_grammar_without_free_whitespace_in_the_syntax_it_reads():
    grammar = compact_json_grammar(action_schema([2, 5, 9], [5]))
    rules = [line for line in grammar.splitlines() if line.startswith("root")]
    assert rules and any('"\\"action\\""' in rule for rule in rules)
    assert not re.search(r"\{\d+, ?-1\}", grammar)  # OpenVINO's xgrammar reads no -1 bound
    # the action's own rules admit no whitespace class between tokens: separators are fixed strings
    assert not any(re.search(r"\[ \\n", rule) for rule in rules)
    assert any('", "' in rule for rule in rules) and any('": "' in rule for rule in rules)


def test_ort_guidance_asks_llguidance_for_compact_json_and_keeps_the_schema():
    schema = action_schema([2, 5], [])
    kind, text = guidance(schema)
    sent = json.loads(text)
    assert kind == "json_schema" and sent["x-guidance"] == {"whitespace_flexible": False}
    assert {k: v for k, v in sent.items() if k != "x-guidance"} == schema
    assert guidance("a|b") == ("regex", "a|b")
