"""The screen's action schema admits exactly the well-formed actions that can apply there."""

import jsonschema
import pytest

from edgebench.agent.action_schema import LAUNCHER_APPS, action_schema
from edgebench.agent.actions import action_error


@pytest.mark.parametrize(
    "action",
    [
        {"action": "click", "index": 3},
        {"action": "input_text", "index": 7, "text": "Ada"},
        {"action": "open_app", "name": "Clock"},
        {"action": "status", "goal_status": "complete"},
        {"action": "navigate_back"},
        {"action": "scroll", "direction": "down"},
    ],
)
def test_every_valid_action_on_the_screen_fits_the_schema(action):
    jsonschema.validate(action, action_schema([3, 7], [7]))
    assert action_error(action) == ""


@pytest.mark.parametrize(
    "action",
    [
        {"action": "click", "index": 4},  # not on this screen
        {"action": "click", "index": "3"},
        {"action": "open_app", "name": "Camera"},  # not on the launcher
        {"action": "status", "goal_status": "done"},
        {"action": "click", "index": 3, "extra": {"deep": [1]}},
        {"action": "fly"},
        {"action": "input_text", "index": 7, "text": "x" * 41},
        {"action": "input_text", "index": 3, "text": "Ada"},  # shown, but takes no text
    ],
)
def test_an_action_that_cannot_apply_does_not_fit(action):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(action, action_schema([3, 7], [7]))


def test_a_screen_without_indices_offers_no_indexed_action():
    kinds = {form["properties"]["action"]["const"] for form in action_schema([])["anyOf"]}
    assert not kinds & {"click", "long_press", "input_text"} and "status" in kinds
    assert set(LAUNCHER_APPS) == {"Settings", "Clock", "Contacts"}
