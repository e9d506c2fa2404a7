"""Child processes through dapprof, against real debugpy: debugpy announces a child with a
`debugpyAttach` event naming a port of its own adapter; dapprof must hand the client a port of its
own instead, so that the child's session (and any grandchild's) goes through dapprof and can be
profiled."""
from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

import network
from conftest import DEBIAN_PYTHON, FIXTURES, start_serve, start_stdio, wait_until
from dapclient import DapClient
from sessions import INITIALIZE

PROGRAM = FIXTURES / "spawns_child.py"


# -- helpers ------------------------------------------------------------------------------------

def find_event(client: DapClient, event: str, timeout=30.0, where=lambda body: True) -> dict:
    """The first `event` received so far or within `timeout` (DapClient.wait_for drops what it
    skips, and these events race with responses)."""
    found = client.find(lambda m: m.get("type") == "event" and m.get("event") == event and
                        where(m.get("body", {})), timeout)
    assert found, f"no {event!r} event within {timeout} s (connection closed: {client.eof.is_set()})"
    return found


def trace_lines(trace: Path) -> list[dict]:
    return [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]


def announced_by_debugpy(trace: Path, sub_process_id: int) -> dict:
    """The debugpyAttach body as debugpy sent it to dapprof, from the DAP trace."""
    for line in trace_lines(trace):
        m = line["message"]
        if (line["direction"] == "debugpy->dapprof" and m.get("event") == "debugpyAttach" and
                m["body"].get("subProcessId") == sub_process_id):
            return m["body"]
    raise AssertionError(f"debugpy's debugpyAttach for {sub_process_id} is not in the trace")


def listening_socket_owner(port: int) -> set[int]:
    """PIDs holding the socket that listens on 127.0.0.1:port."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state, inode = fields[1], fields[3], fields[9]
        if state == "0A" and local == "0100007F:%04X" % port:
            inodes.add(f"socket:[{inode}]")
    owners = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if fd.readlink().as_posix() in inodes:
                    owners.add(int(proc.name))
        except OSError:
            pass
    return owners


def parent_pid(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[1])


def integers_in(value) -> set[int]:
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {value}
    if isinstance(value, dict):
        return set().union(*(integers_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(integers_in(v) for v in value)) if value else set()
    return set()


def launch_parent(client: DapClient, stop_file: Path, depth: int) -> int:
    """Launches spawns_child.py with subProcess; returns the debuggee's pid."""
    assert client.call("initialize", INITIALIZE)["body"]["supportsProfiling"] is True
    launch_seq = client.request("launch", {
        "program": str(PROGRAM), "args": [str(stop_file), str(depth)],
        "console": "internalConsole", "python": [DEBIAN_PYTHON], "justMyCode": True,
        "subProcess": True})
    client.wait_event("initialized")
    assert client.call("configurationDone")["success"]
    assert client.wait_response(launch_seq)["success"]
    return find_event(client, "process")["body"]["systemProcessId"]


def check_redirected(event: dict, trace: Path, dapprof_pid: int) -> dict:
    """The event's `connect` is a loopback port of dapprof's own, and nothing else changed."""
    body = event["body"]
    original = announced_by_debugpy(trace, body["subProcessId"])
    connect = body["connect"]
    assert connect["host"] == "127.0.0.1"
    assert connect["port"] != original["connect"]["port"]
    assert listening_socket_owner(connect["port"]) == {dapprof_pid}
    assert {k: v for k, v in body.items() if k != "connect"} == \
        {k: v for k, v in original.items() if k != "connect"}
    # Nothing in the body a client could follow to reach debugpy directly.
    assert original["connect"]["port"] not in integers_in(body)
    return body


def attach_child(body: dict, procs) -> tuple[DapClient, int]:
    """Opens the child's session where the event says, as VS Code's startDebugging would; returns
    the client and the child's pid from its `process` event."""
    child = DapClient.over_socket(body["connect"]["host"], body["connect"]["port"])
    procs.clients.append(child)
    init = child.call("initialize", INITIALIZE)
    assert init["success"] and init["body"]["supportsProfiling"] is True
    attach_seq = child.request("attach", body)
    child.wait_event("initialized")
    assert child.call("configurationDone")["success"]
    assert child.wait_response(attach_seq)["success"]
    process = find_event(child, "process")
    pid = process["body"]["systemProcessId"]
    procs.pids.append(pid)
    assert process["body"]["startMethod"] == "attach"
    assert pid == body["subProcessId"]
    return child, pid


def end_session(client: DapClient, timeout=30.0):
    find_event(client, "terminated", timeout)
    assert client.call("disconnect", {})["success"]
    assert client.wait_eof(15), "the session did not end after disconnect"


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return False
    except ConnectionRefusedError:
        return True


def start_dapprof(transport, procs, tmp_path, trace):
    """(dapprof pid, client of the parent session, log file)."""
    log = tmp_path / "dapprof.log"
    args = ["--python", DEBIAN_PYTHON, "--trace-dap", str(trace)]
    if transport == "serve":
        serve = start_serve(procs, tmp_path, *args)
        return serve.proc.pid, serve.connect(procs), serve.log
    with open(log, "wb") as err:
        proc, client = start_stdio(procs, *args, stderr=err)
    return proc.pid, client, log


# -- tests --------------------------------------------------------------------------------------

@pytest.mark.parametrize("transport", ["stdio", "serve"])
def test_child_session_goes_through_dapprof(procs, tmp_path, transport):
    trace, stop_file = tmp_path / "trace.jsonl", tmp_path / "stop"
    dapprof_pid, parent, _ = start_dapprof(transport, procs, tmp_path, trace)
    parent_pid_ = launch_parent(parent, stop_file, depth=1)
    procs.pids.append(parent_pid_)
    body = check_redirected(find_event(parent, "debugpyAttach"), trace, dapprof_pid)
    child, child_pid = attach_child(body, procs)
    assert parent_pid(child_pid) == parent_pid_
    assert str(PROGRAM) in Path(f"/proc/{child_pid}/cmdline").read_text()
    # Requests in the child's session reach the child's debugger.
    threads = child.call("threads")
    assert threads["success"] and threads["body"]["threads"]

    stop_file.write_text("stop")
    end_session(child)
    end_session(parent)
    port = body["connect"]["port"]
    if transport == "serve":
        # The daemon goes on, but the parent session is over: its child port refuses.
        assert wait_until(lambda: refused(port), 10), "the child listener outlived its session"
    else:
        parent.close()
        assert procs.procs[-1].wait(timeout=15) == 0
        assert refused(port)


def test_profiling_in_child_session_samples_the_child(procs, tmp_path):
    trace, stop_file = tmp_path / "trace.jsonl", tmp_path / "stop"
    dapprof_pid, parent, _ = start_dapprof("stdio", procs, tmp_path, trace)
    parent_pid_ = launch_parent(parent, stop_file, depth=1)
    procs.pids.append(parent_pid_)
    body = check_redirected(find_event(parent, "debugpyAttach"), trace, dapprof_pid)
    child, child_pid = attach_child(body, procs)
    try:
        started = child.call("startProfiling", {"rate": 200, "idle": True})
        if not started["success"]:
            error_id = started.get("body", {}).get("error", {}).get("id")
            assert error_id == 2000, started
            pytest.skip("live sampling is not in this build (startProfiling answered error 2000: "
                        f"{started['message']!r}); the child's session itself works")
        assert started["body"]["pid"] == child_pid
        frames: dict[str, dict] = {}
        stacks: list[list] = []

        def child_sampled():
            for m in list(child.received):
                if m.get("type") == "event" and m.get("event") == "profilingData":
                    frames.update(m["body"]["newFrames"])
                    stacks.extend(m["body"]["samples"])
            return any(frames.get(str(f), {}).get("function") == "leaf_compute"
                       for stack in stacks for f in stack)

        assert wait_until(child_sampled, 15), f"no sample of the child's loop in {frames}"
        stopped = child.call("stopProfiling", {})
        assert stopped["success"] and stopped["body"]["sampleCount"] > 0
        functions = {f["function"] for f in frames.values()}
        files = {f["file"] for f in frames.values() if not f.get("native")}
        # The parent sleeps in supervise(); with idle sampling it would show up if it was sampled.
        assert "supervise" not in functions
        assert str(PROGRAM) in files
        # The parent's session did not get the child's samples.
        assert not any(m.get("event") == "profilingData" for m in parent.received)
    finally:
        stop_file.write_text("stop")
    end_session(child)
    end_session(parent)


def test_grandchild_is_announced_on_the_child_session_and_redirected(procs, tmp_path):
    trace, stop_file = tmp_path / "trace.jsonl", tmp_path / "stop"
    dapprof_pid, parent, log = start_dapprof("serve", procs, tmp_path, trace)
    parent_pid_ = launch_parent(parent, stop_file, depth=2)
    procs.pids.append(parent_pid_)
    child_body = check_redirected(find_event(parent, "debugpyAttach"), trace, dapprof_pid)
    child, child_pid = attach_child(child_body, procs)
    grandchild_body = check_redirected(find_event(child, "debugpyAttach"), trace, dapprof_pid)
    assert grandchild_body["connect"]["port"] != child_body["connect"]["port"]
    grandchild, grandchild_pid = attach_child(grandchild_body, procs)
    assert parent_pid(grandchild_pid) == child_pid
    assert parent_pid(child_pid) == parent_pid_
    # debugpy announced the grandchild with the address the child attached with (dapprof's); the
    # child's session maps it back to debugpy's own, so the grandchild does not depend on the
    # parent's session.
    debugpy_port = announced_by_debugpy(trace, child_pid)["connect"]["port"]
    assert announced_by_debugpy(trace, grandchild_pid)["connect"]["port"] == \
        child_body["connect"]["port"]
    served = re.findall(r"listening on 127\.0\.0\.1:(\d+) for child sessions of debugpy at "
                        r"127\.0\.0\.1:(\d+)", log.read_text())
    assert (str(grandchild_body["connect"]["port"]), str(debugpy_port)) in served
    assert grandchild.call("threads")["success"]

    stop_file.write_text("stop")
    end_session(grandchild)
    end_session(child)
    end_session(parent)


def test_child_port_is_loopback_only_when_the_daemon_listens_on_every_address(procs, tmp_path):
    """With --allow-remote the daemon can be reached from the network, but a child's session,
    which lets its client run code in the child as well, still cannot."""
    address = network.non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address to try")
    trace, stop_file = tmp_path / "trace.jsonl", tmp_path / "stop"
    serve = start_serve(procs, tmp_path, "--allow-remote", "--python", DEBIAN_PYTHON,
                        "--trace-dap", str(trace), listen="0.0.0.0:0")
    parent = DapClient.over_socket(address, serve.port)
    procs.clients.append(parent)
    procs.pids.append(launch_parent(parent, stop_file, depth=1))
    body = check_redirected(find_event(parent, "debugpyAttach"), trace, serve.proc.pid)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((address, body["connect"]["port"]), timeout=5).close()
    child, _ = attach_child(body, procs)
    stop_file.write_text("stop")
    end_session(child)
    end_session(parent)
