"""Decodes a session's profiling stream as a client would, checking the protocol's rules on the
way: every message valid against schemas/, each frame ID announced once and before use, every
sample's thread known."""
from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from dap_schemas import validate  # noqa: E402


class Stream:
    def __init__(self):
        self.frames: dict[int, dict] = {}
        self.threads: dict[int, dict] = {}
        self.stacks: list[tuple[int, tuple]] = []  # (thread id, frame IDs root first)
        self.events = 0
        self.delivered = 0
        self.dropped = 0
        self.errors = 0
        self.times: list[tuple[float, float]] = []

    def add(self, message: dict) -> None:
        validate("profilingData", message)
        body = message["body"]
        self.events += 1
        for key, frame in body["newFrames"].items():
            fid = int(key)
            assert fid not in self.frames, f"frame {fid} announced twice"
            self.frames[fid] = frame
        for key, thread in body.get("threads", {}).items():
            self.threads[int(key)] = thread
        for stack, tid in zip(body["samples"], body["threadIds"]):
            for fid in stack:
                assert fid in self.frames, f"frame {fid} used before it was announced"
            assert tid in self.threads, f"thread {tid} used before it was announced"
            self.stacks.append((tid, tuple(stack)))
        self.delivered += body["sampleCount"]
        self.dropped += body.get("droppedSampleCount", 0)
        self.errors += body.get("errorCount", 0)
        if body["samples"]:
            assert body["startTime"] <= body["endTime"]
            self.times.append((body["startTime"], body["endTime"]))

    def functions(self) -> set[str]:
        return {f["function"] for f in self.frames.values()}

    def frames_named(self, function: str) -> list[dict]:
        return [f for f in self.frames.values() if f["function"] == function]

    def label(self, fid: int) -> str:
        f = self.frames[fid]
        if not f["file"]:
            return f["function"]
        if f["line"] <= 0:
            return f"{f['function']} ({f['file']})"
        return f"{f['function']} ({f['file']}:{f['line']})"

    def collapsed(self) -> collections.Counter:
        """Stack counts as dapprof writes them for `collapsed` (root;...;leaf; empty stacks make
        no line), for one process."""
        return collections.Counter(";".join(self.label(fid) for fid in stack)
                                   for _, stack in self.stacks if stack)

    def pids(self) -> set[int]:
        return {self.threads[tid]["pid"] for tid, _ in self.stacks}


def read_collapsed(path: Path) -> collections.Counter:
    counts = collections.Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        counts[stack] += int(count)
    return counts


def line_of(program: Path, text: str) -> int:
    for number, line in enumerate(program.read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {program}")
