"""A DAP session through dapprof: initialize, launch or attach (following debugpy's child
processes), and the profiling requests (startProfiling, stopProfiling, exportProfile), with the
profilingData stream decoded into a Profile as it arrives."""
from __future__ import annotations

import base64
import binascii
import collections
import json
import os
import sys
import threading
import time
from typing import Callable, Dict, Iterator, List, Optional, TextIO, Tuple

from .dap import Connection
from .decode import Profile
from .errors import ClientError, ConnectionClosed, ProtocolError, RequestFailed
from .protocol import (CONTENT_ENCODINGS, DEFAULT_FORMAT, EXPORT_PROFILE, FORMATS, PROFILING_DATA,
                       PROFILING_STOPPED, START_PROFILING, STOP_PROFILING, SUPPORTS_PROFILING,
                       SUPPORTS_PROFILING_STACKS, ErrorId)


def document_bytes(body: dict) -> bytes:
    """The file an exportProfile response body holds: its text as UTF-8, or the bytes of a binary
    format (pprof), which travel base64-encoded as a JSON string holds text only."""
    if body.get("contentEncoding", "text") == "base64":
        try:
            return base64.b64decode(body["content"], validate=True)
        except (binascii.Error, ValueError) as e:
            raise ProtocolError(f"the {EXPORT_PROFILE} response's base64 content is invalid: "
                                f"{e}") from None
    return body["content"].encode("utf-8")


def _echo_output(label: str) -> Callable[[dict], None]:
    def echo(body: dict):
        if body.get("category") != "telemetry" and body.get("output"):
            sys.stderr.write(body["output"] if not label else f"[{label}] {body['output']}")
            sys.stderr.flush()
    return echo


class Session:
    """One DAP session through dapprof. Incoming messages are handled as they are read: output
    is passed to `on_output`, reverse requests are refused, `debugpyAttach` opens a child
    session, and profilingData is decoded into `self.profile`; the rest waits in a queue for
    next_event()."""

    def __init__(self, connection: Connection, on_output: Optional[Callable[[dict], None]] = None,
                 follow_children: bool = True, record_stream: Optional[TextIO] = None):
        self.connection = connection
        # Receives every profilingData body as received, one JSON document a line: a recording
        # that other clients' tests replay.
        self.record_stream = record_stream
        self.on_output = on_output if on_output is not None else _echo_output("")
        self.follow_children = follow_children
        self.capabilities: dict = {}
        self.debuggee_pid: Optional[int] = None
        self.exit_code: Optional[int] = None  # from the `exited` event
        self.terminated = False
        self.profiling = False
        self.profile: Optional[Profile] = None
        self.children: List["Session"] = []
        self._seq = 0
        self._queue: collections.deque = collections.deque()
        self._responses: Dict[int, dict] = {}

    @classmethod
    def connect(cls, host: str, port: int, **kwargs) -> "Session":
        return cls(Connection.tcp(host, port), **kwargs)

    @classmethod
    def spawn(cls, dapprof: str = "dapprof", daemon_args: Tuple[str, ...] = (), **kwargs):
        return cls(Connection.spawn([dapprof, "stdio", *daemon_args]), **kwargs)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- messages --------------------------------------------------------------------------
    def send_request(self, command: str, arguments: Optional[dict] = None) -> int:
        self._seq += 1
        message = {"seq": self._seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        self.connection.send(message)
        return self._seq

    def request(self, command: str, arguments: Optional[dict] = None,
                timeout: Optional[float] = 30.0) -> dict:
        """Sends a request and returns the response body; RequestFailed on an error response."""
        seq = self.send_request(command, arguments)
        return self._check(command, self.wait_response(seq, timeout))

    def wait_response(self, seq: int, timeout: Optional[float] = 30.0) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while seq not in self._responses:
            self._read_one(deadline, f"the response to request {seq}")
        return self._responses.pop(seq)

    def wait_event(self, name: str, timeout: Optional[float] = 30.0,
                   abort: Callable[[], Optional[str]] = lambda: None) -> dict:
        """Waits for event `name` (also one already queued). `abort` returns a reason to stop
        waiting early, raised as ClientError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            for event in self._queue:
                if event.get("event") == name:
                    self._queue.remove(event)
                    return event
            reason = abort()
            if reason:
                raise ClientError(reason)
            self._read_one(deadline, f"the {name!r} event")

    def next_event(self, timeout: Optional[float] = None) -> Optional[dict]:
        """The next event not consumed yet (profilingData included, already decoded into
        self.profile), or None after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._queue:
            if not self._read_one(deadline, None):
                return None
        return self._queue.popleft()

    def events(self, timeout: Optional[float] = None) -> Iterator[dict]:
        """Iterates over events until the connection closes, or none came for `timeout` s."""
        while True:
            try:
                event = self.next_event(timeout)
            except ConnectionClosed:
                return
            if event is None:
                return
            yield event

    def _read_one(self, deadline: Optional[float], waiting_for: Optional[str]) -> bool:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        message = self.connection.receive(left)
        if message is None:
            if waiting_for:
                raise ClientError(f"timed out waiting for {waiting_for} from "
                                  f"{self.connection.description}")
            return False
        kind = message.get("type")
        if kind == "response":
            self._responses[message.get("request_seq")] = message
        elif kind == "request":
            self._refuse(message)
        elif kind == "event":
            self._on_event(message)
        return True

    def _refuse(self, request: dict) -> None:
        self._seq += 1
        self.connection.send({
            "seq": self._seq, "type": "response", "request_seq": request.get("seq"),
            "command": request.get("command"), "success": False,
            "message": f"dapprof_client does not support the {request.get('command')!r} request"})

    def _on_event(self, event: dict) -> None:
        name, body = event.get("event"), event.get("body") or {}
        if name == "output":
            self.on_output(body)
            return
        if name == PROFILING_DATA and self.profile is not None:
            if self.record_stream is not None:
                self.record_stream.write(
                    json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n")
            self.profile.add_event(body)
        elif name == PROFILING_STOPPED:
            self.profiling = False
            if self.profile is not None:
                self.profile.finish(body, body.get("reason", "unknown"))
                self.profile.hide_debugger = False  # no request asked to hide them
        elif name == "process":
            self.debuggee_pid = body.get("systemProcessId", self.debuggee_pid)
        elif name == "exited":
            self.exit_code = body.get("exitCode")
        elif name == "terminated":
            self.terminated = True
        elif name == "debugpyAttach" and self.follow_children:
            self._attach_child(body)
        self._queue.append(event)

    @staticmethod
    def _check(command: str, response: dict) -> dict:
        if not response.get("success"):
            raise RequestFailed(command, response)
        return response.get("body") or {}

    # -- starting a debug session ----------------------------------------------------------
    def initialize(self, client_id: str = "dapprof-client") -> dict:
        self.capabilities = self.request("initialize", {
            "clientID": client_id, "clientName": "dapprof client", "adapterID": "debugpy",
            "pathFormat": "path", "linesStartAt1": True, "columnsStartAt1": True,
            "supportsRunInTerminalRequest": False, "supportsStartDebuggingRequest": False})
        return self.capabilities

    def launch(self, program: Optional[str] = None, module: Optional[str] = None,
               args: Tuple[str, ...] = (), cwd: Optional[str] = None,
               python: Optional[str] = None, env: Optional[dict] = None,
               timeout: float = 60.0, **extra) -> None:
        """debugpy `launch` of a script or module, then configurationDone; returns once the
        debuggee process is announced."""
        if (program is None) == (module is None):
            raise ClientError("give either a program or a module to launch")
        arguments = {"name": "dapprof client", "type": "python", "request": "launch",
                     "console": "internalConsole", "args": list(args), "justMyCode": True,
                     "cwd": os.path.abspath(cwd or os.getcwd())}
        if program is not None:
            arguments["program"] = os.path.abspath(program)
        else:
            arguments["module"] = module
        if python:
            arguments["python"] = [python]
        if env:
            arguments["env"] = dict(env)
        arguments.update(extra)
        self._start("launch", arguments, timeout)

    def attach(self, arguments: Optional[dict] = None, timeout: float = 60.0) -> None:
        """debugpy `attach` to the program dapprof's upstream connects to (`dapprof serve
        --connect HOST:PORT`, for a program that called debugpy.listen), or with the given
        arguments (a debugpyAttach body)."""
        self._start("attach", dict(arguments or {"name": "dapprof client", "type": "python",
                                                 "request": "attach", "justMyCode": True}),
                    timeout)

    def _start(self, command: str, arguments: dict, timeout: float) -> None:
        seq = self.send_request(command, arguments)

        def failed() -> Optional[str]:
            response = self._responses.get(seq)
            if response is not None and not response.get("success"):
                return str(RequestFailed(command, response))
            return None

        self.wait_event("initialized", timeout, failed)
        self.request("configurationDone", {}, timeout)
        self._check(command, self.wait_response(seq, timeout))
        if self.debuggee_pid is None:
            self.wait_event("process", timeout, lambda: (
                "the program ended before it could be profiled" if self.terminated else None))

    def _attach_child(self, body: dict) -> None:
        """debugpy announced a child process: attach to it on a new connection, as VS Code
        would, or the child (and so its parent) waits for a debugger forever."""
        connect = body.get("connect") or {}
        label = f"child {body.get('subProcessId', '?')}"

        def run():
            try:
                child = Session(Connection.tcp(connect.get("host", "127.0.0.1"),
                                               int(connect["port"])),
                                _echo_output(label), self.follow_children)
                self.children.append(child)
                child.initialize()
                child.attach(arguments=body)
                for _ in child.events():
                    pass  # handled in _on_event; runs until the child's session ends
            except (ClientError, KeyError, ValueError) as e:
                sys.stderr.write(f"dapprof_client: {label}: {e}\n")

        threading.Thread(target=run, name=label, daemon=True).start()

    # -- profiling -------------------------------------------------------------------------
    def start_profiling(self, rate: Optional[int] = None, native: bool = False,
                        nonblocking: bool = False, idle: bool = False, gil: bool = False,
                        subprocesses: bool = False, batch_interval_ms: Optional[int] = None,
                        pid: Optional[int] = None, name: str = "python",
                        stacks: Optional[bool] = None, async_mode: Optional[str] = None,
                        mode: Optional[str] = None) -> dict:
        """startProfiling; returns the response body (pid, pythonVersion, settings in effect).
        Samples then accumulate in self.profile, a new Profile per run. `stacks` asks for samples
        as stack IDs with counts (the same samples, fewer bytes); None asks for them when the
        adapter says it supports them. `async_mode` ("running", "all") samples by asyncio task.
        `mode` ("wall", "cpu", "gil", "exception") chooses the threads sampled; dapprof refuses it
        beside an `idle` or `gil` naming another mode."""
        if not self.capabilities.get(SUPPORTS_PROFILING):
            raise ClientError(f"{self.connection.description} does not support profiling "
                              f"(no {SUPPORTS_PROFILING} in its capabilities): is it dapprof?")
        arguments = {"native": native, "nonblocking": nonblocking, "idle": idle, "gil": gil,
                     "subprocesses": subprocesses}
        if stacks is None:
            stacks = bool(self.capabilities.get(SUPPORTS_PROFILING_STACKS))
        if stacks:
            arguments["stacks"] = True
        for key, value in (("rate", rate), ("batchIntervalMs", batch_interval_ms), ("pid", pid),
                           ("async", async_mode), ("mode", mode)):
            if value is not None:
                arguments[key] = value
        self.profile = Profile(name=name)
        self.profiling = True
        try:
            body = self.request(START_PROFILING, arguments)
        except ClientError:
            self.profiling = False
            raise
        self.profile.info = body
        return body

    def collect(self, duration: Optional[float] = None, settle: float = 5.0) -> str:
        """Reads events while profiling runs. Returns why it stopped: "duration" (still
        profiling), "stopped" (profilingStopped arrived), "program-ended" (the program exited
        but no profilingStopped came within `settle` s), or "interrupted" (Ctrl-C)."""
        deadline = None if duration is None else time.monotonic() + duration
        try:
            while self.profiling:
                if self.terminated or self.exit_code is not None:
                    # the daemon sends profilingStopped once it sees the exit; wait for it
                    end = time.monotonic() + settle
                    deadline = end if deadline is None else min(deadline, end)
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    ended = self.terminated or self.exit_code is not None
                    return "program-ended" if ended else "duration"
                self.next_event(None if deadline is None else deadline - now)
        except KeyboardInterrupt:
            return "interrupted"
        return "stopped"

    def stop_profiling(self, output_path: Optional[str] = None, format: Optional[str] = None,
                       hide_debugger: bool = True) -> Optional[dict]:
        """stopProfiling; dapprof writes `output_path` (made absolute) in `format`, and leaves
        the debugger's frames out of that file and of the summary's topFunctions with
        `hide_debugger`. Returns the run's summary. After the run ended by itself
        (profilingStopped), dapprof still answers one stopProfiling for it (writing its file,
        repeating its summary); None when there is no run to stop (NotProfiling)."""
        arguments: Dict[str, object] = {"hideDebugger": hide_debugger}
        if output_path:
            arguments["outputPath"] = os.path.abspath(output_path)
            if format:
                arguments["format"] = format
        try:
            body = self.request(STOP_PROFILING, arguments)
        except RequestFailed as e:
            if e.error_id == ErrorId.NotProfiling:
                self.profiling = False
                return None
            if e.error_id != ErrorId.InvalidArguments:  # invalid arguments leave the run going
                self.profiling = False
            raise
        if self.profile is not None:
            reason = self.profile.stop_reason if not self.profiling else None
            self.profile.finish(body, reason or "requested")
            self.profile.hide_debugger = hide_debugger
        self.profiling = False
        return body

    def export_profile(self, format: str = DEFAULT_FORMAT, hide_debugger: bool = True) -> dict:
        """exportProfile: the current run (while sampling: everything so far) or the last one
        that ended, as a document in `format`, made by dapprof. Returns the response body:
        format, fileExtension, content (the document: text, or base64 of a binary one, as
        contentEncoding says; document_bytes() gives the file's bytes either way) and
        sampleCount. A refusal (no run to
        export, or a dapprof that predates the request) is a ClientError with dapprof's
        message."""
        if format not in FORMATS:
            raise ClientError(f"unknown profile format {format!r} (one of {', '.join(FORMATS)})")
        try:
            body = self.request(EXPORT_PROFILE, {"format": format,
                                                 "hideDebugger": hide_debugger})
        except RequestFailed as e:
            hint = ""
            if e.error_id is None:  # not dapprof's answer: debugpy's, to a request it forwarded
                hint = (f"; a dapprof older than the {EXPORT_PROFILE} request passes it on to "
                        "debugpy: update dapprof, or have it write the file (--output)")
            raise ClientError(f"dapprof could not export the profile as {format}: "
                              f"{e.adapter_message}{hint}") from None
        if not isinstance(body.get("content"), str):
            raise ProtocolError(f"the {EXPORT_PROFILE} response has no 'content' string")
        if body.get("contentEncoding", "text") not in CONTENT_ENCODINGS:
            raise ProtocolError(f"the {EXPORT_PROFILE} response has an unknown contentEncoding "
                                f"{body.get('contentEncoding')!r}")
        return body

    # -- ending ----------------------------------------------------------------------------
    def wait_terminated(self, timeout: Optional[float] = None) -> None:
        if not self.terminated:
            self.wait_event("terminated", timeout)

    def disconnect(self, terminate: bool = True, timeout: float = 15.0) -> None:
        try:
            self.request("disconnect", {"terminateDebuggee": terminate}, timeout)
        except ClientError:
            pass  # the session is over either way

    def close(self) -> None:
        for child in self.children:
            child.connection.close()
        self.connection.close()
