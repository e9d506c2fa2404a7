"""What the stress scripts share: one `dapprof serve`, real debugpy sessions through it, and the
daemon's resources as /proc shows them (stdlib only, plus the tests' DAP client and stream
decoder)."""
from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "adapter"))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from dapclient import DapClient, DapError  # noqa: E402,F401 (re-exported for the scripts)
from proc_info import (children_of, cpu_seconds, descendants, gone, open_fds,  # noqa: E402,F401
                       process_state, rss_kib, thread_count, wait_until)
from profiling_stream import Stream, read_collapsed  # noqa: E402,F401

TARGET = ROOT / "tests" / "adapter" / "fixtures" / "profile_target.py"
INITIALIZE = {"clientID": "dapprof-stress", "adapterID": "debugpy", "pathFormat": "path",
              "linesStartAt1": True, "columnsStartAt1": True}


@dataclass
class Resources:
    fds: int
    threads: int
    rss_kib: int
    children: list[int]

    def __str__(self) -> str:
        return (f"fds {self.fds}, threads {self.threads}, RSS {self.rss_kib / 1024:.1f} MiB, "
                f"children {len(self.children)}")


class Daemon:
    """`dapprof serve` on a loopback port of its choosing, its log in `workdir`."""

    def __init__(self, dapprof: str, python: str, workdir: Path, *extra: str):
        self.workdir = workdir
        self.dapprof = dapprof
        port_file = workdir / "port"
        self.log = workdir / "serve.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [dapprof, "serve", "--listen", "127.0.0.1:0", "--port-file", str(port_file),
                 "--python", python, "--log-level", "warn", *extra],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        if not wait_until(lambda: port_file.exists() and port_file.read_text().strip()
                          or self.proc.poll() is not None, 20):
            self.stop()
            raise SystemExit("dapprof serve did not start")
        if self.proc.poll() is not None:
            raise SystemExit(f"dapprof serve exited: {self.log.read_text()}")
        self.port = int(port_file.read_text())
        self.pid = self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def connect(self, gated: bool) -> DapClient:
        return (DapClient.over_gated_socket("127.0.0.1", self.port) if gated
                else DapClient.over_socket("127.0.0.1", self.port))

    def resources(self) -> Resources:
        return Resources(open_fds(self.pid), thread_count(self.pid), rss_kib(self.pid),
                         children_of(self.pid))

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def answers_a_new_session(self) -> bool:
        """Whether a new client gets initialize answered, and the session ends on disconnect."""
        client = DapClient.over_socket("127.0.0.1", self.port)
        try:
            ok = client.call("initialize", INITIALIZE, 30)["success"]
            client.call("disconnect", {}, 20)
            return ok and client.wait_eof(20)
        except DapError:
            return False
        finally:
            client.close()

    def settled(self, timeout=20.0) -> bool:
        """Whether every adapter the daemon started has ended and been reaped."""
        return wait_until(lambda: not children_of(self.pid), timeout, 0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class StdioDaemon:
    """`dapprof stdio`: one session on its standard input and output, the process ending with it."""

    def __init__(self, dapprof: str, python: str, workdir: Path, *extra: str):
        self.log = workdir / "stdio.log"
        self.proc = subprocess.Popen(
            [dapprof, "stdio", "--python", python, "--log-file", str(self.log),
             "--log-level", "warn", *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.pid = self.proc.pid

    def connect(self, gated: bool) -> DapClient:
        return DapClient.over_process(self.proc)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Session:
    """A debug session through the daemon launching `program` under debugpy."""

    def __init__(self, daemon: Daemon | StdioDaemon, program: Path, args: list[str], python: str,
                 gated=False, timeout=60.0):
        self.daemon = daemon
        before = set(children_of(daemon.pid))  # the daemon may start the adapter on connect
        self.client = daemon.connect(gated)
        try:
            assert self.client.call("initialize", INITIALIZE, timeout)["success"]
            seq = self.client.request("launch", {
                "program": str(program), "args": [str(a) for a in args],
                "console": "internalConsole", "python": [python], "justMyCode": True,
                "subProcess": False})
            self.client.wait_event("initialized", timeout)
            self.client.call("configurationDone", None, timeout)
            launched = self.client.wait_response(seq, timeout)
            assert launched["success"], launched
            self.debuggee = self.client.wait_event("process", timeout)["body"]["systemProcessId"]
        except BaseException:
            self.client.close()
            raise
        # Which adapter is this session's: the one child that appeared (meaningful when sessions
        # start one at a time).
        started = [pid for pid in children_of(daemon.pid) if pid not in before]
        self.adapter = started[0] if len(started) == 1 else None
        # Everything this session started: the adapter, debugpy's launcher, the program.
        self.processes = ([self.adapter, *descendants(self.adapter)] if self.adapter
                          else [self.debuggee])

    def saw_event(self, event: str, timeout=20.0) -> bool:
        return wait_until(lambda: any(m.get("type") == "event" and m.get("event") == event
                                      for m in list(self.client.received)), timeout)

    def stream(self, after=0) -> Stream:
        stream = Stream(check_schema=False)  # the tests check the schema; here it costs minutes
        for message in list(self.client.received)[after:]:
            if message.get("type") == "event" and message.get("event") == "profilingData":
                stream.add(message)
        return stream

    def end(self):
        """disconnect (ending the debuggee) and close, tolerating a session already gone."""
        try:
            if not self.client.eof.is_set():
                self.client.call("disconnect", {"terminateDebuggee": True}, 20)
        except DapError:
            pass
        self.client.close()
        kill_quietly(self.debuggee)


class Pinger(threading.Thread):
    """Sends `threads` on a session every `interval` seconds until stopped, keeping each round
    trip as (monotonic time sent, seconds)."""

    def __init__(self, session: Session, interval=0.05):
        super().__init__(daemon=True)
        self.session = session
        self.interval = interval
        self.round_trips: list[tuple[float, float]] = []
        self.failures = 0
        self._done = threading.Event()

    def run(self):
        while not self._done.is_set():
            sent = time.monotonic()
            try:
                response = self.session.client.call("threads", None, 30)
                if response["success"]:
                    self.round_trips.append((sent, time.monotonic() - sent))
                else:
                    self.failures += 1
            except DapError:
                self.failures += 1
            self._done.wait(self.interval)

    def stop(self):
        self._done.set()
        self.join(40)

    def between(self, start: float, end: float) -> list[float]:
        return [rtt for sent, rtt in self.round_trips if start <= sent < end]


def kill_quietly(pid: int | None, sig=signal.SIGKILL):
    if pid:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def percentile(values, q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def describe_ms(values) -> str:
    if not values:
        return "no values"
    return (f"median {statistics.median(values) * 1000:.2f} ms, "
            f"p99 {percentile(values, 0.99) * 1000:.2f} ms, n={len(values)}")
