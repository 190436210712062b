"""Settings: Network & internet (Internet > Wi-Fi; Airplane mode), Connected devices >
Connection preferences > Bluetooth."""

from __future__ import annotations

from edgebench.agent.simulator.widgets import (
    NBHY,
    SETTINGS,
    Widget,
    _noop,
    settings_row,
    text_view,
)
from edgebench.agent.state import WIFI_OFF, wifi_value

# What the Network & internet page's Internet row reads, as Android's Settings decides it: the
# Wi-Fi network while Wi-Fi is on; with Wi-Fi off, "Airplane mode is on" while airplane mode is on
# (no internet, Wi-Fi not enabled), else the mobile carrier that carries the internet.
WIFI_NETWORK = "AndroidWifi"
CARRIER = "T-Mobile"
AIRPLANE_SUMMARY = "Airplane mode is on"


def internet_summary(wifi_enabled: bool, airplane_mode_on: bool) -> str:
    if wifi_enabled:
        return WIFI_NETWORK
    return AIRPLANE_SUMMARY if airplane_mode_on else CARRIER


class SettingsScreens:
    """Screens and actions of the Settings app, mixed into SimulatedDevice (which owns the state,
    the navigation stack and the renderer)."""

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
        internet = internet_summary(self.state.wifi_enabled, self.state.airplane_mode_on)
        return [
            self._app_bar("Network & internet"),
            settings_row("Internet", self._goto("internet"), internet),
            settings_row("Calls & SMS", self._goto("calls"), CARRIER),
            settings_row("SIMs", self._goto("sims"), CARRIER),
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
