"""Decodes a session's profiling stream as a client would, checking the protocol's rules on the
way: every message valid against schemas/, each frame ID (and, in a run started with `stacks`,
each stack ID) announced once and before use, every sample's thread known, each process announced
once when first sampled and once more when it ends. Both encodings decode
to the same `stacks`: one entry per sample, in order."""
from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from dap_schemas import validate  # noqa: E402


class Stream:
    def __init__(self, check_schema: bool = True):
        # The stress scripts decode ten minutes and more of 1 kHz events: they check the rest.
        self.check_schema = check_schema
        self.frames: dict[int, dict] = {}
        self.stack_defs: dict[int, tuple] = {}  # stack ID -> frame IDs root first (with stacks)
        self.runs = 0  # entries of stackIds received
        self.threads: dict[int, dict] = {}
        self.processes: dict[int, dict] = {}  # by pid, as last announced
        self.exited: set[int] = set()
        self.stacks: list[tuple[int, tuple]] = []  # (thread id, frame IDs root first)
        self.events = 0
        self.delivered = 0
        self.dropped = 0
        self.errors = 0
        self.times: list[tuple[float, float]] = []
        # With opcodes: instruction ID -> its definition, and -> [own, total] summed over events.
        self.instructions: dict[int, dict] = {}
        self.instruction_counts: dict[int, list[int]] = {}

    def add(self, message: dict) -> None:
        if self.check_schema:
            validate("profilingData", message)
        body = message["body"]
        self.events += 1
        for key, frame in body["newFrames"].items():
            fid = int(key)
            assert fid not in self.frames, f"frame {fid} announced twice"
            self.frames[fid] = frame
        for key, thread in body.get("threads", {}).items():
            self.threads[int(key)] = thread
        for key, process in body.get("processes", {}).items():
            pid = int(key)
            assert process["pid"] == pid, process
            # A process's start and end merged into one event send only its end.
            if process.get("exited"):
                assert pid not in self.exited, f"process {pid}'s end announced twice"
                self.exited.add(pid)
            else:
                assert pid not in self.processes or pid in self.exited, \
                    f"process {pid} announced twice"
                self.exited.discard(pid)  # its pid reused by a new process
            self.processes[pid] = process
        for key, stack in body.get("newStacks", {}).items():
            sid = int(key)
            assert sid not in self.stack_defs, f"stack {sid} announced twice"
            for fid in stack:
                assert fid in self.frames, f"frame {fid} used in stack {sid} before it was announced"
            self.stack_defs[sid] = tuple(stack)
        if "stackIds" in body:
            assert body["samples"] == [], "samples and stackIds in one event"
            assert len(body["stackCounts"]) == len(body["threadIds"]) == len(body["stackIds"])
            assert sum(body["stackCounts"]) == body["sampleCount"]
            previous = None
            for sid, count, tid in zip(body["stackIds"], body["stackCounts"], body["threadIds"]):
                assert sid in self.stack_defs, f"stack {sid} used before it was announced"
                assert tid in self.threads, f"thread {tid} used before it was announced"
                assert (tid, sid) != previous, "two runs of one thread and stack in a row"
                previous = (tid, sid)
                self.stacks += [(tid, self.stack_defs[sid])] * count
            self.runs += len(body["stackIds"])
        else:
            assert len(body["samples"]) == body["sampleCount"]
        for stack, tid in zip(body["samples"], body["threadIds"]):
            for fid in stack:
                assert fid in self.frames, f"frame {fid} used before it was announced"
            assert tid in self.threads, f"thread {tid} used before it was announced"
            self.stacks.append((tid, tuple(stack)))
        for key, ins in body.get("newInstructions", {}).items():
            iid = int(key)
            assert iid not in self.instructions, f"instruction {iid} announced twice"
            assert ins["frame"] in self.frames, f"instruction {iid} of a frame not announced"
            self.instructions[iid] = ins
        counts = body.get("instructionCounts", [])
        assert len(counts) % 3 == 0, "instructionCounts holds triples"
        for i in range(0, len(counts), 3):
            iid, own, total = counts[i:i + 3]
            assert iid in self.instructions, f"instruction {iid} counted before it was announced"
            assert own <= total, (iid, own, total)
            summed = self.instruction_counts.setdefault(iid, [0, 0])
            summed[0] += own
            summed[1] += total
        if self.processes:  # the daemon's sampler announces every process it samples
            for tid in body["threadIds"]:
                assert self.threads[tid].get("pid") in self.processes, \
                    f"thread {tid}'s process was not announced"
        self.delivered += body["sampleCount"]
        self.dropped += body.get("droppedSampleCount", 0)
        self.errors += body.get("errorCount", 0)
        if body["sampleCount"]:
            assert body["startTime"] <= body["endTime"]
            self.times.append((body["startTime"], body["endTime"]))

    def functions(self) -> set[str]:
        return {f["function"] for f in self.frames.values()}

    def frames_named(self, function: str) -> list[dict]:
        return [f for f in self.frames.values() if f["function"] == function]

    def label(self, fid: int) -> str:
        f = self.frames[fid]
        if f.get("gc"):  # the collector's place in every format, as CPython's sampler names it
            return f"{f['function']} (<GC>)"
        if not f["file"]:
            return f["function"]
        if f["line"] <= 0:
            return f"{f['function']} ({f['file']})"
        return f"{f['function']} ({f['file']}:{f['line']})"

    def process_label(self, pid: int) -> str:
        """The process level of the formats: `process PID:"command line"` (py-spy's)."""
        command = self.processes.get(pid, {}).get("commandLine", "").replace(";", ",")
        return f'process {pid}:"{command}"' if command else f"process {pid}"

    def collapsed(self, processes: bool = False) -> collections.Counter:
        """Stack counts as dapprof writes them for `collapsed` (root;...;leaf; empty stacks make
        no line); with `processes`, under each sample's process (a run with subprocesses)."""
        def line(tid, stack):
            labels = [self.label(fid) for fid in stack]
            if processes:
                labels.insert(0, self.process_label(self.threads[tid]["pid"]))
            return ";".join(labels)
        return collections.Counter(line(tid, stack) for tid, stack in self.stacks if stack)

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
