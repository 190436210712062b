"""Device state and the log of its changes: what task oracles read.

The keys follow what a real Android phone exposes: `wifi_on` is Settings.Global.WIFI_ON, a
tri-state (0 off, 1 on, 2 on while airplane mode is on), `airplane_mode_on` and `bluetooth_on`
are Settings.Global flags, alarms are the Clock's list, contacts are (name, phone) pairs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

Alarm = tuple[int, int, bool]  # (hour 0-23, minute, enabled)
Contact = tuple[str, str]  # (name, phone)

WIFI_OFF, WIFI_ON, WIFI_ON_IN_AIRPLANE_MODE = 0, 1, 2
WIFI_VALUES = (WIFI_OFF, WIFI_ON, WIFI_ON_IN_AIRPLANE_MODE)


@dataclass
class DeviceState:
    wifi_on: int = WIFI_OFF
    airplane_mode_on: bool = False
    bluetooth_on: bool = False
    alarms: list[Alarm] = field(default_factory=list)
    contacts: list[Contact] = field(default_factory=list)
    foreground: str = "launcher"

    def __post_init__(self) -> None:
        if self.wifi_on not in WIFI_VALUES:
            raise ValueError(
                f"wifi_on must be one of {WIFI_VALUES} (Android's tri-state), not {self.wifi_on!r}"
            )
        self.wifi_on = int(self.wifi_on)  # True/False from older callers become 1/0

    @property
    def wifi_enabled(self) -> bool:
        return self.wifi_on in (WIFI_ON, WIFI_ON_IN_AIRPLANE_MODE)

    def copy(self) -> DeviceState:
        return copy.deepcopy(self)

    def value(self, key: str):
        """Comparable value of one state key (lists sorted, so order on screen does not matter)."""
        value = getattr(self, key)
        return sorted(value) if isinstance(value, list) else value


STATE_KEYS = ("wifi_on", "airplane_mode_on", "bluetooth_on", "alarms", "contacts")


def wifi_value(enabled: bool, airplane_mode_on: bool) -> int:
    """What Android stores in wifi_on for a radio that is `enabled` under that airplane mode."""
    if not enabled:
        return WIFI_OFF
    return WIFI_ON_IN_AIRPLANE_MODE if airplane_mode_on else WIFI_ON


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
