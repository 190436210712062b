"""The simulated phone's building blocks: widgets, the rows and fields real screens use, and the
package and app names of each screen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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


def layer_depth(hit: tuple[int, Widget]) -> int:
    return hit[0]
