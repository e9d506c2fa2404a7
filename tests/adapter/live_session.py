"""A live-profiling debug session, step by step, for the tests that drive one: launch or attach
through dapprof, start and stop profiling, and check what arrived against the fixture program."""
from __future__ import annotations

import time
from pathlib import Path

from conftest import DEBIAN_PYTHON, FIXTURES, wait_until
from dapclient import DapClient
from profiling_stream import Stream, line_of, read_collapsed
from sessions import INITIALIZE

TARGET = FIXTURES / "profile_target.py"
SPAWNER = FIXTURES / "spawn_target.py"


def launch(client: DapClient, args, python=DEBIAN_PYTHON, program=TARGET, breakpoint=None,
           sub_process=False) -> int:
    """initialize + launch; returns the debuggee's pid once debugpy has announced it."""
    assert client.call("initialize", INITIALIZE)["body"]["supportsProfiling"] is True
    launch_seq = client.request("launch", {
        "program": str(program), "args": [str(a) for a in args], "console": "internalConsole",
        "python": [python], "justMyCode": True, "subProcess": sub_process})
    client.wait_event("initialized")
    if breakpoint:
        client.call("setBreakpoints", {"source": {"path": str(program)},
                                       "breakpoints": [{"line": breakpoint}]})
    client.call("configurationDone")
    assert client.wait_response(launch_seq, 60)["success"]
    return client.wait_event("process", 60)["body"]["systemProcessId"]


def attach(client: DapClient, pid: int) -> None:
    """initialize + attach through `dapprof --connect` to the listening program `pid`."""
    client.call("initialize", INITIALIZE)
    attach_seq = client.request("attach", {"justMyCode": True})
    client.wait_event("initialized")
    client.call("configurationDone")
    assert client.wait_response(attach_seq)["success"]
    assert client.wait_event("process")["body"]["systemProcessId"] == pid


def saw_event(client: DapClient, event: str, timeout=30.0) -> bool:
    """Whether `event` has arrived, at any time (waits by other calls may have passed it)."""
    return wait_until(lambda: any(m.get("type") == "event" and m.get("event") == event
                                  for m in client.received), timeout)


def start_profiling(client: DapClient, **arguments) -> dict:
    response = client.call("startProfiling", arguments)
    assert response["success"], response
    return response["body"]


def stream_of(client: DapClient, after: int = 0) -> Stream:
    """The profilingData events received so far (from index `after` of client.received)."""
    stream = Stream()
    for message in client.received[after:]:
        if message.get("type") == "event" and message.get("event") == "profilingData":
            stream.add(message)
    return stream


def finish(client: DapClient, proc=None, stop_file: Path | None = None):
    if stop_file:
        stop_file.write_text("stop")
    client.call("disconnect", {"terminateDebuggee": True})
    client.close()
    if proc is not None:
        assert proc.wait(timeout=20) == 0


def assert_fixture_profiled(stream: Stream, program: Path = TARGET):
    crunch = stream.frames_named("crunch")
    assert crunch, f"no crunch frame among {sorted(stream.functions())}"
    first, last = line_of(program, "def crunch"), line_of(program, "return total")
    for frame in crunch:
        assert Path(frame["file"]).resolve() == program.resolve()
        assert first <= frame["line"] <= last, frame  # older versions may show the def line
    # crunch is reached through outer_main on the main thread and worker_spin on the spinner.
    callers = {stream.frames[stack[i - 1]]["function"]
               for _, stack in stream.stacks for i, fid in enumerate(stack)
               if i > 0 and stream.frames[fid]["function"] == "crunch"}
    assert {"outer_main", "worker_spin"} <= callers, callers
    names = {stream.threads[tid]["name"] for tid, _ in stream.stacks}
    assert "MainThread" in names, names
    # Root first: the program's module frame, then main, outer_main, crunch (debugpy's own runner
    # frames come before the module).
    def names_of(stack):
        return [stream.frames[fid]["function"] for fid in stack
                if Path(stream.frames[fid]["file"]).resolve() == program.resolve()]
    main_paths = {tuple(names_of(stack)) for tid, stack in stream.stacks
                  if stream.threads[tid]["name"] == "MainThread" and "crunch" in names_of(stack)}
    assert main_paths == {("<module>", "main", "outer_main", "crunch")}, main_paths


def profile_run(client: DapClient, tmp_path: Path, name: str, seconds=1.5, **arguments):
    """One startProfiling..stopProfiling run writing `collapsed`; returns (stream, summary, file)."""
    mark = len(client.received)
    body = start_profiling(client, **arguments)
    time.sleep(seconds)
    out = tmp_path / f"{name}.txt"
    stopped = client.call("stopProfiling", {"outputPath": str(out), "format": "collapsed"})
    assert stopped["success"], stopped
    return stream_of(client, mark), stopped["body"], out, body


def check_run(stream: Stream, summary: dict, collapsed: Path):
    # Every sample taken is delivered or counted as dropped, and the file holds exactly the
    # stacks the stream gave.
    assert stream.delivered > 0
    assert stream.delivered == summary["sampleCount"]
    assert summary["droppedSampleCount"] == stream.dropped
    assert summary["outputPath"] == str(collapsed)
    assert read_collapsed(collapsed) == stream.collapsed()
