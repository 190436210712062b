"""Clock: the alarm list with its cards, the other tabs, and the time picker (dial and typed
modes, AM/PM, OK/Cancel)."""

from __future__ import annotations

import math
from collections.abc import Callable

from edgebench.agent.screens import clock_text
from edgebench.agent.simulator.widgets import (
    CLOCK,
    CLOCK_TABS,
    DIAL_ORDER,
    Widget,
    _noop,
    text_field,
    text_view,
)


class ClockScreens:
    """Screens and actions of the Clock app, mixed into SimulatedDevice (which owns the state,
    the navigation stack and the renderer)."""

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
