"""Live sampling by asyncio task (startProfiling `async`) through dapprof and real debugpy: on
CPython 3.14 and 3.15 the samples of the running task stand under its awaiting tasks and one
`(event loop)` frame, task frames carry their state, and `all` adds every waiting task; the same
on 3.11-3.13 from asyncio's own registries."""
from __future__ import annotations

import collections
import time
from pathlib import Path

import pytest

import pythons
from conftest import start_stdio
from live_session import finish, launch, start_profiling, stream_of

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "asyncio_tasks.py"


def by_task(interp) -> bool:
    return interp.version[:2] >= (3, 11)  # the taskgroup scenario's TaskGroup


def chains(stream) -> collections.Counter:
    """(task name, state) chains of the samples, root first -> samples."""
    out = collections.Counter()
    for _, ids in stream.stacks:
        frames = [stream.frames[i] for i in ids]
        out[tuple((f["function"], f["task"]) for f in frames if "task" in f)] += 1
    return out


def run(procs, interp, arguments: dict, seconds=1.5, scenario="taskgroup"):
    proc, client = start_stdio(procs, "--python", interp.path, env=pythons.debugpy_env(interp))
    launch(client, [scenario], python=interp.inner_path, program=FIXTURE)
    time.sleep(1.0)  # the scenario's tasks in place
    after = len(client.received)
    body = start_profiling(client, rate=100, **arguments)
    time.sleep(seconds)
    assert client.call("stopProfiling", {})["success"]
    stream = stream_of(client, after)
    finish(client)
    proc.wait(timeout=20)
    return body, stream


def sampled(procs, interp, mode: str, scenario="taskgroup", **kwargs):
    """A live run in `mode` (which the response must echo): its stream and task chains."""
    if scenario == "taskgroup" and not by_task(interp):
        pytest.skip("no TaskGroup before 3.11")
    body, stream = run(procs, interp, {"async": mode}, scenario=scenario, **kwargs)
    assert body["async"] == mode
    return stream, chains(stream)


@pytest.mark.parametrize("interp", pythons.each())
def test_running_mode_live(procs, interp):
    stream, seen = sampled(procs, interp, "running")
    cpu = sum(n for c, n in seen.items() if c == (("Task-1", "waiting"), ("cpu", "running")))
    assert cpu > 0.5 * len(stream.stacks), seen
    for _, ids in stream.stacks:
        frames = [stream.frames[i] for i in ids]
        if any("task" in f for f in frames):
            assert frames[0] == {"file": "", "line": 0, "function": "(event loop)"}, frames[0]
            task = frames[1]
            assert task["function"] == "Task-1" and task["file"] == "" and task["line"] == 0
    # Only the running task is sampled.
    assert not any(c and c[-1][1] != "running" for c in seen), seen


@pytest.mark.parametrize("interp", pythons.each())
def test_all_mode_live_adds_waiting_tasks(procs, interp):
    _, seen = sampled(procs, interp, "all")
    for h in range(3):
        for i in range(2):
            chain = (("Task-1", "waiting"), (f"handler-{h}", "waiting"),
                     (f"fetch-{h}-{i}", "waiting"))
            assert seen[chain] > 0, seen
    assert any(c[-1] == ("cpu", "running") for c in seen if c), seen


@pytest.mark.parametrize("interp", pythons.each())
def test_every_version_live(procs, interp):
    # "direct": Task-1 awaits the task "awaiting", which awaits the task "awaited"; the tasks
    # come from .AsyncioDebug (3.14+) or asyncio's own registries (3.8-3.13).
    _, seen = sampled(procs, interp, "all", scenario="direct", seconds=1.0)
    leaf = (("Task-1", "waiting"), ("awaiting", "waiting"), ("awaited", "waiting"))
    assert seen[leaf] >= 50, seen
    assert set(seen) - {()} == {leaf}, seen


def test_bad_async_mode_is_refused_and_the_session_goes_on(procs):
    interp = pythons.find("debian-3.11")
    if interp is None:
        pytest.skip("no /usr/bin/python3.11")
    proc, client = start_stdio(procs, "--python", interp.path, env=pythons.debugpy_env(interp))
    launch(client, ["direct"], python=interp.inner_path, program=FIXTURE)
    response = client.call("startProfiling", {"async": "tasks"})
    assert not response["success"], response
    assert "async" in response["message"], response
    # Plain profiling still works in the same session.
    assert start_profiling(client, rate=50)["async"] == "off"
    time.sleep(0.5)
    assert client.call("stopProfiling", {})["success"]
    finish(client)
    proc.wait(timeout=20)
