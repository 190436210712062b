"""A simulated phone: screens rendered as uiautomator XML from state, taps resolved by bounds.

Settings (Network & internet > Internet > Wi-Fi; Connected devices > Bluetooth), Clock (alarm list,
time picker with dial and typed modes, AM/PM, OK/Cancel) and Contacts (list, editor with Save;
back discards). Every state change is logged as (step, key, old, new); every screen visited is
logged too.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from edgebench.agent.state import Change, DeviceState, diff

WIDTH, ROW_H, TOP = 1080, 150, 240
NBHY = "\u2011"  # real Settings write "Wi‑Fi" with a non-breaking hyphen
NNBSP = "\u202f"  # and put a narrow no-break space before AM/PM
APPS = {"settings": "Settings", "clock": "Clock", "contacts": "Contacts"}
APP_ROOT = {"settings": "settings", "clock": "clock", "contacts": "contacts"}


@dataclass
class Widget:
    cls: str
    text: str = ""
    rid: str = ""
    clickable: bool = False
    checkable: bool = False
    checked: bool = False
    on_tap: Callable[[], None] | None = None
    on_text: Callable[[str], None] | None = None
    children: list[Widget] = field(default_factory=list)


def row(title: str, on_tap, rid="android:id/title", summary: str = "", switch: bool | None = None) -> Widget:
    children = [Widget("android.widget.TextView", title, rid)]
    if summary:
        children.append(Widget("android.widget.TextView", summary, "android:id/summary"))
    if switch is not None:
        children.append(
            Widget(
                "android.widget.Switch",
                "",
                "android:id/switch_widget",
                clickable=True,
                checkable=True,
                checked=switch,
                on_tap=on_tap,
            )
        )
    return Widget("android.widget.LinearLayout", clickable=True, on_tap=on_tap, children=children)


def text_field(text: str, rid: str, on_text: Callable[[str], None]) -> Widget:
    """An editable field: a tap focuses it (no state change), input_text replaces its text."""
    return Widget("android.widget.EditText", text, rid, clickable=True, on_text=on_text, on_tap=_focus)


def _focus() -> None:
    return None


def clock_text(hour: int, minute: int) -> str:
    suffix = "AM" if hour < 12 else "PM"
    return f"{(hour % 12) or 12}:{minute:02d}{NNBSP}{suffix}"


class SimulatedDevice:
    """The Device interface on a state machine of screens."""

    def __init__(self) -> None:
        self.state = DeviceState()
        self.screen = "launcher"
        self.stack: list[str] = []
        self.step = 0
        self.changes: list[Change] = []
        self.visited: list[str] = []
        self._layout: list[tuple[tuple[int, int, int, int], Widget, int]] = []
        self._picker: dict = {}
        self._editor: dict = {}

    # --- Device interface -------------------------------------------------------------------
    def reset(self, initial_state: DeviceState, seed: int) -> None:
        self.state = initial_state.copy()
        self.rng = random.Random(seed)
        self.screen, self.stack, self.step = "launcher", [], 0
        self.changes, self.visited = [], ["launcher"]
        self.state.foreground = "launcher"

    def snapshot(self) -> DeviceState:
        return self.state.copy()

    def observe(self) -> str:
        rows = getattr(self, f"_screen_{self.screen}")()
        self._layout = []
        body = "".join(
            self._render(w, (0, TOP + i * ROW_H, WIDTH, TOP + (i + 1) * ROW_H - 10), 2)
            for i, w in enumerate(rows)
        )
        return (
            f'<hierarchy rotation="0"><node index="0" class="android.widget.FrameLayout" text="" '
            f'resource-id="" package="{self.state.foreground}" clickable="false" checkable="false" '
            f'checked="false" bounds="[0,0][{WIDTH},2400]">{body}</node></hierarchy>'
        )

    def act(self, action: dict) -> None:
        """Apply one parsed action; raises ValueError for an action that cannot apply here."""
        before = self.state.copy()
        self.step += 1
        kind = action.get("action")
        if kind in ("click", "long_press"):
            self.tap(*self._element_centre(action))
        elif kind == "input_text":
            self.type_text(self._element_centre(action), str(action.get("text", "")))
        elif kind == "navigate_back":
            self._back()
        elif kind == "navigate_home":
            self._go("launcher", reset_stack=True)
        elif kind == "open_app":
            self._open_app(str(action.get("name", "")))
        elif kind in ("scroll", "wait", "status"):
            pass
        else:
            raise ValueError(f"unknown action {kind!r}")
        self.changes += diff(before, self.state, self.step)

    # --- taps and text, resolved by position like a touch screen -------------------------------
    def _element_centre(self, action: dict) -> tuple[int, int]:
        from edgebench.agent.uixml import parse_hierarchy

        elements = parse_hierarchy(self.observe())
        index = action.get("index")
        if not isinstance(index, int) or not 0 <= index < len(elements):
            raise ValueError(f"no element with index {index!r} (screen has {len(elements)})")
        return elements[index].centre

    def _hit(self, x: int, y: int, want: str) -> Widget | None:
        """The deepest widget under the point that handles `want` (tap or text)."""
        hits = [
            (depth, w)
            for (x1, y1, x2, y2), w, depth in self._layout
            if x1 <= x <= x2 and y1 <= y <= y2 and getattr(w, want) is not None
        ]
        return max(hits, key=lambda hit: hit[0])[1] if hits else None

    def tap(self, x: int, y: int) -> None:
        widget = self._hit(x, y, "on_tap")
        if widget is not None:
            widget.on_tap()

    def type_text(self, point: tuple[int, int], text: str) -> None:
        widget = self._hit(*point, "on_text")
        if widget is None:
            raise ValueError("input_text on an element that is not editable")
        widget.on_text(text)

    # --- rendering ------------------------------------------------------------------------------
    def _render(self, w: Widget, bounds: tuple[int, int, int, int], depth: int) -> str:
        self._layout.append((bounds, w, depth))
        x1, y1, x2, y2 = bounds
        inner = ""
        flow = [c for c in w.children if not c.cls.endswith("Switch")]
        width = (x2 - x1 - 240) // max(len(flow), 1)
        for child in w.children:
            if child.cls.endswith("Switch"):  # a switch sits at the right end of its row
                cb = (x2 - 200, y1 + 20, x2 - 40, y2 - 20)
            else:
                i = flow.index(child)
                cb = (x1 + 40 + i * width, y1 + 10, x1 + 40 + (i + 1) * width - 10, y2 - 10)
            inner += self._render(child, cb, depth + 1)
        attrs = (
            f'index="0" class="{w.cls}" text={quoteattr(w.text)} resource-id="{w.rid}" '
            f'package="{self.state.foreground}" clickable="{str(w.clickable).lower()}" '
            f'checkable="{str(w.checkable).lower()}" checked="{str(w.checked).lower()}" '
            f'bounds="[{x1},{y1}][{x2},{y2}]"'
        )
        return f"<node {attrs}>{inner}</node>"

    # --- navigation -------------------------------------------------------------------------------
    def _go(self, screen: str, reset_stack: bool = False) -> None:
        if reset_stack:
            self.stack = []
        elif self.screen != screen:
            self.stack.append(self.screen)
        self.screen = screen
        self.visited.append(screen)
        self.state.foreground = "launcher" if screen == "launcher" else self._app_of(screen)

    @staticmethod
    def _app_of(screen: str) -> str:
        if screen in ("clock", "picker"):
            return "clock"
        if screen in ("contacts", "editor"):
            return "contacts"
        return "settings"

    def _back(self) -> None:
        self._picker, self._editor = {}, {}  # leaving an editor or picker discards it
        if self.stack:
            self.screen = self.stack.pop()
            self.visited.append(self.screen)
            self.state.foreground = "launcher" if self.screen == "launcher" else self._app_of(self.screen)
        else:
            self._go("launcher", reset_stack=True)

    def _open_app(self, name: str) -> None:
        for key, title in APPS.items():
            if name.strip().lower() == title.lower():
                self._go("launcher", reset_stack=True)
                self._go(APP_ROOT[key])
                return
        raise ValueError(f"no app named {name!r}")

    # --- screens ----------------------------------------------------------------------------------
    def _screen_launcher(self) -> list[Widget]:
        return [
            Widget(
                "android.widget.TextView",
                title,
                "com.android.launcher3:id/icon",
                clickable=True,
                on_tap=lambda key=key: self._go(APP_ROOT[key]),
            )
            for key, title in APPS.items()
        ]

    def _title(self, text: str) -> Widget:
        return Widget("android.widget.TextView", text, "com.android.settings:id/collapsing_toolbar")

    def _dead_end(self, name: str) -> Callable[[], None]:
        return lambda: self._go(name)

    def _screen_settings(self) -> list[Widget]:
        return [
            self._title("Settings"),
            row("Network & internet", lambda: self._go("network"), summary=f"Mobile, Wi{NBHY}Fi, hotspot"),
            row("Connected devices", lambda: self._go("connected"), summary="Bluetooth, pairing"),
            row("Display", self._dead_end("display"), summary="Dark theme, font size"),
            row("Apps", self._dead_end("apps"), summary="Recent apps, default apps"),
        ]

    def _screen_display(self) -> list[Widget]:
        return [self._title("Display"), Widget("android.widget.TextView", "Brightness level")]

    def _screen_apps(self) -> list[Widget]:
        return [self._title("Apps"), Widget("android.widget.TextView", "Recently opened apps")]

    def _screen_network(self) -> list[Widget]:
        return [
            self._title("Network & internet"),
            row(
                "Internet",
                lambda: self._go("internet"),
                summary="Networks available" if self.state.wifi_on else "Off",
            ),
            row("Hotspot & tethering", self._dead_end("hotspot"), summary="Off"),
        ]

    def _screen_hotspot(self) -> list[Widget]:
        return [self._title("Hotspot & tethering"), Widget("android.widget.TextView", "Not sharing internet")]

    def _toggle(self, key: str) -> Callable[[], None]:
        def flip() -> None:
            setattr(self.state, key, not getattr(self.state, key))

        return flip

    def _screen_internet(self) -> list[Widget]:
        rows = [
            self._title("Internet"),
            row(f"Wi{NBHY}Fi", self._toggle("wifi_on"), switch=self.state.wifi_on),
        ]
        if self.state.wifi_on:
            rows.append(row("HomeNet", self._dead_end("wifi_detail"), summary="Connected"))
        return rows

    def _screen_wifi_detail(self) -> list[Widget]:
        return [self._title("HomeNet"), Widget("android.widget.TextView", "Signal strength Excellent")]

    def _screen_connected(self) -> list[Widget]:
        return [
            self._title("Connected devices"),
            row("Pair new device", self._dead_end("pairing")),
            row(
                "Bluetooth", lambda: self._go("bluetooth"), summary="On" if self.state.bluetooth_on else "Off"
            ),
        ]

    def _screen_pairing(self) -> list[Widget]:
        return [self._title("Pair new device"), Widget("android.widget.TextView", "Available devices")]

    def _screen_bluetooth(self) -> list[Widget]:
        return [
            self._title("Bluetooth"),
            row("Use Bluetooth", self._toggle("bluetooth_on"), switch=self.state.bluetooth_on),
        ]

    # Clock
    def _set_alarm_enabled(self, i: int) -> Callable[[], None]:
        def flip() -> None:
            hour, minute, enabled = self.state.alarms[i]
            self.state.alarms[i] = (hour, minute, not enabled)

        return flip

    def _screen_clock(self) -> list[Widget]:
        rows = [Widget("android.widget.TextView", "Alarm", "com.google.android.deskclock:id/tab_alarm")]
        for i, (hour, minute, enabled) in enumerate(self.state.alarms):
            rows.append(
                Widget(
                    "android.widget.LinearLayout",
                    children=[
                        Widget(
                            "android.widget.TextView",
                            clock_text(hour, minute),
                            "com.google.android.deskclock:id/digital_clock",
                        ),
                        Widget(
                            "android.widget.Switch",
                            "",
                            "com.google.android.deskclock:id/onoff",
                            clickable=True,
                            checkable=True,
                            checked=enabled,
                            on_tap=self._set_alarm_enabled(i),
                        ),
                    ],
                )
            )
        rows.append(
            Widget(
                "android.widget.ImageButton",
                "Add alarm",
                "com.google.android.deskclock:id/fab",
                clickable=True,
                on_tap=self._open_picker,
            )
        )
        return rows

    def _open_picker(self) -> None:
        # like the real picker, it opens at some time other than the one wanted
        hour, minute = self.rng.randint(1, 12), self.rng.randrange(0, 60, 5)
        self._picker = {
            "mode": "dial",
            "stage": "hour",
            "hour": str(hour),
            "minute": f"{minute:02d}",
            "pm": self.rng.random() < 0.5,
        }
        self._go("picker")

    def _picker_set(self, key: str, value) -> Callable[..., None]:
        def apply(*_args) -> None:
            self._picker[key] = value
            if key == "hour" and self._picker["mode"] == "dial":
                self._picker["stage"] = "minute"

        return apply

    def _picker_text(self, key: str) -> Callable[[str], None]:
        def apply(text: str) -> None:
            self._picker[key] = text.strip()

        return apply

    def _picker_ok(self) -> None:
        p = self._picker
        try:
            hour, minute = int(p["hour"]), int(p["minute"])
        except ValueError:
            return  # the real picker refuses to close on a bad value
        if not (1 <= hour <= 12 and 0 <= minute <= 59):
            return
        hour24 = (hour % 12) + (12 if p["pm"] else 0)
        self.state.alarms.append((hour24, minute, True))
        self._picker = {}
        self._back()

    def _screen_picker(self) -> list[Widget]:
        p = self._picker
        rid = "com.google.android.deskclock:id/"
        rows = [
            Widget(
                "android.widget.TextView",
                "Select time" if p["mode"] == "dial" else "Enter time",
                rid + "header",
            )
        ]
        if p["mode"] == "dial":
            rows.append(
                Widget(
                    "android.widget.LinearLayout",
                    children=[
                        Widget(
                            "android.widget.TextView",
                            p["hour"],
                            rid + "material_hour_tv",
                            clickable=True,
                            on_tap=self._picker_set("stage", "hour"),
                        ),
                        Widget(
                            "android.widget.TextView",
                            p["minute"],
                            rid + "material_minute_tv",
                            clickable=True,
                            on_tap=self._picker_set("stage", "minute"),
                        ),
                    ],
                )
            )
            values = (
                [str(h) for h in range(1, 13)]
                if p["stage"] == "hour"
                else [f"{m:02d}" for m in range(0, 60, 5)]
            )
            for start in range(0, 12, 4):
                rows.append(
                    Widget(
                        "android.widget.LinearLayout",
                        children=[
                            Widget(
                                "android.widget.TextView",
                                v,
                                rid + "material_clock_face",
                                clickable=True,
                                on_tap=self._picker_set(p["stage"], v),
                            )
                            for v in values[start : start + 4]
                        ],
                    )
                )
        else:
            rows.append(
                Widget(
                    "android.widget.LinearLayout",
                    children=[
                        text_field(p["hour"], rid + "material_hour_text_input", self._picker_text("hour")),
                        text_field(
                            p["minute"], rid + "material_minute_text_input", self._picker_text("minute")
                        ),
                    ],
                )
            )
        rows.append(
            Widget(
                "android.widget.LinearLayout",
                children=[
                    Widget(
                        "android.widget.RadioButton",
                        "AM",
                        rid + "material_clock_period_am_button",
                        clickable=True,
                        checkable=True,
                        checked=not p["pm"],
                        on_tap=self._picker_set("pm", False),
                    ),
                    Widget(
                        "android.widget.RadioButton",
                        "PM",
                        rid + "material_clock_period_pm_button",
                        clickable=True,
                        checkable=True,
                        checked=p["pm"],
                        on_tap=self._picker_set("pm", True),
                    ),
                ],
            )
        )
        toggle = "Switch to text input mode" if p["mode"] == "dial" else "Switch to clock mode"
        rows.append(
            Widget(
                "android.widget.ImageButton",
                toggle,
                rid + "material_timepicker_mode_button",
                clickable=True,
                on_tap=self._picker_mode,
            )
        )
        rows.append(
            Widget(
                "android.widget.LinearLayout",
                children=[
                    Widget(
                        "android.widget.Button",
                        "Cancel",
                        rid + "material_timepicker_cancel_button",
                        clickable=True,
                        on_tap=self._back,
                    ),
                    Widget(
                        "android.widget.Button",
                        "OK",
                        rid + "material_timepicker_ok_button",
                        clickable=True,
                        on_tap=self._picker_ok,
                    ),
                ],
            )
        )
        return rows

    def _picker_mode(self) -> None:
        self._picker["mode"] = "typed" if self._picker["mode"] == "dial" else "dial"
        self._picker["stage"] = "hour"

    # Contacts
    def _screen_contacts(self) -> list[Widget]:
        rows = [Widget("android.widget.TextView", "Contacts", "com.android.contacts:id/toolbar")]
        rows += [
            Widget("android.widget.TextView", name, "com.android.contacts:id/cliv_name_textview")
            for name, _ in sorted(self.state.contacts)
        ]
        rows.append(
            Widget(
                "android.widget.ImageButton",
                "Create contact",
                "com.android.contacts:id/floating_action_button",
                clickable=True,
                on_tap=self._open_editor,
            )
        )
        return rows

    def _open_editor(self) -> None:
        self._editor = {"name": "", "phone": ""}
        self._go("editor")

    def _editor_text(self, key: str) -> Callable[[str], None]:
        def apply(text: str) -> None:
            self._editor[key] = text.strip()

        return apply

    def _editor_save(self) -> None:
        if self._editor.get("name"):
            self.state.contacts.append((self._editor["name"], self._editor["phone"]))
        self._editor = {}
        self._back()

    def _screen_editor(self) -> list[Widget]:
        e = self._editor
        rid = "com.android.contacts:id/"
        return [
            Widget("android.widget.TextView", "Create contact", rid + "toolbar_title"),
            text_field(e["name"] or "First name", rid + "first_name", self._editor_text("name")),
            text_field(e["phone"] or "Phone", rid + "phone", self._editor_text("phone")),
            Widget(
                "android.widget.Button",
                "Save",
                rid + "editor_menu_save_button",
                clickable=True,
                on_tap=self._editor_save,
            ),
        ]
