"""The action space of one screen as a JSON schema, or as a regular expression, for decoding under
structured outputs.

With either, vLLM (through xgrammar) can only emit a well-formed action whose `index` is one the
screen shows and whose app name is one the launcher has: invalid actions become impossible by
construction instead of being parsed away. Engines without structured outputs keep the parser.

The schema's JSON is compact (`{"action":"click","index":4}`: vLLM's whitespace setting is one per
engine, and free whitespace spends the token budget). The pattern spells each action the way the
prompt's list of actions does (`{"action": "click", "index": 4}`), one space after each colon and
comma: on Qwen2.5-Coder-1.5B, forcing the compact form cut the share of steps that match a
scripted solution's action to about a third of the spaced form's.
"""

from __future__ import annotations

import re

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


def _form(kind: str, *fields: tuple[str, str]) -> str:
    parts = [f'"action": "{kind}"', *(f'"{name}": {value}' for name, value in fields)]
    return re.escape("{") + ", ".join(parts) + re.escape("}")


def _one_of(values) -> str:
    return "(" + "|".join(re.escape(str(v)) for v in values) + ")"


def action_pattern(
    indices: list[int],
    editable: list[int] = (),
    apps: tuple[str, ...] = LAUNCHER_APPS,
    excluded: frozenset[tuple] = frozenset(),
) -> str:
    """The same action space as `action_schema`, as one regular expression over the spaced JSON,
    less the `excluded` actions (keys from `action_key`; a status is never excluded)."""

    def kept(kind: str, values) -> list:
        return [v for v in values if (kind, v) not in excluded]

    forms = []
    for kind in (k for k in INDEXED if k != "input_text"):
        if choices := kept(kind, sorted(set(indices))):
            forms.append(_form(kind, ("index", _one_of(choices))))
    if editable:
        text = '"[^"\\\\\\x00-\\x1f]{0,' + str(SCHEMA_TEXT) + '}"'
        forms.append(_form("input_text", ("index", _one_of(sorted(set(editable)))), ("text", text)))
    if directions := kept("scroll", DIRECTIONS):
        forms.append(_form("scroll", ("direction", _quoted(directions))))
    bare = ("navigate_back", "navigate_home", "wait")
    forms += [_form(kind) for kind in bare if (kind, None) not in excluded]
    if names := kept("open_app", apps):
        forms.append(_form("open_app", ("name", _quoted(names))))
    forms.append(_form("status", ("goal_status", _quoted(GOAL_STATUSES))))
    return "(" + "|".join(forms) + ")"


def action_key(action: dict) -> tuple:
    """What `action_pattern` excludes an action by: its kind and its one argument (a typed text
    is not part of it, so typing is never excluded)."""
    kind = action.get("action")
    argument = next((action[key] for key in ("index", "direction", "name") if key in action), None)
    return (kind, argument)


def _quoted(values) -> str:
    return '"' + _one_of(values) + '"'
