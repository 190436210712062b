"""Parent side of a rep: start the worker in a fresh process, pin it, sample it, guard it, make a row.

Whatever happens (crash, time-out, engine error), the result is a row: failures are rows.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import resource
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from edgebench.bench.contract import EngineSpec
from edgebench.bench.guard import steal_ticks, stolen_fraction
from edgebench.engines.base import spawn_env
from edgebench.procfs import CLOCK_TICKS, children_of, read_proc_stat, tree_cpu_ticks, tree_rss_anon_mb


@dataclass
class Sampler:
    """Samples RSS and CPU ticks of a process tree on a thread until stopped."""

    pid: int
    interval_s: float
    rescan_every: int = 5  # the /proc scan for new children is the costly part: do it less often
    peak_rss_mb: float = 0.0
    max_tree_ticks: int = 0
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        tree = [self.pid]
        while not self._stop.is_set():
            if self.samples % self.rescan_every == 0:
                tree = [self.pid, *children_of(self.pid)]
            self.peak_rss_mb = max(self.peak_rss_mb, tree_rss_anon_mb(self.pid, tree))
            self.max_tree_ticks = max(self.max_tree_ticks, tree_cpu_ticks(self.pid, tree))
            self.samples += 1
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()


def _prepare_child(cores: list[int], memory_limit_mb: int | None) -> None:
    os.sched_setaffinity(0, cores)  # stays in Snakemake's process group, so Ctrl-C reaches it
    if memory_limit_mb:  # an injected OOM: the rep gets a hard address-space limit
        limit = memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _tail(text: str, limit: int = 2000) -> str:
    return text[-limit:]


def run_worker(spec: EngineSpec, cores: list[int], timeout_s: float, interval_s: float) -> dict:
    """Run one rep; returns measured values plus status, error, stolen_frac (the guard's share,
    the hypervisor's steal included), steal_s and wall_s."""
    with tempfile.TemporaryDirectory(prefix="edgebench-rep-") as tmp:
        spec_path, out_path, log_path = (Path(tmp) / n for n in ("spec.json", "out.json", "worker.log"))
        env = spawn_env(spec.options)
        cpu_before, harness_before = read_proc_stat(), _own_ticks()
        t_parent = time.time()
        spec_path.write_text(json.dumps({**spec.to_json(), "t_parent": t_parent}))
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [spec.python, "-m", "edgebench.bench.worker", str(spec_path), str(out_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=functools.partial(_prepare_child, cores, _memory_limit(spec.fault)),
            )
            sampler = Sampler(proc.pid, interval_s)
            status, error, own_ticks = _watch(proc, sampler, timeout_s)
        wall_s = time.time() - t_parent
        cpu_after = read_proc_stat()
        # the harness's own sampling is known load, not contention from someone else
        own_ticks += _own_ticks() - harness_before
        result: dict = {}
        worker_log = log_path.read_text(errors="replace")
        print(worker_log, flush=True)  # the full worker log goes to the rule's log
        if status == "ok":
            result = json.loads(out_path.read_text())
        else:
            error = f"{error}; {root_cause(worker_log)}; worker log tail:\n{_tail(worker_log)}"
        result.update(
            status=status,
            error=error,
            wall_s=wall_s,
            started_at=datetime.fromtimestamp(t_parent, UTC).isoformat(),
            peak_rss_anon_mb=sampler.peak_rss_mb if sampler.samples else float("nan"),
            stolen_frac=stolen_fraction(cpu_before, cpu_after, cores, own_ticks, wall_s),
            steal_s=steal_ticks(cpu_before, cpu_after, cores) / CLOCK_TICKS,
            rss_samples=sampler.samples,
        )
        return result


KILLED_WAIT_S = 60


def _watch(proc: subprocess.Popen, sampler, timeout_s: float) -> tuple[str, str, int]:
    """Sample the worker until it exits or times out: status, error and its CPU ticks."""
    thread = threading.Thread(target=sampler.run, daemon=True)
    thread.start()
    status, error = "ok", ""
    try:
        _, wait_status, usage = _wait4_with_timeout(proc, timeout_s)
        own_ticks = max(sampler.max_tree_ticks, _usage_ticks(usage))
        if wait_status != 0:
            status, error = "failed", f"worker exited with {_describe(wait_status)}"
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid)
        proc.wait(timeout=KILLED_WAIT_S)  # SIGKILLed: the kernel reaps it at once
        own_ticks = sampler.max_tree_ticks
        status, error = "failed", f"timed out after {timeout_s:.0f} s"
    finally:
        sampler.stop()
        thread.join()
    return status, error, own_ticks


def kill_tree(pid: int) -> None:
    """SIGKILL a process and every descendant, by PID (children first are found before any dies)."""
    for target in [*children_of(pid), pid]:
        with contextlib.suppress(ProcessLookupError):  # it exited by itself meanwhile: nothing to kill
            os.kill(target, signal.SIGKILL)


def _memory_limit(fault: dict | None) -> int | None:
    return int(fault.get("memory_limit_mb", 1024)) if fault and fault["kind"] == "oom" else None


def root_cause(log: str) -> str:
    """The first lines that name why an engine died (vLLM's own error is often a generic EngineDeadError)."""
    keys = ("died unexpectedly", "Error:", "UnsupportedArm:", "Killed", "Illegal instruction", "MemoryError")
    found = []
    for line in log.splitlines():
        if any(k in line for k in keys) and line.strip() not in found:
            found.append(line.strip())
        if len(found) == 3:
            break
    return " | ".join(found) or "no error line in the worker log"


def _own_ticks() -> int:
    times = os.times()
    return int((times.user + times.system) * os.sysconf("SC_CLK_TCK"))


def _usage_ticks(usage) -> int:
    return int((usage.ru_utime + usage.ru_stime) * os.sysconf("SC_CLK_TCK"))


def _describe(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        return f"signal {signal.Signals(os.WTERMSIG(wait_status)).name}"
    return f"exit code {os.waitstatus_to_exitcode(wait_status)}"


def _wait4_with_timeout(proc: subprocess.Popen, timeout_s: float):
    """os.wait4 gives the rusage of the child and its reaped descendants; poll it with a deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        pid, wait_status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(wait_status)
            return pid, wait_status, usage
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
        time.sleep(0.05)
