"""The Device interface on a real Android phone over adb (adbutils). Same parser, same prompts.

State is read the way Android exposes it:
- `settings get global wifi_on` is a tri-state (0 off, 1 on, 2 on while airplane mode is on; 3,
  "off until airplane mode ends", reads as 0), `airplane_mode_on` and `bluetooth_on` are flags;
- contacts come from the contacts provider: numbers from `data/phones` (a contact without a number
  has no row there) and every contact's name from `contacts`;
- alarms are the Google Clock's list, which no provider exposes: they are read from the alarm list
  screen itself (on reset, and after every action that leaves the alarm list on screen, which is
  where alarms are toggled and where a saved alarm returns to).

A task's radios are set on reset. Alarms and contacts are never deleted or created behind the
user's back: reset checks that the phone holds exactly the task's alarms and contacts, and says what
differs. Run real-device trials on a test phone set up for them.

No phone is attached here; tests drive this class through a fake adb transport backed by the
simulator, and the tests that need a real phone are marked `device` and skip without one.
"""

from __future__ import annotations

import re
from collections import Counter

from edgebench.agent.screens import alarms_on_screen, app_package, screen_name
from edgebench.agent.state import WIFI_OFF, WIFI_VALUES, Alarm, DeviceState, diff
from edgebench.agent.uixml import element_at, normalize, parse_hierarchy, xml_safe

APP_PACKAGES = {
    "settings": "com.android.settings",
    "clock": "com.google.android.deskclock",
    "contacts": "com.google.android.contacts",
}
DUMP_PATH = "/sdcard/window_dump.xml"
APP_OF_PACKAGE = {package: app for app, package in APP_PACKAGES.items()}
PHONE_ROW = re.compile(r"display_name=(.*?), data1=(.*)$")
CONTACT_ROW = re.compile(r"display_name=(.*)$")


class AdbError(RuntimeError):
    """A device command that did not do what it should (e.g. uiautomator could not get idle state)."""


def wifi_setting(raw: str) -> int:
    """Settings.Global.WIFI_ON as the tri-state; 3 (off while airplane mode is on) and junk read 0."""
    value = raw.strip()
    return int(value) if value.isdigit() and int(value) in WIFI_VALUES else WIFI_OFF


def phone_contacts(query_output: str, contacts_output: str = "") -> list[tuple[str, str]]:
    """(name, number) pairs as a phone has them: numbers from `data/phones` (a contact without a
    number has no row there), and, from the `contacts` listing, every contact beyond its phone
    rows as a name without a number."""
    contacts = []
    for line in query_output.splitlines():
        match = PHONE_ROW.search(line)
        if match:
            contacts.append((normalize(match.group(1)), normalize(match.group(2))))
    listed = Counter(
        normalize(m.group(1)) for m in map(CONTACT_ROW.search, contacts_output.splitlines()) if m
    )
    with_number = Counter(name for name, _ in contacts)
    for name, count in listed.items():
        contacts += [(name, "")] * max(count - with_number[name], 0)
    return sorted(contacts)


def typed_text(text: str) -> str:
    """Text as `input text` takes it: no control characters, spaces as %s."""
    return xml_safe(text).replace("\n", " ").replace(" ", "%s")


class AdbDevice:
    def __init__(self, serial: str | None = None, transport=None) -> None:
        if transport is None:
            import adbutils

            transport = adbutils.adb.device(serial=serial)
        self.transport = transport
        self.step = 0
        self.changes = []
        self.visited: list[str] = []
        self._alarms: list[Alarm] = []
        self._app = "launcher"
        self._elements: list = []  # the screen last observed: the one the agent chose an index on
        self._last = DeviceState()

    def shell(self, *args: str) -> str:
        return self.transport.shell(list(args))  # argument list: no shell string built from inputs

    def reset(self, initial_state: DeviceState, seed: int) -> None:
        """Set the task's radios, check its alarms and contacts, start from the home screen."""
        airplane = "enable" if initial_state.airplane_mode_on else "disable"
        self.shell("cmd", "connectivity", "airplane-mode", airplane)
        self.shell("svc", "wifi", "enable" if initial_state.wifi_enabled else "disable")
        self.shell("cmd", "bluetooth_manager", "enable" if initial_state.bluetooth_on else "disable")
        self._alarms = self.read_alarms()
        self.shell("input", "keyevent", "KEYCODE_HOME")
        self.step, self.changes, self.visited, self._elements = 0, [], [], []
        self._last = self.snapshot()
        for key in ("alarms", "contacts"):
            phone, wanted = self._last.value(key), initial_state.value(key)
            if phone != wanted:
                raise AdbError(
                    f"the phone's {key} {phone} are not the task's {wanted}: "
                    f"set them up on the phone first (edgebench never deletes a user's {key})"
                )

    def read_alarms(self) -> list[Alarm]:
        """Open the Clock's alarm list and read it from the screen."""
        self.shell("am", "start", "-a", "android.intent.action.SHOW_ALARMS")
        alarms = alarms_on_screen(parse_hierarchy(self._dump()))
        if alarms is None:
            raise AdbError("SHOW_ALARMS did not open the Clock's alarm list")
        return alarms

    def _dump(self) -> str:
        out = self.shell("uiautomator", "dump", DUMP_PATH)
        if "could not get idle state" in out.lower() or "ERROR" in out:
            raise AdbError(f"uiautomator dump failed: {out.strip()}")
        return self.shell("cat", DUMP_PATH)

    def observe(self) -> str:
        xml = self._dump()
        elements = self._elements = parse_hierarchy(xml)
        package = app_package(xml)
        self._app = APP_OF_PACKAGE.get(package, "launcher" if "launcher" in package else package)
        self.visited.append(screen_name(xml, elements) or package or "unknown")
        alarms = alarms_on_screen(elements)
        if alarms is not None:  # the alarm list is on screen: it is the Clock's state
            self._alarms = alarms
        return xml

    def act(self, action: dict) -> None:
        """Apply one well-formed action; a bad index or app name is a ValueError (an invalid action)."""
        self.step += 1
        kind = action.get("action")
        if kind in ("click", "long_press", "input_text"):
            # the index refers to the screen the agent was shown, not a fresh dump taken now
            element = element_at(self._elements or parse_hierarchy(self.observe()), action.get("index"))
            if kind == "input_text" and not element.editable:
                raise ValueError(f"input_text on element {element.index}, which is not editable")
            x, y = element.centre
            if kind == "long_press":
                self.shell("input", "swipe", str(x), str(y), str(x), str(y), "800")
            else:
                self.shell("input", "tap", str(x), str(y))
            if kind == "input_text":
                self.shell("input", "keyevent", "KEYCODE_MOVE_END")
                self.shell("input", "keyevent", "--longpress", "KEYCODE_DEL")
                self.shell("input", "text", typed_text(str(action.get("text", ""))))
        elif kind == "navigate_back":
            self.shell("input", "keyevent", "KEYCODE_BACK")
        elif kind == "navigate_home":
            self.shell("input", "keyevent", "KEYCODE_HOME")
        elif kind == "open_app":
            package = APP_PACKAGES.get(str(action.get("name", "")).strip().lower())
            if package is None:
                raise ValueError(f"no app named {str(action.get('name'))[:40]!r}")
            self.shell("monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1")
        elif kind == "scroll":
            self.shell("input", "swipe", "540", "1600", "540", "600", "300")
        elif kind not in ("wait", "status"):
            raise ValueError(f"unknown action {kind!r}")
        self.observe()  # the screen after the action (an alarm toggled on the list is read here)
        now = self.snapshot()
        self.changes += diff(self._last, now, self.step)
        self._last = now

    def snapshot(self) -> DeviceState:
        query = self.shell(
            "content", "query", "--uri", "content://com.android.contacts/data/phones",
            "--projection", "display_name:data1",
        )  # fmt: skip
        listing = self.shell(
            "content", "query", "--uri", "content://com.android.contacts/contacts",
            "--projection", "display_name",
        )  # fmt: skip
        return DeviceState(
            wifi_on=wifi_setting(self.shell("settings", "get", "global", "wifi_on")),
            airplane_mode_on=self.shell("settings", "get", "global", "airplane_mode_on").strip() == "1",
            bluetooth_on=self.shell("settings", "get", "global", "bluetooth_on").strip() in ("1", "2"),
            alarms=list(self._alarms),
            contacts=phone_contacts(query, listing),
            foreground=self._app,
        )


def attached_serials() -> list[str]:
    try:
        import adbutils

        return [d.serial for d in adbutils.adb.device_list()]
    except Exception:  # no adb server, no adb binary: no device
        return []
