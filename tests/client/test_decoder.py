"""The client's StreamDecoder and Profile on hand-built profilingData streams, and on the stream the
protocol library's own encoder produces; the summary rendered from the daemon's topFunctions."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from dapprof_client import Frame, Profile, ProtocolError, StreamDecoder, format_summary
from dapprof_client.summary import format_table, top_functions

MAIN = {"file": "/app/main.py", "line": 25, "function": "<module>"}
RUN = {"file": "/app/main.py", "line": 10, "function": "main"}
CALC = {"file": "/app/utils.py", "line": 42, "function": "calc"}
CALC_LATER = {"file": "/app/utils.py", "line": 47, "function": "calc"}
WORKER = {"file": "/app/main.py", "line": 18, "function": "worker"}
SLEEP = {"file": "", "line": 0, "function": "time.sleep", "native": True,
         "module": "/usr/lib/python3.12/lib-dynload/time.so"}
MAIN_THREAD = {"name": "MainThread", "osThreadId": 4242, "pid": 4242,
               "pythonThreadId": "140737352595264"}
WORKER_THREAD = {"name": "Thread-1 (worker)", "osThreadId": 4250, "pid": 4242}


def event(new_frames, samples, thread_ids=None, threads=None, **extra):
    body = {"newFrames": {str(k): v for k, v in new_frames.items()}, "samples": samples,
            "sampleCount": len(samples), "duration": 100.0}
    if thread_ids is not None:
        body["threadIds"] = thread_ids
    if threads is not None:
        body["threads"] = {str(k): v for k, v in threads.items()}
    body.update(extra)
    return body


def two_events():
    first = event({1: MAIN, 2: RUN, 3: CALC, 4: WORKER},
                  [[1, 2, 3], [1, 2], [4]], [4242, 4242, 4250],
                  {4242: MAIN_THREAD, 4250: WORKER_THREAD}, errorCount=1)
    # Frames 1, 2 and 4 are reused without being announced again; 5 and 6 are new.
    second = event({5: SLEEP, 6: CALC_LATER},
                   [[1, 2, 6], [4, 5], [1, 2, 3]], [4242, 4250, 4242], {},
                   droppedSampleCount=2)
    return first, second


def names(sample):
    return [f.function for f in sample.stack]


def test_stacks_are_rebuilt_root_first_across_events():
    decoder = StreamDecoder()
    first, second = two_events()
    a = decoder.decode(first)
    b = decoder.decode(second)
    assert [names(s) for s in a] == [["<module>", "main", "calc"], ["<module>", "main"], ["worker"]]
    assert [names(s) for s in b] == [["<module>", "main", "calc"], ["worker", "time.sleep"],
                                     ["<module>", "main", "calc"]]
    assert b[0].stack[-1].line == 47 and b[2].stack[-1].line == 42
    assert b[1].stack[-1].native and b[1].stack[-1].module.endswith("time.so")
    assert [s.thread.name for s in b] == ["MainThread", "Thread-1 (worker)", "MainThread"]
    assert b[0].thread.python_thread_id == "140737352595264"
    assert len(decoder.frames) == 6 and decoder.events == 2


def test_frame_announced_twice_is_a_protocol_error():
    decoder = StreamDecoder()
    first, _ = two_events()
    decoder.decode(first)
    again = event({7: CALC_LATER, 3: CALC}, [[1, 2, 7]], [4242])
    with pytest.raises(ProtocolError, match=r"frame ID 3 is announced again"):
        decoder.decode(again)
    # nothing of the offending event was kept
    assert 7 not in decoder.frames and decoder.events == 1


def test_unannounced_frame_is_a_protocol_error():
    decoder = StreamDecoder()
    with pytest.raises(ProtocolError, match=r"sample 1 references frame ID 9, which was never"):
        decoder.decode(event({1: MAIN, 2: RUN}, [[1, 2], [1, 9]]))
    assert decoder.frames == {}
    # an ID announced only in a later event does not make an earlier reference valid
    decoder.decode(event({1: MAIN}, [[1]]))
    with pytest.raises(ProtocolError, match="frame ID 2"):
        decoder.decode(event({}, [[1, 2]]))


def test_unannounced_thread_and_inconsistent_counts_are_protocol_errors():
    decoder = StreamDecoder()
    with pytest.raises(ProtocolError, match="thread 77"):
        decoder.decode(event({1: MAIN}, [[1]], [77], {}))
    with pytest.raises(ProtocolError, match="sampleCount"):
        decoder.decode(dict(event({1: MAIN}, [[1], [1]]), sampleCount=3))
    with pytest.raises(ProtocolError, match="parallel"):
        decoder.decode(event({1: MAIN}, [[1], [1]], [4242], {4242: MAIN_THREAD}))
    with pytest.raises(ProtocolError, match="not a decimal integer"):
        decoder.decode({"newFrames": {"0x10": MAIN}, "samples": [], "sampleCount": 0,
                        "duration": 0})
    with pytest.raises(ProtocolError, match=r"2\^53"):
        decoder.decode(event({2**53: MAIN}, []))


def compact_events():
    """two_events() with stacks: the same samples as stack IDs with counts."""
    first = {"newFrames": {"1": MAIN, "2": RUN, "3": CALC, "4": WORKER},
             "newStacks": {"0": [1, 2, 3], "1": [1, 2], "2": [4]}, "samples": [],
             "stackIds": [0, 1, 2], "stackCounts": [1, 1, 1], "threadIds": [4242, 4242, 4250],
             "threads": {"4242": MAIN_THREAD, "4250": WORKER_THREAD}, "sampleCount": 3,
             "duration": 100.0, "errorCount": 1}
    second = {"newFrames": {"5": SLEEP, "6": CALC_LATER},
              "newStacks": {"3": [1, 2, 6], "4": [4, 5]}, "samples": [],
              "stackIds": [3, 4, 0], "stackCounts": [1, 1, 1], "threadIds": [4242, 4250, 4242],
              "threads": {}, "sampleCount": 3, "duration": 100.0, "droppedSampleCount": 2}
    return first, second


def test_stacks_decode_to_the_same_samples_as_frame_ids():
    full, compact = Profile(), Profile()
    for body in two_events():
        full.add_event(body)
    for body in compact_events():
        compact.add_event(body)
    assert list(compact.stacks()) == list(full.stacks())
    assert (compact.sample_count, compact.dropped, compact.errors) == (6, 2, 1)
    assert compact.thread_samples.keys() == full.thread_samples.keys()


def test_a_run_of_stack_ids_is_one_sample_with_its_count():
    decoder = StreamDecoder()
    body = {"newFrames": {"1": MAIN, "2": RUN}, "newStacks": {"0": [1, 2], "1": [1]},
            "samples": [], "stackIds": [0, 1, 0], "stackCounts": [5, 1, 2],
            "threadIds": [4242, 4242, 4250], "threads": {"4242": MAIN_THREAD, "4250": WORKER_THREAD},
            "sampleCount": 8, "duration": 80.0}
    samples = decoder.decode(body)
    assert [(names(s), s.count, s.thread.os_thread_id) for s in samples] == [
        (["<module>", "main"], 5, 4242), (["<module>"], 1, 4242), (["<module>", "main"], 2, 4250)]
    profile = Profile()
    profile.add_event(body)
    assert profile.sample_count == 8
    assert {tid: len(i) for tid, i in profile.thread_samples.items()} == {4242: 6, 4250: 2}
    # A later event uses the stacks by ID alone.
    later = decoder.decode({"newFrames": {}, "samples": [], "stackIds": [1], "stackCounts": [3],
                            "threadIds": [4250], "sampleCount": 3, "duration": 30.0})
    assert names(later[0]) == ["<module>"] and later[0].count == 3


@pytest.mark.parametrize("change, message", [
    ({"stackIds": [0, 7]}, "never announced in newStacks"),
    ({"stackCounts": [1]}, "parallel arrays"),
    ({"stackCounts": [0, 1]}, "positive integer"),
    ({"sampleCount": 3}, "sampleCount is 3"),
    ({"samples": [[1]]}, "samples must be empty"),
    ({"newStacks": {"0": [1, 9]}}, "frame ID 9"),
    ({"threadIds": [4242]}, "parallel to stackIds"),
])
def test_broken_stack_runs_are_protocol_errors(change, message):
    body = {"newFrames": {"1": MAIN}, "newStacks": {"0": [1]}, "samples": [],
            "stackIds": [0, 0], "stackCounts": [1, 1], "threadIds": [4242, 4242],
            "threads": {"4242": MAIN_THREAD}, "sampleCount": 2, "duration": 1.0}
    decoder = StreamDecoder()
    with pytest.raises(ProtocolError, match=message):
        decoder.decode(dict(body, **change))
    assert not decoder.stacks and not decoder.frames


def test_a_stack_announced_twice_is_a_protocol_error():
    decoder = StreamDecoder()
    body = {"newFrames": {"1": MAIN}, "newStacks": {"0": [1]}, "samples": [], "stackIds": [0],
            "stackCounts": [1], "sampleCount": 1, "duration": 1.0}
    decoder.decode(body)
    with pytest.raises(ProtocolError, match="stack ID 0 is announced again"):
        decoder.decode(dict(body, newFrames={}))


def test_thread_renamed_is_announced_again_and_applies_to_later_samples():
    decoder = StreamDecoder()
    decoder.decode(event({1: MAIN}, [[1]], [4250], {4250: WORKER_THREAD}))
    renamed = dict(WORKER_THREAD, name="renamed")
    later = decoder.decode(event({}, [[1]], [4250], {4250: renamed}))
    assert later[0].thread.name == "renamed"


def test_profile_counts_the_stream_until_the_daemons_summary_comes():
    profile = Profile({"pid": 4242, "pythonVersion": "3.12.1", "rate": 100})
    for body in two_events():
        profile.add_event(body)
    assert profile.sample_count == 6 and profile.dropped == 2 and profile.errors == 1
    assert {tid: len(i) for tid, i in profile.thread_samples.items()} == {4242: 4, 4250: 2}
    assert profile.total_samples == 6 and profile.top_functions is None
    assert list(profile.stacks())[0] == (4242, (1, 2, 3))
    # once the run ended, the totals are the daemon's
    profile.finish(dict(SUMMARY, sampleCount=8), "requested")
    assert profile.total_samples == 8 and profile.dropped_count == 2
    assert profile.duration_ms == 612.5 and profile.stop_reason == "requested"
    assert [f.function for f in profile.top_functions] == ["calc", "main", "time.sleep"]


SUMMARY = {"sampleCount": 6, "duration": 612.5, "errorCount": 1, "droppedSampleCount": 2,
           "topFunctions": [
               {"function": "calc", "file": "/app/utils.py", "self": 3, "total": 3},
               {"function": "main", "file": "/app/main.py", "self": 1, "total": 4},
               {"function": "time.sleep", "file": SLEEP["module"], "self": 1, "total": 1}]}


def test_the_table_has_the_columns_of_dapprof_records_summary():
    """src/formats/summary.cpp's format_summary: the same header and row layout."""
    rows = top_functions(SUMMARY)
    table = format_table(rows, 6, top=2).splitlines()
    assert table == [
        "Top functions by own samples (of 6 thread samples):",
        "     %Own  %Total  OwnSmpl  TotSmpl  Function (file)",
        "   50.00%  50.00%        3        3  calc (/app/utils.py)",
        "   16.67%  66.67%        1        4  main (/app/main.py)"]
    assert format_table(rows, 0, top=5) == "No samples.\n"
    assert format_table([], 6, top=5).count("\n") == 2  # the header, no rows


def test_summary_text_and_json_come_from_the_daemons_summary():
    profile = Profile({"pid": 4242, "pythonVersion": "3.12.1", "rate": 100})
    for body in two_events():
        profile.add_event(body)
    profile.finish(SUMMARY, "exited")
    text = format_summary(profile, top=15)
    assert text.startswith("process 4242 (Python 3.12.1): 6 samples over 0.61 s at 100 Hz, "
                           "2 dropped, 1 errors, 2 threads")
    assert "   16.67%  66.67%        1        4  main (/app/main.py)" in text
    assert "time.sleep (/usr/lib/python3.12/lib-dynload/time.so)" in text
    summary = json.loads(json.dumps(profile.summary_dict()))
    assert summary["topFunctions"] == SUMMARY["topFunctions"]
    assert (summary["samples"], summary["durationMs"], summary["errors"],
            summary["droppedSamples"], summary["streamSamples"]) == (6, 612.5, 1, 2, 6)
    assert summary["stopReason"] == "exited" and summary["daemonSummary"] == SUMMARY
    assert {t["osThreadId"]: t["samples"] for t in summary["threads"]} == {4242: 4, 4250: 2}
    # a daemon that sends no topFunctions (older than the client) gets no made-up table
    profile.finish({"sampleCount": 6, "duration": 1.0, "errorCount": 0,
                    "droppedSampleCount": 0}, "requested")
    assert "sent no topFunctions" in profile.format_summary()
    assert profile.summary_dict()["topFunctions"] is None
    # but a run without samples has none to send
    empty = Profile()
    empty.finish({"sampleCount": 0, "duration": 1.0, "errorCount": 0, "droppedSampleCount": 0},
                 "exited")
    assert empty.format_summary().endswith("\n\nNo samples.\n")


def test_malformed_top_functions_are_protocol_errors():
    with pytest.raises(ProtocolError, match="topFunctions"):
        top_functions({"topFunctions": {"calc": 1}})
    with pytest.raises(ProtocolError, match="self"):
        top_functions({"topFunctions": [{"function": "f", "file": "", "self": -1, "total": 0}]})
    with pytest.raises(ProtocolError, match="'function' and 'file'"):
        top_functions({"topFunctions": [{"function": "f", "self": 1, "total": 1}]})


def test_decodes_the_protocol_librarys_own_stream():
    """The C++ batch encoder's output (protocol_emit_messages), decoded here: every sample
    resolves, every ID is announced once."""
    emitter = os.environ.get("DAPPROF_PROTOCOL_EMITTER")
    if not emitter or not os.access(emitter, os.X_OK):
        pytest.skip("DAPPROF_PROTOCOL_EMITTER is not set (ctest sets it)")
    out = subprocess.run([emitter], capture_output=True, text=True, timeout=60, check=True)
    bodies = [line["message"]["body"] for line in map(json.loads, out.stdout.splitlines())
              if line["schema"] == "profilingData"]
    # Two runs: every sample's frame IDs, then the same encoder with stacks.
    full = [b for b in bodies if "stackIds" not in b]
    compact = [b for b in bodies if "stackIds" in b]
    assert len(full) >= 5 and len(compact) >= 5
    profile = Profile()
    for body in full:
        profile.add_event(body)
    assert profile.sample_count == sum(len(b["samples"]) for b in full) > 0
    referenced = {i for b in full for s in b["samples"] for i in s}
    assert referenced <= set(profile.decoder.frames)
    assert profile.dropped == sum(b.get("droppedSampleCount", 0) for b in full)
    stacks = Profile()
    for body in compact:
        stacks.add_event(body)
    assert stacks.sample_count == sum(b["sampleCount"] for b in compact) > len(compact)
    assert {i for b in compact for i in b["stackIds"]} <= set(stacks.decoder.stacks)
    assert stacks.dropped == sum(b.get("droppedSampleCount", 0) for b in compact)


def test_frames_carry_the_origin_the_daemon_gave_them():
    pydevd = {"file": "/x/debugpy/_vendored/pydevd/_pydevd_bundle/pydevd_comm.py", "line": 204,
              "function": "ReaderThread._read_line", "origin": "debugger"}
    compiled = dict(SLEEP, function="trace_dispatch", origin="debugger")
    decoder = StreamDecoder()
    [sample] = decoder.decode(event({1: MAIN, 2: pydevd, 3: compiled}, [[1, 2, 3]]))
    assert [f.origin for f in sample.stack] == ["program", "debugger", "debugger"]
    assert [f.debugger for f in sample.stack] == [False, True, True]
    assert sample.stack[2].native and sample.stack[2].debugger
    # no client rule: a debugpy path without the daemon's mark is the program's
    unmarked = dict(pydevd, origin="program")
    [sample] = StreamDecoder().decode(event({5: unmarked}, [[5]]))
    assert not sample.stack[0].debugger
    assert Frame("f", "a.py", 1).origin == "program"


def test_an_unknown_origin_is_a_protocol_error():
    decoder = StreamDecoder()
    with pytest.raises(ProtocolError, match="'origin' must be one of program, debugger"):
        decoder.decode(event({1: dict(MAIN, origin="library")}, [[1]]))
    assert decoder.frames == {}
