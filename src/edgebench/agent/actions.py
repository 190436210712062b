"""The agent's actions: their JSON forms, how to build them, and when one is malformed.

`click {index}`, `long_press {index}`, `input_text {index, text}` (focus, clear, type), `scroll
{direction}`, `navigate_back`, `navigate_home`, `open_app {name}`, `wait`, `status {goal_status}`.
"""

from __future__ import annotations

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
