"""Task templates, their variants, seeds, and the success oracle (agent-suite.md).

A task is judged by device state: the goal holds at the end; if it held at the start, the relevant
state never changed at any step (a round trip fails); nothing unrelated changed; the final status
is the expected one.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from edgebench.agent.state import Change, DeviceState

NAMES = ["Ada Park", "Ben Ortiz", "Chloe Adams", "Dev Shah", "Elena Rossi", "Femi Bello", "Greta Lind"]
DAYPART = {"am": range(5, 12), "pm": range(13, 23)}


@dataclass
class Task:
    template: str
    variant: str
    instance: int
    seed: int
    goal: str
    initial: DeviceState
    relevant: tuple[str, ...]
    expected_status: str
    goal_met: Callable[[DeviceState], bool]
    target_screen: str
    params: dict = field(default_factory=dict)

    @property
    def task_id(self) -> str:
        return f"{self.template}:{self.variant}:{self.instance}"

    @property
    def already_satisfied(self) -> bool:
        return self.variant == "already_satisfied"


def task_seed(suite: str, template: str, variant: str, instance: int) -> int:
    digest = hashlib.sha256(f"{suite}:{template}:{variant}:{instance}".encode()).hexdigest()
    return int(digest[:16], 16)


def speak_time(hour: int, minute: int) -> str:
    return f"{(hour % 12) or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def distractors(rng: random.Random) -> DeviceState:
    """Unrelated state from the seed: other toggles, other alarms, other contacts."""
    alarms = sorted(
        {
            (rng.randrange(24), rng.choice([0, 15, 30, 45]), rng.random() < 0.5)
            for _ in range(rng.randint(0, 3))
        }
    )
    contacts = sorted(set(rng.sample(NAMES[:4], rng.randint(0, 2))))
    return DeviceState(
        wifi_on=rng.random() < 0.5,
        bluetooth_on=rng.random() < 0.5,
        alarms=list(alarms),
        contacts=[(name, f"555-01{i:02d}") for i, name in enumerate(contacts)],
    )


def key_equals(key: str, value) -> Callable[[DeviceState], bool]:
    def check(state: DeviceState) -> bool:
        return state.value(key) == value

    return check


def alarm_disabled(hour: int, minute: int) -> Callable[[DeviceState], bool]:
    def check(state: DeviceState) -> bool:
        matching = [on for h, m, on in state.alarms if (h, m) == (hour, minute)]
        return bool(matching) and not any(matching)

    return check


def contact_once(contact: tuple[str, str]) -> Callable[[DeviceState], bool]:
    def check(state: DeviceState) -> bool:
        return state.contacts.count(contact) == 1

    return check


def exactly_one_enabled(hour: int, minute: int) -> Callable[[DeviceState], bool]:
    def check(state: DeviceState) -> bool:
        return sum(1 for h, m, on in state.alarms if (h, m) == (hour, minute) and on) == 1

    return check


def _toggle(template: str, key: str, on: bool, variant: str, rng: random.Random, screen: str, goal: str):
    state = distractors(rng)
    setattr(state, key, on if variant == "already_satisfied" else not on)
    return dict(
        goal=goal,
        initial=state,
        relevant=(key,),
        expected_status="complete",
        goal_met=key_equals(key, on),
        target_screen=screen,
    )


def _alarm_time(variant: str, rng: random.Random) -> tuple[int, int]:
    if variant in ("seven", "present"):
        return 7, 0
    return rng.choice(DAYPART[variant]), rng.randrange(60)


def build(template: str, variant: str, instance: int, suite: str = "edgebench") -> Task:
    seed = task_seed(suite, template, variant, instance)
    rng = random.Random(seed)
    if template in ("wifi_on", "wifi_off"):
        on = template == "wifi_on"
        spec = _toggle(
            template, "wifi_on", on, variant, rng, "internet", f"Turn Wi-Fi {'on' if on else 'off'}."
        )
    elif template in ("bluetooth_on", "bluetooth_off"):
        on = template == "bluetooth_on"
        spec = _toggle(
            template,
            "bluetooth_on",
            on,
            variant,
            rng,
            "bluetooth",
            f"Turn Bluetooth {'on' if on else 'off'}.",
        )
    elif template == "add_alarm":
        hour, minute = _alarm_time(variant, rng)
        state = distractors(rng)
        state.alarms = [a for a in state.alarms if a[:2] != (hour, minute)]
        if variant == "present":  # the alarm exists but is off: enable it (or add one), never two
            state.alarms.append((hour, minute, False))
        spec = dict(
            goal=f"Set an alarm for {speak_time(hour, minute)}.",
            initial=state,
            relevant=("alarms",),
            expected_status="complete",
            goal_met=exactly_one_enabled(hour, minute),
            target_screen="clock",
            params={"hour": hour, "minute": minute},
        )
    elif template == "alarm_off":
        hour, minute = rng.choice(DAYPART["am"]), rng.choice([0, 15, 30, 45])
        state = distractors(rng)
        state.alarms = [a for a in state.alarms if a[:2] != (hour, minute)]
        state.alarms.append((hour, minute, variant != "already_satisfied"))
        spec = dict(
            goal=f"Turn off the {speak_time(hour, minute)} alarm.",
            initial=state,
            relevant=("alarms",),
            expected_status="complete",
            goal_met=alarm_disabled(hour, minute),
            target_screen="clock",
            params={"hour": hour, "minute": minute},
        )
    elif template == "add_contact":
        name, phone = rng.choice(NAMES[4:]), f"555-{rng.randrange(1000, 9999)}"
        state = distractors(rng)
        if variant == "already_satisfied":
            state.contacts.append((name, phone))
        spec = dict(
            goal=f"Add a contact named {name} with phone number {phone}.",
            initial=state,
            relevant=("contacts",),
            expected_status="complete",
            goal_met=contact_once((name, phone)),
            target_screen="contacts",
            params={"name": name, "phone": phone},
        )
    elif template == "infeasible_alarm":
        state = distractors(rng)
        spec = dict(
            goal="Set an alarm for 25:70.",
            initial=state,
            relevant=("alarms",),
            expected_status="infeasible",
            goal_met=key_equals("alarms", sorted(state.alarms)),
            target_screen="",  # nothing to navigate to: the answer is "infeasible"
        )
    elif template == "open_app":
        app = rng.choice(["Clock", "Contacts"])
        state = distractors(rng)
        spec = dict(
            goal=f"Open the {app} app.",
            initial=state,
            relevant=(),
            expected_status="complete",
            goal_met=key_equals("foreground", app.lower()),
            target_screen=app.lower(),
            params={"app": app},
        )
    else:
        raise ValueError(f"unknown task template {template!r}")
    return Task(template=template, variant=variant, instance=instance, seed=seed, **spec)


VARIANTS: dict[str, tuple[str, ...]] = {
    "wifi_on": ("needs_change", "already_satisfied"),
    "wifi_off": ("needs_change", "already_satisfied"),
    "bluetooth_on": ("needs_change", "already_satisfied"),
    "bluetooth_off": ("needs_change", "already_satisfied"),
    "add_alarm": ("seven", "am", "pm", "present"),
    "alarm_off": ("needs_change", "already_satisfied"),
    "add_contact": ("needs_change", "already_satisfied"),
    "infeasible_alarm": ("needs_change",),
    "open_app": ("needs_change",),
}


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
    status_ok: bool
    reached: bool


def judge(
    task: Task, final: DeviceState, changes: list[Change], status: str | None, visited: list[str]
) -> Verdict:
    goal_met = task.goal_met(final)
    untouched = True
    if task.goal_met(task.initial):
        untouched = not any(c.key in task.relevant for c in changes)
    unrelated = all(
        final.value(k) == task.initial.value(k)
        for k in ("wifi_on", "bluetooth_on", "alarms", "contacts")
        if k not in task.relevant
    )
    status_ok = status == task.expected_status
    return Verdict(
        success=goal_met and untouched and unrelated and status_ok,
        goal_met=goal_met,
        untouched_if_satisfied=untouched,
        unrelated_unchanged=unrelated,
        status_ok=status_ok,
        reached=not task.target_screen or task.target_screen in visited,
    )
