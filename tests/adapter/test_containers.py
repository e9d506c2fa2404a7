"""Live profiling of a program in a container (its own PID and mount namespace, made by
tests/support/in_root.c --pid), debugged through `dapprof stdio --connect` to debugpy 1.8
listening inside, as VS Code attaches to a port-forwarded container. debugpy names the program by
its PID in the container; dapprof must profile the host process that is, and never another."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import DEBIAN_PYTHON, start_stdio, wait_until
from dapclient import DapClient
from live_session import start_profiling, stream_of
from sessions import INITIALIZE

import containers  # noqa: E402 (tests/support, put on sys.path by conftest)
import pythons  # noqa: E402

PROGRAM = Path(__file__).resolve().parents[1] / "fixtures" / "hashing.py"
DECOY = Path(__file__).resolve().parents[1] / "fixtures" / "threads.py"


def sid(version: str) -> pythons.Interpreter:
    interp = pythons.find(f"sid-{version}")
    if interp is None:
        pytest.skip(pythons.missing_reason(f"sid-{version}"))
    return interp


def attach(client: DapClient, reported_pid: int) -> None:
    client.call("initialize", INITIALIZE)
    seq = client.request("attach", {"justMyCode": True})
    client.wait_event("initialized", 60)
    client.call("configurationDone")
    assert client.wait_response(seq, 60)["success"]
    assert client.wait_event("process", 60)["body"]["systemProcessId"] == reported_pid


def profile_briefly(client: DapClient, seconds=1.5, **arguments):
    mark = len(client.received)
    body = start_profiling(client, rate=200, batchIntervalMs=50, **arguments)
    time.sleep(seconds)
    assert client.call("stopProfiling", {}, 30)["success"]
    return body, stream_of(client, mark)


@pytest.mark.parametrize("version", ["3.13", "3.14", "3.15"])
def test_attach_to_debugpy_in_a_container(procs, version):
    with containers.Container(sid(version), [str(PROGRAM), "--listen"]) as box:
        assert box.report["pid"] == 1
        _, client = start_stdio(procs, "--connect", f"127.0.0.1:{box.report['port']}")
        attach(client, 1)
        body, stream = profile_briefly(client, idle=True)
        # Host pid 1 is another process (this machine's init): the program is the container's.
        assert body["pid"] == box.pid
        assert stream.pids() == {box.pid}
        assert {"hash_forever", "sleep_forever"} <= stream.functions(), stream.functions()
        # Threads by their host TIDs, which the hashing one is active under.
        tids = {t["name"]: int(tid) for tid, t in stream.threads.items()}
        assert tids["hasher"] == box.host_tid("hasher"), tids
        client.call("disconnect", {"terminateDebuggee": False})


class Forwarder:
    """A TCP relay on loopback, run by this test process: the debug connection's peer is then a
    process of the host's PID namespace, not the container's (as with a port forwarder)."""

    def __init__(self, port: int):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.target = port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        try:
            inbound, _ = self.listener.accept()
        except OSError:
            return
        outbound = socket.create_connection(("127.0.0.1", self.target))
        for a, b in ((inbound, outbound), (outbound, inbound)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self):
        self.listener.close()


def test_pid_1_through_a_port_forwarder_is_never_this_machines_init(procs):
    """debugpy's pid 1 through a forwarder (docker-proxy, kubectl port-forward): the connection's
    peer is a process of this machine's namespace, all of whose ancestors descend from this
    machine's pid 1. That init is not the debuggee for it (it runs another program): refused
    with the way out, then profiled with processId."""
    with containers.Container(sid("3.14"), [str(PROGRAM), "--listen"]) as box:
        relay = Forwarder(box.report["port"])
        _, client = start_stdio(procs, "--connect", f"127.0.0.1:{relay.port}")
        attach(client, 1)
        refused = client.call("startProfiling", {"rate": 200})
        assert not refused["success"]
        message = refused["message"]
        assert "process 1 there runs another program" in message, message
        assert "processId" in message, message
        body, stream = profile_briefly(client, seconds=0.5, processId=box.pid)
        assert body["pid"] == box.pid and "hash_forever" in stream.functions()
        client.call("disconnect", {"terminateDebuggee": False})
        relay.close()


def traced_reads(log: Path) -> dict[str, set[int]]:
    """Per kind of access, the PIDs the daemon read memory of, stopped, or opened files of."""
    seen = {"process_vm_readv": set(), "ptrace": set(), "open": set()}
    for line in log.read_text(errors="replace").splitlines():
        if m := re.search(r"process_vm_readv\((\d+),", line):
            seen["process_vm_readv"].add(int(m.group(1)))
        elif m := re.search(r"ptrace\(PTRACE_\w+, (\d+)", line):
            seen["ptrace"].add(int(m.group(1)))
        elif m := re.search(r'open(?:at)?\([^"]*"/proc/(\d+)/(?:task/\d+/)?(mem|maps|stat|environ|'
                            r'auxv|exe)"', line):
            seen["open"].add(int(m.group(1)))
    return seen


def untraceable_leak_check() -> dict:
    """The environment for a dapprof run under strace: an instrumented build's LeakSanitizer
    stops the process's threads with ptrace at exit, which a traced process cannot do."""
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))
    return env


def test_a_container_pid_that_is_also_a_host_process_is_never_read(procs, tmp_path):
    """The container's program has, inside, the PID of a live host Python process of the same
    user. Every process_vm_readv, ptrace and /proc open of the daemon is traced: the host
    process must be in none of them, the container's program in the reads."""
    decoy = procs.start([DEBIAN_PYTHON, str(DECOY)], stdout=subprocess.PIPE, text=True)
    assert '"ready": true' in decoy.stdout.readline()
    with containers.Container(sid("3.13"), [str(PROGRAM), "--listen"], ns_pid=decoy.pid) as box:
        assert box.pid != decoy.pid
        port = box.report["port"]
        log = tmp_path / "strace.log"
        strace = ["strace", "-f", "-qq", "-o", str(log),
                  "-e", "trace=process_vm_readv,ptrace,open,openat"]
        daemon, client = start_stdio(procs, "--connect", f"127.0.0.1:{port}", wrap=strace,
                                     env=untraceable_leak_check())
        attach(client, decoy.pid)
        body, stream = profile_briefly(client, seconds=1.0, native=True, idle=True)
        assert body["pid"] == box.pid
        assert "hash_forever" in stream.functions() and "spin" not in stream.functions()
        client.call("disconnect", {"terminateDebuggee": False})
        client.close()
        daemon.wait(timeout=30)

        # Through a relay of this test's, the connection's peer is in the host's namespace, where
        # debugpy's pid names the decoy, which runs another program: refused, with the way out.
        relay = Forwarder(port)
        daemon, client = start_stdio(procs, "--connect", f"127.0.0.1:{relay.port}",
                                     wrap=strace[:4] + [str(log) + ".2"] + strace[5:],
                                     env=untraceable_leak_check())
        attach(client, decoy.pid)
        refused = client.call("startProfiling", {"rate": 200})
        assert not refused["success"]
        message = refused["message"]
        assert "processId" in message and "container" in message, message
        assert "another program" in message, message
        # processId naming the decoy is refused; naming the container's program is profiled.
        wrong = client.call("startProfiling", {"processId": decoy.pid})
        assert not wrong["success"] and "not the debuggee" in wrong["message"], wrong
        body, stream = profile_briefly(client, seconds=0.5, processId=box.pid)
        assert body["pid"] == box.pid and "hash_forever" in stream.functions()
        client.call("disconnect", {"terminateDebuggee": False})
        client.close()
        daemon.wait(timeout=30)
        relay.close()

    for path in (log, Path(str(log) + ".2")):
        seen = traced_reads(path)
        assert box.pid in seen["process_vm_readv"], (path, seen)  # the trace sees the reads
        for kind, pids in seen.items():
            assert decoy.pid not in pids, (path, kind, pids)
