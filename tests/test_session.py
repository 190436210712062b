"""The warm-session coordinator on tiny transformers engines: recorded shuffled order, a row per
sample, a killed arm process turning into failed rows while the rounds go on."""

import contextlib
import itertools
import json
import math
import multiprocessing
import os
import time

import pytest

from edgebench.bench.session import SessionSettings, round_order, run_session

from .conftest import TINY_MODEL, hf_spec, require_idle, skip_if_disturbed, usable_cores

BENCH = {"prefill_tokens": 32, "decode_tokens": 16, "max_model_len": 128}


def spec(model_dir, **extra):
    return hf_spec(model_dir, BENCH, **extra)


def settings(rounds):
    return SessionSettings(
        rounds=rounds, seed=7, cores=usable_cores()[:2], timeout_s=120, contention_limit=1.0
    )


def test_round_orders_are_seeded_shuffles():
    arms = ["a", "b", "c", "d"]
    orders = [round_order(arms, 7, r) for r in range(6)]
    assert all(sorted(o) == arms for o in orders) and len(set(map(tuple, orders))) > 1
    assert orders == [round_order(arms, 7, r) for r in range(6)]  # reproducible from (seed, round)


def recorded_loads(monkeypatch) -> list[tuple[str, str]]:
    """The session's engine starts and readies, in the order they happen."""
    from edgebench.bench import session

    events = []
    start, wait_ready = session.ArmProcess.start, session.ArmProcess.wait_ready

    def recorded_start(name, *args):
        events.append(("start", name))
        return start(name, *args)

    def recorded_wait_ready(self, timeout_s):
        wait_ready(self, timeout_s)
        events.append(("ready", self.name))

    monkeypatch.setattr(session.ArmProcess, "start", staticmethod(recorded_start))
    monkeypatch.setattr(session.ArmProcess, "wait_ready", recorded_wait_ready)
    return events


def test_engines_load_side_by_side_and_every_sample_is_a_row_in_the_recorded_order(
    tiny_model, tmp_path, monkeypatch
):
    """Loading is not measured, and a load is mostly one-thread imports: the next engine starts
    before the last one is ready, as many at once as there are cores. Then every sample is a row."""
    loads = recorded_loads(monkeypatch)
    specs = {name: spec(tiny_model) for name in ("hf/a", "hf/b", "hf/c")}
    three_rounds = settings(3)
    rows = run_session(specs, three_rounds, tmp_path, progress=lambda message: None)
    names, width = list(specs), len(three_rounds.cores)
    batches = [names[first : first + width] for first in range(0, len(names), width)]
    assert loads == [
        event
        for batch in batches
        for event in [*(("start", n) for n in batch), *(("ready", n) for n in batch)]
    ]
    assert width == 1 or loads[1] == ("start", "hf/b")  # the second engine starts before the first is ready
    assert len(rows) == 9
    for r in range(3):
        in_round = sorted((row for row in rows if row["round"] == r), key=lambda row: row["order_position"])
        order = json.loads(in_round[0]["round_order"])
        assert [row["arm"] for row in in_round] == order == round_order(list(specs), 7, r)
    for row in rows:
        assert row["status"] == "ok", row["error"]
        assert row["decode_tok_s"] > 0 and row["prefill_tok_s"] > 0 and row["cpu_s"] >= 0
        assert row["idle_engines_cpu_s"] >= 0 and row["runqueue_wait_s"] >= 0 and 0 <= row["stolen_frac"] <= 1


def test_a_killed_arm_becomes_failed_rows_and_the_rounds_go_on(tiny_model, tmp_path):
    specs = {
        "hf/healthy": spec(tiny_model),
        "hf/dies": spec(tiny_model, fault={"kind": "crash", "sample": 1}),
    }
    rows = run_session(specs, settings(3), tmp_path, progress=lambda message: None)
    by = {(row["arm"], row["round"]): row for row in rows}
    assert len(rows) == 6
    assert all(by[("hf/healthy", r)]["status"] == "ok" for r in range(3))
    assert by[("hf/dies", 0)]["status"] == "ok"
    for r in (1, 2):
        assert by[("hf/dies", r)]["status"] == "failed" and "exited" in by[("hf/dies", r)]["error"]


def test_duets_sample_two_arms_at_once_on_separate_cores(tiny_model, tmp_path, two_cores):
    specs = {name: spec(tiny_model) for name in ("hf/a", "hf/b", "hf/c")}
    pairs = [("hf/a", "hf/b"), ("hf/a", "hf/c")]
    settings = SessionSettings(
        rounds=2, seed=3, cores=two_cores, timeout_s=120, contention_limit=1.0, design="duet", pairs=pairs
    )
    rows = run_session(specs, settings, tmp_path, progress=lambda message: None)
    assert len(rows) == 2 * 2 * 2
    for _, group in itertools.groupby(
        sorted(rows, key=lambda row: (row["round"], row["slot"])), key=lambda row: (row["round"], row["slot"])
    ):
        first, second = list(group)
        assert first["partner"] == second["arm"] and second["partner"] == first["arm"]
        assert {first["core"], second["core"]} == set(two_cores) and first["pair_wall_s"] == second[
            "pair_wall_s"
        ]
        assert max(first["wall_s"], second["wall_s"]) <= first["pair_wall_s"]
        assert first["status"] == second["status"] == "ok", first["error"]
        assert first["decode_tok_s"] > 0 and second["decode_tok_s"] > 0
    assert {(row["arm"], row["partner"]) for row in rows if row["arm"] == "hf/a"} == {
        ("hf/a", "hf/b"),
        ("hf/a", "hf/c"),
    }


def _busy_loop(cores, seconds, ready, low_priority=False):
    if low_priority:
        os.nice(19)
    os.sched_setaffinity(0, cores)
    ready.set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _hogs(cores_each, seconds=240.0, low_priority=True):
    """Busy loops pinned to the given cores, running (niced, when asked) before this returns: a
    loop still starting up would run at normal priority beside the first samples."""
    context = multiprocessing.get_context("spawn")
    ready = [context.Event() for _ in cores_each]
    hogs = [
        context.Process(target=_busy_loop, args=(cores, seconds, flag, low_priority), daemon=True)
        for cores, flag in zip(cores_each, ready, strict=True)
    ]
    for hog in hogs:
        hog.start()
    for flag in ready:
        assert flag.wait(120), "a busy loop did not start"
    return hogs


@contextlib.contextmanager
def hogging(cores_each, low_priority=True):
    """Busy loops on the given cores while the block runs."""
    hogs = _hogs(cores_each, low_priority=low_priority)
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()


# Four layers instead of the tiny model's one: each decode step costs milliseconds of arithmetic
# rather than a fraction of one, so the faster arm's sample stays above a second on a fast CPU too.
DUET_MODEL = {
    **TINY_MODEL,
    "hidden_size": 256,
    "intermediate_size": 512,
    "layers": 4,
    "heads": 4,
    "kv_heads": 4,
}


@pytest.fixture(scope="module")
def duet_model(tmp_path_factory):
    from edgebench.models.reference import build_reference

    out = tmp_path_factory.mktemp("models") / "duet"
    build_reference(DUET_MODEL, out)
    return out


FAST_S = 1.5  # the faster arm's decode alone: 150 clock ticks, three times the 0.5 s the tests need


@pytest.fixture(scope="module")
def duet_tokens(duet_model) -> tuple[int, int]:
    """Decode lengths from this CPU's measured step time: the faster arm decodes for about
    FAST_S seconds, the slower one 2.5 times as many tokens (capped where the context ends)."""
    import torch

    from edgebench.engines.hf_engine import HfEngine

    threads = torch.get_num_threads()  # the engine sets this process's; later tests keep theirs
    engine = HfEngine()
    engine.load(str(duet_model), {"threads": 1}, 2048)
    prompt = list(range(1, 17))
    engine.generate(prompt, 8)  # warm-up
    stamps = engine.generate_stamped(prompt, 65)
    engine.close()
    torch.set_num_threads(threads)
    step_s = (stamps[-1] - stamps[0]) / 64
    fast = min(600, max(64, math.ceil(FAST_S / step_s)))
    return fast, min(1600, math.ceil(2.5 * fast))


DUET_LIMIT = 0.25


def _duet(model_dir, tmp_path, rounds, cores, tokens):
    # samples long enough that one 10 ms clock tick of foreign time is a small share of them (the
    # faster arm's second and more is 100 ticks); the limit sits between what the old guard charged
    # the faster arm (most of its partner's extra time) and what an arm's own interval holds under a
    # low-priority loop (a few percent)
    long = {**BENCH, "max_model_len": 2048}
    fast, slow = tokens
    specs = {
        "hf/fast": hf_spec(model_dir, {**long, "decode_tokens": fast}),
        "hf/slow": hf_spec(model_dir, {**long, "prefill_tokens": 128, "decode_tokens": slow}),
    }
    settings = SessionSettings(
        rounds=rounds,
        seed=3,
        cores=cores,
        timeout_s=120,
        contention_limit=DUET_LIMIT,
        design="duet",
        pairs=[("hf/fast", "hf/slow")],
    )
    return run_session(specs, settings, tmp_path, progress=lambda message: None)


def test_an_idle_core_after_its_arm_finished_first_never_flags_that_arm(
    duet_model, duet_tokens, tmp_path, two_cores
):
    """A low-priority busy loop on every core takes what an arm leaves idle; the arm that finishes
    first must not be charged for the time its partner still runs."""
    require_idle(two_cores)  # another process's ordinary-priority load would rightly flag the arm
    with hogging([[core] for core in two_cores]):
        rows = _duet(duet_model, tmp_path, rounds=2, cores=two_cores, tokens=duet_tokens)
    skip_if_disturbed(rows, two_cores, DUET_LIMIT, wall="wall_s")
    fast = [r for r in rows if r["arm"] == "hf/fast"]
    slow = [r for r in rows if r["arm"] == "hf/slow"]
    assert all(f["wall_s"] < s["wall_s"] for f, s in zip(fast, slow, strict=True))  # fast finishes first
    assert min(f["wall_s"] for f in fast) > 0.5, rows  # long enough to resolve the limit
    assert [r["status"] for r in fast] == [r["status"] for r in slow] == ["ok", "ok"], rows


def test_a_busy_loop_on_one_core_flags_only_the_arm_on_that_core(
    duet_model, duet_tokens, tmp_path, two_cores
):
    loaded, other = two_cores
    require_idle([other])  # the arm on the other core is the control: nothing else may load it
    with hogging([[loaded]], low_priority=False):
        rows = _duet(duet_model, tmp_path, rounds=2, cores=two_cores, tokens=duet_tokens)
    on_loaded = [r for r in rows if r["core"] == loaded]
    on_other = [r for r in rows if r["core"] == other]
    skip_if_disturbed(on_other, [other], DUET_LIMIT, wall="wall_s")
    assert all(r["status"] == "contended" for r in on_loaded), rows
    # the guard charges the loop to the arm it ran beside, not to its partner on the other core
    assert min(r["stolen_frac"] for r in on_loaded) > max(r["stolen_frac"] for r in on_other), rows
    assert all(r["status"] == "ok" for r in on_other), rows


def test_a_duet_times_each_arm_over_the_window_both_arms_ran():
    """The slower arm's lone tail (its partner done, anything could land on it) is not counted: a
    slowdown there moves its whole-run rate, never its window rate."""
    import numpy as np

    from edgebench.bench.session import common_window, window_rate

    fast = list(np.arange(128) * 0.01)  # 100 tok/s from t = 0
    steady = list(0.05 + np.arange(128) * 0.02)  # 50 tok/s from t = 0.05
    tail_slow = [s if s <= fast[-1] else fast[-1] + (s - fast[-1]) * 5 for s in steady]
    for slow in (steady, tail_slow):
        samples = {
            "a": {"decode_tok_s": 127 / (fast[-1] - fast[0]), "decode_stamps": fast},
            "b": {"decode_tok_s": 127 / (slow[-1] - slow[0]), "decode_stamps": slow},
        }
        rates = common_window(samples)
        assert rates["a"]["decode_tok_s"] == pytest.approx(100, rel=1e-6)
        assert rates["b"]["decode_tok_s"] == pytest.approx(50, rel=1e-6)
        assert rates["a"]["window_s"] == pytest.approx(fast[-1] - 0.05)
    assert rates["b"]["decode_tok_s_own"] < 20  # the slowed tail shows only in the whole-run rate
    assert math.isnan(window_rate([[0.0, 1.0]], 2.0, 3.0)[0])
    lone = common_window({"a": {"decode_tok_s": 9.0, "decode_stamps": fast}})
    assert lone == {"a": {"decode_tok_s_own": 9.0}}  # one arm: its own rate stands


def test_a_held_fast_arm_is_timed_over_the_slow_arms_whole_decode():
    """Arms of very different speeds: the fast one finishes its counted decode before the slow one
    has started (no common window at all), then decodes on, uncounted, until released; both are
    timed over the slow arm's decode, and no interval spans the gap between two repeats."""
    import numpy as np

    from edgebench.bench.session import common_window

    fast = list(np.arange(64) * 0.01)  # done at 0.63 s
    slow = list(3.0 + np.arange(64) * 0.1)  # 10 tok/s from 3.0 s to 9.3 s
    repeats = [list(0.7 + r * 0.7 + np.arange(64) * 0.01) for r in range(13)]  # 0.07 s gaps
    unheld = common_window({"a": {"decode_tok_s": 100.0, "decode_stamps": fast},
                            "b": {"decode_tok_s": 10.0, "decode_stamps": slow}})  # fmt: skip
    assert math.isnan(unheld["a"]["decode_tok_s"]) and unheld["a"]["window_s"] == 0
    held = common_window(
        {
            "a": {"decode_tok_s": 100.0, "decode_stamps": fast, "hold_stamps": repeats},
            "b": {"decode_tok_s": 10.0, "decode_stamps": slow, "hold_stamps": [[9.35]]},
        }
    )
    assert held["a"]["window_s"] == pytest.approx(slow[-1] - slow[0])
    assert held["a"]["decode_tok_s"] == pytest.approx(100, rel=1e-6)  # the gaps are not counted
    assert held["b"]["decode_tok_s"] == pytest.approx(10, rel=1e-6) and held["b"]["window_tokens"] == 64


def test_a_single_thread_engine_starts_with_one_openmp_thread_whatever_the_job_says(monkeypatch):
    """Snakemake gives a two-core job OMP_NUM_THREADS=2; OpenMP reads it once, at load, so a paired
    engine must start with its own count or it runs two threads on its one core."""
    import subprocess
    import sys

    from edgebench.bench.session import single_thread
    from edgebench.engines.base import THREAD_COUNT_VARIABLES, spawn_env

    from .conftest import hf_spec

    for name in THREAD_COUNT_VARIABLES:
        monkeypatch.setenv(name, "2")
    spec = single_thread(hf_spec("unused", {}))
    count = "import torch; print(torch.get_num_threads())"
    started = subprocess.run(
        [sys.executable, "-c", count],
        env=spawn_env(spec.options),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert started.stdout.strip() == "1"
    assert all(spawn_env(spec.options)[name] == "1" for name in THREAD_COUNT_VARIABLES)
    assert spawn_env({"threads": 2})["OMP_NUM_THREADS"] == "2"  # bound or engine-set counts: the job's


def test_restart_rounds_give_each_process_epoch_engines_of_its_own(tiny_model, tmp_path, two_cores):
    """A process's own speed offset is resampled only by new processes: with restart_rounds, each
    epoch loads its engines afresh, rounds keep their session-wide indices and rows name the epoch."""
    specs = {name: spec(tiny_model) for name in ("hf/a", "hf/b")}
    messages = []
    session = SessionSettings(
        rounds=3, seed=7, cores=two_cores, timeout_s=120, contention_limit=1.0, restart_rounds=2
    )
    rows = run_session(specs, session, tmp_path, progress=messages.append)
    # the last epoch is short: it has the one round left over
    assert sorted((row["round"], row["epoch"]) for row in rows if row["arm"] == "hf/a") == [
        (0, 0), (1, 0), (2, 1)
    ]  # fmt: skip
    assert all(row["status"] == "ok" for row in rows), [row["error"] for row in rows]
    pids = [m.rsplit("pid ", 1)[1].rstrip(")") for m in messages if m.startswith("loaded hf/a")]
    assert len(pids) == len(set(pids)) == 2  # two epochs, two processes of the arm
    orders = {row["round"]: json.loads(row["round_order"]) for row in rows}
    assert orders == {r: round_order(list(specs), 7, r) for r in range(3)}  # as without restarts
