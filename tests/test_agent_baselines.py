"""Baselines that check the checker (agent-suite.md): if these move, the oracle is wrong."""

import pandas as pd
import pytest

from edgebench.agent.episode import run_policy
from edgebench.agent.tasks import VARIANTS, suite

TASKS = suite(instances=3)
TOGGLE_TEMPLATES = {"wifi_on", "wifi_off", "bluetooth_on", "bluetooth_off"}


@pytest.fixture(scope="module")
def results():
    return {
        name: pd.DataFrame(run_policy(TASKS, name))
        for name in ("scripted", "do_nothing", "round_trip", "type_never_save", "random")
    }


def test_suite_covers_every_template_and_variant():
    assert {(t.template, t.variant) for t in TASKS} == {(t, v) for t, vs in VARIANTS.items() for v in vs}
    assert len({t.seed for t in TASKS}) == len(TASKS)  # a seed per instance


def test_scripted_policy_succeeds_on_every_variant(results):
    scripted = results["scripted"]
    assert scripted["success"].all(), scripted.loc[
        ~scripted["success"], ["task_id", "final_status"]
    ].to_string()
    assert scripted["reached"].all() and (scripted["invalid_actions"] == 0).all()


def test_do_nothing_passes_exactly_the_already_satisfied_variants(results):
    frame = results["do_nothing"]
    assert (frame["success"] == frame["already_satisfied"]).all()
    assert frame["already_satisfied"].any()


def test_round_trip_fails_every_already_satisfied_toggle(results):
    frame = results["round_trip"]
    toggles = frame[frame["template"].isin(TOGGLE_TEMPLATES) & frame["already_satisfied"]]
    assert len(toggles) > 0 and not toggles["success"].any()
    # the final state is right, so only the at-every-step rule catches it
    assert toggles["goal_met"].all() and not toggles["untouched_if_satisfied"].any()


def test_type_never_save_fails_every_add_alarm_variant(results):
    frame = results["type_never_save"]
    alarms = frame[frame["template"] == "add_alarm"]
    assert len(alarms) == 12 and not alarms["success"].any()
    assert alarms["reached"].all()  # it got to the picker; typing is not saving


def test_random_policy_is_a_low_floor(results):
    random_rate = results["random"]["success"].mean()
    assert random_rate < 0.5 < results["scripted"]["success"].mean()


def test_unrelated_changes_fail_a_task():
    from edgebench.agent.simulator import SimulatedDevice
    from edgebench.agent.tasks import build, judge

    task = build("wifi_on", "needs_change", 0)
    device = SimulatedDevice()
    device.reset(task.initial, task.seed)
    device.state.wifi_on = True
    device.state.bluetooth_on = not device.state.bluetooth_on  # collateral damage
    verdict = judge(task, device.snapshot(), [], "complete", ["internet"])
    assert verdict.goal_met and not verdict.unrelated_unchanged and not verdict.success
