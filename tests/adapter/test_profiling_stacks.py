"""Live profiling with `stacks`: the same real debugpy session profiled with each encoding of
the profilingData stream, each decoded (tests/adapter/profiling_stream.py) and compared with the
daemon's own record of the run."""
from __future__ import annotations

import json
import re

from conftest import DEBIAN_PYTHON, start_stdio
from dapclient import DapClient
from profiling_stream import Stream
from sessions import INITIALIZE
from live_session import TARGET, assert_fixture_profiled, check_run, finish, profile_run


def per_thread_stacks(stream: Stream) -> dict[int, list[tuple]]:
    """Each thread's samples in order, as (function, file, line) root first."""
    def key(fid):
        f = stream.frames[fid]
        return f["function"], f["file"] or f.get("module", ""), f["line"]
    threads: dict[int, list[tuple]] = {}
    for tid, stack in stream.stacks:
        threads.setdefault(tid, []).append(tuple(key(fid) for fid in stack))
    return threads


def speedscope_per_thread(document: dict) -> dict[int, list[tuple]]:
    """The same from the daemon's own record of the run, exported as speedscope (a profile per
    thread, its samples in order, each weighing one)."""
    frames = [(f["name"], f.get("file", ""), f.get("line", 0))
              for f in document["shared"]["frames"]]
    threads: dict[int, list[tuple]] = {}
    for profile in document["profiles"]:
        tid = int(re.search(r"tid (\d+)", profile["name"])[1])
        assert set(profile["weights"]) <= {1}
        threads.setdefault(tid, []).extend(tuple(frames[i] for i in s) for s in profile["samples"])
    return threads


def wire_bytes(client: DapClient, after: int) -> int:
    return sum(len(json.dumps(m, separators=(",", ":"), ensure_ascii=False).encode())
               for m in client.received[after:] if m.get("event") == "profilingData")


def test_stacks_mode_decodes_to_exactly_the_samples_full_frames_give(procs, tmp_path):
    """One debug session profiled with each encoding in turn: the default (every sample's frame
    IDs) and `stacks` (stack IDs with counts). Each stream decodes to exactly the daemon's own
    record of its run, thread by thread, sample by sample, in order; stacks costs less."""
    stop_file = tmp_path / "stop"
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    init = client.call("initialize", INITIALIZE)
    assert init["body"]["supportsProfilingStacks"] is True
    launch_seq = client.request("launch", {
        "program": str(TARGET), "args": [str(stop_file)], "console": "internalConsole",
        "python": [DEBIAN_PYTHON], "justMyCode": True, "subProcess": False})
    client.wait_event("initialized")
    client.call("configurationDone")
    assert client.wait_response(launch_seq, 60)["success"]
    procs.pids.append(client.wait_event("process", 60)["body"]["systemProcessId"])

    per_sample = {}
    for stacks in (False, True):
        mark = len(client.received)
        stream, summary, out, body = profile_run(client, tmp_path, f"stacks-{stacks}", rate=500,
                                                 batchIntervalMs=50, stacks=stacks)
        assert body["stacks"] is stacks
        events = [m["body"] for m in client.received[mark:] if m.get("event") == "profilingData"]
        assert all(("stackIds" in e) is stacks and ("newStacks" in e) is stacks for e in events)
        check_run(stream, summary, out)
        assert_fixture_profiled(stream)
        exported = client.call("exportProfile", {"format": "speedscope"})
        assert exported["success"], exported
        assert per_thread_stacks(stream) == speedscope_per_thread(
            json.loads(exported["body"]["content"]))
        if stacks:
            # Announced once each, and runs of equal samples sent as one.
            assert len(stream.stack_defs) == len(set(s for _, s in stream.stacks))
            assert stream.runs <= stream.delivered
        per_sample[stacks] = wire_bytes(client, mark) / stream.delivered
    assert per_sample[True] < per_sample[False] / 2, per_sample
    finish(client, proc, stop_file)
