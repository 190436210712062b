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

import random
from collections.abc import Callable
from xml.sax.saxutils import quoteattr

from edgebench.agent.simulator.clock import ClockScreens
from edgebench.agent.simulator.contacts import ContactsScreens
from edgebench.agent.simulator.settings import SettingsScreens
from edgebench.agent.simulator.widgets import (
    APPS,
    CLOCK,
    DEAD_ENDS,
    HEIGHT,
    PACKAGES,
    SETTINGS,
    TOP,
    WIDTH,
    Widget,
    app_of,
    layer_depth,
    text_view,
)
from edgebench.agent.state import Change, DeviceState, diff
from edgebench.agent.uixml import Element, element_at, parse_hierarchy, xml_safe


class SimulatedDevice(SettingsScreens, ClockScreens, ContactsScreens):
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
        return max(hits, key=layer_depth)[1] if hits else None

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
