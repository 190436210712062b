"""The simulated phone, one module per app (as AndroidWorld keeps one task module per app)."""

from edgebench.agent.simulator.device import SimulatedDevice
from edgebench.agent.simulator.widgets import APPS, app_of

__all__ = ["APPS", "SimulatedDevice", "app_of"]
