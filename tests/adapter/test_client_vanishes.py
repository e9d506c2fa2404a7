"""A client that goes away without `disconnect` (a window reload, a crash of VS Code): the session
ends as debugpy's own adapter ends it when its client goes. A launched program is terminated, an
attached one is left running and detached, the session's adapter and everything it started is
gone, and the daemon is back to the descriptors and threads it had before the session.

Each kind of session is tried through `serve` (the socket closed as a dead process's is, with a
FIN; reset; or the client process really killed) and through `stdio` (its input closed), with
profiling on, since a sampler attached to the program is one more thing that must end."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import (DEBIAN_PYTHON, FIXTURES, children_of, dapprof_bin, process_state,
                      start_serve, start_stdio, wait_until)
from dapclient import DapClient
from proc_info import descendants, gone, open_fds, thread_count
from sessions import INITIALIZE

HERE = Path(__file__).resolve().parent
TARGET = FIXTURES / "profile_target.py"
LISTENER = FIXTURES / "listen_program.py"
# The adapter has 5 s to end its session once its input is closed, then its pipes are closed and
# it is sent SIGTERM 3 s later (SIGKILL after 3 more): everything is gone well within this.
GRACE = 15


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """dapprof serve or stdio, and the way its client goes away."""

    def __init__(self, how: str, procs, tmp_path: Path, *extra: str):
        self.how = how
        self.procs = procs
        self.log = tmp_path / "dapprof.log"
        args = ["--python", DEBIAN_PYTHON, "--log-file", str(self.log), "--log-level", "info",
                *extra]
        if how == "stdio":
            self.proc, self.client = start_stdio(procs, *args)
            self.baseline = None
        else:
            self.serve = start_serve(procs, tmp_path, *args)
            self.proc = self.serve.proc
            # What the daemon must be back to once the session has ended: taken with no session
            # open, after one that set up what lasts as long as the daemon (asio's resolver
            # thread for --connect).
            warm_up = self.serve.connect(procs)
            assert warm_up.call("initialize", INITIALIZE)["success"]
            warm_up.call("disconnect", {})
            assert warm_up.wait_eof(15)
            warm_up.close()
            assert wait_until(lambda: not children_of(self.proc.pid), 15)
            time.sleep(0.2)
            self.baseline = (open_fds(self.proc.pid), thread_count(self.proc.pid))
            self.client = self.serve.connect(procs)

    def vanish(self):
        if self.how == "serve-reset":
            self.client.vanish(reset=True)
        else:
            self.client.vanish()

    def check_cleaned_up(self, session_processes=()):
        """Every process the session started has ended; the daemon is back to its baseline."""
        began = time.monotonic()
        left = lambda: [p for p in session_processes if not gone(p)]  # noqa: E731
        assert wait_until(lambda: not left(), GRACE), \
            f"left running: {left()}; log: {self.log.read_text(errors='replace')[-3000:]}"
        if self.how == "stdio":
            assert self.proc.wait(timeout=GRACE) == 0, "dapprof stdio did not exit cleanly"
        else:
            assert wait_until(lambda: not children_of(self.proc.pid), GRACE)
            now = lambda: (open_fds(self.proc.pid), thread_count(self.proc.pid))  # noqa: E731
            assert wait_until(lambda: now() == self.baseline, 5), \
                f"(fds, threads) {now()} != baseline {self.baseline}"
            # And it goes on serving: a new session is answered (with --connect, by debugpy's
            # listening adapter, which may still be ending the last session and refuse).
            fresh = self.serve.connect(self.procs)
            assert fresh.call("initialize", INITIALIZE)["type"] == "response"
            fresh.close()
        print(f"{self.how}: the session's processes ended {time.monotonic() - began:.1f} s after "
              f"the client went away")
        log = self.log.read_text(errors="replace")
        assert "ended without disconnect" in log, log[-3000:]


def received(client: DapClient, what, timeout=30.0) -> dict:
    """The first message matching `what`, in whatever order the session's adapter sent them
    (debugpy and dapprof's own adapter order `launch`'s answers differently)."""
    found = client.find(what, timeout)
    assert found, "not received"
    return found


def event(name):
    return lambda m: m.get("type") == "event" and m.get("event") == name


def response(seq):
    return lambda m: m.get("type") == "response" and m.get("request_seq") == seq


def start(client: DapClient, request: str, arguments: dict, then=lambda: None) -> int:
    """initialize, then launch or attach (`then` runs once it is sent), configurationDone;
    the pid of the `process` event."""
    assert client.call("initialize", INITIALIZE)["success"]
    seq = client.request(request, arguments)
    then()
    received(client, event("initialized"))
    done = client.request("configurationDone")
    assert received(client, response(done))["success"]
    assert received(client, response(seq))["success"]
    return received(client, event("process"))["body"]["systemProcessId"]


def launch(client: DapClient, arguments: dict) -> int:
    return start(client, "launch", arguments)


def attach(client: DapClient, arguments: dict, then=lambda: None) -> int:
    return start(client, "attach", arguments, then)


def profile(client: DapClient, pid: int):
    """Profiling running, its first samples come: every thread's, idle ones included (the attached
    program sleeps 50 ms a turn, and the default mode's first sample of it took 4 to over 20 s)."""
    started = client.call("startProfiling", {"rate": 1000, "batchIntervalMs": 50, "mode": "wall"})
    assert started["success"] and started["body"]["pid"] == pid, started
    received(client, event("profilingData"), 20)


def debug_launch_arguments(stop_file: Path) -> dict:
    return {"program": str(TARGET), "args": [str(stop_file), "120"],
            "console": "internalConsole", "python": [DEBIAN_PYTHON], "subProcess": False}


def still_running_then_ends_normally(program: subprocess.Popen, stop_file: Path):
    """The attached program was left running, not stopped or killed: alive a while after the
    session ended, and it finishes by itself when told to."""
    time.sleep(1.0)
    assert program.poll() is None and process_state(program.pid) in ("R", "S"), \
        f"the attached program was not left running ({process_state(program.pid)})"
    stop_file.write_text("stop")
    assert program.wait(timeout=20) == 0


TRANSPORTS = ["serve", "serve-reset", "stdio"]


@pytest.mark.parametrize("how", TRANSPORTS)
def test_launched_program_is_terminated(procs, tmp_path, how):
    stop_file = tmp_path / "stop"
    daemon = Daemon(how, procs, tmp_path)
    pid = launch(daemon.client, debug_launch_arguments(stop_file))
    procs.pids.append(pid)
    profile(daemon.client, pid)
    session = descendants(daemon.proc.pid)  # the adapter, its launcher, the program
    assert pid in session and len(session) >= 3, session
    daemon.vanish()
    daemon.check_cleaned_up(session)
    assert "profiling ended (disconnected)" in daemon.log.read_text()


def test_launched_program_is_terminated_without_profiling(procs, tmp_path):
    daemon = Daemon("serve", procs, tmp_path)
    pid = launch(daemon.client, debug_launch_arguments(tmp_path / "stop"))
    procs.pids.append(pid)
    session = descendants(daemon.proc.pid)
    assert pid in session, session
    daemon.vanish()
    daemon.check_cleaned_up(session)


CLIENT_PROCESS = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from dapclient import DapClient
    from sessions import INITIALIZE
    client = DapClient.over_socket("127.0.0.1", int(sys.argv[2]))
    assert client.call("initialize", INITIALIZE)["success"]
    seq = client.request("launch", {"program": sys.argv[3], "args": [sys.argv[4], "120"],
                                    "console": "internalConsole", "python": [sys.argv[5]],
                                    "subProcess": False})
    client.wait_event("initialized")
    client.call("configurationDone")
    client.wait_response(seq)
    pid = client.wait_event("process")["body"]["systemProcessId"]
    assert client.call("startProfiling", {"rate": 1000})["success"]
    client.wait_event("profilingData")
    print(pid, flush=True)
    client.wait_eof(600)
""")


def test_a_killed_client_process(procs, tmp_path):
    """The real thing: the client's process is killed, and its kernel closes the connection."""
    daemon = Daemon("serve", procs, tmp_path)
    daemon.client.close()  # not used: the client is another process
    client = procs.start([sys.executable, "-c", CLIENT_PROCESS, str(HERE), str(daemon.serve.port),
                          str(TARGET), str(tmp_path / "stop"), DEBIAN_PYTHON],
                         stdout=subprocess.PIPE, text=True)
    pid = int(client.stdout.readline())
    procs.pids.append(pid)
    session = descendants(daemon.proc.pid)
    assert pid in session
    client.send_signal(signal.SIGKILL)
    client.wait()
    daemon.check_cleaned_up(session)


@pytest.mark.parametrize("how", TRANSPORTS)
def test_attached_program_is_left_running(procs, tmp_path, how):
    """attach with `listen`: the program connected to the session's adapter (debugpy --connect)."""
    stop_file, port = tmp_path / "stop", free_port()
    daemon = Daemon(how, procs, tmp_path)
    program = []

    def start_program():  # once the adapter listens
        time.sleep(0.5)
        program.append(procs.start(
            [DEBIAN_PYTHON, "-m", "debugpy", "--connect", f"127.0.0.1:{port}", str(TARGET),
             str(stop_file), "120"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))

    pid = attach(daemon.client, {"listen": {"host": "127.0.0.1", "port": port},
                                 "subProcess": False}, then=start_program)
    assert pid == program[0].pid
    profile(daemon.client, pid)
    session = descendants(daemon.proc.pid)  # the adapter
    assert session, "the session's adapter was not found"
    daemon.vanish()
    daemon.check_cleaned_up(session)
    still_running_then_ends_normally(program[0], stop_file)


@pytest.mark.parametrize("how", TRANSPORTS)
def test_program_attached_through_connect_is_left_running(procs, tmp_path, how):
    """`--connect` to a program's own debugpy.listen: dapprof starts no adapter of its own."""
    stop_file = tmp_path / "stop"
    program = procs.start([DEBIAN_PYTHON, str(LISTENER), str(stop_file)], stdout=subprocess.PIPE,
                          stdin=subprocess.DEVNULL)
    line = program.stdout.readline().decode()
    assert line.startswith("LISTENING"), line
    daemon = Daemon(how, procs, tmp_path, "--connect", f"127.0.0.1:{line.split()[1]}")
    pid = attach(daemon.client, {"justMyCode": True})
    assert pid == program.pid
    profile(daemon.client, pid)
    daemon.vanish()
    daemon.check_cleaned_up()
    still_running_then_ends_normally(program, stop_file)


@pytest.mark.parametrize("how", TRANSPORTS)
def test_profile_only_launch_is_terminated(procs, tmp_path, how):
    daemon = Daemon(how, procs, tmp_path, "--profile-only")
    pid = launch(daemon.client, {"program": str(TARGET), "args": [str(tmp_path / "stop"), "120"],
                                 "python": DEBIAN_PYTHON})
    procs.pids.append(pid)
    profile(daemon.client, pid)
    session = descendants(daemon.proc.pid)
    assert session == [pid], session
    daemon.vanish()
    daemon.check_cleaned_up(session)


@pytest.mark.parametrize("how", TRANSPORTS)
def test_profile_only_attach_is_left_running(procs, tmp_path, how):
    stop_file = tmp_path / "stop"
    program = procs.start([DEBIAN_PYTHON, str(TARGET), str(stop_file), "120"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    daemon = Daemon(how, procs, tmp_path, "--profile-only")
    assert wait_until(lambda: Path(f"/proc/{program.pid}/maps").read_text().count("python") > 0,
                      10)
    pid = attach(daemon.client, {"processId": program.pid})
    assert pid == program.pid
    profile(daemon.client, pid)
    daemon.vanish()
    daemon.check_cleaned_up()
    still_running_then_ends_normally(program, stop_file)


@pytest.mark.parametrize("how", ["serve", "stdio"])
def test_child_sessions_end_with_their_client(procs, tmp_path, how):
    """A parent session and its child process's session (subProcess), both clients gone at once
    as when VS Code dies: the parent program, its child, the adapter and its launcher all end."""
    import test_child_sessions as children  # its helpers; its tests are not collected here

    daemon = Daemon(how, procs, tmp_path)
    parent_pid = children.launch_parent(daemon.client, tmp_path / "stop", 1)
    procs.pids.append(parent_pid)
    announced = children.find_event(daemon.client, "debugpyAttach")
    child_client, child_pid = children.attach_child(announced["body"], procs)
    profile(child_client, child_pid)
    session = descendants(daemon.proc.pid)
    assert parent_pid in session and child_pid in session, session
    child_client.vanish()
    daemon.vanish()
    daemon.check_cleaned_up(session)


def test_a_client_that_can_no_longer_be_written_to_is_gone(procs, tmp_path):
    """stdio with the client's reading pipe closed but its writing one open: the first answer
    dapprof cannot deliver ends the session (without this, it would wait for an EOF that a
    half-dead client never sends)."""
    log = tmp_path / "dapprof.log"
    proc = procs.start([dapprof_bin(), "stdio", "--python", DEBIAN_PYTHON, "--log-file", str(log)],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    proc.stdout.close()  # nobody reads what dapprof writes any more
    body = json.dumps({"seq": 1, "type": "request", "command": "initialize",
                       "arguments": INITIALIZE}).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()
    adapters = []
    assert wait_until(lambda: adapters.extend(children_of(proc.pid)) or adapters, 10)
    assert proc.wait(timeout=GRACE) == 0, "dapprof kept a session it could not write to"
    assert all(gone(p) for p in adapters)
    assert "cannot write to it" in log.read_text(), log.read_text()
    proc.stdin.close()
