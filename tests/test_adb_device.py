"""The real-device path: runs only where `adb devices` lists a phone."""

import pytest

from edgebench.agent.adb_device import AdbDevice, attached_serials
from edgebench.agent.state import DeviceState
from edgebench.agent.uixml import parse_hierarchy

pytestmark = [
    pytest.mark.device,
    pytest.mark.skipif(not attached_serials(), reason="no Android device attached (adb devices is empty)"),
]


def test_real_screen_parses_and_state_reads():
    device = AdbDevice()
    device.reset(DeviceState(wifi_on=True, bluetooth_on=False), seed=0)
    assert parse_hierarchy(device.observe())
    state = device.snapshot()
    assert state.wifi_on and not state.bluetooth_on
