"""The real-device path. A fake adb transport backed by the simulator runs it here; the last test
needs a real phone and runs only where `adb devices` lists one."""

import pandas as pd
import pytest

from edgebench.agent.adb_device import AdbDevice, AdbError, attached_serials, phone_contacts, wifi_setting
from edgebench.agent.episode import Episode, apply, result_row, run_lockstep, single, step_budget
from edgebench.agent.policies import BASELINES
from edgebench.agent.state import DeviceState
from edgebench.agent.tasks import build, suite
from edgebench.agent.uixml import parse_hierarchy
from tests.fake_adb import FakeAdb


def adb_device(task) -> AdbDevice:
    device = AdbDevice(transport=FakeAdb(task.initial, task.seed))
    device.reset(task.initial, task.seed)
    return device


def test_baselines_are_exact_over_adb_too():
    rows = []
    for name in ("scripted", "do_nothing", "round_trip", "all_alarms_off", "alarm_and_toggle_another"):
        policy = BASELINES[name]
        for task in suite(instances=2):
            if policy.applies_to is None or task.template in policy.applies_to:
                episode = Episode(task, 0, step_budget(task), adb_device(task))
                run_lockstep([episode], single(policy(task)))
                rows.append(result_row(episode, name))
    frame = pd.DataFrame(rows)
    by = {name: part for name, part in frame.groupby("policy")}
    assert by["scripted"]["success"].all()
    assert (by["do_nothing"]["success"] == by["do_nothing"]["already_satisfied"]).all()
    assert not by["all_alarms_off"]["success"].any() and not by["alarm_and_toggle_another"]["success"].any()


def test_android_settings_and_providers_are_read_as_android_writes_them():
    assert [wifi_setting(v) for v in ("0", "1", "2\n", "3", "null", "")] == [0, 1, 2, 0, 0, 0]
    rows = (
        "Row: 0 display_name=Ada Park, data1=555-0100\nRow: 1 display_name=Elena\u202fRossi, data1=555-9999"
    )
    assert phone_contacts(rows) == [("Ada Park", "555-0100"), ("Elena Rossi", "555-9999")]
    assert phone_contacts("No result found.") == []


def test_contacts_with_numbers_and_wifi_in_airplane_mode_read_back():
    task = build("add_contact", "name_taken", 0)
    state = DeviceState(
        wifi_on=2, airplane_mode_on=True, contacts=task.initial.contacts, alarms=task.initial.alarms
    )
    device = AdbDevice(transport=FakeAdb(state, 0))
    device.reset(state, 0)
    snapshot = device.snapshot()
    assert snapshot.wifi_on == 2 and snapshot.wifi_enabled and snapshot.airplane_mode_on
    assert snapshot.contacts == sorted(task.initial.contacts) and all(phone for _, phone in snapshot.contacts)


def test_a_bad_index_is_an_invalid_action_not_an_error():
    task = build("wifi_on", "needs_change", 0)
    episode = Episode(task, 0, 10, adb_device(task))
    for index in (99, -1, True, "2"):
        apply(episode, {"action": "click", "index": index})
    assert episode.invalid == 4 and episode.active


def test_reset_refuses_a_phone_whose_alarms_differ_and_says_how():
    task = build("alarm_off", "needs_change", 0)
    phone = task.initial.copy()
    phone.alarms = phone.alarms[1:]
    device = AdbDevice(transport=FakeAdb(phone, 0))
    with pytest.raises(AdbError, match="alarms .* are not the task's"):
        device.reset(task.initial, task.seed)


@pytest.mark.device
@pytest.mark.skipif(not attached_serials(), reason="no Android device attached (adb devices is empty)")
def test_real_screen_parses_and_state_reads():
    device = AdbDevice()
    before = device.snapshot()
    assert parse_hierarchy(device.observe())
    assert before.wifi_on in (0, 1, 2) and all(phone for _, phone in before.contacts)


def test_a_contact_without_a_number_is_read_as_a_phone_lists_it():
    from edgebench.agent.adb_device import phone_contacts

    phones = "Row: 0 display_name=Mia, data1=555-0100\nRow: 1 display_name=Ana, data1=555-0101"
    listing = (
        "Row: 0 display_name=Mia\nRow: 1 display_name=Ana\nRow: 2 display_name=Mia\nRow: 3 display_name=Lu"
    )
    # Lu has no number (no phone row at all); the second Mia has none either
    assert phone_contacts(phones, listing) == [
        ("Ana", "555-0101"),
        ("Lu", ""),
        ("Mia", ""),
        ("Mia", "555-0100"),
    ]
    assert phone_contacts("No result found.", "No result found.") == []
