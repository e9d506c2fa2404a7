"""dapprof stdio / serve against real debugpy: a person pointing VS Code at dapprof instead of
debugpy must see the same debug session, plus supportsProfiling."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading

import pytest

import network
import pythons
from conftest import (DEBIAN_PYTHON, FIXTURES, break_line, children_of, dapprof_bin, gone,
                      process_state, start_debugpy_direct, start_serve, start_stdio, wait_until)
from sessions import INITIALIZE, launch_session


def strictly_increasing(seqs):
    return all(a < b for a, b in zip(seqs, seqs[1:]))


def assert_same_session(direct, proxied):
    for capability in ("supportsProfiling", "supportsProfilingStacks"):
        assert proxied.initialize_body.pop(capability) is True
        assert capability not in direct.initialize_body
    assert proxied.initialize_body == direct.initialize_body
    assert proxied.responses == direct.responses
    assert proxied.events == direct.events
    assert proxied.facts == direct.facts
    assert strictly_increasing(proxied.seqs)


@pytest.fixture(scope="module")
def direct_transcript():
    from conftest import Processes
    procs = Processes()
    try:
        proc, client = start_debugpy_direct(procs)
        t = launch_session(client, closes_after_disconnect=False)
        proc.wait(timeout=15)
        return t
    finally:
        procs.cleanup()


def test_direct_session_is_a_meaningful_reference(direct_transcript):
    t = direct_transcript
    assert t.facts["stopped_reason"] == "breakpoint"
    assert t.facts["top_frame"] == ("work", break_line(FIXTURES / "loop_program.py"))
    assert t.facts["locals"]["i"] == "0"
    assert t.facts["exit_code"] == 0
    assert {"initialized", "process", "stopped", "exited", "terminated"} <= t.events


def test_launch_through_stdio_matches_debugpy(procs, direct_transcript):
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    t = launch_session(client)
    client.close()
    assert proc.wait(timeout=15) == 0
    assert_same_session(direct_transcript, t)


def test_launch_through_serve_matches_debugpy(procs, tmp_path, direct_transcript):
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON)
    client = serve.connect(procs)
    t = launch_session(client)
    assert_same_session(direct_transcript, t)
    assert wait_until(lambda: not children_of(serve.proc.pid), 15), "adapter not reaped"


def test_trace_file_records_both_directions(procs, tmp_path):
    trace = tmp_path / "trace.jsonl"
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON, "--trace-dap", str(trace))
    client.call("initialize", INITIALIZE)
    client.call("disconnect", {})
    client.close()
    assert proc.wait(timeout=15) == 0
    import json
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    directions = {line["direction"] for line in lines}
    assert directions == {"client->dapprof", "dapprof->debugpy", "debugpy->dapprof",
                          "dapprof->client"}
    assert any(line["message"].get("command") == "initialize" and
               line["direction"] == "dapprof->client" and
               line["message"]["body"].get("supportsProfiling") for line in lines)


def test_attach_through_connect_to_debugpy_listen(procs, tmp_path):
    stop_file = tmp_path / "stop"
    program = FIXTURES / "listen_program.py"
    debuggee = procs.start([DEBIAN_PYTHON, str(program), str(stop_file)],
                           stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    line = debuggee.stdout.readline().decode()
    assert line.startswith("LISTENING"), line
    port = int(line.split()[1])
    proc, client = start_stdio(procs, "--connect", f"127.0.0.1:{port}")
    init = client.call("initialize", INITIALIZE)
    assert init["body"]["supportsProfiling"] is True
    attach_seq = client.request("attach", {"justMyCode": True})
    client.wait_event("initialized")
    bp = client.call("setBreakpoints", {"source": {"path": str(program)},
                                        "breakpoints": [{"line": break_line(program)}]})
    assert bp["success"]
    client.call("configurationDone")
    assert client.wait_response(attach_seq)["success"]
    process = client.wait_event("process")
    assert process["body"]["systemProcessId"] == debuggee.pid
    assert process["body"]["startMethod"] == "attach"
    stopped = client.wait_event("stopped")
    # The debuggee is known now: it can be profiled while stopped, and debugging goes on.
    started = client.call("startProfiling", {"idle": True})
    assert started["success"] and started["body"]["pid"] == debuggee.pid
    assert client.call("stopProfiling", {})["success"]
    frames = client.call("stackTrace", {"threadId": stopped["body"]["threadId"]})
    assert frames["body"]["stackFrames"][0]["line"] == break_line(program)
    stop_file.write_text("stop")
    client.call("setBreakpoints", {"source": {"path": str(program)}, "breakpoints": []})
    client.call("continue", {"threadId": stopped["body"]["threadId"]})
    assert debuggee.wait(timeout=20) == 0
    client.wait_event("terminated")
    client.call("disconnect", {})
    client.close()
    assert proc.wait(timeout=15) == 0
    seqs = [m["seq"] for m in client.received]
    assert strictly_increasing(seqs)


def test_two_sessions_at_once_through_one_serve(procs, tmp_path):
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON)
    results, errors = {}, []

    def run(name):
        try:
            results[name] = launch_session(serve.connect(procs))
        except Exception as exc:  # reported below, with the session's name
            errors.append(f"{name}: {exc!r}")

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=90)
    assert not errors
    assert set(results) == {"a", "b"}
    assert results["a"].debuggee_pid != results["b"].debuggee_pid
    for t in results.values():
        assert t.facts["exit_code"] == 0 and strictly_increasing(t.seqs)


def test_debugpy_killed_mid_session(procs, tmp_path):
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON)
    client = serve.connect(procs)
    t = launch_session(client, stop_at_breakpoint_only=True)
    procs.pids.append(t.debuggee_pid)
    adapters = children_of(serve.proc.pid)
    assert len(adapters) == 1
    os.kill(adapters[0], signal.SIGKILL)
    client.wait_event("terminated", timeout=15)
    assert client.call("disconnect", {})["success"]
    assert client.wait_eof(15)
    assert wait_until(lambda: process_state(adapters[0]) is None, 10), "killed adapter not reaped"
    # The daemon goes on serving.
    fresh = serve.connect(procs)
    assert fresh.call("initialize", INITIALIZE)["body"]["supportsProfiling"] is True
    assert serve.proc.poll() is None


def test_client_vanishing_ends_adapter_and_debuggee(procs, tmp_path):
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON)
    client = serve.connect(procs)
    t = launch_session(client, stop_at_breakpoint_only=True)
    procs.pids.append(t.debuggee_pid)
    adapters = children_of(serve.proc.pid)
    assert len(adapters) == 1
    client.close()  # no disconnect: the client just goes away
    assert wait_until(lambda: process_state(adapters[0]) is None, 20), \
        f"adapter {adapters[0]} ({process_state(adapters[0])}) still there: {serve.log.read_text()}"
    # The debuggee is not ours to reap (the launcher's child); it must not keep running.
    assert wait_until(lambda: gone(t.debuggee_pid), 20), \
        "debuggee still running"
    assert children_of(serve.proc.pid) == []
    fresh = serve.connect(procs)
    assert fresh.call("initialize", INITIALIZE)["success"]


@pytest.mark.parametrize("garbage", [b"Content-Length: nope\r\n\r\n{}",
                                     b"Content-Length: 4\r\n\r\n{{{{",
                                     b"Content-Length: 99999999999\r\n\r\n"])
def test_malformed_client_frames_close_only_that_session(procs, tmp_path, garbage):
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON, "--max-message-size",
                        "1000000")
    good = serve.connect(procs)
    assert good.call("initialize", INITIALIZE)["success"]
    bad = serve.connect(procs)
    bad.send_raw(garbage)
    assert bad.wait_eof(15), "dapprof kept a session with malformed input open"
    assert good.call("threads", timeout=15)["type"] == "response"  # unaffected
    assert serve.proc.poll() is None
    assert "closing the session" in serve.log.read_text()


def test_malformed_frame_on_stdio_ends_the_process(procs):
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    client.send_raw(b"Content-Length: x\r\n\r\n")
    assert client.wait_eof(15)
    assert proc.wait(timeout=15) == 0


@pytest.mark.parametrize("listen", ["0.0.0.0:0", "[::]:0", "own-address"])
def test_non_loopback_listen_is_refused(procs, listen):
    if listen == "own-address":  # one of this machine's, on a network interface
        address = network.non_loopback_address()
        if address is None:
            pytest.skip("this machine has no non-loopback IPv4 address")
        listen = f"{address}:0"
    out = subprocess.run([dapprof_bin(), "serve", "--listen", listen],
                         capture_output=True, text=True, timeout=15)
    assert out.returncode == 2, out.stderr
    host = listen.rsplit(":", 1)[0].strip("[]")
    assert f"refusing to listen on non-loopback address {host}: a DAP client can make the " \
           "debugger run arbitrary code" in out.stderr, out.stderr
    assert "--allow-remote" in out.stderr
    assert "listening on" not in out.stderr


@pytest.mark.parametrize("listen", ["127.0.0.1:0", "localhost:0", ":0"])
def test_loopback_listener_is_unreachable_from_other_addresses(procs, tmp_path, listen):
    """Whichever way loopback is asked for, the socket is bound to 127.0.0.1 alone: not to every
    address (0.0.0.0), which a client could reach from another machine."""
    address = network.non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address to try")
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON, listen=listen)
    assert serve.host == "127.0.0.1"
    assert serve.connect(procs).call("initialize", INITIALIZE)["success"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((address, serve.port), timeout=5).close()
    # Nor IPv6's loopback (refused, or unreachable where the machine has no IPv6).
    with pytest.raises(OSError):
        socket.create_connection(("::1", serve.port), timeout=5).close()


def test_allow_remote_listens_with_a_warning(procs, tmp_path):
    log = tmp_path / "remote.log"
    with open(log, "wb") as err:
        proc = procs.start([dapprof_bin(), "serve", "--listen", "0.0.0.0:0", "--allow-remote"],
                           stderr=err, stdout=subprocess.DEVNULL)
    # The line the daemon prints once it listens, with its signal handlers set; not the warning
    # that starts with the same words and comes first.
    assert wait_until(lambda: "dapprof: listening on 0.0.0.0:" in log.read_text(), 15)
    assert "warn" in log.read_text()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0


def test_sigterm_ends_sessions_and_reaps_adapters(procs, tmp_path):
    serve = start_serve(procs, tmp_path, "--python", DEBIAN_PYTHON)
    client = serve.connect(procs)
    t = launch_session(client, stop_at_breakpoint_only=True)
    procs.pids.append(t.debuggee_pid)
    adapters = children_of(serve.proc.pid)
    assert adapters
    serve.proc.send_signal(signal.SIGTERM)
    assert serve.proc.wait(timeout=15) == 0
    client.wait_event("terminated", timeout=5)
    for pid in adapters:
        assert process_state(pid) is None, f"adapter {pid} left behind"
    assert wait_until(lambda: gone(t.debuggee_pid), 15)


def test_missing_python_is_reported_to_the_client(procs):
    proc, client = start_stdio(procs, "--python", "/nonexistent/python3")
    response = client.call("initialize", INITIALIZE)
    assert response["success"] is False
    assert "/nonexistent/python3" in response["message"]
    assert client.call("disconnect", {})["success"]
    assert proc.wait(timeout=15) == 0


def test_env_overrides_dapprofs_own_and_the_adapter_command_keeps_its_options(procs, tmp_path):
    """`--env PYTHONPATH=...` replaces the PYTHONPATH dapprof itself has (the spawned adapter used
    to get both and take dapprof's), and an adapter command after `--` keeps its own options even
    right after an --env (`--log-dir` used to be refused as dapprof's)."""
    interp = next((i for i in pythons.interpreters() if i.host_debugpy), None)
    if interp is None:
        pytest.skip("no interpreter that needs debugpy on PYTHONPATH")
    logs = tmp_path / "debugpy-logs"
    env = dict(os.environ, PYTHONPATH="/nonexistent/dapprof-test")  # would hide debugpy
    proc, client = start_stdio(
        procs, "--env", "PYTHONPATH=" + pythons.debugpy_pythonpath(), "--",
        interp.path, "-m", "debugpy.adapter", "--log-dir", str(logs), env=env)
    response = client.call("initialize", INITIALIZE)
    assert response["success"], response
    assert client.call("disconnect", {})["success"]
    client.close()
    assert proc.wait(timeout=15) == 0
    assert any(logs.glob("debugpy.adapter*.log")), list(logs.iterdir()) if logs.exists() else None


@pytest.mark.parametrize("interp", pythons.each())
def test_launch_smoke_under_each_interpreter(procs, interp):
    # The adapter runs under `--python` (for an interpreter in a root, a wrapper that enters
    # it); debugpy starts the debuggee from inside, by the interpreter's own name there.
    proc, client = start_stdio(procs, "--python", interp.path, env=pythons.debugpy_env(interp))
    t = launch_session(client, python=interp.inner_path)
    client.close()
    assert proc.wait(timeout=15) == 0
    assert t.facts["stopped_reason"] == "breakpoint"
    assert t.facts["locals"]["i"] == "0"
    assert t.facts["exit_code"] == 0
    assert t.initialize_body["supportsProfiling"] is True
