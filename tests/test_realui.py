"""The prompt formatter, the screen readers and the simulator, checked against six real screens
(tests/data/realui, with their sources and notices)."""

from pathlib import Path

import pytest

from edgebench.agent.screendiff import compare, main
from edgebench.agent.screens import alarms_on_screen, screen_name, switch_state
from edgebench.agent.uixml import format_elements, parse_hierarchy

REAL = Path(__file__).parent / "data" / "realui"
SCREENS = {
    "settings_home.xml": "settings",
    "settings_network_airplane_off.xml": "network",
    "settings_internet_wifi_off.xml": "internet",
    "clock_alarm_list.xml": "clock",
    "clock_alarm_expanded.xml": "clock",
    "clock_time_picker_hour_pm.xml": "picker",
}


def read(name: str) -> str:
    return (REAL / name).read_text(encoding="utf-8")


def inside(inner, outer) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


@pytest.mark.parametrize("name", sorted(SCREENS))
def test_every_clickable_element_is_labelled_from_itself(name):
    """Own text, own content-desc, or words inside its own bounds; a switch without words takes the
    title of the row or card it sits in. Never a neighbour's title."""
    elements = parse_hierarchy(read(name))
    assert screen_name(read(name), elements) == SCREENS[name]
    for e in (e for e in elements if e.clickable or e.checkable):
        assert e.label, f"unlabelled element {e}"
        if e.label in (e.text, e.desc):
            continue
        area = e.bounds
        if e.checkable:  # its row: the smallest other element around it
            around = [f.bounds for f in elements if f is not e and inside(e.bounds, f.bounds)]
            area = min(around, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
        assert any(f is not e and e.label in (f.text, f.desc) and inside(f.bounds, area) for f in elements), e
    prompt = format_elements(elements)
    assert not any(odd in prompt for odd in ("\u2011", "\u202f", "\u200a", "\u2009"))


def test_settings_rows_read_their_own_titles():
    prompt = format_elements(parse_hierarchy(read("settings_home.xml")))
    rows = [line.split('"')[1] for line in prompt.splitlines() if "LinearLayout" in line]
    assert rows == ["Network & internet", "Connected devices", "Apps", "Notifications", "Battery", "Storage"]


def test_the_lines_an_agent_needs_read_as_a_person_reads_them():
    internet = format_elements(parse_hierarchy(read("settings_internet_wifi_off.xml")))
    assert 'LinearLayout "Wi-Fi" clickable' in internet and 'Switch "Wi-Fi" checked=false' in internet
    network = format_elements(parse_hierarchy(read("settings_network_airplane_off.xml")))
    assert 'FrameLayout "Network & internet"' in network and 'ImageButton "Navigate up" clickable' in network
    clock = format_elements(parse_hierarchy(read("clock_alarm_list.xml")))
    assert 'Button "Add alarm" clickable' in clock and 'Switch "8:30 AM" checked=false clickable' in clock
    assert "Battery 100 percent" not in clock  # the status bar is not the app
    picker = format_elements(parse_hierarchy(read("clock_time_picker_hour_pm.xml")))
    assert 'CompoundButton "PM" checked=true clickable' in picker and 'Button "OK" clickable' in picker


def test_state_is_read_from_real_screens():
    assert alarms_on_screen(parse_hierarchy(read("clock_alarm_list.xml"))) == [(8, 30, False), (9, 0, False)]
    expanded = alarms_on_screen(parse_hierarchy(read("clock_alarm_expanded.xml")))
    assert expanded == [(8, 25, True), (8, 30, False), (9, 0, False)]
    assert alarms_on_screen(parse_hierarchy(read("settings_home.xml"))) is None
    assert switch_state(parse_hierarchy(read("settings_internet_wifi_off.xml")), "Wi-Fi") is False
    assert switch_state(parse_hierarchy(read("settings_network_airplane_off.xml")), "Airplane mode") is False


@pytest.mark.parametrize("name", sorted(SCREENS))
def test_the_simulator_has_every_element_the_tasks_need(name):
    result = compare(read(name))
    assert result["screen"] == SCREENS[name] and result["needed"] == []


def airplane_mode_on(network_xml: str) -> str:
    """The real network page as Android shows it after airplane mode is turned on with Wi-Fi off:
    the switch checked, and the Internet row's summary Settings' "Airplane mode is on" (its rule:
    no internet, airplane mode on, Wi-Fi not enabled)."""
    switch = 'resource-id="android:id/switch_widget" class="android.widget.Switch"'
    assert network_xml.count(switch) == 1 and network_xml.count('text="AndroidWifi"') == 1
    on = network_xml.replace(switch + ' package="com.android.settings" content-desc="" checkable="true" '
                             'checked="false"', switch + ' package="com.android.settings" content-desc="" '
                             'checkable="true" checked="true"')  # fmt: skip
    assert on != network_xml
    return on.replace('text="AndroidWifi"', 'text="Airplane mode is on"')


def test_the_network_page_with_airplane_mode_on_reads_as_the_simulators():
    real = airplane_mode_on(read("settings_network_airplane_off.xml"))
    elements = parse_hierarchy(real)
    assert switch_state(elements, "Airplane mode") is True
    result = compare(real)
    assert result["screen"] == "network" and result["needed"] == []
    # the Internet row's summary is on both screens, the same words
    assert result["device_only"] == result["simulator_only"] == [], result
    assert '[4] TextView "Airplane mode is on"' in format_elements(elements)  # under "Internet"


def test_the_diff_command_reports_and_fails_on_a_needed_difference(tmp_path, capsys):
    assert main([str(REAL)]) == 0
    assert "0 difference(s) in elements the tasks need" in capsys.readouterr().out
    changed = read("clock_alarm_list.xml").replace('content-desc="Add alarm"', 'content-desc="New alarm"')
    (tmp_path / "clock.xml").write_text(changed, encoding="utf-8")
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "not on the real screen: id=fab 'Add alarm'" in out and 'Button id=fab "New alarm"' in out


def xml_node(cls: str, bounds: str, text: str = "", rid: str = "", desc: str = "", **flags: bool) -> str:
    """One uiautomator node's opening tag (flags: checkable, checked, clickable)."""
    attributes = {k: str(flags.get(k, False)).lower() for k in ("checkable", "checked", "clickable")}
    return (
        f'<node index="0" text="{text}" resource-id="{rid}" class="android.widget.{cls}" '
        f'package="com.android.settings" content-desc="{desc}" bounds="{bounds}" '
        + " ".join(f'{k}="{v}"' for k, v in attributes.items())
        + ">"
    )


def settings_page(title: str, bar_state: str, rows: list[tuple[str, bool, str]]) -> str:
    """A synthetic settings page in another language: a main switch bar showing its state word,
    then rows whose switches show their own state word as text (as the Polish page does)."""
    ids = "com.android.settings:id/"
    bar = [
        xml_node("LinearLayout", "[0,300][1080,450]", rid=ids + "switch_bar", clickable=True),
        xml_node("TextView", "[40,320][800,430]", bar_state, rid=ids + "switch_text") + "</node>",
        xml_node("Switch", "[900,320][1040,430]", bar_state, rid="android:id/switch_widget", checkable=True,
                 checked=True) + "</node></node>",
    ]  # fmt: skip
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">',
        xml_node("FrameLayout", "[0,0][1080,2400]"),
        xml_node(
            "FrameLayout", "[0,100][1080,300]", rid="com.android.settings:id/collapsing_toolbar", desc=title
        )
        + "</node>",
        *bar,
    ]
    for i, (row, on, state) in enumerate(rows):
        top = 500 + 150 * i
        parts += [
            xml_node("LinearLayout", f"[0,{top}][1080,{top + 140}]", clickable=True),
            xml_node("TextView", f"[40,{top + 10}][800,{top + 130}]", row, rid="android:id/title")
            + "</node>",
            xml_node("Switch", f"[900,{top + 10}][1040,{top + 130}]", state, rid="android:id/switch_widget",
                     checkable=True, checked=on) + "</node></node>",
        ]  # fmt: skip
    return "".join(parts) + "</node></hierarchy>"


@pytest.mark.parametrize(
    "title, on_word, off_word, rows",
    [
        ("Powiadomienia", "Włączono", "Wyłączono",
         ["Dźwięk", "Wibracje", "Plakietki", "Ekran blokady", "Dymki", "Nie przeszkadzać"]),
        ("Benachrichtigungen", "Ein", "Aus", ["Ton", "Vibration", "Punkt", "Sperrbildschirm"]),
    ],
)  # fmt: skip
def test_a_switch_showing_its_state_word_is_named_by_its_row_in_any_language(title, on_word, off_word, rows):
    states = [(row, i % 2 == 0, on_word if i % 2 == 0 else off_word) for i, row in enumerate(rows)]
    elements = parse_hierarchy(settings_page(title, on_word, states))
    switches = [e for e in elements if e.checkable]
    assert [e.label for e in switches] == [title, *rows]  # the bar's switch by the page, rows by theirs
    assert [e.checked for e in switches[1:]] == [on for _, on, _ in states]
    prompt = format_elements(elements)
    assert f'Switch "{on_word}"' not in prompt and f'Switch "{off_word}"' not in prompt


def test_day_buttons_are_named_by_their_content_desc():
    days = [e for e in parse_hierarchy(read("clock_alarm_expanded.xml")) if "day_button" in e.resource_id]
    labels = [e.label for e in days]
    assert labels == ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
