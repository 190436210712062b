"""The action space of one screen as a JSON schema, for decoding under structured outputs.

With it, vLLM (through xgrammar) can only emit a well-formed action whose `index` is one the screen
shows and whose app name is one the launcher has: invalid actions become impossible by
construction instead of being parsed away. Engines without structured outputs keep the parser.
"""

from __future__ import annotations

from edgebench.agent.actions import DIRECTIONS, GOAL_STATUSES, INDEXED
from edgebench.agent.policies import APP_NAMES

# What one typed text may hold under the schema: the suite types names and numbers, and a reply
# that runs past max_new_tokens is cut off and invalid, so the grammar keeps texts short.
SCHEMA_TEXT = 40

LAUNCHER_APPS = tuple(sorted({name for name in APP_NAMES.values() if name != "Home screen"}))


def _action(kind: str, **fields: dict) -> dict:
    return {
        "type": "object",
        "properties": {"action": {"const": kind}, **fields},
        "required": ["action", *fields],
        "additionalProperties": False,
    }


def action_schema(
    indices: list[int], editable: list[int] = (), apps: tuple[str, ...] = LAUNCHER_APPS
) -> dict:
    """Every action that can apply on a screen showing `indices`, of which `editable` take text."""
    forms = []
    if indices:
        index = {"enum": sorted(set(indices))}
        forms += [_action(kind, index=index) for kind in INDEXED if kind != "input_text"]
    if editable:
        text = {"type": "string", "maxLength": SCHEMA_TEXT}
        forms.append(_action("input_text", index={"enum": sorted(set(editable))}, text=text))
    forms += [
        _action("scroll", direction={"enum": list(DIRECTIONS)}),
        _action("navigate_back"),
        _action("navigate_home"),
        _action("open_app", name={"enum": list(apps)}),
        _action("wait"),
        _action("status", goal_status={"enum": list(GOAL_STATUSES)}),
    ]
    return {"anyOf": forms}
