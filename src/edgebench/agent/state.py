"""Device state and the log of its changes: what task oracles read."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

Alarm = tuple[int, int, bool]  # (hour 0-23, minute, enabled)
Contact = tuple[str, str]  # (name, phone)


@dataclass
class DeviceState:
    wifi_on: bool = False
    bluetooth_on: bool = False
    alarms: list[Alarm] = field(default_factory=list)
    contacts: list[Contact] = field(default_factory=list)
    foreground: str = "launcher"

    def copy(self) -> DeviceState:
        return copy.deepcopy(self)

    def value(self, key: str):
        """Comparable value of one state key (lists sorted, so order on screen does not matter)."""
        value = getattr(self, key)
        return sorted(value) if isinstance(value, list) else value


STATE_KEYS = ("wifi_on", "bluetooth_on", "alarms", "contacts")


@dataclass(frozen=True)
class Change:
    step: int
    key: str
    old: object
    new: object


def diff(before: DeviceState, after: DeviceState, step: int) -> list[Change]:
    return [
        Change(step, key, before.value(key), after.value(key))
        for key in STATE_KEYS
        if before.value(key) != after.value(key)
    ]
