"""Fixtures for the dapprof daemon's integration tests: every process started here is killed and
reaped at teardown, and every wait is bounded."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "support"))

from binaries import dapprof_bin  # noqa: E402,F401 (used by the tests)
from dapclient import DapClient  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"
FIXTURES = HERE / "fixtures"




def break_line(program: Path) -> int:
    for number, line in enumerate(program.read_text().splitlines(), 1):
        if "BREAK HERE" in line:
            return number
    raise AssertionError(f"no BREAK HERE in {program}")


def children_of(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def process_state(pid: int) -> str | None:
    """'R', 'S', 'Z', ... or None once the pid is gone (reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2]


def wait_until(predicate, timeout=15.0, interval=0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


class Processes:
    def __init__(self):
        self.procs: list[subprocess.Popen] = []
        self.pids: list[int] = []  # processes not started by us (debuggees) to clean up too
        self.clients: list[DapClient] = []

    def start(self, argv, **kwargs) -> subprocess.Popen:
        proc = subprocess.Popen(argv, **kwargs)
        self.procs.append(proc)
        return proc

    def cleanup(self):
        for client in self.clients:
            client.close()
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=8)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.fixture
def procs():
    p = Processes()
    yield p
    p.cleanup()


class Serve:
    def __init__(self, proc, port, log):
        self.proc = proc
        self.port = port
        self.log = log

    def connect(self, procs: Processes) -> DapClient:
        client = DapClient.over_socket("127.0.0.1", self.port)
        procs.clients.append(client)
        return client


def start_serve(procs: Processes, tmp_path: Path, *extra, env=None) -> Serve:
    log = tmp_path / f"serve-{len(procs.procs)}.log"
    stderr = open(log, "wb")
    proc = procs.start([dapprof_bin(), "serve", "--listen", "127.0.0.1:0", *extra],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    stderr.close()
    port = None

    def listening():
        nonlocal port
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read_text(errors="replace"))
        if m:
            port = int(m.group(1))
        return port is not None or proc.poll() is not None

    assert wait_until(listening, 15), "dapprof serve did not report its address"
    assert port, f"dapprof serve exited: {log.read_text()}"
    return Serve(proc, port, log)


def start_stdio(procs: Processes, *extra, env=None, stderr=None) -> tuple[subprocess.Popen, DapClient]:
    proc = procs.start([dapprof_bin(), "stdio", *extra], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=stderr, env=env)
    client = DapClient.over_process(proc)
    procs.clients.append(client)
    return proc, client


def start_debugpy_direct(procs: Processes, python=DEBIAN_PYTHON, env=None):
    proc = procs.start([python, "-m", "debugpy.adapter"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, env=env)
    client = DapClient.over_process(proc)
    procs.clients.append(client)
    return proc, client
