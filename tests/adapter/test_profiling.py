"""Live profiling end to end: a DAP client debugging a real Python program through dapprof (stdio
and serve, real debugpy) starts profiling and checks the stream it receives against the program,
the schemas, the profile file the daemon writes and the summary's accounting."""
from __future__ import annotations

import base64
import gzip
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

import pythons
from conftest import (DEBIAN_PYTHON, FIXTURES, break_line, children_of, start_serve, start_stdio,
                      wait_until)
from dapclient import DapClient
from live_session import (SPAWNER, TARGET, assert_fixture_profiled, attach, check_run, finish,
                          launch, profile_run, saw_event, start_profiling, stream_of)
from profiling_stream import line_of, read_collapsed
from sanitizer import rss_bound_mib

@pytest.mark.parametrize("transport", ["stdio", "serve"])
def test_launch_profile_stop(procs, tmp_path, transport):
    stop_file = tmp_path / "stop"
    if transport == "stdio":
        proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    else:
        proc, client = None, start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON).connect(procs)
    pid = launch(client, [stop_file])
    procs.pids.append(pid)
    started_at = time.time() * 1000
    stream, summary, out, body = profile_run(client, tmp_path, "first", rate=250,
                                             batchIntervalMs=50)
    assert body["pid"] == pid and body["rate"] == 250 and body["pythonVersion"].startswith("3.")
    check_run(stream, summary, out)
    assert_fixture_profiled(stream)
    # About one event per batch interval, fresh data in each.
    assert stream.events >= 10, stream.events
    assert all(started_at - 1000 < start <= end < time.time() * 1000 for start, end in stream.times)

    # Profiling starts again after a stop; a new run announces its frames again under the same IDs.
    again, summary2, out2, _ = profile_run(client, tmp_path, "second", seconds=1.0, rate=100)
    check_run(again, summary2, out2)
    first_ids = {(f["file"], f["line"], f["function"]): fid for fid, f in stream.frames.items()}
    shared = [(key, fid) for fid, f in again.frames.items()
              if (key := (f["file"], f["line"], f["function"])) in first_ids]
    assert shared and all(first_ids[key] == fid for key, fid in shared)

    not_running = client.call("stopProfiling", {})
    assert not not_running["success"] and not_running["body"]["error"]["id"] == 2004
    finish(client, proc, stop_file)


@pytest.mark.parametrize("interp", pythons.each())
def test_profile_under_each_interpreter(procs, tmp_path, interp):
    stop_file = tmp_path / "stop"
    proc, client = start_stdio(procs, "--python", interp.path, env=pythons.debugpy_env(interp))
    pid = launch(client, [stop_file], python=interp.inner_path)
    procs.pids.append(pid)
    stream, summary, out, body = profile_run(client, tmp_path, "run", seconds=1.2, rate=200)
    assert body["pythonVersion"] == "%d.%d.%d" % interp.version
    check_run(stream, summary, out)
    assert_fixture_profiled(stream)
    finish(client, proc, stop_file)


def test_outputs_in_every_format(procs, tmp_path):
    stop_file = tmp_path / "stop"
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    procs.pids.append(launch(client, [stop_file]))
    import json
    for fmt, check in [
        ("speedscope", lambda p: json.loads(p.read_text())["$schema"].startswith("https://www.speedscope")),
        ("cpuprofile", lambda p: {"nodes", "samples", "timeDeltas"} <= json.loads(p.read_text()).keys()),
        ("flamegraph", lambda p: p.read_text().lstrip().startswith("<?xml") and "crunch" in p.read_text()),
        ("gecko", lambda p: json.loads(p.read_text())["meta"]["product"] == "dapprof"),
        ("pprof", lambda p: b"crunch" in gzip.decompress(p.read_bytes())),
    ]:
        start_profiling(client, rate=200)
        time.sleep(0.5)
        out = tmp_path / f"profile.{fmt}"
        stopped = client.call("stopProfiling", {"outputPath": str(out), "format": fmt})
        assert stopped["success"] and stopped["body"]["outputPath"] == str(out)
        assert check(out), fmt
    # An unwritable path is a clear error, and the run can still be collected elsewhere.
    start_profiling(client, rate=200)
    time.sleep(0.3)
    bad = client.call("stopProfiling", {"outputPath": "/proc/no/such/dir/p.json"})
    assert not bad["success"] and bad["body"]["error"]["id"] == 2010
    assert "/proc/no/such/dir/p.json" in bad["message"]
    good = client.call("stopProfiling", {"outputPath": str(tmp_path / "retry.json")})
    assert good["success"] and good["body"]["sampleCount"] > 0
    finish(client, proc, stop_file)


def test_export_any_format_and_the_debuggers_frames_marked_once(procs, tmp_path):
    stop_file = tmp_path / "stop"
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    procs.pids.append(launch(client, [stop_file]))
    nothing = client.call("exportProfile", {})
    assert not nothing["success"] and nothing["body"]["error"]["id"] == 2011, nothing
    # idle: debugpy's own threads (waiting on its sockets) are sampled too.
    start_profiling(client, rate=200, idle=True)
    time.sleep(1.0)
    running = client.call("exportProfile", {"format": "collapsed"})  # so far, while sampling
    assert running["success"] and running["body"]["sampleCount"] > 0, running
    stopped = client.call("stopProfiling", {"hideDebugger": True})
    assert stopped["success"], stopped
    stream = stream_of(client)
    debugger = [f for f in stream.frames.values() if f.get("origin") == "debugger"]
    assert debugger, "debugpy's threads were sampled: some frames must be the debugger's"
    for f in stream.frames.values():
        assert (f.get("origin") == "debugger") == ("/debugpy/" in f["file"] or (
            f.get("native", False) and "/debugpy/" in f.get("module", ""))), f
    # The summary is the daemon's, without the debugger when asked.
    top = stopped["body"]["topFunctions"]
    assert top and any(row["function"] == "crunch" for row in top), top
    assert not any("/debugpy/" in row["file"] for row in top), top
    assert [r["self"] for r in top] == sorted((r["self"] for r in top), reverse=True)

    def export(**arguments):
        response = client.call("exportProfile", arguments)
        assert response["success"], response
        return response["body"]
    # Everything, as the stream gave it.
    full = export(format="collapsed")
    assert full["fileExtension"] == "txt" and full["sampleCount"] == stream.delivered
    (tmp_path / "full.txt").write_text(full["content"])
    assert read_collapsed(tmp_path / "full.txt") == stream.collapsed()
    # Without the debugger: no debugpy frame, its own threads under one "(debugger)" frame, and
    # the program's stacks start at its module, as the live view shows them.
    hidden = export(format="collapsed", hideDebugger=True)["content"]
    assert "/debugpy/" not in hidden and "(debugger)" in hidden
    program_roots = {line.split(";")[0] for line in hidden.splitlines() if "outer_main" in line}
    assert program_roots and all(r.startswith("<module>") for r in program_roots), program_roots
    for fmt, ext in [("speedscope", "json"), ("cpuprofile", "cpuprofile"), ("flamegraph", "svg"),
                     ("chrometrace", "json"), ("gecko", "json")]:
        body = export(format=fmt, hideDebugger=True)
        assert body["format"] == fmt and body["fileExtension"] == ext and "crunch" in body["content"]
        assert body["contentEncoding"] == "text", fmt
        assert "/debugpy/" not in body["content"], fmt
    # pprof's gzip is bytes, which a JSON string cannot hold: base64 of them, and said so.
    body = export(format="pprof", hideDebugger=True)
    assert body["fileExtension"] == "pb.gz" and body["contentEncoding"] == "base64", body
    document = gzip.decompress(base64.b64decode(body["content"], validate=True))
    assert b"crunch" in document and b"/debugpy/" not in document
    bad = client.call("exportProfile", {"format": "perf"})
    assert not bad["success"] and bad["body"]["error"]["id"] == 2001 and "perf" in bad["message"]
    finish(client, proc, stop_file)


def test_debuggee_exiting_mid_profile_delivers_everything(procs, tmp_path):
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    launch(client, [tmp_path / "stop", "2.0"])
    start_profiling(client, rate=500, batchIntervalMs=200)
    stopped = client.wait_event("profilingStopped", 30)["body"]
    assert stopped["reason"] == "exited", stopped
    stream = stream_of(client)
    assert stream.delivered > 0
    assert stream.delivered == stopped["sampleCount"]
    assert stream.dropped == stopped["droppedSampleCount"]
    # profilingStopped comes after the last data.
    kinds = [m.get("event") for m in client.received if m.get("type") == "event"]
    assert "profilingData" not in kinds[kinds.index("profilingStopped"):]
    # The ended run's profile can still be written, once.
    out = tmp_path / "after-exit.txt"
    late = client.call("stopProfiling", {"outputPath": str(out), "format": "collapsed"})
    assert late["success"] and late["body"]["sampleCount"] == stopped["sampleCount"]
    assert read_collapsed(out) == stream.collapsed()
    assert not client.call("stopProfiling", {})["success"]
    assert saw_event(client, "terminated")
    finish(client, proc)


def test_profiling_across_a_breakpoint_and_continue(procs, tmp_path):
    stop_file = tmp_path / "stop"
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    bp = break_line(TARGET)
    procs.pids.append(launch(client, [stop_file], breakpoint=bp))
    stopped = client.wait_event("stopped", 60)
    assert stopped["body"]["reason"] == "breakpoint"

    # Paused, with idle threads shown: the main thread waits at the breakpoint's line.
    paused, summary, out, _ = profile_run(client, tmp_path, "paused", seconds=1.0, rate=200,
                                          idle=True)
    check_run(paused, summary, out)
    main_frames = {(paused.frames[fid]["function"], paused.frames[fid]["line"])
                   for tid, stack in paused.stacks if paused.threads[tid]["name"] == "MainThread"
                   for fid in stack}
    assert ("main", bp) in main_frames, sorted(main_frames)
    assert "crunch" not in {paused.frames[s[-1]]["function"] for _, s in paused.stacks if s}

    # Paused, idle threads left out: nothing of the program runs.
    mark = len(client.received)
    start_profiling(client, rate=200, batchIntervalMs=50)
    time.sleep(0.8)
    quiet = stream_of(client, mark)
    # (The main thread is held at the breakpoint; another thread may be caught running before
    # debugpy suspends it, so only the main thread is checked.)
    assert not any(paused.frames.get(fid, {}).get("function") == "crunch"
                   for tid, s in quiet.stacks if quiet.threads[tid]["name"] == "MainThread"
                   for fid in s)
    # Profiling goes on across continue: the program's functions appear.
    client.call("setBreakpoints", {"source": {"path": str(TARGET)}, "breakpoints": []})
    client.call("continue", {"threadId": stopped["body"]["threadId"]})
    assert wait_until(lambda: "crunch" in stream_of(client, mark).functions(), 15)
    # ...and across pause.
    client.call("pause", {"threadId": stopped["body"]["threadId"]})
    client.wait_event("stopped", 30)
    client.call("continue", {"threadId": stopped["body"]["threadId"]})
    result = client.call("stopProfiling", {})
    assert result["success"]
    running = stream_of(client, mark)
    assert running.delivered == result["body"]["sampleCount"]
    finish(client, proc, stop_file)


def test_attach_through_connect_profiles_the_listening_program(procs, tmp_path):
    stop_file = tmp_path / "stop"
    program = FIXTURES / "listen_program.py"
    debuggee = procs.start([DEBIAN_PYTHON, str(program), str(stop_file)], stdout=subprocess.PIPE,
                           stdin=subprocess.DEVNULL)
    port = int(debuggee.stdout.readline().decode().split()[1])
    proc, client = start_stdio(procs, "--connect", f"127.0.0.1:{port}")
    attach(client, debuggee.pid)
    stream, summary, out, body = profile_run(client, tmp_path, "attach", seconds=1.0, rate=200,
                                             idle=True)
    assert body["pid"] == debuggee.pid
    check_run(stream, summary, out)
    loop_line = line_of(program, "time.sleep(0.05)")
    assert any(f["function"] == "<module>" and f["line"] in (loop_line, loop_line - 1)
               and Path(f["file"]).resolve() == program.resolve()
               for f in stream.frames.values()), stream.frames
    stop_file.write_text("stop")
    assert debuggee.wait(timeout=20) == 0
    assert saw_event(client, "terminated")
    finish(client, proc)


def test_debugpy_killed_while_profiling(procs, tmp_path):
    stop_file = tmp_path / "stop"
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON)
    client = serve.connect(procs)
    procs.pids.append(launch(client, [stop_file]))
    start_profiling(client, rate=200, batchIntervalMs=50)
    assert wait_until(lambda: stream_of(client).delivered > 0, 10)
    adapters = children_of(serve.proc.pid)
    assert adapters
    for pid in adapters:
        os.kill(pid, signal.SIGKILL)
    client.wait_event("terminated", 30)
    # The session is still answered: profiling stops with everything accounted for.
    result = client.call("stopProfiling", {})
    assert result["success"], result
    stream = stream_of(client)
    assert stream.delivered == result["body"]["sampleCount"]
    client.call("disconnect", {})
    client.close()
    # The daemon is unharmed: a new session profiles.
    other = serve.connect(procs)
    procs.pids.append(launch(other, [stop_file]))
    assert start_profiling(other, rate=100)["rate"] == 100
    assert other.call("stopProfiling", {})["success"]
    finish(other, None, stop_file)
    assert serve.proc.poll() is None


def test_slow_client_gets_all_dap_traffic_and_profiling_is_accounted(procs, tmp_path):
    stop_file = tmp_path / "stop"
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON, "--max-pending-samples", "500")
    client = DapClient.over_gated_socket("127.0.0.1", serve.port)
    procs.clients.append(client)
    procs.pids.append(launch(client, [stop_file, "60", "--chatty"]))
    start_profiling(client, rate=1000, batchIntervalMs=20)
    time.sleep(0.5)
    client.gate.clear()  # stop reading while the program floods its output
    time.sleep(6)
    rss_kib = int(next(line.split()[1] for line in Path(f"/proc/{serve.proc.pid}/status")
                       .read_text().splitlines() if line.startswith("VmRSS:")))
    client.gate.set()
    out = tmp_path / "all.txt"  # the daemon's file holds every sample taken, dropped or not
    result = client.call("stopProfiling", {"outputPath": str(out), "format": "collapsed"},
                         timeout=60)
    assert result["success"], result
    stream = stream_of(client)
    summary = result["body"]
    assert stream.dropped > 0, "the stall was too short to need dropping"
    assert stream.delivered == summary["sampleCount"]
    assert summary["droppedSampleCount"] == stream.dropped
    empty = sum(1 for _, stack in stream.stacks if not stack)  # collapsed files skip these
    assert sum(read_collapsed(out).values()) == stream.delivered + stream.dropped - empty
    # Output events are never dropped: the rounds the program printed arrive without a gap.
    # (debugpy forwards output in chunks that need not end at line ends.)
    text = "".join(m["body"].get("output", "") for m in client.received
                   if m.get("event") == "output" and m["body"].get("category") == "stdout")
    rounds = [int(n) for n in re.findall(r"^round (\d+) ", text, re.MULTILINE)]
    assert len(rounds) > 100 and rounds == list(range(rounds[0], rounds[0] + len(rounds)))
    limit_mib = rss_bound_mib(200)
    assert rss_kib < limit_mib * 1024, f"dapprof grew to {rss_kib} KiB"
    finish(client, None, stop_file)


def test_subprocesses_are_sampled_in_the_parents_stream(procs, tmp_path):
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    pid = launch(client, ["3"], program=SPAWNER)
    start_profiling(client, rate=200, subprocesses=True)
    assert wait_until(lambda: "child_crunch" in stream_of(client).functions(), 15)
    result = client.call("stopProfiling", {})
    assert result["success"]
    stream = stream_of(client)
    assert stream.delivered == result["body"]["sampleCount"]
    child_pids = {stream.threads[tid]["pid"] for tid, stack in stream.stacks
                  if any(stream.frames[f]["function"] == "child_crunch" for f in stack)}
    assert child_pids and pid not in child_pids
    parent = {stream.threads[tid]["pid"] for tid, stack in stream.stacks
              if any(stream.frames[f]["function"] == "parent_wait" for f in stack)}
    assert parent in (set(), {pid})  # the parent mostly sleeps (idle, not sampled)
    assert saw_event(client, "terminated")
    finish(client, proc)


MODES_PROGRAM = Path(__file__).resolve().parents[1] / "fixtures" / "modes.py"


def test_sampling_modes_through_start_profiling(procs, tmp_path):
    """startProfiling's `mode` in a debug session (real debugpy), against tests/fixtures/modes.py:
    "exception" samples only the thread inside `except ModeProbeError`, under a frame of kind
    exception naming the type; "cpu" the two threads on a CPU; `gil` is the mode "gil"; `mode`
    and a conflicting `idle` are refused."""
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    procs.pids.append(launch(client, [], program=MODES_PROGRAM))
    assert wait_until(lambda: any(
        m.get("event") == "output" and '"ready": true' in m["body"].get("output", "")
        for m in client.received), 60)

    def samples(stream):
        by_thread = {}
        for tid, stack in stream.stacks:
            by_thread.setdefault(stream.threads[tid]["name"], []).append(stack)
        return by_thread

    stream, summary, out, body = profile_run(client, tmp_path, "exception", rate=200,
                                             mode="exception")
    assert (body["mode"], body["idle"], body["gil"]) == ("exception", False, False), body
    check_run(stream, summary, out)
    handled = samples(stream)
    assert "handler" in handled, sorted(handled)
    assert not {"burner", "hasher", "sleeper", "MainThread"} & set(handled), sorted(handled)
    for stacks in handled.values():
        for stack in stacks:
            assert stream.frames[stack[-1]].get("exception") is True, stream.frames[stack[-1]]
    for stack in handled["handler"]:
        assert stream.frames[stack[-1]] == {"file": "", "line": 0, "exception": True,
                                            "function": "(exception) ModeProbeError"}

    stream, summary, out, body = profile_run(client, tmp_path, "cpu", rate=200, mode="cpu")
    assert body["mode"] == "cpu"
    check_run(stream, summary, out)
    on_cpu = samples(stream)
    assert {"burner", "hasher"} <= set(on_cpu), sorted(on_cpu)
    assert not {"sleeper", "handler", "MainThread"} & set(on_cpu), sorted(on_cpu)

    _, _, _, body = profile_run(client, tmp_path, "gil", seconds=0.5, gil=True)
    assert (body["mode"], body["gil"]) == ("gil", True), body

    refused = client.call("startProfiling", {"mode": "cpu", "idle": True})
    assert not refused["success"] and refused["body"]["error"]["id"] == 2001, refused
    assert "'mode' \"cpu\" conflicts with 'idle'" in refused["body"]["error"]["format"], refused
    finish(client, proc)
