"""Scripted debug sessions shared by the integration tests."""
from __future__ import annotations

from pathlib import Path

from conftest import DEBIAN_PYTHON, FIXTURES, break_line
from dapclient import DapClient

LOOP = FIXTURES / "loop_program.py"

INITIALIZE = {"clientID": "dapprof-tests", "adapterID": "debugpy", "pathFormat": "path",
              "linesStartAt1": True, "columnsStartAt1": True, "supportsVariableType": True,
              "supportsRunInTerminalRequest": False}


class Transcript:
    """What a launch session produced, normalised for comparison across transports."""

    def __init__(self):
        self.initialize_body: dict = {}
        self.responses: list[tuple] = []  # (command, success) in request order
        self.events: set[str] = set()
        self.facts: dict = {}
        self.seqs: list[int] = []
        self.debuggee_pid: int | None = None


def launch_session(client: DapClient, python=DEBIAN_PYTHON, program: Path = LOOP,
                   stop_at_breakpoint_only=False, closes_after_disconnect=True) -> Transcript:
    """initialize, launch, breakpoint hit, stackTrace, scopes, variables, continue, exited,
    terminated, disconnect. With stop_at_breakpoint_only, returns once stopped.
    closes_after_disconnect: whether the server ends the connection by itself after disconnect
    (dapprof does; a stdio debugpy adapter waits for its stdin to close)."""
    t = Transcript()

    def call(command, arguments=None, timeout=30.0):
        response = client.call(command, arguments, timeout)
        t.responses.append((command, response["success"]))
        assert response["success"], response
        return response

    t.initialize_body = call("initialize", INITIALIZE)["body"]
    launch_seq = client.request("launch", {
        "program": str(program), "console": "internalConsole", "python": [python],
        "justMyCode": True, "subProcess": False})
    client.wait_event("initialized")
    bp = call("setBreakpoints", {"source": {"path": str(program)},
                                 "breakpoints": [{"line": break_line(program)}]})
    t.facts["breakpoint_verified"] = bp["body"]["breakpoints"][0]["verified"]
    call("configurationDone")
    launch = client.wait_response(launch_seq)
    t.responses.append(("launch", launch["success"]))
    process = client.wait_event("process")
    t.debuggee_pid = process["body"]["systemProcessId"]
    t.facts["process_start"] = process["body"]["startMethod"]
    stopped = client.wait_event("stopped")
    t.facts["stopped_reason"] = stopped["body"]["reason"]
    thread_id = stopped["body"]["threadId"]
    if stop_at_breakpoint_only:
        t.facts["thread_id"] = thread_id
        return t
    threads = call("threads")
    t.facts["threads"] = sorted(th["name"] for th in threads["body"]["threads"])
    frames = call("stackTrace", {"threadId": thread_id})["body"]["stackFrames"]
    t.facts["top_frame"] = (frames[0]["name"], frames[0]["line"])
    scopes = call("scopes", {"frameId": frames[0]["id"]})["body"]["scopes"]
    t.facts["scopes"] = [s["name"] for s in scopes]
    variables = call("variables", {"variablesReference": scopes[0]["variablesReference"]})
    t.facts["locals"] = {v["name"]: v["value"] for v in variables["body"]["variables"]
                         if not v["name"].startswith("(")}
    call("setBreakpoints", {"source": {"path": str(program)}, "breakpoints": []})
    call("continue", {"threadId": thread_id})
    exited = client.wait_event("exited")
    t.facts["exit_code"] = exited["body"]["exitCode"]
    client.wait_event("terminated")
    call("disconnect", {})
    if not closes_after_disconnect:
        client.close()
    assert client.wait_eof(15), "the session did not end after disconnect"
    for m in client.received:
        t.seqs.append(m["seq"])
        if m["type"] == "event" and m["event"] != "output":  # output order is racy
            t.events.add(m["event"])
    return t
