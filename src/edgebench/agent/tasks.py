"""Task kinds, their variants and seeds, and the success oracle.

One class per task kind (AndroidWorld's TaskEval shape): parameter domains and how variants draw
from them, the initial state, the goal, the exact end states that count, what the agent should
finally report, and the scripted solution (`solve`). Adding a task kind is one class here and its
entry in KINDS.

A solution reads the screen and returns the next action. It acts through the agent's primitives
(`set_switch`, `flip`, `enable_alarm`, `confirm_picker`, `alarms_to_turn_off`, `done`), so the
checker baselines in policies.py can do one step wrongly on purpose and show that the oracle
catches it.

A task is judged by device state. All of these must hold:
- the goal holds at the end;
- if the goal held at the start, the task's own state never changed at any step (a round trip fails);
- nothing outside the task's own state changed;
- inside its own state, exactly the asked-for change happened (turning off every alarm when asked to
  turn off one fails, and so does adding the alarm and toggling another);
- the final status is the expected one.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from edgebench.agent.actions import back, click, open_app, status, type_into
from edgebench.agent.screens import alarm_label
from edgebench.agent.state import STATE_KEYS, Change, DeviceState, wifi_value
from edgebench.agent.uixml import Element, find

NAMES = ["Ada Park", "Ben Ortiz", "Chloe Adams", "Dev Shah", "Elena Rossi", "Femi Bello", "Greta Lind"]
HOURS_AM, HOURS_PM, MINUTES = range(0, 12), range(12, 24), range(60)


def task_seed(suite: str, template: str, variant: str, instance: int) -> int:
    digest = hashlib.sha256(f"{suite}:{template}:{variant}:{instance}".encode()).hexdigest()
    return int(digest[:16], 16)


def speak_time(hour: int, minute: int) -> str:
    return f"{(hour % 12) or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def phone_number(number: int) -> str:
    return f"555-{number:04d}"


def draw(domain: Sequence, instance: int, rng: random.Random):
    """Instance 0 takes the domain's first value and instance 1 its last, so every suite with two
    or more instances reaches both ends; later instances draw at random."""
    if instance == 0:
        return domain[0]
    if instance == 1:
        return domain[-1]
    return rng.choice(list(domain))


def distractors(rng: random.Random) -> DeviceState:
    """Unrelated state from the seed: other radios, other alarms, other contacts."""
    airplane = rng.random() < 0.25
    alarms = {
        (rng.randrange(24), rng.choice([0, 15, 30, 45]), rng.random() < 0.5) for _ in range(rng.randint(0, 3))
    }
    contacts = sorted(set(rng.sample(NAMES[:4], rng.randint(0, 2))))
    return DeviceState(
        wifi_on=wifi_value(rng.random() < 0.5, airplane),
        airplane_mode_on=airplane,
        bluetooth_on=rng.random() < 0.5,
        alarms=sorted(alarms),
        contacts=[(name, phone_number(100 + i)) for i, name in enumerate(contacts)],
    )


def other_alarm(rng: random.Random, hour: int, minute: int, enabled: bool) -> tuple[int, int, bool]:
    """An alarm at another time, so a policy that touches every alarm has something to break."""
    other_hour = (hour + rng.randint(1, 22)) % 24
    return other_hour, minute, enabled


class TaskKind:
    """One task template. Subclasses set the class attributes and override the methods they need."""

    name = ""
    variants: tuple[str, ...] = ("needs_change", "already_satisfied")
    satisfied: tuple[str, ...] = ("already_satisfied",)  # variants whose goal holds at the start
    relevant: tuple[str, ...] = ()  # the state keys the task may change
    expected_status = "complete"

    def domains(self, variant: str) -> dict[str, Sequence]:
        """Each parameter's domain under this variant (draw() reaches both ends)."""
        return {}

    def params(self, variant: str, instance: int, rng: random.Random) -> dict:
        return {key: draw(domain, instance, rng) for key, domain in self.domains(variant).items()}

    def initial(self, variant: str, params: dict, rng: random.Random) -> DeviceState:
        return distractors(rng)

    def goal(self, params: dict) -> str:
        raise NotImplementedError

    def goal_met(self, state: DeviceState, params: dict) -> bool:
        raise NotImplementedError

    def acceptable(self, variant: str, params: dict, initial: DeviceState) -> list[dict]:
        """The end states of the relevant keys that count as exactly the asked-for change."""
        return []

    def target_screen(self, params: dict) -> str:
        return ""

    def solve(self, params: dict, agent, elements: list[Element], history: list[dict]) -> dict:
        raise NotImplementedError

    def make(self, variant: str, instance: int, suite: str = "edgebench") -> Task:
        if variant not in self.variants:
            raise ValueError(f"task {self.name!r} has no variant {variant!r} (it has {self.variants})")
        seed = task_seed(suite, self.name, variant, instance)
        rng = random.Random(seed)
        params = self.params(variant, instance, rng)
        initial = self.initial(variant, params, rng)
        return Task(self, variant, instance, seed, params, initial, self.acceptable(variant, params, initial))


class RadioToggle(TaskKind):
    """Turn a radio on or off in Settings: the switch, the screen it sits on, the rows leading there."""

    def __init__(self, key: str, title: str, on: bool, switch: str, screen: str, path: tuple[str, ...]):
        self.key, self.title, self.on = key, title, on
        self.switch, self.screen, self.path = switch, screen, path
        self.name = f"{key.removesuffix('_on')}_{'on' if on else 'off'}"
        self.relevant = (key,)

    def stored(self, enabled: bool, state: DeviceState):
        """The value Android stores for the radio (Wi-Fi's tri-state depends on airplane mode)."""
        return wifi_value(enabled, state.airplane_mode_on) if self.key == "wifi_on" else enabled

    def initial(self, variant, params, rng):
        state = distractors(rng)
        setattr(
            state, self.key, self.stored(self.on if variant == "already_satisfied" else not self.on, state)
        )
        return state

    def goal(self, params):
        return f"Turn {self.title} {'on' if self.on else 'off'}."

    def goal_met(self, state, params):
        enabled = state.wifi_enabled if self.key == "wifi_on" else getattr(state, self.key)
        return enabled == self.on

    def acceptable(self, variant, params, initial):
        return [{self.key: self.stored(self.on, initial)}]

    def target_screen(self, params):
        return self.screen

    def solve(self, params, agent, elements, history):
        return toggle_solution(agent, elements, self.switch, self.path, self.on)


WIFI = {"key": "wifi_on", "title": "Wi-Fi", "switch": "Wi-Fi", "screen": "internet"}
BLUETOOTH = {"key": "bluetooth_on", "title": "Bluetooth", "switch": "Use Bluetooth", "screen": "bluetooth"}
WIFI_PATH = ("Internet", "Network & internet")
BLUETOOTH_PATH = ("Bluetooth", "Connection preferences", "Connected devices")


class AddAlarm(TaskKind):
    """Success is exactly one enabled alarm at the time; 'present' starts with it there but off,
    'present_on' with it there and on (the goal already holds: nothing may change)."""

    name = "add_alarm"
    variants = ("seven", "am", "pm", "present", "present_on")
    satisfied = ("present_on",)
    relevant = ("alarms",)

    def domains(self, variant):
        if variant == "am":
            return {"hour": HOURS_AM, "minute": MINUTES}
        if variant == "pm":
            return {"hour": HOURS_PM, "minute": MINUTES}
        return {"hour": (7,), "minute": (0,)}

    def initial(self, variant, params, rng):
        hour, minute = params["hour"], params["minute"]
        state = distractors(rng)
        alarms = [a for a in state.alarms if a[:2] != (hour, minute)]
        if not alarms:
            alarms.append(other_alarm(rng, hour, minute, rng.random() < 0.5))
        if variant in ("present", "present_on"):
            alarms.append((hour, minute, variant == "present_on"))
        state.alarms = sorted(alarms)
        return state

    def goal(self, params):
        return f"Set an alarm for {speak_time(params['hour'], params['minute'])}."

    def goal_met(self, state, params):
        wanted = (params["hour"], params["minute"], True)
        return sum(1 for alarm in state.alarms if alarm == wanted) == 1

    def acceptable(self, variant, params, initial):
        hour, minute = params["hour"], params["minute"]
        if (hour, minute, True) in initial.alarms:  # already set and on: the start is the end
            return [{"alarms": sorted(initial.alarms)}]
        options = [{"alarms": sorted([*initial.alarms, (hour, minute, True)])}]
        if (hour, minute, False) in initial.alarms:  # enabling the one that is there counts too
            enabled = list(initial.alarms)
            enabled[enabled.index((hour, minute, False))] = (hour, minute, True)
            options.append({"alarms": sorted(enabled)})
        return options

    def target_screen(self, params):
        return "clock"

    def solve(self, params, agent, elements, history):
        hour, minute = params["hour"], params["minute"]
        if find(elements, rid="material_timepicker_ok_button") is not None:
            return fill_picker(agent, elements, hour, minute)
        if find(elements, text="Add alarm") is None:
            return open_app("Clock")
        switch = find(elements, switch_of=alarm_label(hour, minute))
        if switch is not None:  # added, or there but off ('present'): enable it, never add a second
            return agent.done(elements) if switch.checked else agent.enable_alarm(elements, switch)
        return click(find(elements, text="Add alarm"))


class AlarmOff(TaskKind):
    """'listed_twice' has the alarm twice, both on: both must end off."""

    name = "alarm_off"
    variants = ("needs_change", "already_satisfied", "listed_twice")
    relevant = ("alarms",)

    def domains(self, variant):
        return {"hour": range(24), "minute": MINUTES}

    def initial(self, variant, params, rng):
        hour, minute = params["hour"], params["minute"]
        state = distractors(rng)
        alarms = [a for a in state.alarms if a[:2] != (hour, minute)]
        if not any(enabled for _, _, enabled in alarms):  # another alarm to wrongly turn off
            alarms.append(other_alarm(rng, hour, minute, True))
        alarms = sorted(set(alarms))
        alarms.append((hour, minute, variant != "already_satisfied"))
        if variant == "listed_twice":
            alarms.append((hour, minute, True))
        state.alarms = sorted(alarms)
        return state

    def goal(self, params):
        return f"Turn off the {speak_time(params['hour'], params['minute'])} alarm."

    def goal_met(self, state, params):
        matching = [on for h, m, on in state.alarms if (h, m) == (params["hour"], params["minute"])]
        return bool(matching) and not any(matching)

    def acceptable(self, variant, params, initial):
        target = (params["hour"], params["minute"])
        return [{"alarms": sorted((h, m, False if (h, m) == target else on) for h, m, on in initial.alarms)}]

    def target_screen(self, params):
        return "clock"

    def solve(self, params, agent, elements, history):
        if find(elements, text="Add alarm") is None:
            return open_app("Clock")
        switches = agent.alarms_to_turn_off(elements, alarm_label(params["hour"], params["minute"]))
        return agent.flip(switches[0]) if switches else agent.done(elements)


class AddContact(TaskKind):
    """Contacts match on name and phone: 'name_taken' has the name with another number;
    'listed_twice' has the name twice, one of them with the number (the goal already holds)."""

    name = "add_contact"
    variants = ("needs_change", "already_satisfied", "name_taken", "listed_twice")
    satisfied = ("already_satisfied", "listed_twice")
    relevant = ("contacts",)

    def domains(self, variant):
        return {"name": NAMES[4:], "number": range(10000)}

    def params(self, variant, instance, rng):
        drawn = super().params(variant, instance, rng)
        return {"name": drawn["name"], "phone": phone_number(drawn["number"])}

    def initial(self, variant, params, rng):
        state = distractors(rng)
        if variant == "already_satisfied":
            state.contacts.append((params["name"], params["phone"]))
        if variant in ("name_taken", "listed_twice"):
            other = phone_number((int(params["phone"][-4:]) + rng.randint(1, 9998)) % 10000)
            state.contacts.append((params["name"], other))
        if variant == "listed_twice":
            state.contacts.append((params["name"], params["phone"]))
        return state

    def goal(self, params):
        return f"Add a contact named {params['name']} with phone number {params['phone']}."

    def goal_met(self, state, params):
        return state.contacts.count((params["name"], params["phone"])) == 1

    def acceptable(self, variant, params, initial):
        if variant in self.satisfied:
            return [{"contacts": sorted(initial.contacts)}]
        return [{"contacts": sorted([*initial.contacts, (params["name"], params["phone"])])}]

    def target_screen(self, params):
        return "contacts"

    def solve(self, params, agent, elements, history):
        """Contacts match on name and phone: a contact with the name is opened to read its number."""
        name, phone, memory = params["name"], params["phone"], agent.memory
        save = find(elements, text="Save")
        if save is not None:
            for rid, value in (("first_name", name), ("phone", phone)):
                field = find(elements, rid=rid)
                if field.text != value:
                    return type_into(field, value)
            memory["saved"] = True
            return click(save)
        if find(elements, rid="large_title") is not None:  # a contact's details
            if find(elements, text=phone) is not None:
                return agent.done(elements)
            memory["other_numbers_seen"] = memory.get("other_numbers_seen", 0) + 1
            return back()
        if find(elements, text="Create contact") is None:
            return open_app("Contacts")
        if memory.get("saved"):
            return agent.done(elements)
        entries = [e for e in elements if e.label == name and e.clickable]  # each one, in list order
        seen = memory.get("other_numbers_seen", 0)
        if seen < len(entries):  # open the next entry with the name to read its number
            return click(entries[seen])
        return click(find(elements, text="Create contact"))


class InfeasibleAlarm(TaskKind):
    """An impossible time: the answer is `status infeasible`, with nothing changed."""

    name = "infeasible_alarm"
    variants = ("needs_change",)
    relevant = ("alarms",)
    expected_status = "infeasible"

    def goal(self, params):
        return "Set an alarm for 25:70."

    def goal_met(self, state, params):
        return True  # the oracle is the status and the unchanged alarms

    def acceptable(self, variant, params, initial):
        return [{"alarms": sorted(initial.alarms)}]

    def solve(self, params, agent, elements, history):
        return status("infeasible")


class OpenApp(TaskKind):
    """Navigation only."""

    name = "open_app"
    variants = ("needs_change",)

    def domains(self, variant):
        return {"app": ("Clock", "Contacts")}

    def goal(self, params):
        return f"Open the {params['app']} app."

    def goal_met(self, state, params):
        return state.foreground == params["app"].lower()

    def target_screen(self, params):
        return params["app"].lower()

    def solve(self, params, agent, elements, history):
        if history and history[-1].get("action") == "open_app":
            return agent.done(elements)
        return open_app(params["app"])


def toggle_solution(
    agent, elements: list[Element], switch_label: str, path: tuple[str, ...], on: bool
) -> dict:
    """Set the switch when it is on screen; else tap the nearest row of the path that leads to it."""
    switch = find(elements, switch_of=switch_label)
    if switch is not None:
        return agent.set_switch(elements, switch, on)
    for text in path:
        target = find(elements, text=text)
        if target is not None and target.clickable:
            return click(target)
    return open_app("Settings")


def fill_picker(agent, elements: list[Element], hour: int, minute: int) -> dict:
    """Type the time in the picker's text mode, pick AM or PM, confirm."""
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
            return type_into(field, value)
    period = find(elements, text="PM" if hour >= 12 else "AM")
    if not period.checked:
        return click(period)
    return agent.confirm_picker(elements)


KINDS: dict[str, TaskKind] = {
    kind.name: kind
    for kind in (
        RadioToggle(**WIFI, on=True, path=WIFI_PATH),
        RadioToggle(**WIFI, on=False, path=WIFI_PATH),
        RadioToggle(**BLUETOOTH, on=True, path=BLUETOOTH_PATH),
        RadioToggle(**BLUETOOTH, on=False, path=BLUETOOTH_PATH),
        AddAlarm(),
        AlarmOff(),
        AddContact(),
        InfeasibleAlarm(),
        OpenApp(),
    )
}
VARIANTS: dict[str, tuple[str, ...]] = {name: kind.variants for name, kind in KINDS.items()}


@dataclass
class Task:
    kind: TaskKind
    variant: str
    instance: int
    seed: int
    params: dict
    initial: DeviceState
    acceptable: list[dict] = field(default_factory=list)

    @property
    def template(self) -> str:
        return self.kind.name

    @property
    def task_id(self) -> str:
        return f"{self.template}:{self.variant}:{self.instance}"

    @property
    def already_satisfied(self) -> bool:
        return self.variant in self.kind.satisfied

    @property
    def goal(self) -> str:
        return self.kind.goal(self.params)

    @property
    def relevant(self) -> tuple[str, ...]:
        return self.kind.relevant

    @property
    def expected_status(self) -> str:
        return self.kind.expected_status

    @property
    def target_screen(self) -> str:
        return self.kind.target_screen(self.params)

    def goal_met(self, state: DeviceState) -> bool:
        return self.kind.goal_met(state, self.params)

    def solve(self, agent, elements: list[Element], history: list[dict]) -> dict:
        return self.kind.solve(self.params, agent, elements, history)


def build(template: str, variant: str, instance: int, suite: str = "edgebench") -> Task:
    if template not in KINDS:
        raise ValueError(f"unknown task template {template!r} (known: {', '.join(KINDS)})")
    return KINDS[template].make(variant, instance, suite)


def suite(instances: int = 1, suite_name: str = "edgebench") -> list[Task]:
    return [
        build(t, v, i, suite_name)
        for t, variants in VARIANTS.items()
        for v in variants
        for i in range(instances)
    ]


@dataclass
class Verdict:
    success: bool
    goal_met: bool
    untouched_if_satisfied: bool
    unrelated_unchanged: bool
    exact_change: bool
    status_ok: bool
    reached: bool


def judge(
    task: Task, final: DeviceState, changes: list[Change], status: str | None, visited: list[str]
) -> Verdict:
    goal_met = task.goal_met(final)
    untouched = True
    if task.goal_met(task.initial):
        untouched = not any(c.key in task.relevant for c in changes)
    unrelated = all(final.value(k) == task.initial.value(k) for k in STATE_KEYS if k not in task.relevant)
    exact = not task.acceptable or any(
        all(final.value(key) == value for key, value in option.items()) for option in task.acceptable
    )
    status_ok = status == task.expected_status
    return Verdict(
        success=goal_met and untouched and unrelated and exact and status_ok,
        goal_met=goal_met,
        untouched_if_satisfied=untouched,
        unrelated_unchanged=unrelated,
        exact_change=exact,
        status_ok=status_ok,
        reached=not task.target_screen or task.target_screen in visited,
    )
