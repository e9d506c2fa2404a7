"""What /proc says about a process: its children, state, threads, open files and memory. Shared by
the integration tests and the stress scripts under bench/stress (stdlib only)."""
from __future__ import annotations

import os
import time
from pathlib import Path


def children_of(pid: int) -> list[int]:
    """Direct children (zombies included) of every thread of `pid`."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid`: a session's adapter, debugpy's launcher, the launched program."""
    found, todo = [], [pid]
    while todo:
        for child in children_of(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def gone(pid: int) -> bool:
    """Ended: reaped, dead, or a zombie waiting for a parent that is not ours (init in a
    container)."""
    return process_state(pid) in (None, "Z", "X")


def process_state(pid: int) -> str | None:
    """'R', 'S', 'Z', ... or None once the pid is gone (reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2]


def task_states(pid: int) -> dict[int, str]:
    """{tid: state} of every thread; 't' is a ptrace stop, 'T' a job-control stop."""
    states = {}
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended while we looked
        states[int(task.name)] = stat[stat.rindex(")") + 2]
    return states


def tracer_of(pid: int) -> int:
    """TracerPid of the process (0: not traced)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("TracerPid:"):
            return int(line.split()[1])
    return 0


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError(f"no VmRSS for {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def thread_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until(predicate, timeout=15.0, interval=0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
