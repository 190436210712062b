"""Rotated arm order: no arm always runs first or last."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """One rep in the schedule: which arm, which round, where in the round, where overall."""

    arm: str
    round: int
    order_position: int
    sequence: int


def round_order(arms: list[str], round_index: int) -> list[str]:
    """Round r starts at arm r mod k; odd rounds run the rotated order reversed."""
    if not arms:
        raise ValueError("a schedule needs at least one arm")
    k = len(arms)
    start = round_index % k
    rotated = arms[start:] + arms[:start]
    return rotated[::-1] if round_index % 2 else rotated


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


def previous_slot(arms: list[str], rounds: int, arm: str, rep: int) -> Slot | None:
    """The slot that must finish before (arm, rep) starts; None for the first slot."""
    return find_slot(arms, rounds, arm, rep)[1]
