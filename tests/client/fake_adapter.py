"""A scripted stand-in for `dapprof serve`, for tests of the client's command line that must
know exactly what the daemon answered: one DAP session on a loopback port, a debuggee that is
only a pid, two profilingData events, and the stopProfiling and exportProfile answers a test
sets. It records every request the client sent."""
from __future__ import annotations

import json
import socket
import threading
from typing import Callable, Dict, List, Optional

from dapprof_client.protocol import (EXPORT_PROFILE, PROFILING_DATA, START_PROFILING,
                                     STOP_PROFILING, SUPPORTS_PROFILING, ErrorId)

MAIN = {"file": "/app/main.py", "line": 25, "function": "<module>"}
WORK = {"file": "/app/main.py", "line": 10, "function": "work"}
LAUNCHER = {"file": "/usr/lib/python3/dist-packages/debugpy/server/cli.py", "line": 284,
            "function": "run_file", "origin": "debugger"}
EVENTS = [
    {"newFrames": {"1": LAUNCHER, "2": MAIN, "3": WORK}, "samples": [[1, 2, 3], [1, 2]],
     "sampleCount": 2, "duration": 100.0, "threadIds": [7, 7],
     "threads": {"7": {"name": "MainThread", "osThreadId": 7, "pid": 4242}}},
    {"newFrames": {}, "samples": [[1, 2, 3]], "sampleCount": 1, "duration": 100.0,
     "threadIds": [7], "threads": {}},
]
SUMMARY = {"sampleCount": 3, "duration": 200.0, "errorCount": 0, "droppedSampleCount": 0,
           "topFunctions": [{"function": "work", "file": "/app/main.py", "self": 2, "total": 2},
                            {"function": "<module>", "file": "/app/main.py", "self": 1,
                             "total": 3}]}


def error(message: str, error_id: Optional[int]) -> dict:
    """An error answer: dapprof's shape with an id, debugpy's (no body.error) without."""
    out = {"success": False, "message": message}
    if error_id is not None:
        out["body"] = {"error": {"id": int(error_id), "format": message, "showUser": True}}
    return out


def export_ok(content: str, sample_count: int = 3) -> Callable[[dict], dict]:
    def answer(arguments: dict) -> dict:
        fmt = arguments.get("format", "speedscope")
        return {"success": True, "body": {
            "format": fmt, "fileExtension": "txt" if fmt == "collapsed" else "json",
            "content": content.replace("{format}", fmt), "sampleCount": sample_count}}
    return answer


def export_refused(arguments: dict) -> dict:
    return error("There is no profile to export in this debug session.", ErrorId.NoProfile)


class FakeAdapter:
    def __init__(self, export: Callable[[dict], dict] = export_ok("{format} document"),
                 events: Optional[List[dict]] = None):
        self.export = export
        self.events = EVENTS if events is None else events
        self.requests: List[dict] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self._listener.getsockname()[1]
        self._seq = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def arguments(self, command: str) -> List[dict]:
        return [r.get("arguments") or {} for r in self.requests if r["command"] == command]

    def close(self) -> None:
        self._listener.close()
        self._thread.join(timeout=10)

    # -- the session -------------------------------------------------------------------------
    def _serve(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        with conn:
            self._conn = conn
            reader = conn.makefile("rb")
            while True:
                request = self._read(reader)
                if request is None:
                    return
                self.requests.append(request)
                if not self._answer(request):
                    return

    def _answer(self, request: dict) -> bool:
        command, arguments = request["command"], request.get("arguments") or {}
        handlers: Dict[str, Callable[[], dict]] = {
            "initialize": lambda: {"success": True, "body": {SUPPORTS_PROFILING: True}},
            "configurationDone": lambda: {"success": True},
            START_PROFILING: lambda: {"success": True, "body": {
                "pid": 4242, "pythonVersion": "3.12.1", "rate": arguments.get("rate", 100)}},
            STOP_PROFILING: lambda: {"success": True, "body": dict(SUMMARY)},
            EXPORT_PROFILE: lambda: self.export(arguments),
            "disconnect": lambda: {"success": True},
        }
        if command == "launch":
            self._event("initialized")
            self._launch_seq = request["seq"]
            return True
        self._respond(request, handlers.get(command, lambda: error("unknown", None))())
        if command == "configurationDone":
            self._respond({"seq": self._launch_seq, "command": "launch"}, {"success": True})
            self._event("process", {"systemProcessId": 4242, "name": "app.py"})
        elif command == START_PROFILING:
            for body in self.events:
                self._event(PROFILING_DATA, body)
        elif command == "disconnect":
            self._event("terminated")
            return False
        return True

    def _read(self, reader) -> Optional[dict]:
        length = None
        while True:
            line = reader.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return json.loads(reader.read(length))

    def _send(self, message: dict) -> None:
        self._seq += 1
        body = json.dumps(dict(message, seq=self._seq)).encode()
        self._conn.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _respond(self, request: dict, answer: dict) -> None:
        self._send(dict(answer, type="response", request_seq=request["seq"],
                        command=request["command"]))

    def _event(self, name: str, body: Optional[dict] = None) -> None:
        self._send({"type": "event", "event": name, "body": body or {}})
