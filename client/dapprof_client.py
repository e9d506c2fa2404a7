#!/usr/bin/env python3
"""Profile a Python program through dapprof from a script or CI job.

A small Debug Adapter Protocol client: it starts a debug session through dapprof (a running
`dapprof serve`, or `dapprof stdio` spawned here), launches or attaches to the program, starts
live profiling, decodes the `profilingData` stream, stops profiling (optionally asking dapprof
to write a profile file), and prints the functions that took the most samples. Standard library
only; Python 3.8 or newer.

    python3 dapprof_client.py --duration 10 --speedscope out.json app.py -- --app-arg

As a library:

    from dapprof_client import Session
    with Session.spawn("dapprof") as session:          # or Session.connect("127.0.0.1", 4711)
        session.initialize()
        session.launch(program="app.py", args=["--fast"])
        session.start_profiling(rate=200)
        session.collect(duration=10)
        session.stop_profiling(output_path="/tmp/app.svg", format="flamegraph")
        print(session.profile.format_summary(top=10))
        session.disconnect()

The protocol is documented in dapprof's docs/PROFILING.md.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, TextIO, Tuple

MAX_ID = 2**53 - 1  # frame and thread IDs stay exact in JavaScript
FORMATS = ("speedscope", "cpuprofile", "collapsed", "flamegraph")
EXIT_OK, EXIT_ERROR, EXIT_PROGRAM_FAILED = 0, 1, 3  # argparse exits 2 on a bad command line


class ClientError(Exception):
    """A failure to report to the user; the CLI prints it and exits non-zero."""


class ProtocolError(ClientError):
    """The adapter broke the profiling protocol (e.g. referenced a frame it never announced)."""


class ConnectionClosed(ClientError):
    pass


class RequestFailed(ClientError):
    """An error response. `error_id` is body.error.id (dapprof's 2000-2010), if any."""

    def __init__(self, command: str, response: dict):
        self.command = command
        self.response = response
        error = (response.get("body") or {}).get("error") or {}
        self.error_id = error.get("id")
        self.adapter_message = response.get("message") or error.get("format") or "no message"
        code = f" (error {self.error_id})" if self.error_id is not None else ""
        super().__init__(f"{command} failed{code}: {self.adapter_message}")


# -- decoding the profilingData stream ---------------------------------------------------------

@dataclass(frozen=True)
class Frame:
    function: str
    file: str
    line: int
    native: bool = False
    module: str = ""

    def location(self) -> str:
        """Where the frame is, for people: file:line, or the shared object of a native frame."""
        where = self.file or self.module
        return f"{where}:{self.line}" if where and self.line > 0 else where

    def label(self) -> str:
        """py-spy's label, as used in folded stacks: `function (file:line)`."""
        where = self.location()
        return f"{self.function} ({where})" if where else self.function


@dataclass(frozen=True)
class Thread:
    os_thread_id: int
    name: str = ""
    pid: Optional[int] = None
    python_thread_id: Optional[str] = None

    def title(self) -> str:
        pid = f", pid {self.pid}" if self.pid else ""
        return f"{self.name or 'thread'} (tid {self.os_thread_id}{pid})"


@dataclass
class Sample:
    frame_ids: Tuple[int, ...]  # root first
    stack: Tuple[Frame, ...]  # root first
    thread: Optional[Thread]  # None when the event has no threadIds


def _decimal_id(key, what: str, where: str) -> int:
    """A frame or thread ID: a key of newFrames/threads (decimal string) or an array item."""
    if isinstance(key, str):
        if not re.fullmatch(r"0|[1-9][0-9]*", key):
            raise ProtocolError(f"{where}: {what} {key!r} is not a decimal integer")
        key = int(key)
    if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key <= MAX_ID:
        raise ProtocolError(f"{where}: {what} {key!r} is not an integer in [0, 2^53)")
    return key


def _frame(raw, where: str) -> Frame:
    if not isinstance(raw, dict):
        raise ProtocolError(f"{where}: a frame must be an object")
    file, line, function = raw.get("file"), raw.get("line"), raw.get("function")
    if not isinstance(file, str) or not isinstance(function, str):
        raise ProtocolError(f"{where}: a frame needs string 'file' and 'function'")
    if isinstance(line, bool) or not isinstance(line, int) or line < 0:
        raise ProtocolError(f"{where}: 'line' must be a non-negative integer")
    return Frame(function, file, line, bool(raw.get("native", False)), str(raw.get("module", "")))


def _thread(tid: int, raw, where: str) -> Thread:
    if not isinstance(raw, dict):
        raise ProtocolError(f"{where}: a thread must be an object")
    return Thread(tid, str(raw.get("name", "")), raw.get("pid"), raw.get("pythonThreadId"))


class StreamDecoder:
    """Turns profilingData bodies, in arrival order, into stacks of Frames (root first).

    Checks the protocol's promises: every frame ID in a sample was announced in `newFrames` of
    this or an earlier event, no ID is announced twice in a run, every thread in `threadIds` was
    announced in `threads`. A violation raises ProtocolError and nothing of that body is kept.
    One decoder per profiling run."""

    def __init__(self):
        self.frames: Dict[int, Frame] = {}
        self.threads: Dict[int, Thread] = {}
        self.events = 0

    def decode(self, body: dict) -> List[Sample]:
        where = f"profilingData event #{self.events + 1}"
        if not isinstance(body, dict):
            raise ProtocolError(f"{where}: the body is not an object")
        new_frames = body.get("newFrames")
        samples = body.get("samples")
        if not isinstance(new_frames, dict) or not isinstance(samples, list):
            raise ProtocolError(f"{where}: 'newFrames' (object) and 'samples' (array) are required")
        announced: Dict[int, Frame] = {}
        for key, raw in new_frames.items():
            frame_id = _decimal_id(key, "frame ID", where)
            if frame_id in self.frames or frame_id in announced:
                raise ProtocolError(f"{where}: frame ID {frame_id} is announced again; an ID "
                                    "must appear in newFrames only once per profiling run")
            announced[frame_id] = _frame(raw, f"{where}, frame {frame_id}")
        new_threads: Dict[int, Thread] = {}
        for key, raw in (body.get("threads") or {}).items():
            tid = _decimal_id(key, "thread ID", where)
            new_threads[tid] = _thread(tid, raw, f"{where}, thread {tid}")
        count = body.get("sampleCount")
        if count != len(samples):
            raise ProtocolError(f"{where}: sampleCount is {count!r} but there are "
                                f"{len(samples)} samples")
        thread_ids = body.get("threadIds")
        if thread_ids is not None and (not isinstance(thread_ids, list) or
                                       len(thread_ids) != len(samples)):
            raise ProtocolError(f"{where}: threadIds must be parallel to samples")

        def frame(frame_id, i):
            found = None
            if type(frame_id) is int:  # not bool, not a string
                found = announced.get(frame_id) or self.frames.get(frame_id)
            if found is None:
                raise ProtocolError(f"{where}: sample {i} references frame ID {frame_id!r}, "
                                    "which was never announced in newFrames")
            return found

        def thread(i):
            tid = thread_ids[i]
            found = None
            if type(tid) is int:
                found = new_threads.get(tid) or self.threads.get(tid)
            if found is None:
                raise ProtocolError(f"{where}: sample {i} is on thread {tid!r}, which was "
                                    "never announced in threads")
            return found

        decoded = []
        for i, ids in enumerate(samples):
            if not isinstance(ids, list):
                raise ProtocolError(f"{where}: sample {i} is not an array of frame IDs")
            stack = tuple(frame(frame_id, i) for frame_id in ids)
            decoded.append(Sample(tuple(ids), stack, thread(i) if thread_ids is not None else None))
        self.frames.update(announced)
        self.threads.update(new_threads)
        self.events += 1
        return decoded


def is_debugger_frame(frame: Frame) -> bool:
    """A frame of debugpy or pydevd: its launcher, its threads, its tracing hooks, in Python or
    compiled (a native frame of one of its extension modules)."""
    def in_debugger(path: str) -> bool:
        path = path.replace("\\", "/")
        return "/debugpy/" in path or "/pydevd" in path or "/_pydev" in path
    return in_debugger(frame.file) or (frame.native and in_debugger(frame.module))


def program_part(stack: Tuple[Frame, ...]) -> Tuple[Frame, ...]:
    """What remains of a stack (root first) below its last debugger frame: the program's own
    calls, without the runpy/debugpy chain that launched them; empty if the sample was taken
    in the debugger itself (native frames called from the debugger included)."""
    for i in range(len(stack) - 1, -1, -1):
        if is_debugger_frame(stack[i]):
            rest = stack[i + 1:]
            return rest if any(not f.native for f in rest) else ()
    return stack


@dataclass
class FunctionStats:
    function: str
    file: str
    line: int  # lowest line sampled in the function: its first line, as far as seen
    own: int = 0
    total: int = 0


class Profile:
    """One profiling run, accumulated from its profilingData events. With `hide_debugger`,
    the function tables leave out debugpy's frames (see program_part); the files keep them."""

    def __init__(self, start_body: Optional[dict] = None, name: str = "python",
                 hide_debugger: bool = True):
        self.info = dict(start_body or {})  # the startProfiling response body
        self.name = name
        self.hide_debugger = hide_debugger
        self.debugger_samples = 0  # samples taken in the debugger's own code (when hidden)
        self.decoder = StreamDecoder()
        self.sample_count = 0
        self.dropped = 0
        self.errors = 0
        self.stream_duration_ms = 0.0
        self.start_time: Optional[float] = None  # wall clock (ms since the epoch), if sent
        self.end_time: Optional[float] = None
        self.summary: Optional[dict] = None  # stopProfiling response or profilingStopped body
        self.stop_reason: Optional[str] = None
        self._stacks: List[Tuple[int, ...]] = []
        self._stack_index: Dict[Tuple[int, ...], int] = {}
        self._stack_counts: "collections.Counter[int]" = collections.Counter()
        self.thread_samples: Dict[Optional[int], List[int]] = collections.OrderedDict()

    def add_event(self, body: dict) -> List[Sample]:
        samples = self.decoder.decode(body)
        for sample in samples:
            index = self._stack_index.setdefault(sample.frame_ids, len(self._stacks))
            if index == len(self._stacks):
                self._stacks.append(sample.frame_ids)
            tid = sample.thread.os_thread_id if sample.thread else None
            self.thread_samples.setdefault(tid, []).append(index)
            self._stack_counts[index] += 1
        self.sample_count += len(samples)
        self.dropped += int(body.get("droppedSampleCount") or 0)
        self.errors += int(body.get("errorCount") or 0)
        self.stream_duration_ms += float(body.get("duration") or 0)
        if body.get("startTime") is not None and self.start_time is None:
            self.start_time = float(body["startTime"])
        if body.get("endTime") is not None:
            self.end_time = float(body["endTime"])
        return samples

    def finish(self, summary: dict, reason: str) -> None:
        self.summary, self.stop_reason = dict(summary or {}), reason

    @property
    def duration_ms(self) -> float:
        if self.summary and self.summary.get("duration") is not None:
            return float(self.summary["duration"])
        return self.stream_duration_ms

    def stacks(self) -> Iterator[Tuple[Optional[int], Tuple[int, ...]]]:
        """Every sample as (thread ID, frame IDs root first), thread by thread, in order."""
        for tid, indices in self.thread_samples.items():
            for index in indices:
                yield tid, self._stacks[index]

    # -- analysis --------------------------------------------------------------------------
    def functions(self) -> List[FunctionStats]:
        """Own and total samples per function (function, file), recursion counted once."""
        stats: Dict[Tuple[str, str], FunctionStats] = {}
        self.debugger_samples = 0
        for index, n in self._stack_counts.items():
            stack = tuple(self.decoder.frames[i] for i in self._stacks[index])
            if self.hide_debugger:
                shown = program_part(stack)
                self.debugger_samples += n if stack and not shown else 0
                stack = shown
            keys = [(f.function, f.file or f.module) for f in stack]
            for f, key in zip(stack, keys):
                entry = stats.setdefault(key, FunctionStats(key[0], key[1], f.line))
                if 0 < f.line < entry.line or entry.line == 0:
                    entry.line = f.line
            if keys:
                stats[keys[-1]].own += n
            for key in set(keys):
                stats[key].total += n
        return list(stats.values())

    def top(self, n: int = 15, by: str = "own") -> List[FunctionStats]:
        rows = sorted(self.functions(), key=lambda s: (-getattr(s, by), -s.total, s.function))
        return rows[:n]

    def summary_dict(self, top: int = 15) -> dict:
        def row(s: FunctionStats) -> dict:
            return {"function": s.function, "file": s.file, "line": s.line,
                    "ownSamples": s.own, "totalSamples": s.total,
                    "ownPercent": round(self._percent(s.own), 2),
                    "totalPercent": round(self._percent(s.total), 2)}

        threads = self.decoder.threads
        out = {"samples": self.sample_count, "durationMs": round(self.duration_ms, 3),
               "droppedSamples": self.dropped, "errors": self.errors,
               "events": self.decoder.events, "frames": len(self.decoder.frames),
               "stopReason": self.stop_reason,
               "pid": self.info.get("pid"), "pythonVersion": self.info.get("pythonVersion"),
               "rate": self.info.get("rate"),
               "threads": [{"osThreadId": tid, "samples": len(indices),
                            "name": threads[tid].name if tid in threads else "",
                            "pid": threads[tid].pid if tid in threads else None}
                           for tid, indices in self.thread_samples.items()],
               "topOwn": [row(s) for s in self.top(top, "own")],
               "topTotal": [row(s) for s in self.top(top, "total")]}
        out["debuggerSamples"] = self.debugger_samples if self.hide_debugger else None
        if self.summary:
            out["daemonSummary"] = self.summary
        if self.start_time is not None:
            out["startTime"], out["endTime"] = self.start_time, self.end_time
        return out

    def _percent(self, n: int) -> float:
        return 100.0 * n / self.sample_count if self.sample_count else 0.0

    def format_summary(self, top: int = 15) -> str:
        rate = self.info.get("rate")
        head = (f"{self.sample_count} samples over {self.duration_ms / 1000:.2f} s"
                f"{f' at {rate} Hz' if rate else ''}, {self.dropped} dropped, "
                f"{self.errors} errors, {len(self.thread_samples)} threads")
        if self.info.get("pid"):
            version = self.info.get("pythonVersion", "?")
            head = f"process {self.info['pid']} (Python {version}): {head}"
        tables = {by: self.top(top, by) for by in ("own", "total")}
        if self.hide_debugger and self.debugger_samples:
            head += (f"\n{self._percent(self.debugger_samples):.1f}% of the samples were in "
                     "debugpy's own threads and code; the tables leave its frames out")
        lines = [head]
        for by, title in (("own", "self"), ("total", "total")):
            lines += ["", f"Top {top} functions by {title} samples",
                      f"{'%Own':>7} {'%Total':>7} {'Own':>7} {'Total':>7}  Function (file:line)"]
            for s in tables[by]:
                where = f"{s.file}:{s.line}" if s.file and s.line else s.file
                lines.append(f"{self._percent(s.own):6.1f}% {self._percent(s.total):6.1f}% "
                             f"{s.own:7d} {s.total:7d}  {s.function} ({where})")
        return "\n".join(lines)

    # -- files -----------------------------------------------------------------------------
    def speedscope(self) -> dict:
        """The run as a speedscope document: one sampled profile per thread, time in ms."""
        index = {frame_id: i for i, frame_id in enumerate(self.decoder.frames)}
        frames = []
        for f in self.decoder.frames.values():
            entry = {"name": f.function}
            if f.file or f.module:
                entry["file"] = f.file or f.module
            if f.line > 0:
                entry["line"] = f.line
            frames.append(entry)
        interval = 1000.0 / float(self.info.get("rate") or 100)
        profiles = []
        for tid, indices in self.thread_samples.items():
            thread = self.decoder.threads.get(tid) if tid is not None else None
            name = thread.title() if thread else ("all threads" if tid is None else f"tid {tid}")
            profiles.append({
                "type": "sampled", "name": name, "unit": "milliseconds",
                "startValue": 0, "endValue": interval * len(indices),
                "samples": [[index[i] for i in self._stacks[s]] for s in indices],
                "weights": [interval] * len(indices)})
        doc = {"$schema": "https://www.speedscope.app/file-format-schema.json",
               "shared": {"frames": frames}, "profiles": profiles, "name": self.name,
               "exporter": "dapprof_client"}
        if profiles:
            doc["activeProfileIndex"] = 0
        return doc

    def collapsed(self) -> str:
        """Folded stacks (flamegraph.pl / inferno input), one line per distinct stack."""
        frames = self.decoder.frames
        lines = sorted(";".join(frames[i].label().replace(";", ":") for i in self._stacks[index])
                       + f" {n}" for index, n in self._stack_counts.items() if self._stacks[index])
        return "".join(line + "\n" for line in lines)


# -- transport ---------------------------------------------------------------------------------

class Connection:
    """Content-Length framed DAP messages over a socket or a child process's pipes. A reader
    thread queues incoming messages so that every wait can have a timeout."""

    def __init__(self, read: Callable[[int], bytes], write: Callable[[bytes], None],
                 close: Callable[[], None], description: str):
        self._read, self._write, self._close = read, write, close
        self.description = description
        self._inbox: "queue.Queue" = queue.Queue()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    @classmethod
    def tcp(cls, host: str, port: int, timeout: float = 10.0) -> "Connection":
        where = f"{host}:{port}"
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise ClientError(f"cannot connect to dapprof at {where}: {e.strerror or e}. "
                              "Is `dapprof serve` running there?") from None
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def close():
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the reader thread
            except OSError:
                pass
            sock.close()

        return cls(sock.recv, sock.sendall, close, where)

    @classmethod
    def spawn(cls, argv: List[str], env: Optional[dict] = None) -> "Connection":
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except OSError as e:
            raise ClientError(f"cannot start {argv[0]}: {e.strerror or e}. Give the dapprof "
                              "executable with --dapprof PATH, or use --connect HOST:PORT"
                              ) from None

        def write(data: bytes):
            proc.stdin.write(data)
            proc.stdin.flush()

        def close():
            try:
                proc.stdin.close()  # dapprof stdio ends its session at EOF
            except OSError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

        connection = cls(proc.stdout.read1, write, close, " ".join(argv[:2]))
        connection.process = proc
        return connection

    def _read_loop(self):
        buffer = bytearray()
        try:
            while True:
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    chunk = self._read(65536)
                    if not chunk:
                        return
                    buffer += chunk
                    continue
                length = None
                for line in bytes(buffer[:end]).split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    raise ValueError(f"DAP header without Content-Length: {buffer[:200]!r}")
                while len(buffer) < end + 4 + length:
                    chunk = self._read(65536)
                    if not chunk:
                        return
                    buffer += chunk
                self._inbox.put(json.loads(bytes(buffer[end + 4:end + 4 + length])))
                del buffer[:end + 4 + length]
        except (OSError, ValueError) as e:
            self._inbox.put(e)
        finally:
            self._inbox.put(None)

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        try:
            with self._write_lock:
                self._write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except OSError as e:
            raise ConnectionClosed(f"lost the connection to {self.description}: {e}") from None

    def receive(self, timeout: Optional[float]) -> Optional[dict]:
        """The next message; None after `timeout` seconds; ConnectionClosed at the end."""
        try:
            message = self._inbox.get(timeout=timeout)
        except queue.Empty:
            return None
        if message is None or isinstance(message, Exception):
            self._inbox.put(None)  # stays closed for later calls
            detail = f": {message}" if message is not None else ""
            raise ConnectionClosed(f"{self.description} closed the connection{detail}")
        return message

    def close(self) -> None:
        self._close()


# -- the debug session -------------------------------------------------------------------------

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
        if name == "profilingData" and self.profile is not None:
            if self.record_stream is not None:
                self.record_stream.write(
                    json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n")
            self.profile.add_event(body)
        elif name == "profilingStopped":
            self.profiling = False
            if self.profile is not None:
                self.profile.finish(body, body.get("reason", "unknown"))
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
                        pid: Optional[int] = None, name: str = "python") -> dict:
        """startProfiling; returns the response body (pid, pythonVersion, settings in effect).
        Samples then accumulate in self.profile, a new Profile per run."""
        if not self.capabilities.get("supportsProfiling"):
            raise ClientError(f"{self.connection.description} does not support profiling "
                              "(no supportsProfiling in its capabilities): is it dapprof?")
        arguments = {"native": native, "nonblocking": nonblocking, "idle": idle, "gil": gil,
                     "subprocesses": subprocesses}
        for key, value in (("rate", rate), ("batchIntervalMs", batch_interval_ms), ("pid", pid)):
            if value is not None:
                arguments[key] = value
        self.profile = Profile(name=name)
        self.profiling = True
        try:
            body = self.request("startProfiling", arguments)
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

    def stop_profiling(self, output_path: Optional[str] = None,
                       format: Optional[str] = None) -> Optional[dict]:
        """stopProfiling; dapprof writes `output_path` (made absolute) in `format`. Returns the
        run's summary. After the run ended by itself (profilingStopped), dapprof still writes
        that run's file once; None when there is no run to stop or write (error 2004)."""
        arguments = {}
        if output_path:
            arguments["outputPath"] = os.path.abspath(output_path)
            if format:
                arguments["format"] = format
        try:
            body = self.request("stopProfiling", arguments)
        except RequestFailed as e:
            if e.error_id == 2004:
                self.profiling = False
                return None
            if e.error_id != 2001:  # invalid arguments leave the run going
                self.profiling = False
            raise
        if self.profile is not None:
            reason = self.profile.stop_reason if not self.profiling else None
            self.profile.finish(body, reason or "requested")
        self.profiling = False
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


# -- command line ------------------------------------------------------------------------------

def _host_port(text: str) -> Tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


def _key_value(text: str) -> Tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key, value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dapprof_client.py", usage="%(prog)s [options] (PROGRAM | -m MODULE | "
        "--attach-connect HOST:PORT | --attach) [-- ARGS...]",
        description="Profile a Python program through dapprof: launch it under the debugger, "
        "sample it live, print the top functions and write profile files.")
    g = p.add_argument_group("dapprof")
    g.add_argument("--connect", type=_host_port, metavar="HOST:PORT",
                   help="a running `dapprof serve` (default: spawn `dapprof stdio`)")
    g.add_argument("--dapprof", default="dapprof", metavar="PATH",
                   help="dapprof executable to spawn when --connect is not given")
    g.add_argument("--daemon-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for the spawned `dapprof stdio`, written as "
                   "--daemon-arg=--python=/usr/bin/python3 (repeatable)")
    g = p.add_argument_group("program")
    g.add_argument("program", nargs="?", help="Python script to launch")
    g.add_argument("-m", dest="module", metavar="MODULE", help="launch a module instead")
    g.add_argument("--attach-connect", type=_host_port, metavar="HOST:PORT",
                   help="attach to a program that called debugpy.listen((HOST, PORT)); the "
                   "spawned dapprof connects to it")
    g.add_argument("--attach", action="store_true",
                   help="attach instead of launching, with --connect to a `dapprof serve "
                   "--connect HOST:PORT` whose upstream is a program that called debugpy.listen")
    g.add_argument("--cwd", help="working directory of the program (default: this one)")
    g.add_argument("--python", metavar="PATH", help="interpreter that runs the program")
    g.add_argument("--env", type=_key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="environment variable for the program (repeatable)")
    g.add_argument("--no-debug-subprocesses", action="store_true",
                   help="do not debug child processes (debugpy's subProcess: false)")
    g.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="how long starting the debug session may take (default 60)")
    g = p.add_argument_group("profiling")
    g.add_argument("--rate", type=int, metavar="HZ", help="samples per second (default 100)")
    g.add_argument("--native", action="store_true", help="include native (C) frames")
    g.add_argument("--nonblocking", action="store_true", help="never pause the program")
    g.add_argument("--idle", action="store_true", help="also sample idle threads")
    g.add_argument("--gil", action="store_true", help="only the thread holding the GIL")
    g.add_argument("--subprocesses", action="store_true", help="also sample child processes")
    g.add_argument("--batch-interval", type=int, metavar="MS",
                   help="milliseconds between profilingData events (default 100)")
    g.add_argument("--duration", type=float, metavar="SECONDS",
                   help="profile this long (default: until the program exits or Ctrl-C)")
    g = p.add_argument_group("output")
    g.add_argument("--output", metavar="FILE", help="profile file that dapprof writes")
    g.add_argument("--format", choices=FORMATS, default="speedscope",
                   help="format of --output (default speedscope)")
    g.add_argument("--speedscope", metavar="FILE", help="write a speedscope file from the stream")
    g.add_argument("--collapsed", metavar="FILE", help="write folded stacks from the stream")
    g.add_argument("--json-summary", metavar="FILE", help="write the summary as JSON")
    g.add_argument("--record-stream", metavar="FILE", help="write every profilingData event "
                   "body as received, one JSON document a line")
    g.add_argument("--top", type=int, default=15, metavar="N",
                   help="functions in each table (default 15)")
    g.add_argument("--debugger-frames", action="store_true",
                   help="keep debugpy's own frames in the tables (the files always have them)")
    g.add_argument("--wait-exit", action="store_true", help="after profiling, let the program "
                   "run to its end (default: terminate it)")
    return p


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    argv = list(sys.argv[1:] if argv is None else argv)
    program_args: List[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, program_args = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    opts = parser.parse_args(argv)
    opts.args = program_args
    targets = [x for x in (opts.program, opts.module, opts.attach_connect, opts.attach) if x]
    if len(targets) != 1:
        parser.error("give exactly one of PROGRAM, -m MODULE, --attach-connect HOST:PORT, "
                     "--attach")
    if opts.attach_connect and opts.connect:
        parser.error("--attach-connect makes the spawned `dapprof stdio` connect to the program; "
                     "with --connect, start the server as `dapprof serve --connect HOST:PORT` "
                     "and give --attach")
    if opts.duration is not None and opts.duration <= 0:
        parser.error("--duration must be positive")
    return opts


def _write(path: str, text: str) -> str:
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def _say(message: str) -> None:
    sys.stderr.write(f"dapprof_client: {message}\n")
    sys.stderr.flush()


def _open_session(opts) -> Session:
    if opts.connect:
        return Session.connect(*opts.connect)
    daemon_args = list(opts.daemon_arg)
    if opts.attach_connect:
        daemon_args.append("--connect=%s:%d" % opts.attach_connect)
    return Session.spawn(opts.dapprof, tuple(daemon_args))


def _start_debuggee(session: Session, opts) -> None:
    try:
        session.initialize()
    except ConnectionClosed as e:
        raise ClientError(f"{e} before the session started. dapprof's messages say why; often "
                          "the interpreter that runs debugpy's adapter lacks debugpy (choose it "
                          "with dapprof's --python option)") from None
    if not session.capabilities.get("supportsProfiling"):
        raise ClientError(f"{session.connection.description} does not support profiling: "
                          "connect to dapprof, not to debugpy itself")
    if opts.attach_connect or opts.attach:
        session.attach(timeout=opts.timeout)
        return
    extra = {"subProcess": False} if opts.no_debug_subprocesses else {}
    session.launch(program=opts.program, module=opts.module, args=opts.args, cwd=opts.cwd,
                   python=opts.python, env=dict(opts.env), timeout=opts.timeout, **extra)


def _finish_profiling(session: Session, opts, problems: List[str]) -> Optional[str]:
    """Stops the run if it still goes, and has dapprof write --output (also for a run that
    ended with the program); returns the file written, if any."""
    output = os.path.abspath(opts.output) if opts.output else None
    if not session.profiling and not output:
        return None
    try:
        body = session.stop_profiling(output, opts.format if output else None)
    except RequestFailed as e:
        problems.append(str(e))
        if session.profiling:
            session.stop_profiling()
        return None
    if output and not (body or {}).get("outputPath"):
        problems.append(f"dapprof wrote no {opts.format} file to {output}: the run ended with "
                        "the program before it was stopped (use a --duration shorter than the "
                        "program's run, or --speedscope/--collapsed)")
    return (body or {}).get("outputPath")


def _wait_quietly(session: Session, timeout: float) -> None:
    try:
        session.wait_terminated(timeout)
    except ClientError:
        pass


def run(opts) -> int:
    with contextlib.ExitStack() as files:
        record = None
        if opts.record_stream:
            path = os.path.abspath(opts.record_stream)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            record = files.enter_context(open(path, "w", encoding="utf-8"))
        return _run(opts, record)


def _run(opts, record: Optional[TextIO]) -> int:
    problems: List[str] = []
    session = _open_session(opts)
    session.record_stream = record
    with session:
        _start_debuggee(session, opts)
        name = os.path.basename(opts.program or opts.module or "attached program")
        try:
            info = session.start_profiling(
                rate=opts.rate, native=opts.native, nonblocking=opts.nonblocking, idle=opts.idle,
                gil=opts.gil, subprocesses=opts.subprocesses,
                batch_interval_ms=opts.batch_interval, name=name)
        except ClientError:
            session.disconnect(terminate=True)
            raise
        _say(f"profiling process {info.get('pid')} (Python {info.get('pythonVersion')}) at "
             f"{info.get('rate')} Hz" + (f" for {opts.duration:g} s" if opts.duration else ""))
        if info.get("warning"):
            _say(f"warning: {info['warning']}")
        session.collect(opts.duration)
        written = _finish_profiling(session, opts, problems)
        profile = session.profile
        profile.hide_debugger = not opts.debugger_frames
        print(profile.format_summary(opts.top), flush=True)
        if written:
            _say(f"dapprof wrote {written} ({opts.format})")
        if opts.speedscope:
            _say(f"wrote {_write(opts.speedscope, json.dumps(profile.speedscope()))}")
        if opts.collapsed:
            _say(f"wrote {_write(opts.collapsed, profile.collapsed())}")
        if profile.stop_reason == "exited":
            _wait_quietly(session, 10.0)  # for debugpy's `exited` event and its exit code
        program_ended = session.terminated or session.exit_code is not None
        if opts.wait_exit and not program_ended:
            _say("waiting for the program to exit")
            session.wait_terminated()
            program_ended = True
        # A program we terminate has an exit code that says nothing about it.
        code = session.exit_code if program_ended else None
        if opts.json_summary:
            summary = dict(profile.summary_dict(opts.top), outputPath=written, exitCode=code)
            _say(f"wrote {_write(opts.json_summary, json.dumps(summary, indent=2))}")
        session.disconnect(terminate=not program_ended)
    for problem in problems:
        _say(f"error: {problem}")
    if problems:
        return EXIT_ERROR
    if code:
        _say(f"the program exited with code {code}")
        return EXIT_PROGRAM_FAILED
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    opts = parse_args(argv)
    try:
        return run(opts)
    except ClientError as e:
        _say(f"error: {e}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
