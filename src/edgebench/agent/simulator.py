"""A simulated phone: screens rendered as uiautomator XML from state, taps resolved by bounds.

The screens copy the structure of real Android 13/14 dumps (stock Settings, Google Clock): the
clickable node of a Settings row is the row, its switch is `android:id/switch_widget` (checkable, not
clickable), page titles are the `content-desc` of `collapsing_toolbar`, the up button is an
ImageButton labelled "Navigate up", the Clock's add button is `fab` labelled only by content-desc,
alarm times read `8:30\u200aAM`, the time picker's AM/PM are CompoundButtons. Contacts (no real dump
was available) follow the same conventions.

Screens: Settings > Network & internet (Internet > Wi-Fi switch; Airplane mode switch), Settings >
Connected devices > Connection preferences > Bluetooth ("Use Bluetooth"); Clock alarm list > time
picker (dial and typed modes, AM/PM, OK/Cancel); Contacts list > contact details, and > editor
(Save; back discards). Every state change is logged as (step, key, old, new); every screen visited
is logged too. Not modelled: scrolling, expanding an alarm card, editing an existing alarm's time.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from edgebench.agent.screens import clock_text
from edgebench.agent.state import WIFI_OFF, Change, DeviceState, diff, wifi_value
from edgebench.agent.uixml import Element, element_at, parse_hierarchy, xml_safe

WIDTH, HEIGHT, TOP = 1080, 2400, 66  # the app window starts below a 66 px status bar
NBHY = "\u2011"  # real Settings summaries write "Wi‑Fi" with a non-breaking hyphen
SETTINGS = "com.android.settings:id/"
CLOCK = "com.google.android.deskclock:id/"
CONTACTS = "com.google.android.contacts:id/"
APPS = {"settings": "Settings", "clock": "Clock", "contacts": "Contacts"}
APP_OF_SCREEN = {
    "clock": "clock",
    "picker": "clock",
    "contacts": "contacts",
    "contact": "contacts",
    "editor": "contacts",
}
DIAL_ORDER = (11, 12, 10, 1, 2, 9, 3, 8, 7, 6, 5, 4)  # the real dial's document order (positions 1-12)
# Settings pages no task needs: a titled page with one line; tapping their rows leads here.
DEAD_ENDS = {
    "account": ("Google Account", "Manage your Google Account"),
    "search": ("Search settings", "Search settings"),
    "apps": ("Apps", "Recently opened apps"),
    "notifications": ("Notifications", "Notification history"),
    "battery": ("Battery", "100%"),
    "storage": ("Storage", "41% used"),
    "mobile_plan": ("Mobile plan", "T-Mobile"),
    "calls": ("Calls & SMS", "T-Mobile"),
    "sims": ("SIMs", "T-Mobile"),
    "hotspot": ("Hotspot & tethering", "Not sharing internet"),
    "data_saver": ("Data Saver", "Use Data Saver"),
    "vpn": ("VPN", "No VPNs added"),
    "carrier": ("T-Mobile", "Mobile data"),
    "wifi_detail": ("AndroidWifi", "Signal strength Excellent"),
    "network_prefs": ("Network preferences", f"Turn on Wi{NBHY}Fi automatically"),
    "data_usage": ("Non-carrier data usage", "0 B used"),
    "saved_networks": ("Saved networks", "AndroidWifi"),
    "pairing": ("Pair new device", "Available devices"),
    "saved_devices": ("Saved devices", "No saved devices"),
    "printing": ("Printing", "Default Print Service"),
}
CLOCK_TABS = ("Clock", "Timer", "Stopwatch", "Bedtime")  # beside Alarm; each a page with its title
PACKAGES = {
    "launcher": "com.android.launcher3",
    "settings": "com.android.settings",
    "clock": "com.google.android.deskclock",
    "contacts": "com.google.android.contacts",
}


@dataclass
class Widget:
    cls: str
    text: str = ""
    rid: str = ""
    desc: str = ""
    clickable: bool = False
    checkable: bool = False
    checked: bool = False
    on_tap: Callable[[], None] | None = None
    on_text: Callable[[str], None] | None = None
    children: list[Widget] = field(default_factory=list)
    column: bool = False  # children stacked top to bottom instead of left to right
    end: bool = False  # a fixed 200 px slot at the right end of its parent (switches, icons)
    height: int = 215  # for screen-level blocks
    place: tuple[float, float, float, float] | None = None  # fractions of the parent's box


def _noop() -> None:
    return None


def text_view(text: str, rid: str = "", desc: str = "", on_tap=None) -> Widget:
    return Widget("android.widget.TextView", text, rid, desc, clickable=on_tap is not None, on_tap=on_tap)


def settings_row(title: str, on_tap, summary: str = "", switch: bool | None = None):
    """A Settings preference row: the row is clickable, the switch only shows the state."""
    texts = [text_view(title, "android:id/title")]
    if summary:
        texts.append(text_view(summary, "android:id/summary"))
    children = [
        Widget("android.widget.LinearLayout", rid=SETTINGS + "icon_frame"),
        Widget("android.widget.RelativeLayout", rid=SETTINGS + "text_frame", column=True, children=texts),
    ]
    if switch is not None:
        switch_widget = Widget(
            "android.widget.Switch", rid="android:id/switch_widget", checkable=True, checked=switch
        )
        children.append(
            Widget(
                "android.widget.LinearLayout",
                rid="android:id/widget_frame",
                end=True,
                children=[switch_widget],
            )
        )
    return Widget("android.widget.LinearLayout", clickable=True, on_tap=on_tap, children=children)


def text_field(text: str, rid: str, on_text: Callable[[str], None], on_tap) -> Widget:
    """An editable field: a tap focuses it (no state change), input_text replaces its text."""
    return Widget("android.widget.EditText", text, rid, clickable=True, on_text=on_text, on_tap=on_tap)


def app_of(screen: str) -> str:
    """The app a screen belongs to (Clock's other tabs are Clock's)."""
    if screen == "launcher":
        return "launcher"
    return "clock" if screen.startswith("clock_") else APP_OF_SCREEN.get(screen, "settings")


class SimulatedDevice:
    """The Device interface on a state machine of screens."""

    def __init__(self) -> None:
        self.state = DeviceState()
        self.screen = "launcher"
        self.stack: list[str] = []
        self.step = 0
        self.changes: list[Change] = []
        self.visited: list[str] = []
        self.rng = random.Random(0)
        self._layout: list[tuple[tuple[int, int, int, int], Widget, int]] = []
        self._picker: dict = {}
        self._editor: dict = {}
        self._contact: tuple[str, str] | None = None
        self._focused: Widget | None = None

    # --- Device interface -------------------------------------------------------------------
    def reset(self, initial_state: DeviceState, seed: int) -> None:
        self.state = initial_state.copy()
        self.rng = random.Random(seed)
        self.screen, self.stack, self.step = "launcher", [], 0
        self.changes, self.visited = [], ["launcher"]
        self.state.foreground = "launcher"
        self._focused = None

    def snapshot(self) -> DeviceState:
        return self.state.copy()

    def observe(self) -> str:
        blocks = self._blocks()
        self._layout = []
        body, y = "", TOP
        for block in blocks:
            body += self._render(block, (0, y, WIDTH, y + block.height), 2)
            y += block.height
        package = PACKAGES[self.state.foreground]
        return (
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
            f'<hierarchy rotation="0"><node index="0" text="" resource-id="" '
            f'class="android.widget.FrameLayout" package="{package}" content-desc="" '
            f'checkable="false" checked="false" clickable="false" bounds="[0,0][{WIDTH},{HEIGHT}]">'
            f"{body}</node></hierarchy>"
        )

    def _blocks(self) -> list[Widget]:
        """The current screen's top-level blocks."""
        if self.screen in DEAD_ENDS:
            title, line = DEAD_ENDS[self.screen]
            return [self._app_bar(title), text_view(line)]
        if self.screen.startswith("clock_"):  # another Clock tab
            return [text_view(self.screen.removeprefix("clock_").title(), CLOCK + "action_bar_title")]
        return getattr(self, f"_screen_{self.screen}")()

    def act(self, action: dict) -> None:
        """Apply one well-formed action; raises ValueError for one that cannot apply on this screen."""
        before = self.state.copy()
        self.step += 1
        kind = action.get("action")
        if kind in ("click", "long_press"):
            self.tap(*self._element(action).centre)
        elif kind == "input_text":
            element = self._element(action)
            if not element.editable:
                raise ValueError(f"input_text on element {element.index}, which is not editable")
            self.tap(*element.centre)  # focus, then type (replacing), as adb does
            self.type_focused(str(action.get("text", "")))
        elif kind == "navigate_back":
            self.back()
        elif kind == "navigate_home":
            self.home()
        elif kind == "open_app":
            self.open_app(str(action.get("name", "")))
        elif kind in ("scroll", "wait", "status"):
            pass
        else:
            raise ValueError(f"unknown action {kind!r}")
        self.changes += diff(before, self.state, self.step)

    # --- taps and text, resolved by position like a touch screen -------------------------------
    def _element(self, action: dict) -> Element:
        return element_at(parse_hierarchy(self.observe()), action.get("index"))

    def _hit(self, x: int, y: int) -> Widget | None:
        """The deepest widget under the point that handles a tap."""
        hits = [
            (depth, w)
            for (x1, y1, x2, y2), w, depth in self._layout
            if x1 <= x <= x2 and y1 <= y <= y2 and w.on_tap is not None
        ]
        return max(hits, key=_depth)[1] if hits else None

    def tap(self, x: int, y: int) -> None:
        if not self._layout:
            self.observe()
        widget = self._hit(x, y)
        self._focused = widget if widget is not None and widget.on_text is not None else None
        if widget is not None:
            widget.on_tap()

    def type_focused(self, text: str) -> None:
        if self._focused is None:
            raise ValueError("input_text on an element that is not editable")
        self._focused.on_text(xml_safe(text))

    # --- rendering ------------------------------------------------------------------------------
    def _render(self, w: Widget, bounds: tuple[int, int, int, int], depth: int) -> str:
        self._layout.append((bounds, w, depth))
        x1, y1, x2, y2 = bounds
        inner = ""
        flow = [c for c in w.children if not c.end and c.place is None]
        ends = [c for c in w.children if c.end]
        for child in w.children:
            if child.place is not None:
                fx1, fy1, fx2, fy2 = child.place
                width, height = x2 - x1, y2 - y1
                box = (
                    x1 + int(fx1 * width),
                    y1 + int(fy1 * height),
                    x1 + int(fx2 * width),
                    y1 + int(fy2 * height),
                )
                inner += self._render(child, box, depth + 1)
        right = x2 - 200 * len(ends)
        for i, child in enumerate(flow):
            if w.column:
                step = (y2 - y1) // len(flow)
                box = (x1, y1 + i * step, x2, y1 + (i + 1) * step)
            else:
                step = (right - x1) // len(flow)
                box = (x1 + i * step, y1, x1 + (i + 1) * step, y2)
            inner += self._render(child, box, depth + 1)
        for i, child in enumerate(ends):
            inner += self._render(child, (right + 200 * i, y1, right + 200 * (i + 1), y2), depth + 1)
        attrs = (
            f'index="0" text={quoteattr(xml_safe(w.text))} resource-id="{w.rid}" class="{w.cls}" '
            f'package="{PACKAGES[self.state.foreground]}" content-desc={quoteattr(xml_safe(w.desc))} '
            f'checkable="{str(w.checkable).lower()}" checked="{str(w.checked).lower()}" '
            f'clickable="{str(w.clickable).lower()}" bounds="[{x1},{y1}][{x2},{y2}]"'
        )
        return f"<node {attrs}>{inner}</node>"

    # --- navigation -------------------------------------------------------------------------------
    def _go(self, screen: str) -> None:
        if self.screen != screen:
            self.stack.append(self.screen)
        self._show(screen)

    def _show(self, screen: str) -> None:
        self.screen = screen
        self.visited.append(screen)
        self.state.foreground = app_of(screen)
        self._focused = None

    def _goto(self, screen: str) -> Callable[[], None]:
        def go() -> None:
            self._go(screen)

        return go

    def back(self) -> None:
        self._picker, self._editor = {}, {}  # leaving an editor or picker discards it
        if self.stack:
            self._show(self.stack.pop())
        else:
            self.home()

    def home(self) -> None:
        self.stack = []
        self._show("launcher")

    def open_app(self, name: str) -> None:
        for key, title in APPS.items():
            if name.strip().lower() == title.lower():
                self.home()
                self._go(key)
                return
        raise ValueError(f"no app named {name!r}")

    # --- Settings ---------------------------------------------------------------------------------
    def _screen_launcher(self) -> list[Widget]:
        return [
            Widget(
                "android.widget.TextView",
                title,
                "com.android.launcher3:id/icon",
                desc=title,
                clickable=True,
                on_tap=self._goto(key),
                height=300,
            )
            for key, title in APPS.items()
        ]

    def _app_bar(self, title: str, extra: list[Widget] | None = None) -> Widget:
        """The collapsing toolbar of a Settings page: its content-desc is the page title."""
        up = Widget("android.widget.ImageButton", desc="Navigate up", clickable=True, on_tap=self.back)
        bar = Widget("android.view.ViewGroup", rid=SETTINGS + "action_bar", children=[up, *(extra or [])])
        return Widget(
            "android.widget.FrameLayout",
            rid=SETTINGS + "collapsing_toolbar",
            desc=title,
            children=[bar],
            height=492,
        )

    def _screen_settings(self) -> list[Widget]:
        header = Widget(
            "android.widget.LinearLayout",
            rid=SETTINGS + "app_bar",
            column=True,
            height=671,
            children=[
                Widget(
                    "android.widget.ImageView",
                    rid=SETTINGS + "account_avatar",
                    clickable=True,
                    desc="Profile picture, double tap to open Google Account",
                    on_tap=self._goto("account"),
                ),
                text_view("Settings", SETTINGS + "homepage_title"),
                Widget(
                    "android.view.ViewGroup",
                    rid=SETTINGS + "search_action_bar",
                    clickable=True,
                    on_tap=self._goto("search"),
                    children=[text_view("Search settings", SETTINGS + "search_action_bar_title")],
                ),
            ],
        )
        rows = [
            settings_row("Network & internet", self._goto("network"), f"Mobile, Wi{NBHY}Fi, hotspot"),
            settings_row("Connected devices", self._goto("connected"), "Bluetooth, pairing"),
            settings_row("Apps", self._goto("apps"), "Assistant, recent apps, default apps"),
            settings_row("Notifications", self._goto("notifications"), "Notification history, conversations"),
            settings_row("Battery", self._goto("battery"), "100%"),
            settings_row("Storage", self._goto("storage"), "41% used - 4.75 GB free"),
        ]
        for row in rows:
            row.height = 242
        return [header, *rows]

    def _set_airplane(self) -> None:
        """Airplane mode turns the Wi-Fi and Bluetooth radios off; either may be turned on again."""
        on = not self.state.airplane_mode_on
        self.state.airplane_mode_on = on
        if on:
            self.state.wifi_on = WIFI_OFF
            self.state.bluetooth_on = False
        elif self.state.wifi_enabled:
            self.state.wifi_on = wifi_value(True, False)

    def _screen_network(self) -> list[Widget]:
        wifi = "Airplane mode" if self.state.airplane_mode_on and not self.state.wifi_enabled else "Off"
        return [
            self._app_bar("Network & internet"),
            settings_row(
                "Internet", self._goto("internet"), "AndroidWifi" if self.state.wifi_enabled else wifi
            ),
            settings_row("Calls & SMS", self._goto("calls"), "T-Mobile"),
            settings_row("SIMs", self._goto("sims"), "T-Mobile"),
            settings_row("Airplane mode", self._set_airplane, switch=self.state.airplane_mode_on),
            settings_row("Hotspot & tethering", self._goto("hotspot"), "Off"),
            settings_row("Data Saver", self._goto("data_saver"), "Off"),
            settings_row("VPN", self._goto("vpn"), "None"),
            settings_row("Mobile plan", self._goto("mobile_plan")),
        ]

    def _toggle_wifi(self) -> None:
        self.state.wifi_on = wifi_value(not self.state.wifi_enabled, self.state.airplane_mode_on)

    def _screen_internet(self) -> list[Widget]:
        fix = Widget("android.widget.Button", desc="Fix connectivity", clickable=True, on_tap=_noop, end=True)
        carrier = settings_row("T-Mobile", self._goto("carrier"), "Connected / 3G")
        carrier.children.append(
            Widget(
                "android.widget.LinearLayout",
                rid="android:id/widget_frame",
                end=True,
                children=[
                    Widget(
                        "android.widget.ImageView",
                        rid=SETTINGS + "settings_button",
                        desc="Settings",
                        clickable=True,
                        on_tap=self._goto("carrier"),
                    )
                ],
            )
        )
        rows = [
            self._app_bar("Internet", [fix]),
            carrier,
            settings_row("Wi-Fi", self._toggle_wifi, switch=self.state.wifi_enabled),
        ]
        if self.state.wifi_enabled:
            rows.append(settings_row("AndroidWifi", self._goto("wifi_detail"), "Connected"))
        rows += [
            settings_row(
                "Network preferences", self._goto("network_prefs"), f"Wi{NBHY}Fi turns back on automatically"
            ),
            settings_row("Saved networks", self._goto("saved_networks"), "1 network"),
            settings_row("Non-carrier data usage", self._goto("data_usage"), "0 B used"),
        ]
        return rows

    def _screen_connected(self) -> list[Widget]:
        return [
            self._app_bar("Connected devices"),
            settings_row("Pair new device", self._goto("pairing")),
            settings_row("Saved devices", self._goto("saved_devices")),
            settings_row("Connection preferences", self._goto("connection_prefs"), "Bluetooth, Android Auto"),
        ]

    def _screen_connection_prefs(self) -> list[Widget]:
        return [
            self._app_bar("Connection preferences"),
            settings_row("Bluetooth", self._goto("bluetooth"), "On" if self.state.bluetooth_on else "Off"),
            settings_row("Printing", self._goto("printing"), "1 print service on"),
        ]

    def _toggle_bluetooth(self) -> None:
        self.state.bluetooth_on = not self.state.bluetooth_on

    def _screen_bluetooth(self) -> list[Widget]:
        main_switch = Widget(
            "android.widget.LinearLayout",
            rid=SETTINGS + "frame",
            clickable=True,
            on_tap=self._toggle_bluetooth,
            children=[
                text_view("Use Bluetooth", SETTINGS + "switch_text"),
                Widget(
                    "android.widget.Switch",
                    rid="android:id/switch_widget",
                    checkable=True,
                    checked=self.state.bluetooth_on,
                    end=True,
                ),
            ],
        )
        return [
            self._app_bar("Bluetooth"),
            main_switch,
            settings_row("Pair new device", self._goto("pairing")),
        ]

    # --- Clock ----------------------------------------------------------------------------------
    def _set_alarm_enabled(self, i: int) -> Callable[[], None]:
        def flip() -> None:
            hour, minute, enabled = self.state.alarms[i]
            self.state.alarms[i] = (hour, minute, not enabled)

        return flip

    def _alarm_card(self, i: int, hour: int, minute: int, enabled: bool) -> Widget:
        """Flat, as on the real Clock: time, expand arrow, schedule and switch share one layout."""
        time = clock_text(hour, minute)
        days = "Tomorrow" if enabled else "Not scheduled"
        parts = [
            Widget(
                "android.widget.TextView",
                time,
                CLOCK + "digital_clock",
                time,
                clickable=True,
                on_tap=_noop,
                place=(0.04, 0.1, 0.4, 0.55),
            ),
            Widget(
                "android.widget.ImageButton",
                rid=CLOCK + "arrow",
                desc="Expand alarm",
                clickable=True,
                on_tap=_noop,
                place=(0.85, 0.0, 0.96, 0.4),
            ),
            Widget(
                "android.widget.LinearLayout",
                rid=CLOCK + "alarm_info",
                place=(0.04, 0.6, 0.8, 1.0),
                children=[text_view(days, CLOCK + "days_of_week")],
            ),
            Widget(
                "android.widget.Switch",
                rid=CLOCK + "onoff",
                clickable=True,
                checkable=True,
                checked=enabled,
                on_tap=self._set_alarm_enabled(i),
                place=(0.82, 0.6, 0.96, 1.0),
            ),
        ]
        layout = Widget("android.view.ViewGroup", rid=CLOCK + "alarm_card_layout", children=parts)
        return Widget(
            "androidx.cardview.widget.CardView",
            desc=" Alarm",
            clickable=True,
            on_tap=_noop,
            children=[layout],
            height=300,
        )

    def _screen_clock(self) -> list[Widget]:
        toolbar = Widget(
            "android.view.ViewGroup",
            rid=CLOCK + "toolbar",
            height=234,
            children=[
                text_view("Alarm", CLOCK + "action_bar_title"),
                Widget(
                    "android.widget.ImageView",
                    rid=CLOCK + "overflow_action_button",
                    desc="More options",
                    clickable=True,
                    on_tap=_noop,
                    end=True,
                ),
            ],
        )
        cards = [self._alarm_card(i, *alarm) for i, alarm in enumerate(self.state.alarms)]
        fab = Widget(
            "android.view.ViewGroup",
            rid=CLOCK + "fab_container",
            height=300,
            children=[
                Widget(
                    "android.widget.Button",
                    rid=CLOCK + "fab",
                    desc="Add alarm",
                    clickable=True,
                    on_tap=self._open_picker,
                )
            ],
        )
        return [toolbar, *cards, fab, self._clock_tabs()]

    def _clock_tabs(self) -> Widget:
        """The Clock's bottom navigation: Alarm (this screen), then the other tabs."""
        tabs = [
            Widget(
                "android.widget.FrameLayout",
                rid=CLOCK + f"tab_menu_{tab.lower()}",
                desc=tab,
                clickable=tab != "Alarm",
                on_tap=None if tab == "Alarm" else self._goto(f"clock_{tab.lower()}"),
                children=[
                    text_view(
                        tab,
                        CLOCK + f"navigation_bar_item_{'large' if tab == 'Alarm' else 'small'}_label_view",
                    )
                ],
            )
            for tab in ("Alarm", *CLOCK_TABS)
        ]
        return Widget("android.widget.FrameLayout", rid=CLOCK + "navigation_bar", height=210, children=tabs)

    def _open_picker(self) -> None:
        # like the real picker, it opens at some time other than the one wanted
        hour, minute = self.rng.randint(1, 12), self.rng.randrange(0, 60, 5)
        self._picker = {"mode": "dial", "stage": "hour", "hour": str(hour), "minute": f"{minute:02d}"}
        self._picker["pm"] = self.rng.random() < 0.5
        self._go("picker")

    def _picker_set(self, key: str, value) -> Callable[[], None]:
        def apply() -> None:
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
        hour, minute = p["hour"], p["minute"]
        if not (hour.isdigit() and minute.isdigit() and len(hour) <= 2 and len(minute) <= 2):
            return  # the real picker refuses to close on a bad value
        if not (1 <= int(hour) <= 12 and 0 <= int(minute) <= 59):
            return
        self.state.alarms.append(((int(hour) % 12) + (12 if p["pm"] else 0), int(minute), True))
        self.back()

    def _dial_face(self) -> Widget:
        """Numbers on a circle, in the order the real dial lists them (11, 12, 10, 1, 2, 9, ...)."""
        p = self._picker
        numbers = []
        for position in DIAL_ORDER:
            minute = (position % 12) * 5
            if p["stage"] == "hour":
                text, desc = str(position), f"{position} o'clock"
            else:
                text, desc = f"{minute:02d}", f"{minute} minutes"
            angle = math.radians(30 * (position % 12))
            cx, cy = 0.5 + 0.4 * math.sin(angle), 0.5 - 0.4 * math.cos(angle)
            numbers.append(
                Widget(
                    "android.widget.TextView",
                    text,
                    desc=desc,
                    clickable=True,
                    on_tap=self._picker_set(p["stage"], text),
                    place=(cx - 0.09, cy - 0.09, cx + 0.09, cy + 0.09),
                )
            )
        return Widget(
            "android.view.ViewGroup", rid=CLOCK + "material_clock_face", children=numbers, height=672
        )

    def _picker_digit(self, stage: str, desc: str) -> Widget:
        """The hour or minute of the dial's display: tapping it picks what the dial sets."""
        return Widget(
            "android.view.View",
            self._picker[stage],
            CLOCK + f"material_{stage}_tv",
            desc,
            clickable=True,
            checkable=True,
            checked=self._picker["stage"] == stage,
            on_tap=self._picker_set("stage", stage),
        )

    def _picker_display(self) -> list[Widget]:
        p = self._picker
        if p["mode"] == "dial":
            minutes = f"{int(p['minute'])} minutes" if p["minute"].isdigit() else p["minute"]
            hour, minute = (
                self._picker_digit("hour", f"{p['hour']} o'clock"),
                self._picker_digit("minute", minutes),
            )
        else:
            hour = text_field(p["hour"], CLOCK + "material_hour_text_input", self._picker_text("hour"), _noop)
            minute = text_field(
                p["minute"], CLOCK + "material_minute_text_input", self._picker_text("minute"), _noop
            )
        return [hour, text_view(":"), minute]

    def _picker_period(self) -> Widget:
        buttons = [
            Widget(
                "android.widget.CompoundButton",
                label,
                CLOCK + f"material_clock_period_{label.lower()}_button",
                clickable=True,
                checkable=True,
                checked=self._picker["pm"] == pm,
                on_tap=self._picker_set("pm", pm),
            )
            for label, pm in (("AM", False), ("PM", True))
        ]
        return Widget(
            "android.widget.LinearLayout",
            rid=CLOCK + "material_clock_period_toggle",
            desc="Select AM or PM",
            column=True,
            end=True,
            children=buttons,
        )

    def _picker_buttons(self) -> Widget:
        dial = self._picker["mode"] == "dial"
        mode_desc = f"Switch to {'text input' if dial else 'clock'} mode for the time input."
        mode = Widget(
            "android.widget.Button",
            rid=CLOCK + "material_timepicker_mode_button",
            desc=mode_desc,
            clickable=True,
            on_tap=self._picker_mode,
        )
        cancel = Widget(
            "android.widget.Button",
            "Cancel",
            CLOCK + "material_timepicker_cancel_button",
            clickable=True,
            on_tap=self.back,
        )
        ok = Widget(
            "android.widget.Button",
            "OK",
            CLOCK + "material_timepicker_ok_button",
            clickable=True,
            on_tap=self._picker_ok,
        )
        return Widget("android.widget.LinearLayout", height=126, children=[mode, cancel, ok])

    def _screen_picker(self) -> list[Widget]:
        dial = self._picker["mode"] == "dial"
        header = text_view("Select time" if dial else "Enter time", CLOCK + "header_title")
        header.height = 100
        display = Widget(
            "android.widget.LinearLayout",
            rid=CLOCK + "material_clock_display",
            children=[*self._picker_display(), self._picker_period()],
            height=252,
        )
        return [header, display, *([self._dial_face()] if dial else []), self._picker_buttons()]

    def _picker_mode(self) -> None:
        self._picker["mode"] = "typed" if self._picker["mode"] == "dial" else "dial"
        self._picker["stage"] = "hour"

    # --- Contacts -------------------------------------------------------------------------------
    def _show_contact(self, contact: tuple[str, str]) -> Callable[[], None]:
        def show() -> None:
            self._contact = contact
            self._go("contact")

        return show

    def _screen_contacts(self) -> list[Widget]:
        rows = [text_view("Contacts", CONTACTS + "toolbar_title")]
        rows[0].height = 234
        for contact in sorted(self.state.contacts):
            rows.append(
                Widget(
                    "android.widget.LinearLayout",
                    rid=CONTACTS + "cliv_container",
                    clickable=True,
                    on_tap=self._show_contact(contact),
                    children=[text_view(contact[0], CONTACTS + "cliv_name_textview")],
                    height=180,
                )
            )
        fab = Widget(
            "android.widget.ImageButton",
            rid=CONTACTS + "floating_action_button",
            desc="Create contact",
            clickable=True,
            on_tap=self._open_editor,
            height=252,
        )
        return [*rows, fab]

    def _screen_contact(self) -> list[Widget]:
        name, phone = self._contact or ("", "")
        up = Widget(
            "android.widget.ImageButton", desc="Navigate up", clickable=True, on_tap=self.back, height=154
        )
        phone_row = Widget(
            "android.widget.LinearLayout",
            clickable=True,
            on_tap=_noop,
            column=True,
            children=[text_view(phone, CONTACTS + "header"), text_view("Mobile", CONTACTS + "sub_header")],
        )
        return [up, text_view(name, CONTACTS + "large_title"), phone_row]

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
        self.back()

    def _screen_editor(self) -> list[Widget]:
        e = self._editor
        return [
            Widget(
                "android.view.ViewGroup",
                height=234,
                children=[
                    Widget("android.widget.ImageButton", desc="Cancel", clickable=True, on_tap=self.back),
                    text_view("Create contact", CONTACTS + "toolbar_title"),
                    Widget(
                        "android.widget.Button",
                        "Save",
                        CONTACTS + "editor_menu_save_button",
                        clickable=True,
                        on_tap=self._editor_save,
                        end=True,
                    ),
                ],
            ),
            text_field(e["name"] or "First name", CONTACTS + "first_name", self._editor_text("name"), _noop),
            text_field(e["phone"] or "Phone", CONTACTS + "phone", self._editor_text("phone"), _noop),
        ]


def _depth(hit: tuple[int, Widget]) -> int:
    return hit[0]
