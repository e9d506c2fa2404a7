"""Profiling without a debugger (`dapprof stdio|serve --profile-only`): launch starts a real Python
program, attach names a real running one; the profiling requests work as in a debug session, the
program's output and exit reach the client, and bad launch or attach arguments are refused with
an error that says what to do."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from conftest import DEBIAN_PYTHON, FIXTURES, gone, start_serve, start_stdio, wait_until
from dapclient import DapClient
from live_session import TARGET, assert_fixture_profiled, check_run, profile_run, saw_event
from sessions import INITIALIZE

CHATTY = FIXTURES / "chatty_exit.py"


def open_session(procs, tmp_path, transport) -> DapClient:
    if transport == "stdio":
        _, client = start_stdio(procs, "--profile-only", "--python", DEBIAN_PYTHON)
        return client
    return start_serve(procs, tmp_path, "--profile-only", "--python", DEBIAN_PYTHON).connect(procs)


def initialize(client: DapClient):
    body = client.call("initialize", INITIALIZE)["body"]
    assert body["supportsProfiling"] is True and body["supportsConfigurationDoneRequest"] is True
    client.wait_event("initialized")


def launch(client: DapClient, arguments: dict) -> int:
    initialize(client)
    response = client.call("launch", arguments)
    assert response["success"], response
    process = client.wait_event("process")["body"]
    assert process["startMethod"] == "launch"
    assert client.call("configurationDone")["success"]
    return process["systemProcessId"]


def events(client: DapClient, name: str) -> list[dict]:
    return [m for m in client.received if m.get("type") == "event" and m.get("event") == name]


@pytest.mark.parametrize("transport", ["stdio", "serve"])
def test_launch_profiles_the_program_until_it_exits(procs, tmp_path, transport):
    stop_file = tmp_path / "stop"
    client = open_session(procs, tmp_path, transport)
    pid = launch(client, {"program": str(TARGET), "args": [str(stop_file), "60"]})
    procs.pids.append(pid)
    assert os.readlink(f"/proc/{pid}/exe").startswith("/usr/bin/python3")
    # VS Code's breakpoints are answered, never hit.
    breakpoints = client.call("setBreakpoints", {"source": {"path": str(TARGET)},
                                                 "breakpoints": [{"line": 12}]})
    assert breakpoints["body"]["breakpoints"][0]["verified"] is False
    assert wait_until(lambda: len(client.call("threads")["body"]["threads"]) >= 2, 10)
    assert pid in [t["id"] for t in client.call("threads")["body"]["threads"]]

    stream, summary, out, body = profile_run(client, tmp_path, "run", rate=250,
                                             batchIntervalMs=50)
    assert body["pid"] == pid
    check_run(stream, summary, out)
    assert_fixture_profiled(stream)

    # A second run ends by itself when the program exits: profilingStopped, exited, terminated.
    assert client.call("startProfiling", {"rate": 200})["success"]
    time.sleep(0.5)
    stop_file.write_text("stop")
    assert saw_event(client, "terminated", 30)
    assert saw_event(client, "profilingStopped", 10)
    assert events(client, "exited")[0]["body"]["exitCode"] == 0, events(client, "output")
    assert client.call("disconnect", {})["success"]
    assert client.wait_eof()


def test_output_and_exit_code_reach_the_client(procs, tmp_path):
    client = open_session(procs, tmp_path, "stdio")
    launch(client, {"program": CHATTY.name, "cwd": str(FIXTURES), "args": ["3"]})
    assert saw_event(client, "terminated", 30)
    out = "".join(e["body"]["output"] for e in events(client, "output")
                  if e["body"]["category"] == "stdout")
    err = "".join(e["body"]["output"] for e in events(client, "output")
                  if e["body"]["category"] == "stderr")
    assert out == "".join(f"out {i} \u00e9\u20ac" + "." * 300 + "\n" for i in range(200))
    assert err == "to stderr \u2603\n"
    exited = events(client, "exited")
    assert [e["body"]["exitCode"] for e in exited] == [3]
    # exited comes after the last output, terminated after exited.
    order = [m.get("event") for m in client.received if m.get("type") == "event"]
    assert order.index("exited") > max(i for i, e in enumerate(order) if e == "output")
    assert order.index("terminated") > order.index("exited")


def test_a_module_with_a_python_of_its_own(procs, tmp_path):
    client = open_session(procs, tmp_path, "stdio")
    python = str(tmp_path / "python")
    os.symlink(DEBIAN_PYTHON, python)
    launch(client, {"module": "json.tool", "args": ["--version"], "python": [python, "-I"],
                    "env": {"DAPPROF_TEST_MARK": "1"}})
    assert saw_event(client, "terminated", 30)
    # json.tool has no --version: argparse's usage error, on stderr, exit code 2.
    assert events(client, "exited")[0]["body"]["exitCode"] == 2
    assert any("usage" in e["body"]["output"] for e in events(client, "output"))


def test_disconnect_terminates_a_launched_program(procs, tmp_path):
    client = open_session(procs, tmp_path, "stdio")
    pid = launch(client, {"program": str(TARGET), "args": [str(tmp_path / "never"), "60"]})
    procs.pids.append(pid)
    assert client.call("startProfiling", {"rate": 100})["success"]
    assert client.call("disconnect", {})["success"]
    assert wait_until(lambda: gone(pid), 10), "the launched program is still running"
    assert client.wait_eof()


def test_start_profiling_waits_for_a_program_starting_its_interpreter(procs, tmp_path):
    # startProfiling right after launch, while the launched process has not become Python yet
    # (here a wrapper that waits half a second before it execs the interpreter, as a pyenv shim
    # or a slow file system would): the attach waits for the interpreter rather than answering
    # that the process is not Python.
    wrapper = tmp_path / "slow-python"
    wrapper.write_text(f"#!/bin/sh\nsleep 0.5\nexec {DEBIAN_PYTHON} \"$@\"\n")
    wrapper.chmod(0o755)
    client = open_session(procs, tmp_path, "stdio")
    pid = launch(client, {"program": str(TARGET), "args": [str(tmp_path / "never"), "60"],
                          "python": str(wrapper)})
    procs.pids.append(pid)
    assert not os.readlink(f"/proc/{pid}/exe").startswith("/usr/bin/python3")
    response = client.call("startProfiling", {"rate": 100})
    assert response["success"], response
    assert os.readlink(f"/proc/{pid}/exe").startswith("/usr/bin/python3")
    assert client.call("disconnect", {})["success"]
    assert wait_until(lambda: gone(pid), 10), "the launched program is still running"


@pytest.mark.parametrize("transport", ["stdio", "serve"])
def test_attach_profiles_a_running_process_and_leaves_it_running(procs, tmp_path, transport):
    stop_file = tmp_path / "stop"
    target = procs.start([DEBIAN_PYTHON, str(TARGET), str(stop_file), "60"],
                         stdin=subprocess.DEVNULL)
    client = open_session(procs, tmp_path, transport)
    initialize(client)
    # As VS Code's ${command:pickProcess} gives it: a string.
    assert client.call("attach", {"processId": str(target.pid)})["success"]
    assert client.wait_event("process")["body"]["systemProcessId"] == target.pid
    client.call("configurationDone")
    time.sleep(0.3)  # the program's threads start
    stream, summary, out, _ = profile_run(client, tmp_path, "attached", rate=250,
                                          batchIntervalMs=50)
    check_run(stream, summary, out)
    assert_fixture_profiled(stream)
    assert client.call("disconnect", {})["success"]
    assert client.wait_eof()
    time.sleep(0.3)
    assert target.poll() is None, "an attached process must be left running"
    stop_file.write_text("stop")
    assert target.wait(timeout=20) == 0


def test_attached_process_exit_ends_the_session(procs, tmp_path):
    target = procs.start([DEBIAN_PYTHON, "-c", "import time; time.sleep(60)"])
    client = open_session(procs, tmp_path, "stdio")
    initialize(client)
    assert client.call("attach", {"processId": target.pid})["success"]
    assert client.call("startProfiling", {"rate": 100})["success"]
    target.send_signal(signal.SIGTERM)
    target.wait(timeout=10)
    assert saw_event(client, "terminated", 10)
    assert saw_event(client, "profilingStopped", 10)
    assert not events(client, "exited")  # its exit code is its parent's to know


def test_bad_arguments_are_refused_with_what_to_do(procs, tmp_path):
    sleeper = procs.start(["sleep", "60"])
    client = open_session(procs, tmp_path, "stdio")
    initialize(client)

    def refused(command, arguments, error_id, *words):
        response = client.call(command, arguments)
        assert not response["success"], response
        assert response["body"]["error"]["id"] == error_id, response
        for word in words:
            assert word in response["message"], response["message"]

    refused("attach", {}, 2001, "processId")
    refused("attach", {"processId": "12x"}, 2001, "processId")
    refused("attach", {"processId": 2**22 + 12345}, 2008, "no process")
    refused("attach", {"processId": sleeper.pid}, 2005, "not running Python", "sleep")
    refused("launch", {}, 2001, "\"program\"", "\"module\"")
    refused("launch", {"program": str(tmp_path / "missing.py")}, 2001, "missing.py", "not a file")
    refused("launch", {"program": str(TARGET), "args": "a b"}, 2001, "array of strings")
    refused("launch", {"program": str(TARGET), "cwd": str(tmp_path / "nowhere")}, 2001,
            "not a directory")
    refused("launch", {"program": str(TARGET), "python": "no-such-python-3"}, 2000,
            "no-such-python-3", "PATH")
    refused("stackTrace", {"threadId": 1}, 2001, "profile-only", "no debugger")
    refused("startProfiling", {}, 2002)  # nothing launched or attached yet
    # After all that, the session still launches.
    response = client.call("launch", {"program": str(CHATTY), "args": ["0"]})
    assert response["success"], response
    refused("attach", {"processId": sleeper.pid}, 2001, "already")
    assert saw_event(client, "terminated", 30)
