"""client/dapprof_client.py end to end: real dapprof (serve and stdio), real debugpy, real Python
programs, real sockets. Checks what a CI user relies on: the fixture's functions in the daemon's
top table with the right file, the files exported from dapprof (exportProfile) and the one it
writes itself (outputPath) in the format asked, debugpy's frames hidden unless asked, and the
exit codes."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

import pythons
from conftest import DEBIAN_PYTHON, FIXTURES, Serve, dapprof_bin, free_port
from dapprof_client import ErrorId, Profile

APP = FIXTURES / "client_app.py"
APP_PATH = os.path.realpath(APP)


def pyenv_interpreters():
    found = [i for i in pythons.interpreters() if i.label.startswith("pyenv-")]
    # the oldest also checks that the client itself runs on Python 3.8
    return [found[0], found[-1]] if len(found) > 1 else found


def root_interpreters():
    return [p for p in pythons.each() if p.id.startswith("sid-")]


def check_profile(run, tmp_path, daemon_format=None):
    """The facts every successful run must show."""
    assert run.returncode == 0, run
    summary = run.summary()
    top = {(r["function"], r["file"]): r for r in summary["topFunctions"]}
    assert ("crunch_numbers", APP_PATH) in top and ("side_worker", APP_PATH) in top, run
    assert top[("outer_step", APP_PATH)]["total"] >= top[("crunch_numbers", APP_PATH)]["self"]
    selfs = [(r["self"], r["total"]) for r in summary["topFunctions"]]
    assert selfs == sorted(selfs, reverse=True) and len(selfs) <= 20
    # the table printed for people shows the same, in the columns of `dapprof record`
    assert "%Own  %Total  OwnSmpl  TotSmpl  Function (file)" in run.stdout, run
    assert f"crunch_numbers ({APP_PATH})" in run.stdout, run
    assert summary["samples"] > 50 and summary["errors"] >= 0
    names = {t["name"] for t in summary["threads"]}
    assert {"MainThread", "side-worker"} <= names, summary["threads"]
    # every sample the daemon counted reached the client before the run ended
    assert summary["daemonSummary"]["sampleCount"] == summary["streamSamples"], summary
    assert summary["samples"] == summary["streamSamples"]
    assert summary["hideDebugger"] is True

    speedscope = check_speedscope(tmp_path / "client.speedscope.json", summary)
    # hidden from the files too: no debugpy frame, its samples under "(debugger)"
    assert not any("/debugpy/" in f.get("file", "") for f in speedscope["shared"]["frames"])
    assert (tmp_path / "client.collapsed.txt").exists()
    assert summary["exports"][0]["path"] == str(tmp_path / "client.speedscope.json")

    if daemon_format:
        check_daemon_file(tmp_path / f"daemon.{daemon_format}", daemon_format)
        assert summary["outputPath"] == str(tmp_path / f"daemon.{daemon_format}")
    return summary


def check_speedscope(path, summary):
    """An exported speedscope document of the whole run."""
    doc = json.loads(path.read_text())
    assert doc["$schema"].startswith("https://www.speedscope.app/")
    assert sum(len(p["samples"]) for p in doc["profiles"]) == summary["samples"]
    frame_names = [f["name"] for f in doc["shared"]["frames"]]
    assert "crunch_numbers" in frame_names
    for p in doc["profiles"]:
        assert p["type"] == "sampled" and len(p["weights"]) == len(p["samples"])
        assert all(0 <= i < len(frame_names) for s in p["samples"] for i in s)
    return doc


def check_daemon_file(path, fmt):
    assert path.exists(), f"dapprof wrote no {path}"
    text = path.read_text()
    if fmt == "speedscope":
        doc = json.loads(text)
        assert doc["$schema"].startswith("https://www.speedscope.app/") and doc["profiles"]
    elif fmt == "cpuprofile":
        doc = json.loads(text)
        assert doc["nodes"] and "samples" in doc and "timeDeltas" in doc
    elif fmt == "collapsed":
        lines = text.splitlines()
        assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
        assert any("crunch_numbers" in line for line in lines)
    elif fmt == "flamegraph":
        assert "<svg" in text[:2000] and "crunch_numbers" in text
    else:
        raise AssertionError(fmt)


def outputs(tmp_path, fmt):
    return ["--speedscope", str(tmp_path / "client.speedscope.json"),
            "--collapsed", str(tmp_path / "client.collapsed.txt"),
            "--output", str(tmp_path / f"daemon.{fmt}"), "--format", fmt]


def test_serve_debian_python(serve, run_client, tmp_path):
    run = run_client("--connect", serve.address, "--duration", "3", "--rate", "200",
                     "--record-stream", str(tmp_path / "stream.jsonl"),
                     *outputs(tmp_path, "flamegraph"), str(APP), "--", "60")
    summary = check_profile(run, tmp_path, "flamegraph")
    # The recorded stream is every event body as received: replayed, it is the same profile.
    bodies = [json.loads(line) for line in (tmp_path / "stream.jsonl").read_text().splitlines()]
    assert len(bodies) > 3 and all("newFrames" in b and "samples" in b for b in bodies)
    replay = Profile()
    for body in bodies:
        replay.add_event(body)
    assert replay.sample_count == sum(b["sampleCount"] for b in bodies) == summary["samples"]
    # the stream keeps every frame; the daemon marks debugpy's launcher frames as the debugger's
    marked = [f for f in replay.decoder.frames.values() if f.debugger]
    assert marked and all("debugpy" in (f.file or f.module) or "pydev" in (f.file or f.module)
                          for f in marked), marked
    assert summary["rate"] == 200 and summary["stopReason"] == "requested"
    assert summary["exitCode"] is None  # terminated by the client, not ended by itself
    collapsed = (tmp_path / "client.collapsed.txt").read_text().splitlines()
    assert sum(int(line.rsplit(" ", 1)[1]) for line in collapsed) <= summary["samples"]
    assert any("outer_step" in line and "crunch_numbers" in line for line in collapsed)
    assert not any("/debugpy/" in line for line in collapsed)


def test_stdio_debian_python(run_client, tmp_path):
    run = run_client("--dapprof", dapprof_bin(), "--daemon-arg=--python=" + DEBIAN_PYTHON,
                     "--daemon-arg=--log-level=warn", "--duration", "3",
                     *outputs(tmp_path, "speedscope"), str(APP), "--", "60")
    check_profile(run, tmp_path, "speedscope")
    # exportProfile's content is what stopProfiling writes to outputPath
    exported = json.loads((tmp_path / "client.speedscope.json").read_text())
    assert exported == json.loads((tmp_path / "daemon.speedscope").read_text())


def test_debugger_frames_are_kept_when_asked(serve, run_client, tmp_path):
    run = run_client("--connect", serve.address, "--duration", "2", "--debugger-frames",
                     "--export", f"collapsed={tmp_path}/all.txt", str(APP), "--", "60")
    assert run.returncode == 0, run
    summary = run.summary()
    assert summary["hideDebugger"] is False
    collapsed = (tmp_path / "all.txt").read_text()
    assert "/debugpy/" in collapsed and "crunch_numbers" in collapsed


@pytest.mark.parametrize("interp", pyenv_interpreters(), ids=str)
def test_serve_pyenv_python(interp, serve, run_client, tmp_path):
    """The program (and the client itself) on a pyenv CPython; debugpy's adapter stays Debian's.
    The debuggee needs a debugpy it can import: the copy on PYTHONPATH."""
    run = run_client("--connect", serve.address, "--duration", "3", "--python", interp.path,
                     "--env", "PYTHONPATH=" + pythons.debugpy_pythonpath(),
                     *outputs(tmp_path, "cpuprofile"), str(APP), "--", "60", python=interp.path)
    summary = check_profile(run, tmp_path, "cpuprofile")
    assert summary["pythonVersion"] == ".".join(map(str, interp.version))


@pytest.mark.parametrize("interp", root_interpreters())
def test_serve_python_in_a_root(interp, run_client, tmp_path):
    """Everything inside the Debian unstable root as in a container: the adapter (the root's own
    debugpy), the program, started by the interpreter's name inside, and the client itself, on
    that version. Only dapprof runs outside, sampling through /proc."""
    serve = Serve(tmp_path, python=interp.path)
    try:
        run = run_client("--connect", serve.address, "--duration", "3",
                         "--python", interp.inner_path, *outputs(tmp_path, "collapsed"),
                         str(APP), "--", "60", python=interp.path)
        summary = check_profile(run, tmp_path, "collapsed")
        assert summary["pythonVersion"] == ".".join(map(str, interp.version))
    finally:
        serve.stop()


def test_program_ending_first_ends_the_run_and_its_exit_code_fails_the_client(serve, run_client,
                                                                               tmp_path):
    run = run_client("--connect", serve.address, "--duration", "60",
                     "--export", f"speedscope={tmp_path}/client.speedscope.json",
                     "--output", str(tmp_path / "daemon.collapsed"), "--format", "collapsed",
                     str(APP), "--", "3", "5")
    assert run.returncode == 3, run
    assert "the program exited with code 5" in run.stderr
    summary = run.summary()
    assert summary["stopReason"] == "exited" and summary["exitCode"] == 5
    # dapprof still writes the ended run's file when asked after profilingStopped
    check_daemon_file(tmp_path / "daemon.collapsed", "collapsed")
    assert summary["daemonSummary"]["sampleCount"] == summary["streamSamples"]
    assert summary["samples"] > 0 and run.elapsed < 40
    # a run that ended stays exportable
    check_speedscope(tmp_path / "client.speedscope.json", summary)
    assert "crunch_numbers" in {r["function"] for r in summary["topFunctions"]}


def test_wait_exit_lets_the_program_finish(serve, run_client, tmp_path):
    run = run_client("--connect", serve.address, "--duration", "1", "--wait-exit",
                     str(APP), "--", "4")
    assert run.returncode == 0, run
    summary = run.summary()
    assert summary["stopReason"] == "requested" and summary["exitCode"] == 0


def test_refused_start_prints_the_adapters_message(serve, run_client):
    run = run_client("--connect", serve.address, "--native", "--nonblocking", str(APP), "--", "60")
    assert run.returncode == 1, run
    assert f"startProfiling failed (error {int(ErrorId.InvalidArguments)})" in run.stderr
    assert "nonblocking" in run.stderr.split("startProfiling failed", 1)[1]


def test_unreachable_daemon_is_a_clear_error(run_client):
    port = free_port()
    run = run_client("--connect", f"127.0.0.1:{port}", str(APP))
    assert run.returncode == 1
    assert f"cannot connect to dapprof at 127.0.0.1:{port}" in run.stderr
    assert "Traceback" not in run.stderr


def test_missing_dapprof_executable_is_a_clear_error(run_client, tmp_path):
    run = run_client("--dapprof", str(tmp_path / "no-such-dapprof"), str(APP))
    assert run.returncode == 1 and "cannot start" in run.stderr and "--dapprof" in run.stderr


def test_child_processes_are_debugged_and_sampled(serve, run_client, tmp_path):
    """debugpy announces the child with debugpyAttach; the client attaches to it (else the child
    would wait for a debugger forever) and --subprocesses samples it too."""
    program = tmp_path / "parent.py"
    program.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, %r, '60'])\n"
        "def parent_loop():\n"
        "    while True:\n"
        "        time.sleep(0.01)\n"
        "parent_loop()\n" % str(APP))
    run = run_client("--connect", serve.address, "--subprocesses", "--duration", "8",
                     str(program))
    assert run.returncode == 0, run
    child_pid = json.loads(run.stderr[run.stderr.index('{"ready"'):].splitlines()[0])["pid"]
    summary = run.summary()
    assert child_pid != summary["pid"]
    child_threads = {t["name"] for t in summary["threads"] if t["pid"] == child_pid}
    assert "side-worker" in child_threads, summary["threads"]
    assert ("crunch_numbers", APP_PATH) in {(r["function"], r["file"])
                                            for r in summary["topFunctions"]}, run


@pytest.mark.parametrize("through", ["stdio", "serve"])
def test_attach_to_a_listening_program(through, run_client, tmp_path):
    """A program that called debugpy.listen: with --attach-connect the spawned `dapprof stdio`
    connects to it; with --attach, a `dapprof serve --connect` does."""
    program = tmp_path / "listening.py"
    program.write_text(
        "import debugpy, json, os, sys\n"
        "sys.path.insert(0, %r)\n"
        "import client_app\n"
        "host, port = debugpy.listen(('127.0.0.1', 0))\n"
        "print(json.dumps({'port': port, 'pid': os.getpid()}), flush=True)\n"
        "sys.argv = ['client_app', '60']\n"
        "client_app.main()\n" % str(FIXTURES))
    proc = subprocess.Popen([DEBIAN_PYTHON, str(program)], stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    serve = None
    try:
        port = json.loads(proc.stdout.readline())["port"]
        if through == "stdio":
            how = ["--dapprof", dapprof_bin(), "--daemon-arg=--log-level=warn",
                   "--attach-connect", f"127.0.0.1:{port}"]
        else:
            serve = Serve(tmp_path, "--connect", f"127.0.0.1:{port}")
            how = ["--connect", serve.address, "--attach"]
        run = run_client(*how, "--duration", "2",
                         "--speedscope", str(tmp_path / "client.speedscope.json"))
        assert run.returncode == 0, run
        summary = run.summary()
        assert summary["pid"] == proc.pid
        assert ("crunch_numbers", APP_PATH) in {(r["function"], r["file"])
                                                for r in summary["topFunctions"]}
        check_speedscope(tmp_path / "client.speedscope.json", summary)
        assert proc.wait(timeout=20) is not None  # terminateDebuggee ended it
    finally:
        proc.kill()
        proc.wait()
        if serve:
            serve.stop()
