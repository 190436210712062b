"""Readers for /proc: memory of a process tree, CPU time per core and per process.

Pure parsers take text so they can be tested on fixtures; thin readers open the files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def parse_status_kb(text: str, field: str) -> int:
    """Value in kB of one field of /proc/PID/status (e.g. RssAnon)."""
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key == field:
            return int(rest.split()[0])
    raise KeyError(f"field {field!r} not in /proc status text")


def rss_anon_kb(pid: int) -> int:
    """RssAnon of one process in kB; 0 if it has gone (a sampler must not crash on exits)."""
    try:
        return parse_status_kb(Path(f"/proc/{pid}/status").read_text(), "RssAnon")
    except (FileNotFoundError, ProcessLookupError, KeyError):
        return 0


@dataclass(frozen=True)
class ProcStat:
    """The fields of /proc/PID/stat edgebench uses (times in clock ticks)."""

    pid: int
    ppid: int
    utime: int
    stime: int
    cutime: int
    cstime: int
    starttime: int


def stat_fields_after_name(text: str) -> list[str]:
    """The fields of /proc/PID/stat after the command name, which may hold spaces and parentheses,
    so the split starts after the last ')': fields[0] is state (field 3); field n of proc(5) is
    fields[n - 3]."""
    return text[text.rindex(")") + 2 :].split()


def parse_pid_stat(text: str) -> ProcStat:
    """Parse /proc/PID/stat."""
    pid = int(text.split(" ", 1)[0])
    fields = stat_fields_after_name(text)
    return ProcStat(
        pid=pid,
        ppid=int(fields[1]),
        utime=int(fields[11]),
        stime=int(fields[12]),
        cutime=int(fields[13]),
        cstime=int(fields[14]),
        starttime=int(fields[19]),
    )


def parse_last_cpu(text: str) -> int:
    """Field 39 of /proc/PID/stat (`processor`): the CPU the process last ran on."""
    return int(stat_fields_after_name(text)[39 - 3])


def last_cpu() -> int:
    """The CPU this process last ran on: where a pinned probe really ran, not where it asked to."""
    return parse_last_cpu(Path("/proc/self/stat").read_text())


def read_pid_stat(pid: int) -> ProcStat | None:
    try:
        return parse_pid_stat(Path(f"/proc/{pid}/stat").read_text())
    except (FileNotFoundError, ProcessLookupError):
        return None


@dataclass(frozen=True)
class CpuTimes:
    """Ticks of one CPU line of /proc/stat."""

    busy: int
    idle: int
    steal: int


def parse_proc_stat(text: str) -> dict[int, CpuTimes]:
    """Per-CPU times from /proc/stat. Busy excludes idle, iowait and steal; guest time is inside user."""
    cpus: dict[int, CpuTimes] = {}
    for line in text.splitlines():
        if not line.startswith("cpu") or line.startswith("cpu "):
            continue
        name, *values = line.split()
        v = [int(x) for x in values] + [0] * (10 - len(values))
        user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
        cpus[int(name[3:])] = CpuTimes(
            busy=user + nice + system + irq + softirq, idle=idle + iowait, steal=steal
        )
    return cpus


def read_proc_stat() -> dict[int, CpuTimes]:
    return parse_proc_stat(Path("/proc/stat").read_text())


def children_of(pid: int) -> list[int]:
    """Direct and indirect children of pid (scan of /proc; the tree of one rep is small)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = read_pid_stat(int(entry.name))
        if stat is not None:
            parents.setdefault(stat.ppid, []).append(stat.pid)
    found, stack = [], [pid]
    while stack:
        for child in parents.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def tree_rss_anon_mb(pid: int, pids: list[int] | None = None) -> float:
    """RssAnon of a process and all its descendants, in MiB (front end, EngineCore, worker).
    Pass `pids` (the tree, from children_of) to skip the /proc scan on a hot path."""
    tree = pids if pids is not None else [pid, *children_of(pid)]
    return sum(rss_anon_kb(p) for p in tree) / 1024.0


def tree_cpu_ticks(pid: int, pids: list[int] | None = None) -> int:
    """CPU ticks of a live process tree: own utime+stime plus reaped children (cutime/cstime)."""
    total = 0
    for p in pids if pids is not None else [pid, *children_of(pid)]:
        stat = read_pid_stat(p)
        if stat is not None:
            total += stat.utime + stat.stime + stat.cutime + stat.cstime
    return total


def parse_schedstat(text: str) -> tuple[int, int]:
    """(run time ns, run-queue wait ns) from /proc/PID/task/TID/schedstat."""
    run_ns, wait_ns, *_ = text.split()
    return int(run_ns), int(wait_ns)


def thread_ids(pids: list[int]) -> list[int]:
    """Every thread of the given processes (processes that ended are skipped)."""
    tids = []
    for pid in pids:
        try:
            tids += [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return tids


def tree_runqueue_wait_ns(pids: list[int]) -> int:
    """Run-queue wait summed over every thread of the given processes (threads that ended drop out)."""
    total = 0
    for tid in thread_ids(pids):
        try:
            total += parse_schedstat(Path(f"/proc/{tid}/schedstat").read_text())[1]
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def set_tree_affinity(pids: list[int], cores: list[int]) -> None:
    """Pin every thread of the given processes to `cores` (threads keep their own mask otherwise)."""
    for tid in thread_ids(pids):
        try:
            os.sched_setaffinity(tid, cores)
        except OSError:  # the thread ended meanwhile
            continue


def threads_off_cores(pids: list[int], cores: list[int]) -> list[tuple[int, list[int]]]:
    """(thread id, its cores) for every thread of the given processes allowed outside `cores`: an
    engine that pins its own threads (OpenVINO's thread pool re-applies the mask its process
    started with) runs where the coordinator did not put it."""
    allowed, off = set(cores), []
    for tid in thread_ids(pids):
        try:
            mask = os.sched_getaffinity(tid)
        except OSError:  # the thread ended meanwhile
            continue
        if not mask <= allowed:
            off.append((tid, sorted(mask)))
    return off


def pinning_error(pids: list[int], cores: list[int]) -> str:
    """'' when every thread stayed within `cores`, else a line naming the threads that did not."""
    off = threads_off_cores(pids, cores)
    if not off:
        return ""
    named = ", ".join(f"thread {tid} on cores {mask}" for tid, mask in off[:3])
    more = f" and {len(off) - 3} more" if len(off) > 3 else ""
    return f"the engine left its cores {cores}: {named}{more}"


def parse_cpu_flags(cpuinfo: str) -> set[str]:
    """The feature flags of the first CPU in /proc/cpuinfo text."""
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def cpu_flags() -> set[str]:
    return parse_cpu_flags(Path("/proc/cpuinfo").read_text())
