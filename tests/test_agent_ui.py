import os

import pytest

from edgebench.agent.episode import Episode, apply
from edgebench.agent.policies import first_json_object, llm_prompt
from edgebench.agent.simulator import SimulatedDevice
from edgebench.agent.state import DeviceState
from edgebench.agent.tasks import build
from edgebench.agent.uixml import format_elements, normalize, parse_hierarchy

REAL_LIKE = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout"
 checkable="false" checked="false" clickable="false" bounds="[0,0][1080,2400]">
<node index="0" text="" resource-id="" class="android.widget.LinearLayout" checkable="false" checked="false"
 clickable="true" bounds="[0,300][1080,450]">
<node index="0" text="Wi\u2011Fi" resource-id="android:id/title" class="android.widget.TextView"
 checkable="false" checked="false" clickable="false" bounds="[40,320][700,430]"/>
<node index="1" text="" resource-id="android:id/switch_widget" class="android.widget.Switch" checkable="true"
 checked="true" clickable="true" bounds="[880,320][1040,430]"/></node>
<node index="1" text="7:00\u202fAM" resource-id="x:id/digital_clock" class="android.widget.TextView"
 checkable="false" checked="false" clickable="false" bounds="[40,500][700,600]"/>
</node></hierarchy>"""


def test_parser_normalises_and_labels_switches_by_their_row():
    elements = parse_hierarchy(REAL_LIKE)
    assert format_elements(elements).splitlines() == [
        '[0] LinearLayout "Wi-Fi" clickable',
        '[1] TextView "Wi-Fi"',
        '[2] Switch "Wi-Fi" checked=true clickable',
        '[3] TextView "7:00 AM"',
    ]
    assert elements[2].centre == (960, 375)
    assert normalize("Wi\u2011Fi 7:00\u202fPM") == "Wi-Fi 7:00 PM"


def test_simulator_renders_what_the_same_parser_reads_and_taps_by_bounds():
    device = SimulatedDevice()
    device.reset(DeviceState(wifi_on=0), seed=1)
    for step in ({"action": "open_app", "name": "Settings"}, "Network & internet", "Internet"):
        if isinstance(step, str):
            index = next(e.index for e in parse_hierarchy(device.observe()) if e.text == step)
            step = {"action": "click", "index": index}
        device.act(step)
    switch = next(e for e in parse_hierarchy(device.observe()) if e.cls == "Switch")
    assert switch.label == "Wi-Fi" and not switch.checked
    device.act({"action": "click", "index": switch.index})
    assert device.snapshot().wifi_on
    assert [(c.key, c.old, c.new) for c in device.changes] == [("wifi_on", 0, 1)]
    assert device.visited[-1] == "internet" and "network" in device.visited


def test_llm_reply_parsing_takes_the_first_action_object():
    assert first_json_object('Sure! {"action": "click", "index": 3} then {"action": "wait"}') == {
        "action": "click",
        "index": 3,
    }
    assert first_json_object('{"note": 1} {"action": "navigate_back"}') == {"action": "navigate_back"}
    assert first_json_object("I would tap Wi-Fi") is None
    assert first_json_object('{"action": "click", "index": ') is None
    assert first_json_object('{"action": "wait", "x": ' + "[" * 2000 + "}") is None  # too deep
    assert first_json_object('{"action": "click", "index": ' + "9" * 5000 + "}") is None  # too long


def test_malformed_output_costs_a_step_and_is_counted():
    task = build("wifi_on", "needs_change", 0)
    device = SimulatedDevice()
    device.reset(task.initial, task.seed)
    episode = Episode(task, 0, 10, device)
    apply(episode, None)
    apply(episode, {"action": "click", "index": 999})
    apply(episode, {"action": "status", "goal_status": "maybe"})
    for index in (True, 1.0, "1", 10**4000, -1):  # indices are strict, in-range ints
        apply(episode, {"action": "click", "index": index})
    assert episode.steps == 8 and episode.invalid == 8 and episode.active
    assert episode.device.snapshot() == task.initial  # nothing was clicked


def test_prompt_is_compact_and_complete():
    task = build("bluetooth_on", "needs_change", 0)
    device = SimulatedDevice()
    device.reset(task.initial, task.seed)
    prompt = llm_prompt(task.goal, parse_hierarchy(device.observe()), [{"action": "wait"}])
    assert "Goal: Turn Bluetooth on." in prompt and '[0] TextView "Settings" clickable' in prompt
    episode_part = prompt.split("End of example.\n")[1]  # what this step adds to the fixed prefix
    assert '"goal_status"' in prompt and len(prompt) < 1700 and len(episode_part) < 250
    other = build("add_alarm", "pm", 1)
    shared = os.path.commonprefix([prompt, llm_prompt(other.goal, [], [])])
    assert '"goal_status"' in shared and task.goal not in shared  # the cacheable prefix: instructions
    # Two episodes on the same screen share it too: only the goal and the actions are their own.
    same_screen = llm_prompt(other.goal, parse_hierarchy(device.observe()), [])
    shared = os.path.commonprefix([prompt, same_screen])
    assert '[0] TextView "Settings" clickable' in shared and task.goal not in shared


def test_wilson_and_mcnemar():
    from edgebench.stats import mcnemar_exact, wilson_interval

    low, high = wilson_interval(8, 10)
    assert 0.490 < low < 0.491 and 0.943 < high < 0.944  # Wilson 95% for 8/10: [0.4902, 0.9433]
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(0, 0) != wilson_interval(0, 0)  # nan
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 10) == 2 / 1024
    assert mcnemar_exact(5, 5) == 1.0


def test_typed_text_reaches_the_screen_escaped_and_xml_safe():
    task = build("add_contact", "needs_change", 0)
    device = SimulatedDevice()
    device.reset(task.initial, task.seed)
    device.open_app("Contacts")
    device._open_editor()
    field = next(e for e in parse_hierarchy(device.observe()) if e.rid == "first_name")
    device.act({"action": "input_text", "index": field.index, "text": 'A&B <"x"> \b\f\x01 \ud800 Zoë'})
    shown = next(e for e in parse_hierarchy(device.observe()) if e.rid == "first_name")
    assert shown.text == 'A&B <"x">   Zoë'


def test_input_text_on_a_row_is_invalid_and_taps_nothing():
    task = build("wifi_on", "needs_change", 0)
    device = SimulatedDevice()
    device.reset(task.initial, task.seed)
    device.open_app("Settings")
    row = next(e for e in parse_hierarchy(device.observe()) if e.label == "Network & internet")
    episode = Episode(task, 0, 10, device)
    apply(episode, {"action": "input_text", "index": row.index, "text": "x"})
    assert episode.invalid == 1 and device.screen == "settings"


def _node(rid="", cls="android.widget.TextView", text="", children="", **flags):
    attrs = " ".join(f'{k}="{v}"' for k, v in flags.items())
    return (
        f'<node resource-id="{rid}" class="{cls}" text="{text}" content-desc="" '
        f'package="com.android.settings" bounds="[0,0][1080,200]" {attrs}>{children}</node>'
    )


def switchbar_page(state_word: str) -> str:
    """A pre-Android-12 Settings page (written for this test): an action bar title, a SwitchBar
    whose text is the state word in the phone's language, and preference rows whose summary is
    the state word, each with a switch showing that word too."""
    switch = _node("android:id/switch_widget", "android.widget.Switch", state_word.upper(), checkable="true")
    bar = _node(
        "com.android.settings:id/switch_bar",
        "android.widget.LinearLayout",
        children=_node("com.android.settings:id/switch_text", text=state_word) + switch,
        clickable="true",
    )
    row = _node(
        "",
        "android.widget.LinearLayout",
        children=_node("android:id/title", text="Notify for public networks")
        + _node("android:id/summary", text=state_word)
        + _node("android:id/widget_frame", "android.widget.LinearLayout", children=switch),
        clickable="true",
    )
    action_bar = _node("android:id/action_bar", "android.view.ViewGroup", children=_node(text="Wi‑Fi"))
    return (
        f"<hierarchy>{_node(children=action_bar + bar + row, cls='android.widget.FrameLayout')}</hierarchy>"
    )


@pytest.mark.parametrize("state_word", ["On", "Off", "Activé", "Aus"])
def test_switches_on_a_switchbar_page_are_named_by_their_titles_never_by_a_state_word(state_word):
    from edgebench.agent.uixml import parse_hierarchy

    switches = [e for e in parse_hierarchy(switchbar_page(state_word)) if e.checkable]
    assert [e.label for e in switches] == ["Wi-Fi", "Notify for public networks"]
    assert all(state_word.casefold() not in e.label.casefold() for e in switches)
