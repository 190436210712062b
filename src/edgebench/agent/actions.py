"""The agent's actions: their JSON forms, how to build them, and when one is malformed.

`click {index}`, `long_press {index}`, `input_text {index, text}` (focus, clear, type), `scroll
{direction}`, `navigate_back`, `navigate_home`, `open_app {name}`, `wait`, `status {goal_status}`.
"""

from __future__ import annotations

import unicodedata

from edgebench.agent.uixml import Element

DIRECTIONS = ("up", "down", "left", "right")
GOAL_STATUSES = ("complete", "infeasible")
INDEXED = ("click", "long_press", "input_text")
ACTIONS = (*INDEXED, "scroll", "navigate_back", "navigate_home", "open_app", "wait", "status")


def action_error(action: dict) -> str:
    """Why an action object is malformed ("" when it is well formed). Indices are strict ints:
    bools, floats, strings and numbers past any screen are malformed or out of range."""
    kind = action.get("action")
    if kind not in ACTIONS:
        return f"unknown action {kind[:40] if isinstance(kind, str) else type(kind).__name__!r}"
    if kind in INDEXED and type(action.get("index")) is not int:
        return "index must be an integer"
    if kind == "input_text" and not isinstance(action.get("text"), str):
        return "text must be a string"
    if kind == "open_app" and not isinstance(action.get("name"), str):
        return "name must be a string"
    if kind == "scroll" and action.get("direction") not in DIRECTIONS:
        return f"direction must be one of {DIRECTIONS}"
    if kind == "status" and action.get("goal_status") not in GOAL_STATUSES:
        return f"goal_status must be one of {GOAL_STATUSES}"
    return ""


# The fields each action carries; anything else a model adds is dropped before it reaches a prompt.
FIELDS = {
    "click": ("index",),
    "long_press": ("index",),
    "input_text": ("index", "text"),
    "scroll": ("direction",),
    "open_app": ("name",),
    "status": ("goal_status",),
}
MAX_TEXT = 200  # characters of one typed text or app name that reach the screen and the history


def clean_text(text: str, limit: int = MAX_TEXT) -> str:
    """Model text made safe for a prompt, a screen and the history: no lone surrogates (they
    cannot be encoded), no control characters, at most `limit` characters."""
    kept = (
        ch
        for ch in text
        if not 0xD800 <= ord(ch) <= 0xDFFF and (unicodedata.category(ch) != "Cc" or ch == " ")
    )
    return "".join(kept)[:limit]


def sanitized(action: dict) -> dict:
    """A well-formed action with only its own fields, its strings cleaned: whatever else a reply
    held (nested extra fields, escapes) never reaches the next prompt."""
    kind = action["action"]
    out = {"action": kind}
    for key in FIELDS.get(kind, ()):
        value = action[key]
        out[key] = clean_text(value) if isinstance(value, str) else value
    return out


def click(e: Element) -> dict:
    return {"action": "click", "index": e.index}


def type_into(e: Element, text: str) -> dict:
    return {"action": "input_text", "index": e.index, "text": text}


def open_app(name: str) -> dict:
    return {"action": "open_app", "name": name}


def back() -> dict:
    return {"action": "navigate_back"}


def status(value: str = "complete") -> dict:
    return {"action": "status", "goal_status": value}
