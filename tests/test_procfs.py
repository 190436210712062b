import os
import subprocess
import sys

import pytest

from edgebench.procfs import (
    parse_last_cpu,
    parse_pid_stat,
    parse_proc_stat,
    parse_status_kb,
    pinning_error,
    read_pid_stat,
    set_tree_affinity,
    threads_off_cores,
    tree_rss_anon_mb,
)

STATUS = "Name:\tpython\nVmRSS:\t  123456 kB\nRssAnon:\t   98765 kB\nRssFile:\t 1000 kB\n"


def test_status_field_in_kb():
    assert parse_status_kb(STATUS, "RssAnon") == 98765


def test_pid_stat_survives_spaces_and_parentheses_in_the_name():
    fields = [
        "S",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
        "8",
        "9",
        "10",
        "111",
        "222",
        "33",
        "44",
        "15",
        "16",
        "17",
        "18",
        "999",
    ]
    stat = parse_pid_stat("4242 (my (odd) proc) " + " ".join(fields))
    assert (stat.pid, stat.ppid, stat.utime, stat.stime, stat.cutime, stat.cstime, stat.starttime) == (
        4242,
        1,
        111,
        222,
        33,
        44,
        999,
    )


def test_last_cpu_is_field_39_after_a_name_with_spaces_and_parentheses():
    fields = [str(n) for n in range(3, 53)]  # field n holds n
    assert parse_last_cpu("4242 (my (odd) proc) " + " ".join(fields)) == 39


def test_a_process_pinned_to_a_core_reads_that_core_as_its_last():
    core = sorted(os.sched_getaffinity(0))[-1]
    code = (
        "import os; from edgebench.procfs import last_cpu; "
        f"os.sched_setaffinity(0, {{{core}}}); sum(range(10**6)); print(last_cpu())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert int(out.stdout) == core


def test_proc_stat_per_cpu_busy_idle_steal():
    text = "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 10 1 5 100 3 1 1 7 0 0\ncpu1 20 0 0 50 0 0 0 0 0 0\nintr 1\n"
    cpus = parse_proc_stat(text)
    assert set(cpus) == {0, 1}
    assert cpus[0].busy == 10 + 1 + 5 + 1 + 1 and cpus[0].idle == 103 and cpus[0].steal == 7


def test_live_readers_on_this_process():
    assert read_pid_stat(os.getpid()).pid == os.getpid()
    assert tree_rss_anon_mb(os.getpid()) > 1


def test_a_thread_allowed_outside_the_given_cores_is_named():
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        pytest.skip(f"needs two usable cores; this process may use {cores}")
    # a child with a second thread, both pinned to the first core, then its main thread widened
    code = (
        "import threading, time; "
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start(); time.sleep(60)"
    )
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = 50
        while len(os.listdir(f"/proc/{child.pid}/task")) < 2 and deadline:
            subprocess.run(["sleep", "0.1"], timeout=5)
            deadline -= 1
        set_tree_affinity([child.pid], cores[:1])
        assert threads_off_cores([child.pid], cores[:1]) == [] and pinning_error([child.pid], cores[:1]) == ""
        os.sched_setaffinity(child.pid, cores[:2])
        assert threads_off_cores([child.pid], cores[:1]) == [(child.pid, cores[:2])]
        named = f"the engine left its cores {cores[:1]}: thread {child.pid}"
        assert pinning_error([child.pid], cores[:1]).startswith(named)
        assert threads_off_cores([child.pid], cores[:2]) == []
    finally:
        child.kill()
        child.wait(timeout=10)
