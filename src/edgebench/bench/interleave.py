"""The interleaved warm design: both arms of a pair on one core, taking turns a burst of a few
decode tokens at a time, while the other core runs another pair.

In a cross-core duet each arm has a core of its own, so a difference between the cores has to be
cancelled by swapping them, and two cores drift apart over seconds. Here the two arms share one
core and alternate every few tokens: whatever the core does, at the scale of a second both arms
see it. Each arm's rate is its tokens over the time its own bursts took (the partner's turns are
not counted). The guard judges the core over the pair's whole sample and gives both arms the same
verdict, so it cannot keep one arm of a pair and not the other.
"""

from __future__ import annotations

import itertools
import select
import time
from dataclasses import dataclass, field
from operator import itemgetter

from edgebench.bench.arm_process import (
    ArmFailed,
    failure_reason,
    round_order,
    sample_identity,
    wait_until_idle,
)
from edgebench.bench.guard import steal_ticks, stolen_fraction
from edgebench.bench.round_progress import RoundClock
from edgebench.procfs import (
    CLOCK_TICKS,
    pinning_error,
    read_proc_stat,
    set_tree_affinity,
    tree_cpu_ticks,
    tree_runqueue_wait_ns,
)


def first_fit(order: list[tuple[str, str]], width: int) -> list[list[tuple[str, str]]]:
    """Each pair, in order, into the first group that has room and shares no arm with it."""
    groups: list[list[tuple[str, str]]] = []
    for pair in order:
        for group in groups:
            if len(group) < width and not set(pair) & {arm for other in group for arm in other}:
                group.append(pair)
                break
        else:
            groups.append([pair])
    return groups


SEARCH_LIMIT = 50_000  # orders tried for the fewest groups: every order of up to 8 pairs


def concurrent_groups(order: list[tuple[str, str]], width: int) -> list[list[tuple[str, str]]]:
    """A round's pairs in as few groups of up to `width` pairs that share no arm as an order's
    first fit gives (a group's pairs run at the same time, one core each), so that a core waits
    for the other as little as it can. The round's shuffled order decides which group runs first
    and breaks ties: it is tried first, and the groups run in the order of their first pair."""
    pairs_of: dict[str, int] = {}
    for pair in order:
        for arm in pair:
            pairs_of[arm] = pairs_of.get(arm, 0) + 1
    floor = max(-(-len(order) // width), max(pairs_of.values(), default=0))
    best = first_fit(order, width)
    others = itertools.islice(itertools.permutations(order), 1, None)  # the first is `order`
    for tried, candidate in enumerate(others):
        if len(best) <= floor or tried >= SEARCH_LIMIT:
            break
        groups = first_fit(list(candidate), width)
        if len(groups) < len(best):
            best = groups
    rank = {pair: i for i, pair in enumerate(order)}
    ordered = [sorted(group, key=rank.__getitem__) for group in best]
    return sorted(ordered, key=lambda group: rank[group[0]])


def burst_rate(bursts: list[dict]) -> tuple[float, float, int]:
    """(tokens per second, seconds, tokens) over an arm's own bursts: each burst from its start to
    its last stamp; the first token (the short prompt's prefill) is not a decode step."""
    seconds, tokens = 0.0, 0
    for i, burst in enumerate(bursts):
        stamps = burst["stamps"]
        if not stamps:
            continue
        if i == 0:
            seconds, tokens = seconds + stamps[-1] - stamps[0], tokens + len(stamps) - 1
        else:
            seconds, tokens = seconds + stamps[-1] - burst["t0"], tokens + len(stamps)
    return (tokens / seconds if seconds > 0 else float("nan")), seconds, tokens


@dataclass
class PairRun:
    """One pair's sample on its core: who runs next (open both, then bursts in turn, `pair[0]`
    first), what each arm replied, and when each finished."""

    pair: tuple[str, str]
    core: int
    index: int
    burst_tokens: int
    opened: dict = field(default_factory=dict)
    bursts: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)
    finished: dict = field(default_factory=dict)  # arm -> (perf_counter, /proc/stat, own ticks, wait ns)
    turn: int = 0

    def live(self) -> list[str]:
        return [n for n in self.pair if n not in self.errors and n not in self.finished]

    def next_command(self) -> tuple[str, dict] | None:
        for name in self.pair:
            if name not in self.opened and name not in self.errors:
                return name, {"op": "open", "index": self.index}
        live = self.live()
        if not live:
            return None
        name = self.pair[self.turn % 2]
        self.turn += 1
        return (name if name in live else live[0]), {"op": "burst", "tokens": self.burst_tokens}

    def record(self, name: str, reply: dict) -> bool:
        """Keep a reply; True when the arm's sample is through."""
        if name not in self.opened:
            self.opened[name] = reply
            return False
        self.bursts.setdefault(name, []).append(reply)
        return bool(reply["done"])


def issue_next(run: PairRun, arms: dict, inflight: dict) -> None:
    """Send the pair's next command (an arm that cannot be reached fails alone)."""
    while (step := run.next_command()) is not None:
        name, command = step
        try:
            arms[name].send(command)
        except ArmFailed as error:  # the process is gone
            run.errors[name] = str(error)
            continue
        inflight[arms[name].proc.stdout] = (run, name)
        return


def drive(runs: list[PairRun], arms: dict, timeout_s: float) -> None:
    """Every pair's turns until each arm is through or failed; pairs on different cores run at
    the same time, each arm's reply handled as it arrives."""
    inflight: dict = {}
    for run in runs:
        issue_next(run, arms, inflight)
    while inflight:
        buffered = [stream for stream, (_, name) in inflight.items() if arms[name].has_line]
        ready, _, _ = select.select(list(inflight), [], [], 0.0 if buffered else timeout_s)
        ready = list(dict.fromkeys([*buffered, *ready]))
        if not ready:  # every arm still out is stopped and marked down
            for run, name in inflight.values():
                run.errors[name] = failure_reason(arms[name], f"no answer within {timeout_s:.0f} s")
            return
        for stream in ready:
            run, name = inflight.pop(stream)
            arm = arms[name]
            try:  # select saw the first bytes: the rest of the line may take up to the timeout
                through = run.record(name, arm.receive(timeout_s))
            except ArmFailed as error:  # an engine error, a garbled reply or a dead process
                run.errors[name] = str(error)
                through = False
            if through:
                run.finished[name] = (
                    time.perf_counter(),
                    read_proc_stat(),
                    tree_cpu_ticks(arm.proc.pid, arm.tree),
                    tree_runqueue_wait_ns(arm.tree),
                )
            issue_next(run, arms, inflight)


def pair_rows(run: PairRun, arms: dict, before: dict, t0: float, limit: float) -> dict[str, dict]:
    """Both arms' rows: each arm's rate over its own bursts; the core's guard verdict for both."""
    if not run.finished:
        return {n: {"status": "failed", "error": run.errors.get(n, "no sample")} for n in run.pair}
    end_at, end_cpu = max(run.finished.values(), key=itemgetter(0))[:2]
    pair_wall = end_at - t0
    own = sum(f[2] - before["ticks"][n] for n, f in run.finished.items())
    stolen = stolen_fraction(before["cpu"], end_cpu, [run.core], own, pair_wall)
    # an engine that moved its own threads off the pair's core: neither arm ran as designed
    moved = "; ".join(
        f"{name}: {error}" for name in run.finished if (error := pinning_error(arms[name].tree, [run.core]))
    )
    out = {}
    for position, name in enumerate(run.pair):
        if name not in run.finished:
            out[name] = {"status": "failed", "error": run.errors.get(name, "no sample")}
            continue
        at, cpu, ticks, wait_ns = run.finished[name]
        rate, seconds, tokens = burst_rate(run.bursts[name])
        out[name] = {
            **run.opened[name],
            "decode_tok_s": rate,
            "decode_s": seconds,
            "window_s": seconds,
            "window_tokens": tokens,
            "bursts": len(run.bursts[name]),
            "leads": position == 0,
            "layer_kernels": arms[name].layer_kernels,
            "wall_s": at - t0,
            "pair_wall_s": pair_wall,
            "cpu_s": (ticks - before["ticks"][name]) / CLOCK_TICKS,
            "runqueue_wait_s": (wait_ns - before["waits"][name]) / 1e9,
            "steal_s": steal_ticks(before["cpu"], cpu, [run.core]) / CLOCK_TICKS,
            "stolen_frac": stolen,
            "status": "contended" if stolen > limit or moved else "ok",
            "error": moved,
        }
    return out


def park_others(arms: dict, active: set[str]) -> list[str]:
    """Resume the group's engines and stop (SIGSTOP) every other live one while the group is
    measured: an idle engine's own timers and polling threads (an idle vLLM engine wakes a dozen
    threads for a few percent of a core) would otherwise run on a measured pair's core."""
    for name, arm in arms.items():
        if name in active:
            arm.resume()
        elif arm.alive and not arm.paused:
            arm.pause()
    return [name for name, arm in arms.items() if arm.paused]


def measure_group(runs: list[PairRun], arms: dict, settings) -> dict[str, dict]:
    """Pin each pair to its core, warm every arm up (uncounted), then drive the pairs' turns; the
    engines of other pairs stay stopped meanwhile (what CPU they used is `idle_engines_cpu_s`)."""
    active = {n for run in runs for n in run.pair}
    park_others(arms, active)
    idle_trees = [pid for name, arm in arms.items() if name not in active and arm.alive for pid in arm.tree]
    for run in runs:
        for name in run.pair:
            set_tree_affinity(arms[name].tree, [run.core])
    names = [n for run in runs for n in run.pair]
    for name in names:
        arms[name].send({"op": "warmup"})
    for name in names:
        arms[name].receive(settings.timeout_s)
    before = {
        "cpu": read_proc_stat(),
        "ticks": {n: tree_cpu_ticks(arms[n].proc.pid, arms[n].tree) for n in names},
        "waits": {n: tree_runqueue_wait_ns(arms[n].tree) for n in names},
        "idle": tree_cpu_ticks(0, idle_trees),
    }
    t0 = time.perf_counter()
    drive(runs, arms, settings.timeout_s)
    idle_cpu = (tree_cpu_ticks(0, idle_trees) - before["idle"]) / CLOCK_TICKS
    rows = {}
    for run in runs:
        rows.update(pair_rows(run, arms, before, t0, settings.contention_limit))
    return {name: {**row, "idle_engines_cpu_s": idle_cpu} for name, row in rows.items()}


def placed_runs(group: list[tuple[str, str]], settings, round_index: int) -> list[PairRun]:
    """The group's pairs on their cores, in the group's order: the same pairs take the cores in
    turn round by round (ranked as configured, not as shuffled), and which arm leads alternates."""
    ranked = sorted(group, key=settings.pairs.index)
    cores = settings.cores
    return [
        PairRun(
            pair if round_index % 2 == 0 else pair[::-1],
            cores[(ranked.index(pair) + round_index) % len(cores)],
            round_index,
            settings.burst_tokens,
        )
        for pair in group
    ]


def pair_samples(runs: list[PairRun], arms: dict, load_errors: dict, settings) -> dict[str, dict]:
    """The group's measured rows; a pair with an arm down gives failed rows (a loaded partner is
    not measured alone: it has no pair)."""
    live = [run for run in runs if all(arms[n].alive for n in run.pair)]
    out = {}
    for run in runs:
        if run not in live:
            dead = next(n for n in run.pair if not arms[n].alive)
            for n in run.pair:
                out[n] = {
                    "status": "failed",
                    "error": load_errors.get(n) or arms[n].error or f"partner {dead} is down",
                }
    try:
        out.update(measure_group(live, arms, settings) if live else {})
    except ArmFailed as error:  # a warm-up failed: the group's samples are lost
        out.update({n: {"status": "failed", "error": str(error)} for run in live for n in run.pair})
    return out


def round_groups(pairs: list[tuple[str, str]], arms: dict, width: int) -> list[list[tuple[str, str]]]:
    """The round's groups: the pairs whose arms are up packed together, then each pair with an arm
    down alone (its failed rows take no time, and a live pair must not lose its partner core to it)."""
    live = [pair for pair in pairs if all(arms[n].alive for n in pair)]
    return concurrent_groups(live, width) + [[pair] for pair in pairs if pair not in live]


def run_interleaved_rounds(arms, load_errors, settings, progress) -> list[dict]:
    """Every round: the pairs in a fresh order, as many at a time as there are cores."""
    rows = []
    clock = RoundClock(settings.round_indices)
    for round_index in settings.round_indices:
        order = round_order([f"{a}|{b}" for a, b in settings.pairs], settings.seed, round_index)
        pairs = [tuple(key.split("|")) for key in order]
        for group in round_groups(pairs, arms, len(settings.cores)):
            runs = placed_runs(group, settings, round_index)
            measured = pair_samples(runs, arms, load_errors, settings)
            settle = max(
                [wait_until_idle(arms[n]) for run in runs for n in run.pair if arms[n].alive], default=0.0
            )
            for pair, run in zip(group, runs, strict=True):
                slot = pairs.index(pair)
                for n in run.pair:
                    partner = run.pair[1] if n == run.pair[0] else run.pair[0]
                    identity = sample_identity(n, round_index, slot, order, settings)
                    context = {"slot": slot, "partner": partner, "core": run.core, "design": "interleaved"}
                    rows.append(
                        {
                            **identity,
                            **context,
                            "concurrent_pairs": len(group),
                            **measured[n],
                            "settle_s": settle,
                        }
                    )
        progress(clock.line(round_index, [r for r in rows if r["round"] == round_index]))
    return rows
