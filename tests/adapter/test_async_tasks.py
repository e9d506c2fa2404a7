"""The asyncTasks request end to end: a DAP client debugging a real asyncio program
(tests/fixtures/asyncio_tasks.py) through dapprof and real debugpy asks for its tasks; the answer
must be the program's own truth (the tasks it prints from asyncio's registry, with their ids), the
document `dapprof dump --async --json` prints for the same process, and valid against
schemas/asyncTasksResponse.schema.json. The errors: no debuggee yet, a pid outside the session,
bad arguments, and a version whose tasks the sampler cannot read, whose message must be the
sampler's own (what dump --async says)."""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

import pythons
from conftest import FIXTURES, start_serve, start_stdio, wait_until
from dap_schemas import validate
from dapclient import DapClient
from live_session import launch
from sessions import INITIALIZE

PROGRAM = FIXTURES.parent.parent / "fixtures" / "asyncio_tasks.py"
READABLE = ["sid-3.14", "sid-3.15"]  # the versions whose tasks the sampler reads today


def interpreter(name: str):
    interp = pythons.find(name)
    if interp is None:
        pytest.skip(pythons.missing_reason(name))
    return interp


def truth_of(client: DapClient, timeout=60.0) -> dict:
    """The fixture's ground truth: its one JSON line, from the debuggee's stdout output events."""
    found: dict = {}

    def ready():
        text = "".join(m["body"].get("output", "") for m in list(client.received)
                       if m.get("type") == "event" and m.get("event") == "output"
                       and m.get("body", {}).get("category") == "stdout")
        for line in text.split("\n")[:-1]:  # complete lines only: the output comes in pieces
            if line.startswith("{") and ("ready" in line or "skip" in line):
                found.update(json.loads(line))
                return True
        return False

    assert wait_until(ready, timeout), "the program printed no truth line"
    if "skip" in found:
        pytest.skip(found["skip"])
    return found


def start(procs, interp, scenario: str, *args: str, transport="stdio", tmp_path=None):
    """A session through dapprof debugging the fixture's `scenario` under `interp`."""
    env = pythons.debugpy_env(interp)
    if transport == "stdio":
        _, client = start_stdio(procs, "--python", interp.path, env=env)
    else:
        client = start_serve(procs, tmp_path, "--python", interp.path, env=env).connect(procs)
    pid = launch(client, [scenario, *args], python=interp.inner_path, program=PROGRAM)
    procs.pids.append(pid)
    return client, pid, truth_of(client)


def async_tasks(client: DapClient, timeout=60.0, **arguments) -> dict:
    return client.call("asyncTasks", arguments, timeout)


def dump_async(pid: int) -> subprocess.CompletedProcess:
    from binaries import dapprof_bin
    return subprocess.run([dapprof_bin(), "dump", "--pid", str(pid), "--async", "--json"],
                          capture_output=True, text=True, timeout=120)


def shape(document: dict) -> set:
    """What does not move while the program waits: each task with its awaiters and outermost
    frame (a task running in turns may be anywhere deeper down)."""
    return {(t["id"], t["name"], t["thread"], tuple(sorted(t["awaited_by"])),
             t["frames"][-1]["name"] if t["frames"] else None) for t in document["tasks"]}


@pytest.mark.parametrize("name", READABLE)
def test_tasks_are_the_programs_own(procs, name):
    interp = interpreter(name)
    client, pid, truth = start(procs, interp, "taskgroup")
    response = async_tasks(client)
    assert response["success"], response
    validate("asyncTasksResponse", response)
    body = response["body"]
    assert body["python_version"] == "%d.%d.%d" % interp.version
    assert body["torn"] == 0 and body["truncated"] is False and body["missing"] == []

    # Exactly the program's tasks, under the ids asyncio has for them.
    assert {(t["name"], t["id"]) for t in body["tasks"]} == \
        {(t["name"], t["id"]) for t in truth["tasks"]}
    by_name = {t["name"]: t for t in body["tasks"]}
    main = by_name["Task-1"]
    assert main["awaited_by"] == []
    for h in range(3):
        assert by_name[f"handler-{h}"]["awaited_by"] == [main["id"]]
        for i in range(2):
            fetch = by_name[f"fetch-{h}-{i}"]
            assert fetch["awaited_by"] == [by_name[f"handler-{h}"]["id"]]
            # Innermost first: where it waits, then the coroutine the task runs.
            assert [f["name"] for f in fetch["frames"]] == ["Event.wait", "leaf_wait", "fetch"]
            assert all(f["file"] == str(PROGRAM) and f["line"] > 0 for f in fetch["frames"][1:])
            assert fetch["frames"][0]["file"].endswith("/asyncio/locks.py")
            assert fetch["state"] == "waiting"
    assert by_name["cpu"]["awaited_by"] == [main["id"]]
    assert by_name["cpu"]["frames"][-1]["name"] == "crunch"
    assert {t["thread"] for t in body["tasks"]} == {pid}  # one loop, on the main thread

    # The very document of `dump --async --json` for the same process.
    cli = dump_async(pid)
    assert cli.returncode == 0, cli.stderr
    assert list(json.loads(cli.stdout)) == list(body)
    assert shape(json.loads(cli.stdout)) == shape(body)

    # Again, while the program is paused by the debugger: the same tasks.
    client.call("pause", {"threadId": client.call("threads")["body"]["threads"][0]["id"]})
    client.wait_event("stopped")
    paused = async_tasks(client)
    assert paused["success"], paused
    assert {t["id"] for t in paused["body"]["tasks"]} == {t["id"] for t in body["tasks"]}
    client.call("disconnect", {"terminateDebuggee": True})


def test_a_thousand_tasks_do_not_hold_up_the_session(procs, tmp_path):
    """The read pauses the program for a while: the session answers meanwhile, and so does another
    session of the same daemon."""
    interp = interpreter("sid-3.14")
    serve = start_serve(procs, tmp_path, "--python", interp.path, env=pythons.debugpy_env(interp))
    other = serve.connect(procs)
    other.call("initialize", INITIALIZE)
    client = serve.connect(procs)
    pid = launch(client, ["many", "1000"], python=interp.inner_path, program=PROGRAM)
    procs.pids.append(pid)
    truth = truth_of(client)
    assert len(truth["tasks"]) == 1001

    t0 = time.monotonic()
    seq = client.request("asyncTasks", {})
    # dapprof answers stopProfiling itself, on the session's strand; the other session's asyncTasks
    # (it has no debuggee) on its own.
    quick = client.call("stopProfiling", {})
    quick_at = time.monotonic() - t0
    elsewhere = other.call("asyncTasks", {})
    elsewhere_at = time.monotonic() - t0
    response = client.wait_response(seq, 60)
    tasks_at = time.monotonic() - t0
    assert quick["body"]["error"]["id"] == 2004
    assert elsewhere["body"]["error"]["id"] == 2002
    assert response["success"], response
    assert {t["id"] for t in response["body"]["tasks"]} == {t["id"] for t in truth["tasks"]}
    order = [m.get("request_seq") for m in client.received if m.get("type") == "response"]
    assert order.index(quick["request_seq"]) < order.index(seq), \
        f"stopProfiling ({quick_at:.3f} s) waited for asyncTasks ({tasks_at:.3f} s)"
    assert elsewhere_at < tasks_at, (elsewhere_at, tasks_at)
    print(f"asyncTasks of 1001 tasks answered in {tasks_at * 1000:.0f} ms; meanwhile "
          f"stopProfiling in {quick_at * 1000:.1f} ms, the other session in "
          f"{elsewhere_at * 1000:.1f} ms")

    # Three requests at once: one read runs at a time, and each gets the whole document.
    seqs = [client.request("asyncTasks", {}) for _ in range(3)]
    for s in seqs:
        again = client.wait_response(s, 60)
        assert again["success"] and len(again["body"]["tasks"]) == 1001
    client.call("disconnect", {"terminateDebuggee": True})


def test_errors_before_launch_and_outside_the_session(procs):
    interp = interpreter("sid-3.14")
    _, client = start_stdio(procs, "--python", interp.path, env=pythons.debugpy_env(interp))
    early = async_tasks(client)  # before anything: dapprof answers it itself
    validate("profilingErrorResponse", early)
    assert early["body"]["error"]["id"] == 2002
    assert early["message"] == ("Cannot read the asyncio tasks: there is no debuggee yet. Launch "
                                "or attach to a Python program first, then read the asyncio "
                                "tasks.")

    pid = launch(client, ["direct"], python=interp.inner_path, program=PROGRAM)
    procs.pids.append(pid)
    truth_of(client)
    for outsider in (1, os.getpid()):
        refused = async_tasks(client, pid=outsider)
        validate("profilingErrorResponse", refused)
        assert refused["body"]["error"]["id"] == 2008
        assert refused["message"] == (f"Process {outsider} is not part of this debug session: "
                                      f"only the debuggee (process {pid}) and its child processes "
                                      "can be read.")
    for bad in ({"pid": 0}, {"pid": "1"}, {"pid": 2**31}):
        invalid = async_tasks(client, **bad)
        validate("profilingErrorResponse", invalid)
        assert invalid["body"]["error"]["id"] == 2001 and "'pid'" in invalid["message"]
    # The debuggee named by its pid is the default's answer.
    named = async_tasks(client, pid=pid)
    assert named["success"] and {t["name"] for t in named["body"]["tasks"]} == \
        {"Task-1", "awaited", "awaiting"}
    client.call("disconnect", {"terminateDebuggee": True})


def test_a_version_the_sampler_cannot_read_gets_its_message(procs):
    """3.12: whatever dump --async says of the process, the request says too (today, that the
    tasks are read from 3.14 on)."""
    interp = interpreter("3.12")
    client, pid, _ = start(procs, interp, "direct")
    response = async_tasks(client)
    cli = dump_async(pid)
    if cli.returncode != 0:
        prefix = f"dapprof: error: reading the asyncio tasks of process {pid}: "
        assert cli.stderr.startswith(prefix), cli.stderr
        validate("profilingErrorResponse", response)
        assert response["body"]["error"]["id"] == 2006, response
        assert response["message"] == cli.stderr[len(prefix):].strip()
        assert "3.14" in response["message"] and "3.12" in response["message"]
    else:  # the sampler reads this version: then the document is the same as the command's
        assert response["success"], response
        validate("asyncTasksResponse", response)
        assert shape(response["body"]) == shape(json.loads(cli.stdout))
    client.call("disconnect", {"terminateDebuggee": True})


def test_profile_only_sessions_read_tasks_and_say_when_there_is_no_asyncio(procs, tmp_path):
    """Without a debugger (--profile-only) nothing in the program imports asyncio but itself."""
    interp = interpreter("sid-3.14")
    stop_file = tmp_path / "stop"
    from live_session import TARGET
    for program, args in ((TARGET, [str(stop_file)]), (PROGRAM, ["shield"])):
        _, client = start_stdio(procs, "--profile-only", "--python", interp.path)
        client.call("initialize", INITIALIZE)
        assert client.call("launch", {"program": str(program), "args": args})["success"]
        pid = client.wait_event("process")["body"]["systemProcessId"]
        procs.pids.append(pid)
        client.call("configurationDone")
        if program == TARGET:
            # The process must be Python already (attach), and not have imported asyncio.
            def answered():
                nonlocal response
                response = async_tasks(client)
                return response["body"]["error"]["id"] != 2005
            response = None
            assert wait_until(answered, 20), response
            validate("profilingErrorResponse", response)
            assert response["body"]["error"]["id"] == 2012, response
            assert response["message"].startswith(f"process {pid} has not imported asyncio")
        else:
            truth = truth_of(client)
            response = async_tasks(client)
            assert response["success"], response
            assert {(t["name"], t["id"]) for t in response["body"]["tasks"]} == \
                {(t["name"], t["id"]) for t in truth["tasks"]}
            by_name = {t["name"]: t for t in response["body"]["tasks"]}
            assert by_name["shielded"]["awaited_by"] == [by_name["shielding"]["id"]]
        client.call("disconnect", {})
    stop_file.write_text("stop")
