"""The client's StreamDecoder and Profile on hand-built profilingData streams, and on the stream the
protocol library's own encoder produces."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from dapprof_client import Frame, Profile, ProtocolError, StreamDecoder, is_debugger_frame

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


def test_thread_renamed_is_announced_again_and_applies_to_later_samples():
    decoder = StreamDecoder()
    decoder.decode(event({1: MAIN}, [[1]], [4250], {4250: WORKER_THREAD}))
    renamed = dict(WORKER_THREAD, name="renamed")
    later = decoder.decode(event({}, [[1]], [4250], {4250: renamed}))
    assert later[0].thread.name == "renamed"


def test_profile_counts_own_and_total_once_per_sample_and_reports_first_line():
    profile = Profile({"pid": 4242, "pythonVersion": "3.12.1", "rate": 100})
    first, second = two_events()
    recursive = event({}, [[1, 2, 2, 3]], [4242], {})  # main -> main -> calc
    for body in (first, second, recursive):
        profile.add_event(body)
    assert profile.sample_count == 7 and profile.dropped == 2 and profile.errors == 1
    stats = {(s.function, s.file): s for s in profile.functions()}
    calc = stats[("calc", "/app/utils.py")]
    assert (calc.own, calc.total, calc.line) == (4, 4, 42)  # lines 42 and 47, one function
    main = stats[("main", "/app/main.py")]
    assert (main.own, main.total) == (1, 5)  # the recursive sample counts once
    sleep = stats[("time.sleep", SLEEP["module"])]
    assert (sleep.own, sleep.total) == (1, 1)
    # main, worker and time.sleep have one own sample each: ties go to the larger total
    assert [s.function for s in profile.top(2, "own")] == ["calc", "main"]
    assert profile.top(1, "total")[0].function in ("<module>", "main")
    summary = profile.summary_dict(top=3)
    assert summary["samples"] == 7 and summary["topOwn"][0]["ownPercent"] == pytest.approx(57.14)
    assert {t["osThreadId"]: t["samples"] for t in summary["threads"]} == {4242: 5, 4250: 2}
    assert "calc (/app/utils.py:42)" in profile.format_summary(top=3)


def test_speedscope_and_collapsed_from_the_stream():
    profile = Profile({"rate": 200}, name="app")
    for body in two_events():
        profile.add_event(body)
    doc = json.loads(json.dumps(profile.speedscope()))
    frames = doc["shared"]["frames"]
    by_thread = {p["name"]: p for p in doc["profiles"]}
    assert set(by_thread) == {"MainThread (tid 4242, pid 4242)",
                              "Thread-1 (worker) (tid 4250, pid 4242)"}
    main = by_thread["MainThread (tid 4242, pid 4242)"]
    assert main["type"] == "sampled" and len(main["samples"]) == len(main["weights"]) == 4
    assert [[frames[i]["name"] for i in s] for s in main["samples"]][0] == [
        "<module>", "main", "calc"]
    assert main["weights"][0] == pytest.approx(5.0) and main["endValue"] == pytest.approx(20.0)
    assert frames[[f["name"] for f in frames].index("time.sleep")]["file"].endswith("time.so")
    assert sum(len(p["samples"]) for p in doc["profiles"]) == profile.sample_count
    lines = profile.collapsed().splitlines()
    assert ("<module> (/app/main.py:25);main (/app/main.py:10);calc (/app/utils.py:42) 2"
            in lines)
    assert "worker (/app/main.py:18);time.sleep (/usr/lib/python3.12/lib-dynload/time.so) 1" \
        in lines
    assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) == 6


def test_decodes_the_protocol_librarys_own_stream():
    """The C++ batch encoder's output (protocol_emit_messages), decoded here: every sample
    resolves, every ID is announced once."""
    emitter = os.environ.get("DAPPROF_PROTOCOL_EMITTER")
    if not emitter or not os.access(emitter, os.X_OK):
        pytest.skip("DAPPROF_PROTOCOL_EMITTER is not set (ctest sets it)")
    out = subprocess.run([emitter], capture_output=True, text=True, timeout=60, check=True)
    bodies = [line["message"]["body"] for line in map(json.loads, out.stdout.splitlines())
              if line["schema"] == "profilingData"]
    assert len(bodies) >= 5
    profile = Profile()
    for body in bodies:
        profile.add_event(body)
    assert profile.sample_count == sum(len(b["samples"]) for b in bodies) > 0
    referenced = {i for b in bodies for s in b["samples"] for i in s}
    assert referenced <= set(profile.decoder.frames)
    assert profile.dropped == sum(b.get("droppedSampleCount", 0) for b in bodies)


def test_tables_leave_out_the_debuggers_frames_unless_asked():
    runpy = {"file": "/usr/lib/python3.11/runpy.py", "line": 88, "function": "_run_code"}
    launcher = {"file": "/usr/lib/python3/dist-packages/debugpy/server/cli.py", "line": 284,
                "function": "run_file"}
    pydevd = {"file": "/x/debugpy/_vendored/pydevd/_pydevd_bundle/pydevd_comm.py", "line": 204,
              "function": "ReaderThread._read_line"}
    read = {"file": "", "line": 0, "function": "read", "native": True, "module": "/libc.so.6"}
    body = event({1: runpy, 2: launcher, 3: MAIN, 4: CALC, 5: pydevd, 6: read},
                 [[1, 2, 3, 4], [1, 2, 3], [5, 6], []])
    profile = Profile()
    profile.add_event(body)
    shown = {s.function: (s.own, s.total) for s in profile.functions()}
    assert shown == {"<module>": (1, 2), "calc": (1, 1)}
    assert profile.debugger_samples == 1
    assert "25.0% of the samples were in debugpy" in profile.format_summary()
    profile.hide_debugger = False
    everything = {s.function: (s.own, s.total) for s in profile.functions()}
    assert everything["_run_code"] == (0, 2) and everything["ReaderThread._read_line"] == (0, 1)
    assert everything["read"] == (1, 1)
    # the files keep every frame
    assert "_run_code (/usr/lib/python3.11/runpy.py:88)" in profile.collapsed()


def test_debugger_frames_in_python_or_compiled():
    pydevd = "/usr/lib/python3/dist-packages/debugpy/_vendored/pydevd"
    assert is_debugger_frame(Frame("run_file", "/usr/lib/python3/dist-packages/debugpy/server/cli.py", 284))
    assert is_debugger_frame(Frame("trace_dispatch", "", 0, True,
                                   f"{pydevd}/_pydevd_bundle/pydevd_cython.cpython-311-x86_64-linux-gnu.so"))
    assert not is_debugger_frame(Frame("_run_code", "/usr/lib/python3.11/runpy.py", 88))
    assert not is_debugger_frame(Frame("read", "", 0, True, "/usr/lib/x86_64-linux-gnu/libc.so.6"))
