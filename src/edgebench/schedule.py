"""Cold-rep arm order from a Williams design: every arm at every position over a full cycle, and
each arm preceded by every other arm equally often, so neither position nor carry-over favours one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """One rep in the schedule: which arm, which round, where in the round, where overall."""

    arm: str
    round: int
    order_position: int
    sequence: int


def williams_row(k: int, row: int) -> list[int]:
    """Row `row` of a Williams design for k treatments. Even k: a k x k Latin square balanced for
    first-order carry-over; odd k needs the square and its mirror image (2k rows)."""
    first, low, high = [0], 1, k - 1
    while len(first) < k:
        first.append(low)
        low += 1
        if len(first) < k:
            first.append(high)
            high -= 1
    cycle = k if k % 2 == 0 else 2 * k
    r = row % cycle
    shifted = [(t + r) % k for t in first]
    return shifted[::-1] if r >= k else shifted


def round_order(arms: list[str], round_index: int) -> list[str]:
    """Round r runs the arms in Williams row r: from the second round on, each arm has moved."""
    if not arms:
        raise ValueError("a schedule needs at least one arm")
    return [arms[i] for i in williams_row(len(arms), round_index)]


def schedule(arms: list[str], rounds: int) -> list[Slot]:
    """All reps in execution order; rep number of an arm equals its round."""
    if len(set(arms)) != len(arms):
        raise ValueError(f"arm names repeat: {arms}")
    slots = []
    for r in range(rounds):
        for position, arm in enumerate(round_order(arms, r)):
            slots.append(Slot(arm=arm, round=r, order_position=position, sequence=len(slots)))
    return slots


def find_slot(arms: list[str], rounds: int, arm: str, rep: int) -> tuple[Slot, Slot | None]:
    """The slot of (arm, rep) and the one that must finish before it starts (None for the first)."""
    slots = schedule(arms, rounds)
    for slot in slots:
        if slot.arm == arm and slot.round == rep:
            return slot, (slots[slot.sequence - 1] if slot.sequence else None)
    raise KeyError(f"arm {arm!r} rep {rep} is not in the schedule of {rounds} rounds over {arms}")
