"""One resident engine process and its line protocol, shared by every warm design.

The coordinator (edgebench.bench.session, edgebench.bench.interleave) talks to each engine through
an ArmProcess. The only failures that become a sample's failed row are the engine's own, raised as
ArmFailed: it died, hung past its timeout, answered with an engine error, or wrote a line that is
not JSON. Anything else is a bug of the coordinator and propagates with its traceback.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import select
import signal
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from edgebench.bench.contract import EngineSpec
from edgebench.bench.rep_process import kill_tree
from edgebench.engines.base import spawn_env
from edgebench.procfs import children_of, tree_cpu_ticks

STOP_TIMEOUT_S = 60  # an engine asked to exit gets this long before its tree is killed
KILL_WAIT_S = 30  # after SIGKILL, how long to wait for the kernel to reap it
READ_CHUNK = 1 << 16


class ArmFailed(RuntimeError):
    """The arm's process died, hung or answered with an engine error."""


def _pin(cores: list[int]) -> None:
    os.sched_setaffinity(0, cores)


@dataclass
class ArmProcess:
    """One resident engine process and its line protocol (one JSON object per line each way)."""

    name: str
    proc: subprocess.Popen
    log_path: Path
    error: str = ""
    tree: list[int] = field(default_factory=list)
    layer_kernels: str = ""  # what the loaded model's layers run, as the engine reported it
    asked_exit: bool = False
    pending: bytes = b""  # bytes read past the last complete line
    paused: bool = False  # stopped (SIGSTOP) while other arms are measured

    @classmethod
    def start(cls, name: str, spec: EngineSpec, cores: list[int], workdir: Path) -> ArmProcess:
        slug = name.replace("/", "_")
        spec_path, log_path = workdir / f"{slug}.json", workdir / f"{slug}.log"
        spec_path.write_text(json.dumps(spec.to_json()))
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [spec.python, "-m", "edgebench.bench.resident", str(spec_path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=spawn_env(spec.options),
                text=True,
                preexec_fn=functools.partial(_pin, cores),
            )
        return cls(name, proc, log_path)

    @property
    def alive(self) -> bool:
        return not self.error

    def wait_ready(self, timeout_s: float) -> None:
        self.layer_kernels = self._read(timeout_s).get("layer_kernels", "")
        self.tree = [self.proc.pid, *children_of(self.proc.pid)]

    def request(self, command: dict, timeout_s: float) -> dict:
        self.send(command)
        return self.receive(timeout_s)

    def send(self, command: dict) -> None:
        try:
            self.proc.stdin.write(json.dumps(command) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as error:
            self._fail(f"cannot reach the arm process: {error}")

    def receive(self, timeout_s: float) -> dict:
        reply = self._read(timeout_s)
        if "error" in reply:
            raise ArmFailed(f"engine error: {reply['error']}")
        return reply

    def _read(self, timeout_s: float) -> dict:
        """The next reply line within `timeout_s`, however the engine's writes split it: bytes are
        read as they come (never a blocking readline on a partial line)."""
        line = self._read_line(time.perf_counter() + timeout_s, timeout_s)
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            self._fail(f"garbled reply (not one JSON object): {line[:200]!r}")
            raise  # unreachable: _fail raises ArmFailed

    def _read_line(self, deadline: float, timeout_s: float) -> str:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.perf_counter(), 0.0))
            if not ready:
                self._fail(f"no answer within {timeout_s:.0f} s")
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                self._reap()
                self._fail(f"arm process exited with {self.proc.returncode}")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode(errors="replace")

    @property
    def has_line(self) -> bool:
        """A complete reply is already buffered (select on the pipe would not show it)."""
        return b"\n" in self.pending

    def _reap(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=KILL_WAIT_S)

    def _fail(self, reason: str) -> None:
        tail = self.log_path.read_text(errors="replace")[-1500:] if self.log_path.exists() else ""
        self.error = f"{reason}; log tail:\n{tail}"
        self.stop()
        raise ArmFailed(self.error)

    def ask_exit(self) -> bool:
        """Ask a running engine to shut down, without waiting; False if it cannot be reached."""
        if self.proc.poll() is None and not self.asked_exit:
            try:
                self.proc.stdin.write(json.dumps({"op": "exit"}) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                return False
            self.asked_exit = True
        return True

    def pause(self) -> None:
        """Stop every process of the engine (SIGSTOP): an idle engine's timers and polling threads
        then take nothing from the samples that run meanwhile."""
        self._signal_tree(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        if self.paused:
            self._signal_tree(signal.SIGCONT)
            self.paused = False

    def _signal_tree(self, sig: int) -> None:
        for pid in self.tree or [self.proc.pid]:
            with contextlib.suppress(ProcessLookupError):  # the process ended meanwhile
                os.kill(pid, sig)

    def stop(self) -> None:
        """Ask the engine to exit and wait; kill its tree if it cannot be asked or does not exit."""
        self.resume()  # a stopped engine cannot read the request to exit
        reached = self.ask_exit()
        if self.proc.poll() is not None:
            return
        if reached:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=STOP_TIMEOUT_S)
                return
        kill_tree(self.proc.pid)
        self._reap()


@dataclass
class RefusedArm:
    """An arm the CPU rule refused before its process started: down from the first round (its rows
    are failed, carrying the refusal), with no process to pin, pause or stop."""

    name: str
    error: str
    tree: list[int] = field(default_factory=list)
    layer_kernels: str = ""
    paused: bool = False

    alive = False

    def resume(self) -> None:
        """Nothing runs, so nothing is stopped (SIGSTOP) to resume."""

    def ask_exit(self) -> bool:
        return True  # nothing to ask

    def stop(self) -> None:
        """Nothing runs, so nothing is stopped."""


def stop_all(arms: list[ArmProcess | RefusedArm]) -> None:
    """Stop every engine, all shutting down at once (each takes seconds; a session that restarts
    its engines pays that every epoch)."""
    for arm in arms:
        arm.resume()
        arm.ask_exit()
    for arm in arms:
        arm.stop()


def failure_reason(arm: ArmProcess, reason: str) -> str:
    """Mark the arm down for `reason` and return the error its rows carry (with its log tail)."""
    try:
        arm._fail(reason)
    except ArmFailed as error:
        return str(error)
    return reason


def round_order(arms: list[str], seed: int, round_index: int) -> list[str]:
    """A fresh random order per round, reproducible from (seed, round)."""
    order = list(arms)
    random.Random(f"{seed}:{round_index}").shuffle(order)
    return order


def wait_until_idle(arm: ArmProcess, max_s: float = 3.0, window_s: float = 0.2) -> float:
    """Wait until an arm's process tree stops using CPU (vLLM's shared-memory readers spin for about
    a second after their last message), so it does not run beside the next arm's sample."""
    start = time.perf_counter()
    before = tree_cpu_ticks(arm.proc.pid, arm.tree)
    while time.perf_counter() - start < max_s:
        time.sleep(window_s)
        after = tree_cpu_ticks(arm.proc.pid, arm.tree)
        if after - before <= 1:  # at most one tick (10 ms) in the window: asleep
            break
        before = after
    return time.perf_counter() - start


def sample_identity(name: str, round_index: int, position: int, order: list, settings) -> dict:
    """The columns that say which sample a warm row is, in every design (`settings`: its seed)."""
    return {
        "arm": name,
        "round": round_index,
        "order_position": position,
        "round_order": json.dumps(order),
        "seed": settings.seed,
        "started_at": datetime.now(UTC).isoformat(),
    }
