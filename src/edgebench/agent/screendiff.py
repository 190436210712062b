"""Where the simulator's screens differ from real ones: `edgebench-screendiff DUMPS_DIR`.

For every real `uiautomator dump` XML in the folder: name the simulator screen it shows, put the
simulator in the state the dump shows (switches, alarms, the picker's time), render that screen and
compare element by element (resource id, class, label, checkable/checked/clickable). Differences in
the elements the tasks need (the rows, switches and buttons the scripted solutions use and the
oracles read) are listed first; the command exits 1 when there is any.

`--capture NAME` first saves the attached phone's current screen as NAME.xml in the folder.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from edgebench.agent.screens import alarms_on_screen, screen_name, switch_state
from edgebench.agent.simulator import SimulatedDevice, app_of
from edgebench.agent.simulator.settings import AIRPLANE_SUMMARY
from edgebench.agent.state import DeviceState, wifi_value
from edgebench.agent.uixml import Element, parse_hierarchy

# What the tasks use on each screen: (resource id without package, label); None matches any label.
NEEDED: dict[str, list[tuple[str, str | None]]] = {
    "settings": [("", "Network & internet"), ("", "Connected devices")],
    "network": [("", "Internet"), ("", "Airplane mode"), ("switch_widget", "Airplane mode")],
    "internet": [("", "Wi-Fi"), ("switch_widget", "Wi-Fi")],
    "connection_prefs": [("", "Bluetooth")],
    "bluetooth": [("switch_widget", "Use Bluetooth")],
    "clock": [("fab", "Add alarm"), ("onoff", None), ("digital_clock", None)],
    "picker": [
        ("material_hour_tv", None),
        ("material_minute_tv", None),
        ("material_clock_period_am_button", "AM"),
        ("material_clock_period_pm_button", "PM"),
        ("material_timepicker_mode_button", None),
        ("material_timepicker_cancel_button", "Cancel"),
        ("material_timepicker_ok_button", "OK"),
    ],
    "contacts": [("floating_action_button", "Create contact")],
    "editor": [("first_name", None), ("phone", None), ("editor_menu_save_button", "Save")],
}


def signature(e: Element) -> tuple:
    return (e.rid, e.cls, e.label, e.checkable, e.checked, e.clickable)


def describe(e: Element) -> str:
    flags = [
        f for f, on in (("checkable", e.checkable), ("checked", e.checked), ("clickable", e.clickable)) if on
    ]
    rid = f" id={e.rid}" if e.rid else ""
    return f'{e.cls}{rid} "{e.label}"' + (f" [{', '.join(flags)}]" if flags else "")


def _summary_after(elements: list[Element], title: str) -> str:
    for before, after in zip(elements, elements[1:], strict=False):
        if before.text == title and after.rid == "summary":
            return after.text
    return ""


def simulator_like(name: str, elements: list[Element]) -> SimulatedDevice:
    """The simulator on screen `name`, in the state the real screen shows."""
    state = DeviceState()
    airplane = switch_state(elements, "Airplane mode")
    if airplane is not None:
        state.airplane_mode_on = airplane
    wifi = switch_state(elements, "Wi-Fi")
    if wifi is None and name == "network":  # the Internet row names the Wi-Fi network when it is on
        internet = _summary_after(elements, "Internet")
        wifi = internet not in (_summary_after(elements, "Calls & SMS"), AIRPLANE_SUMMARY)
    state.wifi_on = wifi_value(bool(wifi), state.airplane_mode_on)
    state.bluetooth_on = bool(switch_state(elements, "Use Bluetooth"))
    state.alarms = alarms_on_screen(elements) or []
    device = SimulatedDevice()
    device.reset(state, seed=0)
    device.screen = name
    device.state.foreground = app_of(name)
    if name == "picker":
        by_rid = {e.rid: e for e in elements}
        hour, minute = by_rid.get("material_hour_tv"), by_rid.get("material_minute_tv")
        pm = by_rid.get("material_clock_period_pm_button")
        device._picker = {
            "mode": "dial" if hour is not None else "typed",
            "stage": "hour" if hour is None or hour.checked else "minute",
            "hour": hour.text if hour else "12",
            "minute": minute.text if minute else "00",
            "pm": bool(pm and pm.checked),
        }
    if name == "editor":
        device._editor = {"name": "", "phone": ""}
    return device


def compare(real_xml: str) -> dict:
    """The differences between one real screen and the simulator's rendering of it."""
    real = parse_hierarchy(real_xml)
    name = screen_name(real_xml, real)
    if not name:
        return {"screen": "", "needed": [], "device_only": [], "simulator_only": [], "differ": []}
    simulated = parse_hierarchy(simulator_like(name, real).observe())
    needed = []
    for rid, label in NEEDED.get(name, []):
        wanted = [e for e in real if e.rid == rid and (label is None or e.label == label)]
        if not wanted:
            needed.append(f"not on the real screen: id={rid or '-'} {label!r}")
        sim_signatures = Counter(signature(e) for e in simulated)
        for e in wanted:
            if sim_signatures[signature(e)] == 0:
                needed.append(f"the simulator has no {describe(e)}")
            sim_signatures[signature(e)] -= 1
    real_keys = Counter((e.rid, e.label) for e in real)
    sim_keys = Counter((e.rid, e.label) for e in simulated)
    first_sim = {(e.rid, e.label): e for e in reversed(simulated)}
    differ = [
        f"{describe(e)} vs simulator {describe(first_sim[(e.rid, e.label)])}"
        for e in real
        if (e.rid, e.label) in first_sim and signature(e) != signature(first_sim[(e.rid, e.label)])
    ]
    return {
        "screen": name,
        "needed": needed,
        "device_only": [
            describe(e) for e in real if real_keys[(e.rid, e.label)] > sim_keys[(e.rid, e.label)]
        ],
        "simulator_only": [
            describe(e) for e in simulated if sim_keys[(e.rid, e.label)] > real_keys[(e.rid, e.label)]
        ],
        "differ": sorted(set(differ)),
    }


def report(folder: Path) -> tuple[str, int]:
    """The text report for every dump in the folder, and how many needed elements differ."""
    lines, problems = [], 0
    paths = sorted(folder.glob("*.xml"))
    if not paths:
        raise SystemExit(f"no .xml dumps in {folder}")
    for path in paths:
        result = compare(path.read_text(encoding="utf-8"))
        if not result["screen"]:
            lines.append(f"{path.name}: not one of the simulator's screens (skipped)")
            continue
        problems += len(result["needed"])
        lines.append(f"{path.name}: the simulator's '{result['screen']}' screen")
        lines.append(
            "  needed by the tasks: "
            + ("all present and equal" if not result["needed"] else f"{len(result['needed'])} differ")
        )
        lines += [f"    ! {line}" for line in result["needed"]]
        for key, title in (
            ("differ", "differ (same id and label)"),
            ("device_only", "on the device only"),
            ("simulator_only", "in the simulator only"),
        ):
            if result[key]:
                lines.append(f"  {title}: {len(result[key])}")
                lines += [f"    {line}" for line in result[key]]
    return "\n".join(lines), problems


def capture(name: str, folder: Path, serial: str | None = None) -> Path:
    """Save the attached phone's current screen as `{name}.xml` (needs adb and a phone)."""
    from edgebench.agent.adb_device import AdbDevice

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.xml"
    path.write_text(AdbDevice(serial).observe(), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder of uiautomator dump XML files")
    parser.add_argument("--capture", metavar="NAME", help="first save the phone's current screen as NAME.xml")
    parser.add_argument("--serial", help="the phone's adb serial, when several are attached")
    args = parser.parse_args(argv)
    if args.capture:
        print(f"saved {capture(args.capture, args.folder, args.serial)}")
    text, problems = report(args.folder)
    print(text)
    print(f"\n{problems} difference(s) in elements the tasks need")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
