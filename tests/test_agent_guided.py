"""The `guided` strategy: its action pattern admits exactly the screen's valid actions less the ones
already tried there, its demonstrations come from other task kinds on held-out seeds, its history
names what each action acted on and marks the ones that changed nothing, and the home screen's app
is the one the model ranks first among those not yet opened from it."""

import json
import re
from dataclasses import replace
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.agent.action_schema import action_key, action_pattern
from edgebench.agent.actions import action_error
from edgebench.agent.episode import _device
from edgebench.agent.guided import (
    UNCHANGED,
    History,
    action_line,
    chosen,
    demonstrations,
    guided_prompt,
    routes,
)
from edgebench.agent.policies import first_json_object
from edgebench.agent.tasks import KINDS, suite
from edgebench.agent.uixml import parse_hierarchy

EXCLUDED = frozenset({("click", 3), ("scroll", "down"), ("navigate_home", None), ("open_app", "Settings")})
PATTERN = action_pattern([3, 7, 12], [7], excluded=EXCLUDED)


@settings(max_examples=300, deadline=None)
@given(st.from_regex(PATTERN, fullmatch=True))
def test_every_reply_the_pattern_admits_is_a_valid_untried_action_on_the_screen(reply):
    action = first_json_object(reply)
    assert action is not None and action_error(action) == ""
    assert action.get("index", 7) in (3, 7, 12)
    assert action_key(action) not in EXCLUDED or action["action"] == "input_text"


def test_the_pattern_spells_actions_as_the_prompt_does_and_never_drops_a_status():
    def fits(action):
        return re.fullmatch(PATTERN, json.dumps(action)) is not None

    assert fits({"action": "click", "index": 7}) and fits({"action": "input_text", "index": 7, "text": "Ada"})
    assert fits({"action": "long_press", "index": 3})  # only the click on 3 was tried
    assert not fits({"action": "click", "index": 3}) and not fits({"action": "scroll", "direction": "down"})
    assert not fits({"action": "open_app", "name": "Settings"})
    assert fits({"action": "open_app", "name": "Clock"})
    assert not re.fullmatch(PATTERN, '{"action":"click","index":7}')  # compact: not the prompt's form
    everything = frozenset({("status", "complete"), ("status", None)})
    complete = '{"action": "status", "goal_status": "complete"}'
    assert re.fullmatch(action_pattern([], excluded=everything), complete)


def test_demonstrations_are_other_kinds_scripted_solutions_on_held_out_seeds():
    from edgebench.agent.verify import CALIBRATION_SUITE

    used = {task.seed for task in suite(20) + suite(20, CALIBRATION_SUITE)}
    demos = demonstrations()
    assert "infeasible_alarm" not in {d.template for d in demos}  # one status shows no path
    assert {d.template for d in demos} == set(KINDS) - {"infeasible_alarm"}
    assert all(d.lines[-1].endswith("status complete") for d in demos)
    for task in suite(1):
        picked = chosen(task)
        assert len(picked) == 2 and task.template not in {d.template for d in picked}
    assert not used & {d.seed for d in demos}  # no study or calibration episode starts where one did


def test_wifi_goals_get_the_other_radio_demonstrations_and_the_prompt_holds_them():
    task = next(t for t in suite(1) if t.template == "wifi_on")
    assert [d.template for d in chosen(task)] == ["wifi_off", "bluetooth_on"]
    elements = parse_hierarchy(_device(task).observe())
    prompt = guided_prompt(task, elements, ['Home screen: click [0] TextView "Settings"'])
    assert "Goal: Turn Wi-Fi off." in prompt and prompt.rstrip().endswith('click [0] TextView "Settings"')


def test_the_history_names_the_element_and_marks_an_action_that_changed_nothing():
    task = next(t for t in suite(1) if t.template == "wifi_on")
    device = _device(task)
    home = parse_hierarchy(device.observe())
    settings_icon = next(e for e in home if e.label == "Settings")
    history = History()
    history.acted(1, home, {"action": "navigate_home"})
    history.observe(1, home)  # the same screen after it
    history.acted(1, home, {"action": "click", "index": settings_icon.index})
    device.act({"action": "click", "index": settings_icon.index})
    history.observe(1, parse_hierarchy(device.observe()))
    assert history.recent(1) == [
        f"Home screen: navigate_home{UNCHANGED}",
        f'Home screen: click [{settings_icon.index}] TextView "Settings"',
    ]
    assert history.excluded(1, home) == {("navigate_home", None), ("click", settings_icon.index)}
    assert history.excluded(2, home) == frozenset()  # another episode's tries are its own
    assert action_line(home, None) == "Home screen: a reply that was not an action"


class RankingEngine:
    """Ranks Contacts, then Clock, then Settings, whatever the goal."""

    def choice_logprobs(self, prompts, prefix, choices):
        order = {"Contacts": -0.1, "Clock": -1.0, "Settings": -2.0}
        return [[order[c] for c in choices] for _ in prompts]


def test_the_home_screen_opens_the_first_ranked_app_not_yet_opened_from_it():
    task = next(t for t in suite(1) if t.template == "add_contact")
    home = parse_hierarchy(_device(task).observe())
    settings_screen = [replace(e, package="com.android.settings") for e in home]  # not the launcher
    episodes = [SimpleNamespace(), SimpleNamespace()]
    batch = [(task, home, []), (task, settings_screen, [])]
    history = History()
    first = routes(RankingEngine(), episodes, batch, history)
    assert first == {0: {"action": "open_app", "name": "Contacts"}}  # the second is not on the launcher
    history.acted(id(episodes[0]), home, {"action": "open_app", "name": "Contacts"})
    assert routes(RankingEngine(), episodes, batch, history)[0] == {"action": "open_app", "name": "Clock"}


class SharedFirstToken:
    def choice_logprobs(self, prompts, prefix, choices):
        raise ValueError(f"choices {choices} share their first token")


def test_a_tokenizer_that_cannot_tell_the_apps_apart_leaves_the_home_screen_to_the_prompt():
    task = suite(1)[0]
    home = parse_hierarchy(_device(task).observe())
    assert routes(SharedFirstToken(), [SimpleNamespace()], [(task, home, [])], History()) == {}
