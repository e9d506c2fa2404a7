"""Fixtures for the dapprof daemon's integration tests: every process started here is killed and
reaped at teardown, and every wait is bounded."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "support"))

from binaries import dapprof_bin  # noqa: E402,F401 (used by the tests)
from dapclient import DapClient  # noqa: E402
# For the tests:
from proc_info import children_of, gone, process_state, wait_until  # noqa: E402,F401

DEBIAN_PYTHON = "/usr/bin/python3"
FIXTURES = HERE / "fixtures"


def break_line(program: Path) -> int:
    for number, line in enumerate(program.read_text().splitlines(), 1):
        if "BREAK HERE" in line:
            return number
    raise AssertionError(f"no BREAK HERE in {program}")


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
    def __init__(self, proc, host, port, log):
        self.proc = proc
        self.host = host  # as the daemon printed it
        self.port = port
        self.log = log

    def connect(self, procs: Processes) -> DapClient:
        client = DapClient.over_socket("127.0.0.1", self.port)
        procs.clients.append(client)
        return client


def start_serve(procs: Processes, tmp_path: Path, *extra, env=None, listen="127.0.0.1:0",
                user=None, binary=None) -> Serve:
    """`dapprof serve` (`binary`, by default the built one), as `user` (unprivileged.User) if
    given; returns once it has printed the address it listens on."""
    log = tmp_path / f"serve-{len(procs.procs)}.log"
    stderr = open(log, "wb")
    argv = [binary or dapprof_bin(), "serve", "--listen", listen, *extra]
    proc = procs.start(user.argv(argv) if user else argv, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    stderr.close()
    host, port = None, None

    def listening():
        nonlocal host, port
        m = re.search(r"dapprof: listening on (\[[^]]+\]|[^\s:]+):(\d+)",
                      log.read_text(errors="replace"))
        if m:
            host, port = m.group(1), int(m.group(2))
        return port is not None or proc.poll() is not None

    assert wait_until(listening, 15), "dapprof serve did not report its address"
    assert port, f"dapprof serve exited: {log.read_text()}"
    return Serve(proc, host, port, log)


def start_stdio(procs: Processes, *extra, env=None, stderr=None, user=None,
                binary=None, wrap=()) -> tuple[subprocess.Popen, DapClient]:
    """`dapprof stdio` with `extra` arguments, run by the command `wrap` if given (strace)."""
    argv = [*wrap, binary or dapprof_bin(), "stdio", *extra]
    proc = procs.start(user.argv(argv) if user else argv, stdin=subprocess.PIPE,
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
