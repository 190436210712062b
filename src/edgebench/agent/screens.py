"""Reading a screen the way the tasks need it: which screen it is, and the state it shows.

Used on real dumps (the adb device, the screen-diff command) and on the simulator's own screens,
so both are read by the same code.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from edgebench.agent.state import Alarm
from edgebench.agent.uixml import Element, normalize, parse_hierarchy

HAIR = "\u200a"  # the Clock puts a hair space before AM/PM
CLOCK_TIME = re.compile(r"(\d{1,2}):(\d{2}) ?(AM|PM)")
# Settings pages are told apart by their title (the collapsing toolbar's content-desc).
SETTINGS_PAGES = {
    "Network & internet": "network",
    "Internet": "internet",
    "Connected devices": "connected",
    "Connection preferences": "connection_prefs",
    "Bluetooth": "bluetooth",
}


def app_package(xml: str) -> str:
    """The package of the app window (the first node outside the system UI)."""
    for node in ET.fromstring(xml).iter("node"):
        package = node.get("package", "")
        if package and package != "com.android.systemui":
            return package
    return ""


def screen_name(xml: str, elements: list[Element] | None = None) -> str:
    """The simulator's name for the screen a dump shows ("" when it is none of the modelled ones)."""
    elements = parse_hierarchy(xml) if elements is None else elements
    package = app_package(xml)
    rids = {e.rid for e in elements}
    if package.startswith("com.android.launcher") or package.endswith("nexuslauncher"):
        return "launcher"
    if package == "com.android.settings":
        if "homepage_title" in rids:
            return "settings"
        titles = [e.desc for e in elements if e.rid == "collapsing_toolbar"]
        return SETTINGS_PAGES.get(titles[0], "") if titles else ""
    if package == "com.google.android.deskclock":
        if "material_timepicker_ok_button" in rids:
            return "picker"
        return "clock" if "fab" in rids else ""
    if package == "com.google.android.contacts":
        if "editor_menu_save_button" in rids:
            return "editor"
        return "contact" if "large_title" in rids else "contacts"
    return ""


def clock_text(hour: int, minute: int) -> str:
    """How the Clock writes a time: `8:30\u200aAM`."""
    return f"{(hour % 12) or 12}:{minute:02d}{HAIR}{'AM' if hour < 12 else 'PM'}"


def alarm_label(hour: int, minute: int) -> str:
    """The label the prompt shows for an alarm's time and switch: `8:30 AM`."""
    return normalize(clock_text(hour, minute))


def parse_clock_time(label: str) -> tuple[int, int] | None:
    """'8:30 AM' -> (8, 30); '12:05 AM' -> (0, 5); None for anything else."""
    match = CLOCK_TIME.fullmatch(label.strip())
    if not match:
        return None
    hour, minute, period = int(match.group(1)) % 12, int(match.group(2)), match.group(3)
    return hour + (12 if period == "PM" else 0), minute


def alarms_on_screen(elements: list[Element]) -> list[Alarm] | None:
    """The alarms an alarm list shows (time from the card, state from its switch); None when the
    screen is not the alarm list. Only what is on screen: a long list must be scrolled."""
    if not any(e.rid == "fab" for e in elements):
        return None
    alarms = []
    for e in elements:
        time = parse_clock_time(e.label) if e.rid == "onoff" else None
        if time is not None:
            alarms.append((*time, e.checked))
    return sorted(alarms)


def switch_state(elements: list[Element], label: str) -> bool | None:
    """The checked state of the switch labelled `label` (None when the screen has none)."""
    for e in elements:
        if e.checkable and e.cls == "Switch" and e.label == label:
            return e.checked
    return None
