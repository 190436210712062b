"""Contention guard: capacity on the rep's cores that the rep did not use."""

from __future__ import annotations

from edgebench.procfs import CLOCK_TICKS, CpuTimes


def stolen_fraction(
    before: dict[int, CpuTimes],
    after: dict[int, CpuTimes],
    cores: list[int],
    own_ticks: int,
    wall_s: float,
    ticks_per_s: int = CLOCK_TICKS,
) -> float:
    """(busy ticks on `cores` not spent by the rep's own processes + hypervisor steal) / capacity.

    Own ticks may run on other cores too, so the foreign busy time is floored at zero.
    """
    if wall_s <= 0 or not cores:
        raise ValueError(f"need a positive wall time and at least one core, got {wall_s}, {cores}")
    busy = sum(after[c].busy - before[c].busy for c in cores)
    steal = steal_ticks(before, after, cores)
    foreign = max(busy - own_ticks, 0)
    capacity = wall_s * ticks_per_s * len(cores)
    return min((foreign + steal) / capacity, 1.0)


def steal_ticks(before: dict[int, CpuTimes], after: dict[int, CpuTimes], cores: list[int]) -> int:
    """Clock ticks the hypervisor took from `cores` between two /proc/stat readings."""
    return sum(after[c].steal - before[c].steal for c in cores)
