"""Baselines that check the checker: if these move, the oracle is wrong."""

import pandas as pd
import pytest

from edgebench.agent.episode import run_policy
from edgebench.agent.simulator import SimulatedDevice
from edgebench.agent.state import WIFI_ON_IN_AIRPLANE_MODE, DeviceState
from edgebench.agent.tasks import KINDS, VARIANTS, build, judge, phone_number, suite

TASKS = suite(instances=3)
TOGGLE_TEMPLATES = {"wifi_on", "wifi_off", "bluetooth_on", "bluetooth_off"}
POLICIES = (
    "scripted",
    "do_nothing",
    "round_trip",
    "type_never_save",
    "random",
    "all_alarms_off",
    "alarm_and_toggle_another",
)


@pytest.fixture(scope="module")
def results():
    return {name: pd.DataFrame(run_policy(TASKS, name)) for name in POLICIES}


def test_suite_covers_every_template_and_variant():
    assert {(t.template, t.variant) for t in TASKS} == {(t, v) for t, vs in VARIANTS.items() for v in vs}
    assert len({t.seed for t in TASKS}) == len(TASKS)  # a seed per instance


def test_variant_generators_reach_both_ends_of_every_parameter_domain():
    for name, kind in KINDS.items():
        for variant in kind.variants:
            drawn = [build(name, variant, i).params for i in range(3)]
            for key, domain in kind.domains(variant).items():
                if key == "number":  # drawn as a number, stored as the phone number
                    values = {params["phone"] for params in drawn}
                    ends = {phone_number(domain[0]), phone_number(domain[-1])}
                else:
                    values, ends = {params[key] for params in drawn}, {domain[0], domain[-1]}
                assert ends <= values, (name, variant, key, ends, values)
    hours = {build("add_alarm", v, i).params["hour"] for v in ("am", "pm") for i in range(2)}
    assert hours == {0, 11, 12, 23}  # 12:00 AM, 11 AM, 12:00 PM and 11 PM all occur


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


def test_type_never_save_fails_every_add_alarm_variant_that_needs_a_change(results):
    frame = results["type_never_save"]
    alarms = frame[(frame["template"] == "add_alarm") & ~frame["already_satisfied"]]
    assert len(alarms) == 12 and not alarms["success"].any()
    present = frame[(frame["template"] == "add_alarm") & frame["already_satisfied"]]
    assert len(present) == 3 and present["success"].all()  # set and on already: not saving is right
    assert alarms["reached"].all()  # it got to the picker; typing is not saving


def test_collateral_damage_inside_the_tasks_own_state_fails(results):
    too_broad = results["all_alarms_off"]
    assert set(too_broad["template"]) == {"alarm_off"} and len(too_broad) == 9
    assert not too_broad["success"].any() and not too_broad["exact_change"].any()
    assert too_broad.loc[~too_broad["already_satisfied"], "goal_met"].all()  # the asked-for alarm is off
    toggled = results["alarm_and_toggle_another"]
    assert set(toggled["template"]) == {"add_alarm"} and len(toggled) == 15
    assert not toggled["success"].any() and toggled["goal_met"].all() and not toggled["exact_change"].any()


def test_random_policy_is_a_low_floor(results):
    random_rate = results["random"]["success"].mean()
    assert random_rate < 0.5 < results["scripted"]["success"].mean()


def test_unrelated_changes_fail_a_task():
    task = build("wifi_on", "needs_change", 0)
    final = task.initial.copy()
    final.wifi_on = 2 if final.airplane_mode_on else 1
    final.bluetooth_on = not final.bluetooth_on  # collateral damage
    verdict = judge(task, final, [], "complete", ["internet"])
    assert verdict.goal_met and not verdict.unrelated_unchanged and not verdict.success


def test_a_second_alarm_or_a_contact_with_another_number_is_not_the_goal():
    task = build("add_alarm", "present", 0)
    twice = task.initial.copy()
    twice.alarms += [(7, 0, True), (7, 0, True)]
    assert not judge(task, twice, [], "complete", ["clock"]).success
    contact = build("add_contact", "name_taken", 0)
    name = contact.params["name"]
    assert any(n == name for n, _ in contact.initial.contacts)  # the name is there, with another number
    assert not contact.goal_met(contact.initial)
    assert not judge(contact, contact.initial, [], "complete", ["contacts"]).success


def test_wifi_is_androids_tri_state_under_airplane_mode():
    device = SimulatedDevice()
    device.reset(DeviceState(wifi_on=1), seed=0)
    device._set_airplane()  # airplane mode turns the radio off
    assert device.state.airplane_mode_on and device.state.wifi_on == 0
    device._toggle_wifi()  # Wi-Fi turned back on during airplane mode
    assert device.state.wifi_on == WIFI_ON_IN_AIRPLANE_MODE and device.state.wifi_enabled
    task = build("wifi_on", "needs_change", 0)
    assert task.goal_met(device.state)
    with pytest.raises(ValueError, match="tri-state"):
        DeviceState(wifi_on=5)


def test_item_h1_confirms_the_strict_oracle_from_the_baseline_rows(results):
    from edgebench.items.checks import strict_oracle

    frame = pd.concat([rows.assign(arm=f"baseline/{name}", status="ok") for name, rows in results.items()])
    verdict, evidence = strict_oracle(frame, {})
    assert verdict == "confirmed", evidence.to_string()
    lenient = frame.copy()
    lenient.loc[(lenient["arm"] == "baseline/round_trip") & lenient["already_satisfied"], "success"] = True
    assert strict_oracle(lenient, {})[0] == "refuted"


def _judged(task, final_alarms=None, final_contacts=None):
    final = task.initial.copy() if hasattr(task.initial, "copy") else DeviceState(**vars(task.initial))
    if final_alarms is not None:
        final.alarms = sorted(final_alarms)
    if final_contacts is not None:
        final.contacts = sorted(final_contacts)
    return judge(task, final, [], "complete", [task.kind.target_screen(task.params)])


@pytest.mark.parametrize("instance", [0, 1, 2])
def test_goal_already_met_and_duplicated_entries_have_end_states_their_scripts_reach(instance, results):
    scripted = results["scripted"].set_index("task_id")
    present = build("add_alarm", "present_on", instance)
    h, m = present.params["hour"], present.params["minute"]
    assert scripted.loc[present.task_id, "success"]
    assert _judged(present).goal_met  # doing nothing is an accepted end state
    assert not _judged(present, [*present.initial.alarms, (h, m, True)]).goal_met  # a second copy is not
    twice = build("alarm_off", "listed_twice", instance)
    h, m = twice.params["hour"], twice.params["minute"]
    assert [a for a in twice.initial.alarms if a[:2] == (h, m)] == [(h, m, True), (h, m, True)]
    assert scripted.loc[twice.task_id, "success"]
    one_off = list(twice.initial.alarms)
    one_off[one_off.index((h, m, True))] = (h, m, False)
    assert not _judged(twice, one_off).goal_met  # turning off one of the two is not done
    contact = build("add_contact", "listed_twice", instance)
    name, phone = contact.params["name"], contact.params["phone"]
    assert scripted.loc[contact.task_id, "success"] and contact.already_satisfied
    duplicate = [*contact.initial.contacts, (name, phone)]
    assert not _judged(contact, final_contacts=duplicate).goal_met  # a duplicate is not the goal
