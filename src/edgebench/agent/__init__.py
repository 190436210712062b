"""The phone-agent suite: one Device interface (simulated or adb), tasks judged by device state."""
