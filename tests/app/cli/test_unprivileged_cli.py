"""`record` and `dump` run by an ordinary user (made for the test; the tests skip unless run as
root): they sample that user's own programs; another user's process, and one of its own that made
itself non-dumpable, are refused with the sampler's explanation of why and what to do, in bounded
time."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

import unprivileged
from conftest import DEBIAN_PYTHON, FIXTURE, check_raw, read_line
from unprivileged import MAKE_NON_DUMPABLE, SYSTEM_PYTHON

# Bounds every run: a refusal must come at once, not after a hang.
TIMEOUT = 30


@pytest.fixture(scope="module")
def user():
    yield from unprivileged.make_user()


@pytest.fixture(scope="module")
def their_dapprof(user, dapprof) -> str:
    return unprivileged.dapprof_for(user, dapprof)


@pytest.fixture(scope="module")
def their_busy(user) -> str:
    return str(user.copy_in(FIXTURE))


@pytest.fixture
def user_target(user, their_busy):
    """Starts busy.py as the user (made non-dumpable first with non_dumpable=True); returns
    its pid once it runs."""
    started: list[subprocess.Popen] = []

    def start(non_dumpable: bool = False) -> int:
        argv = [SYSTEM_PYTHON, their_busy]
        if non_dumpable:
            argv = [SYSTEM_PYTHON, "-c", MAKE_NON_DUMPABLE + "; import runpy, sys; "
                    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
                    their_busy]
        proc = user.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        line = read_line(proc.stdout, 30)
        assert line.strip() == "ready", (line, proc.stderr.read() if proc.poll() else "")
        return proc.pid

    yield start
    for proc in started:
        proc.kill()
        proc.communicate(timeout=30)


def cmd_args(cmd: str, user) -> list[str]:
    return ["--duration", "1", "-o", str(user.home / "refused.txt")] if cmd == "record" else []


def assert_refused(out: subprocess.CompletedProcess, pid: int, user) -> str:
    # A clean exit with an error, not a signal (a crash shows as a negative status).
    assert out.returncode > 0, (out.returncode, out.stderr)
    assert out.stderr.startswith("dapprof: error: "), out.stderr
    assert f"process {pid} (dapprof runs as uid {user.uid})" in out.stderr, out.stderr
    assert "CAP_SYS_PTRACE" in out.stderr, out.stderr
    return out.stderr


def test_record_and_dump_as_an_ordinary_user(user, their_dapprof, their_busy, user_target):
    scope = unprivileged.yama_ptrace_scope()
    if scope >= 2:
        pytest.skip(f"kernel.yama.ptrace_scope is {scope}: no ordinary user may read a process")
    # A program it starts is its child: allowed whatever Yama's scope.
    spawned = user.home / "spawned.txt"
    out = user.run([their_dapprof, "record", "--format", "raw", "-o", spawned, "--",
                    SYSTEM_PYTHON, their_busy, "--seconds", "1"], timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    check_raw(spawned.read_text(encoding="utf-8"))
    assert spawned.stat().st_uid == user.uid

    pid = user_target()
    dump = user.run([their_dapprof, "dump", "--pid", str(pid), "--json"], timeout=TIMEOUT)
    record_file = user.home / "by-pid.txt"
    record = user.run([their_dapprof, "record", "--pid", str(pid), "--duration", "1",
                       "--format", "raw", "-o", record_file], timeout=TIMEOUT)
    if scope == 1:
        # Yama lets only an ancestor read a process of the same user: the message says so.
        for out in (dump, record):
            assert_refused(out, pid, user)
            assert "kernel.yama.ptrace_scope is 1" in out.stderr, out.stderr
        return
    assert dump.returncode == 0, dump.stderr
    threads = {t["name"]: t for t in json.loads(dump.stdout)["threads"]}
    assert {"MainThread", "sleepy-worker"} <= set(threads)
    assert threads["sleepy-worker"]["frames"][0]["function"] == "sleeper"
    assert record.returncode == 0, record.stderr
    check_raw(record_file.read_text(encoding="utf-8"))


@pytest.mark.parametrize("cmd", ["dump", "record"])
def test_another_users_process_is_refused_with_the_fix(user, their_dapprof, start_target, cmd):
    target = start_target(python=DEBIAN_PYTHON)  # root's
    out = user.run([their_dapprof, cmd, "--pid", str(target.pid), *cmd_args(cmd, user)],
                   timeout=TIMEOUT)
    message = assert_refused(out, target.pid, user)
    assert "The process belongs to another user (uid 0)" in message
    assert "Run dapprof as the same user as the target or as root" in message
    assert "dumpable" not in message and "ptrace_scope" not in message
    assert target.proc.poll() is None  # untouched


@pytest.mark.parametrize("cmd", ["dump", "record"])
def test_non_dumpable_process_of_the_same_user_is_refused_with_the_fix(
        user, their_dapprof, user_target, cmd):
    pid = user_target(non_dumpable=True)
    # How the kernel shows it: /proc/PID/stat is root's, though the process is the user's.
    assert os.stat(f"/proc/{pid}/stat").st_uid == 0
    out = user.run([their_dapprof, cmd, "--pid", str(pid), *cmd_args(cmd, user)],
                   timeout=TIMEOUT)
    message = assert_refused(out, pid, user)
    assert "The process is not dumpable (it called prctl(PR_SET_DUMPABLE, 0)" in message
    assert "Run dapprof as root or grant it CAP_SYS_PTRACE" in message
    # The advice for another user's process would send the user in circles here.
    assert "same user as the target" not in message and "another user" not in message
    assert os.kill(pid, 0) is None  # still running


def test_a_process_that_becomes_non_dumpable_while_recorded_stops_the_recording(
        user, their_dapprof):
    """Every sample after the change would fail: record stops at once with the fix, writes what
    it took before, and says the sampling failed."""
    scope = unprivileged.yama_ptrace_scope()
    if scope >= 1:
        pytest.skip(f"kernel.yama.ptrace_scope is {scope}: record --pid of a sibling is refused")
    program = ("import time\nprint('ready', flush=True)\nend = time.monotonic() + 1.0\n"
               "while time.monotonic() < end: pass\n" + MAKE_NON_DUMPABLE + "\n"
               "end = time.monotonic() + 60\nwhile time.monotonic() < end: pass\n")
    target = user.popen([SYSTEM_PYTHON, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        assert read_line(target.stdout, 30).strip() == "ready"
        out_file = user.home / "until-denied.txt"
        out = user.run([their_dapprof, "record", "--pid", str(target.pid), "--format", "raw",
                        "-o", out_file], timeout=TIMEOUT)
        assert out.returncode == 1, out.stderr
        assert "The process is not dumpable" in out.stderr, out.stderr
        assert "Stopped sampling: sampling failed" in out.stderr, out.stderr
        # What it took in the second before the change: the loop at module level.
        lines = out_file.read_text(encoding="utf-8").splitlines()
        assert any(line.startswith("<module> (") and line.split()[-1].isdigit()
                   for line in lines), lines
        assert target.poll() is None  # untouched
    finally:
        target.kill()
        target.communicate(timeout=30)
