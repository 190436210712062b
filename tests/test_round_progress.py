"""The warm session's log: each round's line says how long the rounds left will take at the pace so
far, and an arm the CPU rule refused is logged with the rule's sentence, not the log tail's start."""

import math

import pytest

from edgebench.bench.round_progress import RoundClock, minutes_left
from edgebench.bench.session import load_failure_line
from edgebench.isa import UnsupportedArm, require_kernel


class FakeClock:
    """A clock the test advances: the line's figures then follow from the test's own numbers."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_each_round_line_projects_the_rounds_left_at_the_mean_pace():
    clock = FakeClock()
    rounds = RoundClock(range(0, 10), now=clock)
    clock.t += 240.0
    first = rounds.line(0, [{"arm": "a", "core": 0, "decode_tok_s": 8.5}, {"arm": "b", "core": 1}])
    assert first == "round 1/10 in 240.0 s (about 36 min left): a@0 8.50, b@1 nan"
    clock.t += 120.0  # a faster round pulls the mean pace (180 s) down
    second = rounds.line(1, [{"arm": "a", "decode_tok_s": 9.0}])  # a sequential row: no core
    assert second == f"round 2/10 in 120.0 s (about {math.ceil(8 * 180 / 60)} min left): a 9.00"


def test_the_last_round_of_an_epoch_says_nothing_is_left():
    clock = FakeClock()
    rounds = RoundClock(range(4, 6), now=clock)  # the second epoch of a session with restarts
    clock.t += 30.0
    assert rounds.line(4, []).startswith("round 5/6 in 30.0 s (under a minute left)")
    clock.t += 30.0
    assert rounds.line(5, []) == "round 6/6 in 30.0 s: "


@pytest.mark.parametrize(
    ("elapsed", "done", "left", "expected"),
    [
        (0.0, 0, 5, ""),
        (600.0, 2, 0, ""),
        (59.0, 1, 1, "under a minute left"),
        (61.0, 1, 1, "about 2 min left"),
    ],
)
def test_minutes_left_rounds_up_and_is_empty_when_nothing_is_known_or_left(elapsed, done, left, expected):
    assert minutes_left(elapsed, done, left) == expected


def test_a_refused_arm_is_logged_with_the_cpu_rules_sentence():
    flags = {"avx2"}  # a CPU without avx512f: vLLM's int4 GEMM is refused on it
    with pytest.raises(UnsupportedArm) as refused:
        require_kernel("cpu_gemm_wna16", flags)
    tail = (
        "arm process exited with 1; log tail:\nTriton is installed, but doesn't include CPU backend.\n"
        f"Traceback (most recent call last):\n  File ...\nedgebench.isa.UnsupportedArm: {refused.value}\n"
    )
    line = load_failure_line("vllm/w4a16", tail)
    assert line == f"vllm/w4a16 is refused: {refused.value}"
    assert "avx512f" in line and "Triton" not in line
    other = load_failure_line("vllm/bf16", "arm process exited with -9; log tail:\nKilled")
    assert other.startswith("vllm/bf16 failed to load: arm process exited with -9")
