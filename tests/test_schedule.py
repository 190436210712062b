from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edgebench.schedule import previous_slot, round_order, schedule

ARMS = ["a", "b", "c"]


def test_round_zero_keeps_config_order_and_round_one_is_rotated_and_reversed():
    assert round_order(ARMS, 0) == ["a", "b", "c"]
    assert round_order(ARMS, 1) == ["a", "c", "b"]  # start at b -> [b, c, a], reversed
    assert round_order(ARMS, 2) == ["c", "a", "b"]


@given(st.integers(min_value=1, max_value=6), st.integers(min_value=1, max_value=12))
def test_every_round_runs_every_arm_once(k, rounds):
    arms = [f"arm{i}" for i in range(k)]
    slots = schedule(arms, rounds)
    assert len(slots) == k * rounds
    for r in range(rounds):
        in_round = [s for s in slots if s.round == r]
        assert sorted(s.arm for s in in_round) == sorted(arms)
        assert [s.order_position for s in in_round] == list(range(k))
    assert [s.sequence for s in slots] == list(range(k * rounds))


def test_no_arm_always_first_or_last():
    slots = schedule(ARMS, 6)
    firsts = Counter(s.arm for s in slots if s.order_position == 0)
    lasts = Counter(s.arm for s in slots if s.order_position == len(ARMS) - 1)
    assert len(firsts) > 1 and len(lasts) > 1


def test_previous_slot_chains_the_schedule():
    slots = schedule(ARMS, 2)
    assert previous_slot(ARMS, 2, slots[0].arm, slots[0].round) is None
    for before, after in zip(slots, slots[1:], strict=False):
        assert previous_slot(ARMS, 2, after.arm, after.round) == before


def test_duplicate_arms_and_unknown_slots_are_errors():
    with pytest.raises(ValueError, match="repeat"):
        schedule(["a", "a"], 1)
    with pytest.raises(KeyError, match="rep 5"):
        previous_slot(ARMS, 2, "a", 5)
