from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edgebench.schedule import find_slot, round_order, schedule, williams_row

ARMS = ["a", "b", "c"]


def test_round_zero_keeps_config_order_and_round_one_moves_every_arm():
    assert round_order(["a", "b", "c", "d"], 0) == ["a", "b", "d", "c"]
    assert round_order(["a", "b", "c", "d"], 1) == ["b", "c", "a", "d"]


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


@pytest.mark.parametrize("k", range(2, 9))
@pytest.mark.parametrize("rounds", range(2, 7))
def test_with_two_rounds_or_more_every_arm_takes_more_than_one_position(k, rounds):
    arms = [f"arm{i}" for i in range(k)]
    positions = Counter()
    for slot in schedule(arms, rounds):
        positions[(slot.arm, slot.order_position)] += 1
    for arm in arms:
        assert len({p for a, p in positions if a == arm}) > 1, arm


@pytest.mark.parametrize("k", range(2, 9))
def test_a_full_cycle_balances_positions_and_carry_over(k):
    cycle = k if k % 2 == 0 else 2 * k
    rows = [williams_row(k, r) for r in range(cycle)]
    at_position = Counter((t, p) for row in rows for p, t in enumerate(row))
    assert set(at_position.values()) == {cycle // k}  # each arm at each position equally often
    follows = Counter((row[i], row[i + 1]) for row in rows for i in range(k - 1))
    assert len(follows) == k * (k - 1) and set(follows.values()) == {cycle // k}


def test_no_arm_always_first_or_last():
    slots = schedule(ARMS, 6)
    firsts = Counter(s.arm for s in slots if s.order_position == 0)
    lasts = Counter(s.arm for s in slots if s.order_position == len(ARMS) - 1)
    assert len(firsts) == len(ARMS) and len(lasts) == len(ARMS)


def test_find_slot_chains_the_schedule():
    slots = schedule(ARMS, 2)
    assert find_slot(ARMS, 2, slots[0].arm, slots[0].round)[1] is None
    for before, after in zip(slots, slots[1:], strict=False):
        assert find_slot(ARMS, 2, after.arm, after.round)[1] == before


def test_duplicate_arms_and_unknown_slots_are_errors():
    with pytest.raises(ValueError, match="repeat"):
        schedule(["a", "a"], 1)
    with pytest.raises(KeyError, match="rep 5"):
        find_slot(ARMS, 2, "a", 5)
