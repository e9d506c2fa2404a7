"""The profilingData stream: its decoder, which checks the protocol's promises, and Profile, one
run as decoded from its events plus the daemon's summary of it. Tables and files are the
daemon's (stopProfiling's topFunctions, exportProfile); nothing here computes them."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

from . import summary as _summary
from .errors import ProtocolError
from .protocol import ORIGINS

MAX_ID = 2**53 - 1  # frame and thread IDs stay exact in JavaScript


@dataclass(frozen=True)
class Frame:
    function: str
    file: str
    line: int
    native: bool = False
    module: str = ""
    origin: str = ORIGINS[0]  # "program", or "debugger" for debugpy's and pydevd's own frames

    @property
    def debugger(self) -> bool:
        """The daemon classified it as the debugger's own code (newFrames' origin)."""
        return self.origin == "debugger"

    def location(self) -> str:
        """Where the frame is, for people: file:line, or the shared object of a native frame."""
        where = self.file or self.module
        return f"{where}:{self.line}" if where and self.line > 0 else where

    def label(self) -> str:
        """py-spy's label: `function (file:line)`."""
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
    count: int = 1  # consecutive samples it stands for: a run of stackIds stays one Sample


def _decimal_id(key, what: str, where: str) -> int:
    """A frame, stack or thread ID: a key of newFrames/newStacks/threads (decimal string) or an
    array item."""
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
    origin = raw.get("origin", ORIGINS[0])
    if origin not in ORIGINS:
        raise ProtocolError(f"{where}: 'origin' must be one of {', '.join(ORIGINS)}, "
                            f"not {origin!r}")
    return Frame(function, file, line, bool(raw.get("native", False)), str(raw.get("module", "")),
                 origin)


def _thread(tid: int, raw, where: str) -> Thread:
    if not isinstance(raw, dict):
        raise ProtocolError(f"{where}: a thread must be an object")
    return Thread(tid, str(raw.get("name", "")), raw.get("pid"), raw.get("pythonThreadId"))


class StreamDecoder:
    """Turns profilingData bodies, in arrival order, into stacks of Frames (root first).

    Checks the protocol's promises: every frame ID in a sample was announced in `newFrames` of
    this or an earlier event, every stack ID in `stackIds` (a run started with `stacks`) in
    `newStacks`, no ID is announced twice in a run, every thread in `threadIds` was announced in
    `threads`. A violation raises ProtocolError and nothing of that body is kept. One decoder per
    profiling run."""

    def __init__(self):
        self.frames: Dict[int, Frame] = {}
        self.stacks: Dict[int, Tuple[int, ...]] = {}  # stack ID -> frame IDs, root first
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
        stack_ids, counts = body.get("stackIds"), body.get("stackCounts")
        runs = stack_ids is not None
        if runs:
            if (not isinstance(stack_ids, list) or not isinstance(counts, list)
                    or len(counts) != len(stack_ids)):
                raise ProtocolError(f"{where}: stackIds and stackCounts must be parallel arrays")
            if samples:
                raise ProtocolError(f"{where}: samples must be empty when stackIds carries them")
            if any(type(c) is not int or c < 1 for c in counts):
                raise ProtocolError(f"{where}: every stackCounts item must be a positive integer")
        total = sum(counts) if runs else len(samples)
        count = body.get("sampleCount")
        if count != total:
            raise ProtocolError(f"{where}: sampleCount is {count!r} but there are "
                                f"{total} samples")
        thread_ids = body.get("threadIds")
        entries = stack_ids if runs else samples
        if thread_ids is not None and (not isinstance(thread_ids, list) or
                                       len(thread_ids) != len(entries)):
            raise ProtocolError(f"{where}: threadIds must be parallel to "
                                f"{'stackIds' if runs else 'samples'}")

        def frame(frame_id, i):
            found = None
            if type(frame_id) is int:  # not bool, not a string
                found = announced.get(frame_id) or self.frames.get(frame_id)
            if found is None:
                what = f"sample {i}" if isinstance(i, int) else i
                raise ProtocolError(f"{where}: {what} references frame ID {frame_id!r}, "
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

        new_stacks: Dict[int, Tuple[int, ...]] = {}
        raw_stacks = body.get("newStacks") or {}
        if not isinstance(raw_stacks, dict):
            raise ProtocolError(f"{where}: newStacks must be an object")
        for key, ids in raw_stacks.items():
            stack_id = _decimal_id(key, "stack ID", where)
            if stack_id in self.stacks or stack_id in new_stacks:
                raise ProtocolError(f"{where}: stack ID {stack_id} is announced again; an ID "
                                    "must appear in newStacks only once per profiling run")
            if not isinstance(ids, list):
                raise ProtocolError(f"{where}: stack {stack_id} is not an array of frame IDs")
            for frame_id in ids:
                frame(frame_id, f"stack {stack_id}")
            new_stacks[stack_id] = tuple(ids)

        decoded = []
        for i, stack_id in enumerate(stack_ids if runs else ()):
            ids = new_stacks.get(stack_id) if type(stack_id) is int else None
            if ids is None and type(stack_id) is int:
                ids = self.stacks.get(stack_id)
            if ids is None:
                raise ProtocolError(f"{where}: stackIds[{i}] is {stack_id!r}, which was never "
                                    "announced in newStacks")
            stack = tuple(frame(frame_id, i) for frame_id in ids)
            decoded.append(Sample(ids, stack, thread(i) if thread_ids is not None else None,
                                  counts[i]))
        for i, ids in enumerate(samples):
            if not isinstance(ids, list):
                raise ProtocolError(f"{where}: sample {i} is not an array of frame IDs")
            stack = tuple(frame(frame_id, i) for frame_id in ids)
            decoded.append(Sample(tuple(ids), stack, thread(i) if thread_ids is not None else None))
        self.frames.update(announced)
        self.stacks.update(new_stacks)
        self.threads.update(new_threads)
        self.events += 1
        return decoded


class Profile:
    """One profiling run: its profilingData events, decoded and counted as they arrive, and,
    once it ended, the daemon's summary of it (the stopProfiling response or the
    profilingStopped body: totals and topFunctions)."""

    def __init__(self, start_body: Optional[dict] = None, name: str = "python",
                 hide_debugger: bool = True):
        self.info = dict(start_body or {})  # the startProfiling response body
        self.name = name
        self.hide_debugger = hide_debugger  # asked of the daemon for its table and files
        self.decoder = StreamDecoder()
        self.sample_count = 0  # samples decoded from the stream
        self.dropped = 0
        self.errors = 0
        self.stream_duration_ms = 0.0
        self.start_time: Optional[float] = None  # wall clock (ms since the epoch), if sent
        self.end_time: Optional[float] = None
        self.summary: Optional[dict] = None  # stopProfiling response or profilingStopped body
        self.stop_reason: Optional[str] = None
        self._stacks: List[Tuple[int, ...]] = []
        self._stack_index: Dict[Tuple[int, ...], int] = {}
        self.thread_samples: Dict[Optional[int], List[int]] = {}

    def add_event(self, body: dict) -> List[Sample]:
        samples = self.decoder.decode(body)
        for sample in samples:
            index = self._stack_index.setdefault(sample.frame_ids, len(self._stacks))
            if index == len(self._stacks):
                self._stacks.append(sample.frame_ids)
            tid = sample.thread.os_thread_id if sample.thread else None
            self.thread_samples.setdefault(tid, []).extend([index] * sample.count)
            self.sample_count += sample.count
        self.dropped += int(body.get("droppedSampleCount") or 0)
        self.errors += int(body.get("errorCount") or 0)
        self.stream_duration_ms += float(body.get("duration") or 0)
        if body.get("startTime") is not None and self.start_time is None:
            self.start_time = float(body["startTime"])
        if body.get("endTime") is not None:
            self.end_time = float(body["endTime"])
        return samples

    def finish(self, summary: dict, reason: str) -> None:
        """The daemon's summary of the run, and why it ended."""
        self.summary, self.stop_reason = dict(summary or {}), reason

    def stacks(self) -> Iterator[Tuple[Optional[int], Tuple[int, ...]]]:
        """Every sample as (thread ID, frame IDs root first), thread by thread, in order."""
        for tid, indices in self.thread_samples.items():
            for index in indices:
                yield tid, self._stacks[index]

    # -- the daemon's summary ----------------------------------------------------------------
    def _total(self, key: str, stream_value):
        value = (self.summary or {}).get(key)
        return stream_value if value is None else value

    @property
    def total_samples(self) -> int:
        """sampleCount of the daemon's summary (what the stream delivered, until it came)."""
        return int(self._total("sampleCount", self.sample_count))

    @property
    def duration_ms(self) -> float:
        return float(self._total("duration", self.stream_duration_ms))

    @property
    def error_count(self) -> int:
        return int(self._total("errorCount", self.errors))

    @property
    def dropped_count(self) -> int:
        return int(self._total("droppedSampleCount", self.dropped))

    @property
    def top_functions(self) -> Optional[List[_summary.FunctionStats]]:
        """The daemon's topFunctions (by self, then total samples), or None when there is no
        summary yet or the daemon sent none."""
        return _summary.top_functions(self.summary)

    def format_summary(self, top: int = 15) -> str:
        return _summary.format_summary(self, top)

    def summary_dict(self) -> dict:
        return _summary.summary_dict(self)
