"""The one interface both the simulated phone and a real phone over adb implement."""

from __future__ import annotations

from typing import Protocol

from edgebench.agent.state import Change, DeviceState


class Device(Protocol):
    step: int  # actions taken (invalid ones count too)
    changes: list[Change]  # every state change, as (step, key, old, new)
    visited: list[str]  # every screen (simulator) or foreground package (real phone) seen

    def reset(self, initial_state: DeviceState, seed: int) -> None: ...

    def observe(self) -> str:
        """The current screen as uiautomator XML."""
        ...

    def act(self, action: dict) -> None:
        """Apply one well-formed action; ValueError when it cannot apply on this screen."""
        ...

    def snapshot(self) -> DeviceState: ...
