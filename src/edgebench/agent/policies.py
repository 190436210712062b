"""Policies: the scripted known-good agent, the baselines that check the checker, and the LLM's
prompt and reply parser. A policy maps (task, screen elements, history) to one action dict."""

from __future__ import annotations

import json
import random

from edgebench.agent.simulator import clock_text
from edgebench.agent.tasks import Task
from edgebench.agent.uixml import Element, format_elements, normalize

# A toggle task: the switch's label, then the rows that lead to it, nearest first.
TOGGLES = {
    "wifi": ("Wi-Fi", ("Internet", "Network & internet")),
    "bluetooth": ("Use Bluetooth", ("Bluetooth", "Connection preferences", "Connected devices")),
}


def find(
    elements: list[Element], text: str | None = None, rid: str | None = None, switch_of: str | None = None
):
    """The first element with this label, resource id (without package), or switch in this row."""
    for e in elements:
        if text is not None and e.label == text:
            return e
        if rid is not None and e.rid == rid:
            return e
        if switch_of is not None and e.checkable and e.label == switch_of:
            return e
    return None


def click(e: Element) -> dict:
    return {"action": "click", "index": e.index}


def status(value: str = "complete") -> dict:
    return {"action": "status", "goal_status": value}


def alarm_label(hour: int, minute: int) -> str:
    return normalize(clock_text(hour, minute))


class ScriptedPolicy:
    """Known-good: finds elements by label or resource id, changes state only when the goal needs it."""

    applies_to: tuple[str, ...] | None = None  # the templates a baseline is meant for (None: all)

    def __init__(self, task: Task) -> None:
        self.task = task
        self.switch_clicks = 0
        self.other_number_seen = False
        self.saved = False

    def __call__(self, elements: list[Element], history: list[dict]) -> dict:
        t = self.task.template
        if t.startswith(("wifi", "bluetooth")):
            return self._toggle(elements, t.split("_")[0], t.endswith("_on"))
        if t == "add_alarm":
            return self._add_alarm(elements)
        if t == "alarm_off":
            return self._alarm_off(elements)
        if t == "add_contact":
            return self._add_contact(elements)
        if t == "infeasible_alarm":
            return status("infeasible")
        if t == "open_app":
            app = self.task.params["app"]
            return (
                status()
                if history and history[-1].get("action") == "open_app"
                else {"action": "open_app", "name": app}
            )
        raise ValueError(f"no script for template {t!r}")

    def _toggle(self, elements, kind: str, on: bool) -> dict:
        switch_label, path = TOGGLES[kind]
        switch = find(elements, switch_of=switch_label)
        if switch is not None:
            return self._flip(switch) if switch.checked != on else status()
        for text in path:
            target = find(elements, text=text)
            if target is not None and target.clickable:
                return click(target)
        return {"action": "open_app", "name": "Settings"}

    def _flip(self, switch: Element) -> dict:
        self.switch_clicks += 1
        return click(switch)

    def _open(self, elements, app: str, marker: str) -> dict | None:
        return None if find(elements, text=marker) is not None else {"action": "open_app", "name": app}

    def _add_alarm(self, elements) -> dict:
        hour, minute = self.task.params["hour"], self.task.params["minute"]
        if find(elements, rid="material_timepicker_ok_button") is not None:
            return self._fill_picker(elements, hour, minute)
        opening = self._open(elements, "Clock", "Add alarm")
        if opening:
            return opening
        switch = find(elements, switch_of=alarm_label(hour, minute))
        if switch is not None:
            return status() if switch.checked else self._flip(switch)
        return click(find(elements, text="Add alarm"))

    def _fill_picker(self, elements, hour: int, minute: int) -> dict:
        mode = find(elements, rid="material_timepicker_mode_button")
        if "text input" in mode.label:
            return click(mode)
        fields = {
            "material_hour_text_input": str((hour % 12) or 12),
            "material_minute_text_input": f"{minute:02d}",
        }
        for rid, value in fields.items():
            field = find(elements, rid=rid)
            if field.text != value:
                return {"action": "input_text", "index": field.index, "text": value}
        period = find(elements, text="PM" if hour >= 12 else "AM")
        if not period.checked:
            return click(period)
        return click(find(elements, text="OK"))

    def _alarm_off(self, elements) -> dict:
        opening = self._open(elements, "Clock", "Add alarm")
        if opening:
            return opening
        switch = find(elements, switch_of=alarm_label(self.task.params["hour"], self.task.params["minute"]))
        return self._flip(switch) if switch is not None and switch.checked else status()

    def _add_contact(self, elements) -> dict:
        """Contacts match on name and phone: a contact with the name is opened to read its number."""
        name, phone = self.task.params["name"], self.task.params["phone"]
        save = find(elements, text="Save")
        if save is not None:
            for rid, value in (("first_name", name), ("phone", phone)):
                field = find(elements, rid=rid)
                if field.text != value:
                    return {"action": "input_text", "index": field.index, "text": value}
            self.saved = True
            return click(save)
        if find(elements, rid="large_title") is not None:  # a contact's details
            if find(elements, text=phone) is not None:
                return status()
            self.other_number_seen = True
            return {"action": "navigate_back"}
        opening = self._open(elements, "Contacts", "Create contact")
        if opening:
            return opening
        if self.saved:
            return status()
        existing = find(elements, text=name)
        if existing is not None and not self.other_number_seen:
            return click(existing)
        return click(find(elements, text="Create contact"))


class DoNothingPolicy:
    applies_to = None

    def __init__(self, task: Task) -> None:
        self.task = task

    def __call__(self, elements, history) -> dict:
        return status()


class RoundTripPolicy(ScriptedPolicy):
    """Flips the target switch, flips it back, reports success: the classic false pass."""

    def _toggle(self, elements, kind: str, on: bool) -> dict:
        switch = find(elements, switch_of=TOGGLES[kind][0])
        if switch is not None:
            return self._flip(switch) if self.switch_clicks < 2 else status()
        return super()._toggle(elements, kind, on)


class TypeNeverSavePolicy(ScriptedPolicy):
    """Types the alarm time into the picker, then cancels: what a typed-'7' oracle would pass."""

    def _fill_picker(self, elements, hour: int, minute: int) -> dict:
        action = super()._fill_picker(elements, hour, minute)
        if action.get("action") == "click" and elements[action["index"]].text == "OK":
            self.cancelled = True
            return click(find(elements, text="Cancel"))
        return action

    def _add_alarm(self, elements) -> dict:
        if getattr(self, "cancelled", False):
            return status()
        if find(elements, rid="material_timepicker_ok_button") is not None:
            return self._fill_picker(elements, self.task.params["hour"], self.task.params["minute"])
        return self._open(elements, "Clock", "Add alarm") or click(find(elements, text="Add alarm"))


class AllAlarmsOffPolicy(ScriptedPolicy):
    """Asked to turn off one alarm, turns off every alarm: the task done too broadly."""

    applies_to = ("alarm_off",)

    def _alarm_off(self, elements) -> dict:
        opening = self._open(elements, "Clock", "Add alarm")
        if opening:
            return opening
        switch = next((e for e in elements if e.rid == "onoff" and e.checked), None)
        return self._flip(switch) if switch is not None else status()


class AlarmAndToggleAnotherPolicy(ScriptedPolicy):
    """Adds the alarm as asked, then toggles one other alarm: collateral damage."""

    applies_to = ("add_alarm",)

    def __init__(self, task: Task) -> None:
        super().__init__(task)
        self.toggled = False

    def _add_alarm(self, elements) -> dict:
        action = super()._add_alarm(elements)
        if action != status() or self.toggled:
            return action
        wanted = alarm_label(self.task.params["hour"], self.task.params["minute"])
        other = next((e for e in elements if e.rid == "onoff" and e.label != wanted), None)
        if other is None:
            return action
        self.toggled = True
        return click(other)


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


def llm_prompt(goal: str, elements: list[Element], history: list[dict], last: int = 3) -> str:
    """A compact prompt a 135M model can follow: goal, last actions, one line per element, forms."""
    recent = "\n".join(json.dumps(a) for a in history[-last:]) or "none"
    return (
        f"You operate an Android phone. Goal: {goal}\n"
        f"Last actions:\n{recent}\n"
        f"Screen:\n{format_elements(elements)}\n"
        f"Reply with exactly one JSON action, one of:\n{ACTION_FORMS}\n"
    )


def first_json_object(text: str) -> dict | None:
    """The first balanced {...} that parses as a JSON object with an "action", else None."""
    decoder = json.JSONDecoder()
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
