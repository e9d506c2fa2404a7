"""The live path run by an ordinary user (made for the test; the tests skip unless run as root):
dapprof, debugpy's adapter and the program all run as that user, and profiling works; a debuggee
that is another user's, or the user's own but non-dumpable, is refused with the sampler's
explanation, and the session goes on."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import unprivileged
from conftest import (DEBIAN_PYTHON, FIXTURES, dapprof_bin, start_serve, start_stdio,
                      wait_until)
from live_session import (TARGET, assert_fixture_profiled, attach, check_run, finish, launch,
                            profile_run)
from unprivileged import MAKE_NON_DUMPABLE, SYSTEM_PYTHON


@pytest.fixture(scope="module")
def user():
    yield from unprivileged.make_user()


@pytest.fixture(scope="module")
def their_dapprof(user) -> str:
    return unprivileged.dapprof_for(user, dapprof_bin())


def uid_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


def refused_with(response: dict, pid: int, user) -> str:
    assert not response["success"], response
    assert response["body"]["error"]["id"] == 2007, response  # PermissionDenied
    message = response["message"]
    assert f"process {pid} (dapprof runs as uid {user.uid})" in message, message
    assert "CAP_SYS_PTRACE" in message, message
    return message


def test_live_profiling_as_an_ordinary_user(procs, tmp_path, user, their_dapprof):
    scope = unprivileged.yama_ptrace_scope()
    if scope >= 2:
        pytest.skip(f"kernel.yama.ptrace_scope is {scope}: no ordinary user may read a process")
    program = user.copy_in(TARGET)
    stop_file = user.home / "stop"
    serve = start_serve(procs, tmp_path, "--python", SYSTEM_PYTHON, user=user,
                        binary=their_dapprof, env=user.env())
    assert uid_of(serve.proc.pid) == user.uid
    client = serve.connect(procs)
    pid = launch(client, [stop_file], python=SYSTEM_PYTHON, program=program)
    procs.pids.append(pid)
    assert uid_of(pid) == user.uid
    # The profile file is the daemon's to write: in the user's directory.
    stream, summary, out, body = profile_run(client, user.home, "live", rate=200,
                                             batchIntervalMs=50)
    assert body["pid"] == pid
    check_run(stream, summary, out)
    assert_fixture_profiled(stream, program)
    assert out.stat().st_uid == user.uid
    finish(client, None, stop_file)


def test_another_users_debuggee_is_refused_with_the_fix(procs, tmp_path, user, their_dapprof):
    # root's program, listening with debugpy; the user's dapprof attaches to it, which debugpy
    # allows anyone on this machine to do.
    stop_file = tmp_path / "stop"
    debuggee = procs.start([DEBIAN_PYTHON, str(FIXTURES / "listen_program.py"), str(stop_file)],
                           stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    port = int(debuggee.stdout.readline().decode().split()[1])
    _, client = start_stdio(procs, "--connect", f"127.0.0.1:{port}", user=user,
                            binary=their_dapprof, env=user.env())
    attach(client, debuggee.pid)

    message = refused_with(client.call("startProfiling", {"rate": 200}), debuggee.pid, user)
    assert "The process belongs to another user (uid 0)" in message, message
    # The debug session is unharmed, and profiling is idle, not stuck attaching.
    assert client.call("threads")["success"]
    assert client.call("stopProfiling", {})["body"]["error"]["id"] == 2004  # NotProfiling
    stop_file.write_text("stop")
    assert debuggee.wait(timeout=20) == 0
    finish(client)


def test_non_dumpable_debuggee_is_refused_with_the_fix(procs, user, their_dapprof):
    program = user.copy_in(TARGET)
    wrapper = user.home / "non_dumpable.py"
    wrapper.write_text(f"{MAKE_NON_DUMPABLE}\nimport runpy, sys\nsys.argv[0] = {str(program)!r}\n"
                       f"runpy.run_path(sys.argv[0], run_name='__main__')\n")
    user.own(wrapper)
    stop_file = user.home / "stop-non-dumpable"
    proc, client = start_stdio(procs, "--python", SYSTEM_PYTHON, user=user, binary=their_dapprof,
                               env=user.env())
    pid = launch(client, [stop_file], python=SYSTEM_PYTHON, program=wrapper)
    procs.pids.append(pid)
    # debugpy announces the process before running the program: wait for its prctl, after which
    # the kernel gives /proc/PID/stat to root.
    assert wait_until(lambda: os.stat(f"/proc/{pid}/stat").st_uid == 0, 30)
    message = refused_with(client.call("startProfiling", {"rate": 200}), pid, user)
    assert "The process is not dumpable (it called prctl(PR_SET_DUMPABLE, 0)" in message, message
    assert "same user as the target" not in message, message
    assert client.call("threads")["success"]
    finish(client, proc, stop_file)


def test_profile_only_attach_to_another_users_process_says_the_fix(procs, tmp_path, user,
                                                                   their_dapprof):
    # No debugger at all: the user's profile-only dapprof is asked to attach to root's program.
    stop_file = tmp_path / "stop"
    target = procs.start([DEBIAN_PYTHON, str(TARGET), str(stop_file), "60"],
                         stdin=subprocess.DEVNULL)
    _, client = start_stdio(procs, "--profile-only", user=user, binary=their_dapprof,
                            env=user.env())
    client.call("initialize", {"clientID": "dapprof-tests", "adapterID": "dapprof-profile"})
    message = refused_with(client.call("attach", {"processId": target.pid}), target.pid, user)
    assert "The process belongs to another user (uid 0)" in message, message
    # The session goes on: the user's own program can be profiled in it.
    program = user.copy_in(FIXTURES / "chatty_exit.py")
    assert client.call("launch", {"program": str(program), "python": SYSTEM_PYTHON,
                                  "args": ["0"]})["success"]
    assert client.wait_event("terminated", 30)
    stop_file.write_text("stop")
    assert target.wait(timeout=20) == 0
