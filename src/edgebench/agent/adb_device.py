"""The Device interface on a real Android phone over adb (adbutils). Same parser, same prompts.

Untested here (this host has no device, emulator or /dev/kvm): tests for it are marked `device`
and skip when `adb devices` lists nothing.
"""

from __future__ import annotations

import re

from edgebench.agent.state import DeviceState, diff
from edgebench.agent.uixml import normalize, parse_hierarchy

APP_PACKAGES = {
    "settings": "com.android.settings",
    "clock": "com.google.android.deskclock",
    "contacts": "com.google.android.contacts",
}
ALARM_LINE = re.compile(
    r"(?:hour|mHour)=(\d+).*?(?:minute|mMinute)=(\d+).*?(?:enabled|mEnabled)=(true|false)"
)


class AdbError(RuntimeError):
    """A device command that did not do what it should (e.g. uiautomator could not get idle state)."""


class AdbDevice:
    def __init__(self, serial: str | None = None) -> None:
        import adbutils

        self.device = adbutils.adb.device(serial=serial)
        self.step = 0
        self.changes = []
        self.visited: list[str] = []
        self._last = DeviceState()

    def shell(self, *args: str) -> str:
        return self.device.shell(list(args))  # argument list: no shell string built from inputs

    def reset(self, initial_state: DeviceState, seed: int) -> None:
        """Put the phone in the task's initial state (what adb can set without the UI)."""
        self.shell("svc", "wifi", "enable" if initial_state.wifi_on else "disable")
        self.shell("cmd", "bluetooth_manager", "enable" if initial_state.bluetooth_on else "disable")
        self.shell("input", "keyevent", "KEYCODE_HOME")
        self.step, self.changes, self.visited = 0, [], []
        self._last = self.snapshot()

    def observe(self) -> str:
        out = self.shell("uiautomator", "dump", "/sdcard/window_dump.xml")
        if "could not get idle state" in out.lower() or "ERROR" in out:
            raise AdbError(f"uiautomator dump failed: {out.strip()}")
        xml = self.shell("cat", "/sdcard/window_dump.xml")
        package = re.search(r'package="([^"]+)"', xml)
        self.visited.append(package.group(1) if package else "unknown")
        return xml

    def act(self, action: dict) -> None:
        self.step += 1
        kind = action.get("action")
        if kind in ("click", "long_press", "input_text"):
            elements = parse_hierarchy(self.observe())
            x, y = elements[int(action["index"])].centre
            if kind == "long_press":
                self.shell("input", "swipe", str(x), str(y), str(x), str(y), "800")
            else:
                self.shell("input", "tap", str(x), str(y))
            if kind == "input_text":
                self.shell("input", "keyevent", "KEYCODE_MOVE_END")
                self.shell("input", "keyevent", "--longpress", "KEYCODE_DEL")
                self.shell("input", "text", str(action.get("text", "")).replace(" ", "%s"))
        elif kind == "navigate_back":
            self.shell("input", "keyevent", "KEYCODE_BACK")
        elif kind == "navigate_home":
            self.shell("input", "keyevent", "KEYCODE_HOME")
        elif kind == "open_app":
            package = APP_PACKAGES.get(str(action.get("name", "")).lower())
            if package is None:
                raise ValueError(f"no app named {action.get('name')!r}")
            self.shell("monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1")
        elif kind == "scroll":
            self.shell("input", "swipe", "540", "1600", "540", "600", "300")
        elif kind not in ("wait", "status"):
            raise ValueError(f"unknown action {kind!r}")
        now = self.snapshot()
        self.changes += diff(self._last, now, self.step)
        self._last = now

    def snapshot(self) -> DeviceState:
        alarms = [
            (int(h), int(m), on == "true") for h, m, on in ALARM_LINE.findall(self.shell("dumpsys", "alarm"))
        ]
        contacts = re.findall(
            r"display_name=([^,]+)",
            self.shell(
                "content",
                "query",
                "--uri",
                "content://com.android.contacts/data/phones",
                "--projection",
                "display_name",
            ),
        )
        return DeviceState(
            wifi_on=self.shell("settings", "get", "global", "wifi_on").strip() == "1",
            bluetooth_on=self.shell("settings", "get", "global", "bluetooth_on").strip() == "1",
            alarms=alarms,
            contacts=[(normalize(name.strip()), "") for name in contacts],
        )


def attached_serials() -> list[str]:
    try:
        import adbutils

        return [d.serial for d in adbutils.adb.device_list()]
    except Exception:  # no adb server, no adb binary: no device
        return []
