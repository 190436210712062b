"""Policies: the scripted known-good agent, the baselines that check the checker, and the LLM's
prompt and reply parser. A policy maps (task, screen elements, history) to one action dict."""

from __future__ import annotations

import json
import random

from edgebench.agent.actions import click, status
from edgebench.agent.screens import alarm_label
from edgebench.agent.tasks import Task
from edgebench.agent.uixml import Element, find, format_elements


class ScriptedPolicy:
    """Known-good: each task's own solution (Task.solve), through these primitives. A checker
    baseline overrides one primitive to do that step wrongly."""

    applies_to: tuple[str, ...] | None = None  # the templates a baseline is meant for (None: all)

    def __init__(self, task: Task) -> None:
        self.task = task
        self.switch_clicks = 0
        self.finished = False
        self.memory: dict = {}  # what a solution remembers between steps

    def __call__(self, elements: list[Element], history: list[dict]) -> dict:
        return status() if self.finished else self.task.solve(self, elements, history)

    def flip(self, switch: Element) -> dict:
        self.switch_clicks += 1
        return click(switch)

    def set_switch(self, elements: list[Element], switch: Element, on: bool) -> dict:
        return self.flip(switch) if switch.checked != on else self.done(elements)

    def enable_alarm(self, elements: list[Element], switch: Element) -> dict:
        return self.flip(switch)

    def confirm_picker(self, elements: list[Element]) -> dict:
        return click(find(elements, text="OK"))

    def alarms_to_turn_off(self, elements: list[Element], label: str) -> list[Element]:
        """Every switch of an alarm at this time that is on (the same alarm may be listed twice)."""
        return [e for e in elements if e.checkable and e.label == label and e.checked]

    def done(self, elements: list[Element]) -> dict:
        return status()


class DoNothingPolicy:
    applies_to = None

    def __init__(self, task: Task) -> None:
        self.task = task

    def __call__(self, elements, history) -> dict:
        return status()


class RoundTripPolicy(ScriptedPolicy):
    """Flips the target switch, flips it back, reports success: the classic false pass."""

    def set_switch(self, elements, switch, on):
        return self.flip(switch) if self.switch_clicks < 2 else self.done(elements)


class TypeNeverSavePolicy(ScriptedPolicy):
    """Types the alarm time into the picker, then cancels: what a typed-'7' oracle would pass."""

    def enable_alarm(self, elements, switch):
        return click(find(elements, text="Add alarm"))  # types the time in instead

    def confirm_picker(self, elements):
        self.finished = True
        return click(find(elements, text="Cancel"))


class AllAlarmsOffPolicy(ScriptedPolicy):
    """Asked to turn off one alarm, turns off every alarm: the task done too broadly."""

    applies_to = ("alarm_off",)

    def alarms_to_turn_off(self, elements, label):
        return [e for e in elements if e.rid == "onoff" and e.checked]


class AlarmAndToggleAnotherPolicy(ScriptedPolicy):
    """Adds the alarm as asked, then toggles one other alarm: collateral damage."""

    applies_to = ("add_alarm",)

    def done(self, elements):
        wanted = alarm_label(self.task.params["hour"], self.task.params["minute"])
        other = next((e for e in elements if e.rid == "onoff" and e.label != wanted), None)
        if other is None or self.memory.get("toggled"):
            return status()
        self.memory["toggled"] = True
        return self.flip(other)


class RandomPolicy:
    """Uniform over action forms: the chance floor for navigation and completion."""

    applies_to = None

    def __init__(self, task: Task) -> None:
        self.rng = random.Random(task.seed)

    def __call__(self, elements, history) -> dict:
        roll = self.rng.random()
        if roll < 0.6 and elements:
            return click(self.rng.choice(elements))
        if roll < 0.75:
            return {"action": "navigate_back"}
        if roll < 0.9:
            return {"action": "open_app", "name": self.rng.choice(["Settings", "Clock", "Contacts"])}
        return status(self.rng.choice(["complete", "infeasible"]))


BASELINES = {
    "scripted": ScriptedPolicy,
    "do_nothing": DoNothingPolicy,
    "round_trip": RoundTripPolicy,
    "type_never_save": TypeNeverSavePolicy,
    "random": RandomPolicy,
    "all_alarms_off": AllAlarmsOffPolicy,
    "alarm_and_toggle_another": AlarmAndToggleAnotherPolicy,
}

ACTION_FORMS = (
    '{"action": "click", "index": N}\n'
    '{"action": "input_text", "index": N, "text": "..."}\n'
    '{"action": "navigate_back"}\n'
    '{"action": "navigate_home"}\n'
    '{"action": "open_app", "name": "Settings" | "Clock" | "Contacts"}\n'
    '{"action": "scroll", "direction": "down"}\n'
    '{"action": "wait"}\n'
    '{"action": "status", "goal_status": "complete" | "infeasible"}'
)


# The app names a model knows, for the packages the suite's screens come from (a real phone's other
# apps show their package name).
APP_NAMES = {
    "com.android.launcher3": "Home screen",
    "com.google.android.apps.nexuslauncher": "Home screen",
    "com.android.settings": "Settings",
    "com.google.android.deskclock": "Clock",
    "com.google.android.contacts": "Contacts",
}


# One worked episode on a task the suite does not have, so a model sees how an index is chosen and
# when to stop; it is part of the fixed prefix every prompt shares.
WORKED_EXAMPLE = (
    "Example.\n"
    'App on screen: Home screen. Screen: [0] TextView "Settings" clickable [1] TextView "Clock" clickable\n'
    "Goal: Turn dark theme on.\n"
    'Reply: {"action": "click", "index": 0}\n'
    'App on screen: Settings. Screen: [4] LinearLayout "Network & internet" clickable '
    '[10] LinearLayout "Display" clickable [12] TextView "Dark theme, font size, brightness"\n'
    "Goal: Turn dark theme on.\n"
    'Reply: {"action": "click", "index": 10}\n'
    'App on screen: Settings. Screen: [3] TextView "Dark theme" '
    '[4] Switch "Dark theme" checked=false clickable\n'
    "Goal: Turn dark theme on.\n"
    'Reply: {"action": "click", "index": 4}\n'
    'App on screen: Settings. Screen: [3] TextView "Dark theme" '
    '[4] Switch "Dark theme" checked=true clickable\n'
    "Goal: Turn dark theme on.\n"
    'Reply: {"action": "status", "goal_status": "complete"}\n'
    "End of example.\n"
)


def app_name(elements: list[Element]) -> str:
    """The app a screen belongs to, by the name a model knows (a package it does not know as is)."""
    package = elements[0].package if elements else ""
    return APP_NAMES.get(package, package or "unknown")


def prompt_elements(elements: list[Element]) -> list[Element]:
    """The elements a model is shown: everything it can act on, and every other text except the
    ones that repeat an actionable element's label (a row's title under the clickable row). Indices
    stay the device's own, so an action on a shown index acts on that element."""
    actionable = [e for e in elements if e.clickable or e.checkable or e.editable]
    labels = {e.label for e in actionable}
    return [e for e in elements if e in actionable or e.label not in labels]


def history_line(action: dict) -> str:
    """A past action in a few tokens ("click 4", "open_app Clock", 'input_text 3 "7:30"'): every
    episode prefills its own history at every step of a batch, so its length is what batching pays
    for; the JSON form the model replies in is in the instructions and the example."""
    args = [action[key] for key in ("index", "name", "direction", "goal_status") if key in action]
    if "text" in action:
        args.append(json.dumps(action["text"]))
    return " ".join(str(part) for part in [action["action"], *args])


def llm_prompt(goal: str, elements: list[Element], history: list[dict], last: int = 3) -> str:
    """A compact prompt, ordered for the engine's prefix cache: the fixed instructions (shared by
    every step of every episode), then the app and the screen (shared by every episode on the same
    screen: in a lockstep batch many are), and only then what is the episode's own: the goal and
    the last actions. A model that stops early or never stops fails, so the instructions say when
    to send a status."""
    recent = "\n".join(history_line(a) for a in history[-last:]) or "none"
    return (
        "You operate an Android phone, one action per reply. Reply with exactly one JSON action, "
        f"one of:\n{ACTION_FORMS}\n"
        "When the screen shows the goal is done, reply with status complete; if the goal cannot be "
        "done, reply with status infeasible.\n"
        f"{WORKED_EXAMPLE}"
        f"App on screen: {app_name(elements)}\n"
        f"Screen:\n{format_elements(prompt_elements(elements))}\n"
        f"Goal: {goal}\n"
        f"Last actions:\n{recent}\n"
    )


def check_prompt(goal: str, elements: list[Element]) -> str:
    """The completion check's question: does this screen show the goal done? The same screen
    lines as the action prompt, so a screen shared by many episodes is cached once."""
    return (
        "You check an Android phone's screen against a goal. Reply with exactly one JSON object: "
        '{"done": "yes"} if this screen shows that the goal is done, else {"done": "no"}.\n'
        f"App on screen: {app_name(elements)}\n"
        f"Screen:\n{format_elements(prompt_elements(elements))}\n"
        f"Goal: {goal}\n"
    )


def first_json_object(text: str) -> dict | None:
    """The first balanced {...} that parses as a JSON object with an "action", else None. A raw
    control character inside a string is accepted (xgrammar's JSON strings allow it); the action's
    strings are cleaned before they reach the device or a prompt."""
    decoder = json.JSONDecoder(strict=False)
    for start, char in enumerate(text):
        if char != "{":
            continue
        try:
            value, _ = decoder.raw_decode(text[start:])
        except (ValueError, RecursionError):  # bad JSON, a 5,000-digit number, 2,000-deep nesting
            continue
        if isinstance(value, dict) and isinstance(value.get("action"), str):
            return value
    return None
