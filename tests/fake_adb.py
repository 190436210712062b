"""A fake adb transport backed by the simulator: answers the shell commands AdbDevice sends the way
Android does (settings values, the contacts provider's rows, uiautomator dumps), so the real-device
code path runs whole episodes in tests."""

from __future__ import annotations

from edgebench.agent.adb_device import APP_PACKAGES
from edgebench.agent.simulator import SimulatedDevice
from edgebench.agent.state import DeviceState, wifi_value


class FakeAdb:
    def __init__(self, initial: DeviceState, seed: int) -> None:
        self.sim = SimulatedDevice()
        self.sim.reset(initial, seed)
        self.dumped = ""
        self.commands: list[list[str]] = []

    def shell(self, args: list[str]) -> str:
        self.commands.append(args)
        sim, state = self.sim, self.sim.state
        match args:
            case ["cmd", "connectivity", "airplane-mode", mode]:
                state.airplane_mode_on = mode == "enable"
            case ["svc", "wifi", mode]:
                state.wifi_on = wifi_value(mode == "enable", state.airplane_mode_on)
            case ["cmd", "bluetooth_manager", mode]:
                state.bluetooth_on = mode == "enable"
            case ["am", "start", "-a", "android.intent.action.SHOW_ALARMS"]:
                sim.open_app("Clock")
            case ["uiautomator", "dump", _]:
                self.dumped = sim.observe()
                return "UI hierchary dumped to: /sdcard/window_dump.xml"
            case ["cat", _]:
                return self.dumped
            case ["input", "tap", x, y] | ["input", "swipe", x, y, _, _, "800"]:
                sim.tap(int(x), int(y))
            case ["input", "swipe", *_]:
                pass  # a scroll: the simulator's pages fit on one screen
            case ["input", "keyevent", "KEYCODE_HOME"]:
                sim.home()
            case ["input", "keyevent", "KEYCODE_BACK"]:
                sim.back()
            case ["input", "keyevent", *_]:
                pass  # MOVE_END and a long DEL clear the field: typing replaces it below
            case ["input", "text", text]:
                if sim._focused is not None:  # typing with nothing focused goes nowhere
                    sim.type_focused(text.replace("%s", " "))
            case ["monkey", "-p", package, *_]:
                app = next(name for name, pkg in APP_PACKAGES.items() if pkg == package)
                sim.open_app(app)
            case ["settings", "get", "global", key]:
                return str(int(getattr(state, key)))
            case ["content", "query", "--uri", "content://com.android.contacts/data/phones", *_]:
                # as a phone: a contact without a number has no phone row
                numbered = [(n, p) for n, p in state.contacts if p]
                rows = [f"Row: {i} display_name={n}, data1={p}" for i, (n, p) in enumerate(numbered)]
                return "\n".join(rows) or "No result found."
            case ["content", "query", "--uri", "content://com.android.contacts/contacts", *_]:
                rows = [f"Row: {i} display_name={n}" for i, (n, _) in enumerate(state.contacts)]
                return "\n".join(rows) or "No result found."
            case _:
                raise AssertionError(f"the fake adb does not know {args}")
        return ""
