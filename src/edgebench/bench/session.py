"""Warm throughput session: resident engines sampled in randomized rounds.

Every arm's engine is loaded once, in its own long-lived process (`edgebench.bench.resident`). Three
designs:

- `duet` (the default, chosen by the pilot): each round runs every configured pair of arms as a
  duet, in a freshly shuffled order, both arms sampling at the same time, one per core, each engine
  single-threaded and pinned (which arm gets which core is drawn per duet). Both arms of a duet see
  the same disturbances, so their ratio is far steadier than two samples taken one after the other.
- `interleaved` (`edgebench.bench.interleave`): both arms of a pair on one core, taking turns a
  few decode tokens at a time, so no core offset enters the pair; the other core runs another pair.
- `sequential`: each round samples every arm once, one at a time, in a shuffled order.

Each sample follows an uncounted warm-up generation, and the next one waits until the engines that
just ran are idle again (vLLM's shared-memory readers spin for about a second after a request).
Every sample becomes a row with the parent's view of it: wall time, CPU time and run-queue wait of
the arm's process tree, steal, the CPU the idle engines used meanwhile, and the contention guard's
verdict. A dead or stuck arm turns into failed rows while the rounds go on.
"""

from __future__ import annotations

import math
import select
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from edgebench.bench.arm_process import (  # noqa: F401  (ArmProcess, ArmFailed: the session's API)
    ArmFailed,
    ArmProcess,
    RefusedArm,
    failure_reason,
    round_order,
    sample_identity,
    stop_all,
    wait_until_idle,
)
from edgebench.bench.contract import EngineSpec
from edgebench.bench.guard import steal_ticks, stolen_fraction
from edgebench.bench.interleave import run_interleaved_rounds
from edgebench.bench.round_progress import RoundClock
from edgebench.engines.registry import engine_info
from edgebench.isa import refusal_in
from edgebench.procfs import (
    CLOCK_TICKS,
    pinning_error,
    read_proc_stat,
    set_tree_affinity,
    tree_cpu_ticks,
    tree_runqueue_wait_ns,
)


@dataclass
class SessionSettings:
    rounds: int
    seed: int
    cores: list[int]
    timeout_s: float
    contention_limit: float
    design: str = "sequential"  # or "duet", "interleaved"
    pairs: list[tuple[str, str]] = field(default_factory=list)  # the duets of every round
    burst_tokens: int = 4  # the interleaved design's turn length
    # Fresh engine processes every this many rounds (0: the same processes all session): a process
    # has a fixed speed offset of its own, which only new processes resample.
    restart_rounds: int = 0
    first_round: int = 0  # the index of this run's first round within the session

    @property
    def round_indices(self) -> range:
        return range(self.first_round, self.first_round + self.rounds)

    @property
    def paired(self) -> bool:
        """Single-thread engines in pairs, one engine per core at load."""
        return self.design in ("duet", "interleaved")


def single_thread(spec: EngineSpec) -> EngineSpec:
    """A duet engine: one OpenMP thread, no binding of its own (the coordinator pins it), and the
    engine's own duet options (edgebench.engines.registry)."""
    options = {"threads_bind": "nobind", "threads": 1, **engine_info(spec.engine).duet_options}
    return spec.with_options(**options)


def run_session(
    specs: dict[str, EngineSpec],
    settings: SessionSettings,
    workdir: Path,
    progress=print,
    refused: dict[str, str] | None = None,
) -> list[dict]:
    """Load every arm, run the rounds, stop every arm; one row per sample. With `restart_rounds`,
    each run of that many rounds (a process epoch, in the rows' `epoch`) has engines of its own.
    `refused`: arms the CPU rule refused (name -> failure text), which never start; their rows are
    failed with that text."""
    refused = refused or {}
    if 0 < settings.restart_rounds < settings.rounds:
        rows = []
        for epoch, start in enumerate(range(0, settings.rounds, settings.restart_rounds)):
            rounds = min(settings.restart_rounds, settings.rounds - start)
            part = replace(settings, rounds=rounds, first_round=start, restart_rounds=0)
            progress(f"process epoch {epoch + 1}: rounds {start + 1}-{start + rounds} on fresh engines")
            rows += [{**row, "epoch": epoch} for row in run_epoch(specs, part, workdir, progress, refused)]
        return rows
    return [{**row, "epoch": 0} for row in run_epoch(specs, settings, workdir, progress, refused)]


def run_epoch(
    specs: dict[str, EngineSpec], settings: SessionSettings, workdir: Path, progress, refused: dict[str, str]
) -> list[dict]:
    """Load every arm the CPU rule does not refuse, run the epoch's rounds, stop every arm."""
    if settings.paired:
        specs = {name: single_thread(spec) for name, spec in specs.items()}
    arms: dict[str, ArmProcess | RefusedArm] = {}
    try:
        load_errors = load_arms(specs, settings, workdir, progress, refused, arms)
        if settings.design == "interleaved":
            return run_interleaved_rounds(arms, load_errors, settings, progress)
        if settings.design == "duet":
            return _run_duet_rounds(arms, load_errors, settings, progress)
        return _run_rounds(arms, load_errors, settings, progress)
    finally:
        stop_all(list(arms.values()))


def load_arms(specs, settings: SessionSettings, workdir: Path, progress, refused: dict, arms: dict) -> dict:
    """Fill `arms` (in the specs' order, which the rounds' shuffles start from) with a started
    process per arm, or a RefusedArm for one the CPU rule refused; returns each arm's load error.
    `arms` is the caller's, so what started is stopped even if a later start fails."""
    load_errors = {name: f"refused before start: {error}" for name, error in refused.items()}
    for name, error in refused.items():
        progress(load_failure_line(name, error))
    names = [name for name in specs if name not in refused]
    # Loading is not measured: engines load side by side, as many at once as there are cores
    # (an import is one thread; one at a time left the other cores idle), and every engine is
    # resident beside the others afterwards anyway. Each starts on every session core, never
    # one: a runtime that captures the mask its process started with (OpenVINO's thread pool)
    # re-applies it to every thread it runs, which would keep it on that core whatever the
    # coordinator pins.
    width = len(settings.cores)
    for batch in [names[i : i + width] for i in range(0, len(names), width)]:
        t0 = time.time()
        for name in batch:
            arms[name] = ArmProcess.start(name, specs[name], settings.cores, workdir)
        for name in batch:
            try:
                arms[name].wait_ready(settings.timeout_s)
                set_tree_affinity(arms[name].tree, settings.cores)
                progress(f"loaded {name} in {time.time() - t0:.1f} s (pid {arms[name].proc.pid})")
            except ArmFailed as error:
                load_errors[name] = f"load failed: {error}"
                progress(load_failure_line(name, str(error)))
    started = dict(arms)
    arms.clear()
    arms.update({name: started.get(name) or RefusedArm(name, refused[name]) for name in specs})
    return load_errors


def load_failure_line(name: str, error: str) -> str:
    """The log line of an arm that did not load: the CPU rule's sentence where that refused it (the
    log tail's first lines are the engine library's warnings), else the start of the error."""
    refusal = refusal_in(error)
    return f"{name} is refused: {refusal}" if refusal else f"{name} failed to load: {error[:300]}"


def duet_placement(pair: tuple[str, str], cores: list[int], round_index: int) -> dict[str, list[int]]:
    """Which core each arm of a duet runs on: swapped every round, so two consecutive rounds cancel
    a difference between the cores (measured here: one vCPU ran up to ~18% slower than the other)."""
    first, second = pair if round_index % 2 == 0 else pair[::-1]
    return {first: [cores[0]], second: [cores[1]]}


@dataclass
class Arrival:
    """When one arm's reply came in, and the machine's counters at that moment: the end of the
    arm's own active interval."""

    at: float
    cpu: dict
    own_ticks: int
    wait_ns: int


def receive_each(group: list[ArmProcess], timeout_s: float) -> tuple[dict, dict, dict[str, Arrival]]:
    """Every arm's reply as it arrives, so each arm's interval ends when its own work does, never
    when its partner's does (an idle core would otherwise count against the faster arm)."""
    pending = {arm.proc.stdout: arm for arm in group}
    replies, errors, arrivals = {}, {}, {}
    deadline = time.perf_counter() + timeout_s
    while pending:
        buffered = [stream for stream, arm in pending.items() if arm.has_line]
        wait = 0.0 if buffered else max(deadline - time.perf_counter(), 0.0)
        ready, _, _ = select.select(list(pending), [], [], wait)
        ready = list(dict.fromkeys([*buffered, *ready]))
        if not ready:  # every arm still out of time
            for arm in pending.values():
                errors[arm.name] = failure_reason(arm, f"no answer within {timeout_s:.0f} s")
            break
        for stream in ready:
            arm = pending.pop(stream)
            try:  # select saw the first bytes; the rest of the line gets what is left of the timeout
                replies[arm.name] = arm.receive(max(deadline - time.perf_counter(), 1.0))
            except ArmFailed as error:
                errors[arm.name] = str(error)
            arrivals[arm.name] = Arrival(
                time.perf_counter(),
                read_proc_stat(),
                tree_cpu_ticks(arm.proc.pid, arm.tree),
                tree_runqueue_wait_ns(arm.tree),
            )
    return replies, errors, arrivals


def window_rate(segments: list[list[float]], start: float, end: float) -> tuple[float, int]:
    """Tokens per second of the steps stamped inside [start, end] and how many there were: the
    intervals between consecutive stamps of one segment (a decode; no interval spans two), summed
    over segments. Fewer than 2 stamps in any segment: no rate."""
    steps, seconds, count = 0, 0.0, 0
    for stamps in segments:
        inside = [s for s in stamps if start <= s <= end]
        count += len(inside)
        if len(inside) >= 2:
            steps, seconds = steps + len(inside) - 1, seconds + inside[-1] - inside[0]
    if steps == 0 or seconds <= 0:
        return math.nan, count
    return steps / seconds, count


def common_window(samples: dict[str, dict]) -> dict[str, dict]:
    """Each duet arm's decode rate over the window both arms were decoding: from the later first
    counted token to the later last one, while the faster arm decoded on, uncounted, so that the
    two arms never ran alone (`hold_stamps`; without them, to the earlier last token). A
    disturbance cannot reach one arm and not the other. Each arm's whole-run rate stays as
    decode_tok_s_own."""
    counted = {name: sample.get("decode_stamps") or [] for name, sample in samples.items()}
    if len(counted) != 2 or not all(len(s) >= 2 for s in counted.values()):
        return {name: {"decode_tok_s_own": sample.get("decode_tok_s")} for name, sample in samples.items()}
    segments = {name: [counted[name], *(sample.get("hold_stamps") or [])] for name, sample in samples.items()}
    start = max(s[0] for s in counted.values())
    still = min(max(stamp for seg in segs for stamp in seg) for segs in segments.values())
    end = min(max(s[-1] for s in counted.values()), still)  # both arms decoding
    out = {}
    for name, sample in samples.items():
        rate, tokens = window_rate(segments[name], start, end)
        out[name] = {
            "decode_tok_s": rate,
            "decode_tok_s_own": sample["decode_tok_s"],
            "window_s": max(end - start, 0.0),
            "window_tokens": tokens,
        }
    return out


def release(group: list[ArmProcess], replies: dict, errors: dict, timeout_s: float) -> None:
    """End every held arm's uncounted decode and keep its stamps with its reply; an arm that
    fails here loses its sample alone."""
    held = [arm for arm in group if arm.name in replies]
    for arm in held:
        arm.send({"op": "release"})
    for arm in held:
        try:
            replies[arm.name]["hold_stamps"] = arm.receive(timeout_s)["hold_stamps"]
        except (ArmFailed, KeyError) as error:
            errors[arm.name] = f"release failed: {error}"
            replies.pop(arm.name)


def warm_up(group: list[ArmProcess], placement: dict[str, list[int]], timeout_s: float) -> None:
    """Pin each arm to its cores, then an uncounted generation in every arm at once."""
    for arm in group:
        set_tree_affinity(arm.tree, placement[arm.name])
    for arm in group:
        arm.send({"op": "warmup"})
    for arm in group:
        arm.receive(timeout_s)


def measure_together(
    group: list[ArmProcess], placement: dict[str, list], idle: list, index: int, settings: SessionSettings
) -> dict[str, dict]:
    """The arms of a group (one arm, or a duet) warm up, then sample at the same time, each pinned
    to its cores; per arm, over its own active interval, the parent's view of CPU, run-queue wait,
    steal and the guard's verdict. An arm whose sample fails gets a failed row; its partner's
    sample still counts."""
    warm_up(group, placement, settings.timeout_s)
    idle_trees = [p for other in idle if other.alive for p in other.tree]
    cpu_before = read_proc_stat()
    ticks_before = {arm.name: tree_cpu_ticks(arm.proc.pid, arm.tree) for arm in group}
    waits_before = {arm.name: tree_runqueue_wait_ns(arm.tree) for arm in group}
    idle_before = tree_cpu_ticks(0, idle_trees)
    t0 = time.perf_counter()
    for arm in group:  # a duet: each arm decodes on, uncounted, until both are through
        arm.send({"op": "sample", "index": index, "hold": len(group) == 2})
    replies, errors, arrivals = receive_each(group, settings.timeout_s)
    pair_wall_s = time.perf_counter() - t0
    idle_cpu = (tree_cpu_ticks(0, idle_trees) - idle_before) / CLOCK_TICKS
    if len(group) == 2:
        release(group, replies, errors, settings.timeout_s)
    windows = common_window(replies)  # a lone survivor keeps its whole-run rate as its own
    out = {}
    for arm in group:
        if arm.name in errors:
            out[arm.name] = {"status": "failed", "error": errors[arm.name]}
            continue
        cores, end = placement[arm.name], arrivals[arm.name]
        wall_s, own = end.at - t0, end.own_ticks - ticks_before[arm.name]
        stolen = stolen_fraction(cpu_before, end.cpu, cores, own, wall_s)
        moved = pinning_error(arm.tree, cores)  # the engine re-pinned itself elsewhere
        reply = {k: v for k, v in replies[arm.name].items() if k not in ("decode_stamps", "hold_stamps")}
        out[arm.name] = {
            **reply,
            **windows.get(arm.name, {}),
            "layer_kernels": arm.layer_kernels,
            "wall_s": wall_s,
            "pair_wall_s": pair_wall_s,
            "cpu_s": own / CLOCK_TICKS,
            "runqueue_wait_s": (end.wait_ns - waits_before[arm.name]) / 1e9,
            "steal_s": steal_ticks(cpu_before, end.cpu, cores) / CLOCK_TICKS,
            "idle_engines_cpu_s": idle_cpu,
            "stolen_frac": stolen,
            "status": "contended" if stolen > settings.contention_limit or moved else "ok",
            "error": moved,
        }
    return out


def _run_duet_rounds(arms, load_errors, settings: SessionSettings, progress) -> list[dict]:
    rows = []
    clock = RoundClock(settings.round_indices)
    for round_index in settings.round_indices:
        order = round_order([f"{a}|{b}" for a, b in settings.pairs], settings.seed, round_index)
        for slot, key in enumerate(order):
            pair_names = tuple(key.split("|"))
            placement = duet_placement(pair_names, settings.cores, round_index)
            base = {
                n: {**sample_identity(n, round_index, slot, order, settings), "slot": slot}
                for n in pair_names
            }
            partner = {pair_names[0]: pair_names[1], pair_names[1]: pair_names[0]}
            base = {
                n: {
                    **base[n],
                    "partner": partner[n],
                    "core": placement[n][0],
                    "design": "duet",
                    "concurrent_pairs": 1,
                }
                for n in pair_names
            }
            dead = [n for n in pair_names if not arms[n].alive]
            if dead:
                for n in pair_names:
                    reason = load_errors.get(n) or arms[n].error or f"partner {dead[0]} is down"
                    rows.append({**base[n], "status": "failed", "error": reason})
                continue
            pair = [arms[n] for n in pair_names]
            idle = [a for n, a in arms.items() if n not in pair_names]
            try:
                measured = measure_together(pair, placement, idle, round_index, settings)
            except ArmFailed as error:  # a warm-up failed: both samples of the duet are lost
                measured = {n: {"status": "failed", "error": str(error)} for n in pair_names}
            settle = max([wait_until_idle(arm) for arm in pair if arm.alive], default=0.0)
            for n in pair_names:
                rows.append({**base[n], **measured[n], "settle_s": settle})
        progress(clock.line(round_index, [r for r in rows if r["round"] == round_index]))
    return rows


def _run_rounds(arms, load_errors, settings: SessionSettings, progress) -> list[dict]:
    rows = []
    names = list(arms)
    clock = RoundClock(settings.round_indices)
    for round_index in settings.round_indices:
        order = round_order(names, settings.seed, round_index)
        for position, name in enumerate(order):
            arm = arms[name]
            row = {**sample_identity(name, round_index, position, order, settings), "design": "sequential"}
            if not arm.alive:
                row.update(status="failed", error=load_errors.get(name) or arm.error)
            else:
                try:
                    idle = [a for n, a in arms.items() if n != name]
                    row.update(
                        measure_together([arm], {name: settings.cores}, idle, round_index, settings)[name]
                    )
                    row["settle_s"] = wait_until_idle(arm) if arm.alive else 0.0
                except ArmFailed as error:
                    row.update(status="failed", error=str(error))
            rows.append(row)
        progress(clock.line(round_index, rows[-len(order) :]))
    return rows
