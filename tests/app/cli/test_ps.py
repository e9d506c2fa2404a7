"""`dapprof ps`: the Python processes it lists, from /proc alone: a python started by the test with
its version and command line, this user's first; not a process that is not Python; another user's
python marked as unreadable when run by an ordinary user."""
from __future__ import annotations

import json
import subprocess

import pytest

import unprivileged
from conftest import DEBIAN_PYTHON, FIXTURE

TIMEOUT = 30


def ps_json(dapprof: str, runner=subprocess.run, **kwargs) -> list[dict]:
    out = runner([dapprof, "ps", "--json"], capture_output=True, text=True, timeout=TIMEOUT,
                 **kwargs)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["processes"]


def by_pid(processes: list[dict], pid: int) -> dict | None:
    return next((p for p in processes if p["pid"] == pid), None)


def test_lists_a_started_python_and_not_a_non_python_process(dapprof, start_target):
    target = start_target(python=DEBIAN_PYTHON)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        processes = ps_json(dapprof)
        entry = by_pid(processes, target.pid)
        assert entry is not None, processes
        assert entry["version"] == "3.11"
        assert entry["command"] == [DEBIAN_PYTHON, str(FIXTURE)]
        assert entry["own"] is True and entry["readable"] is True and "why" not in entry
        assert by_pid(processes, sleeper.pid) is None
        # This user's processes come first.
        owns = [p["own"] for p in processes]
        assert owns == sorted(owns, reverse=True)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_text_table_names_the_python(dapprof, start_target):
    target = start_target(python=DEBIAN_PYTHON)
    out = subprocess.run([dapprof, "ps"], capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.split()[0] == str(target.pid))
    assert "3.11" in row and str(FIXTURE) in row


@pytest.fixture(scope="module")
def user():
    yield from unprivileged.make_user()


def test_another_users_python_is_marked_unreadable(user, dapprof, start_target):
    target = start_target(python=DEBIAN_PYTHON)  # root's
    their_dapprof = unprivileged.dapprof_for(user, dapprof)
    processes = ps_json(their_dapprof, runner=lambda argv, **_: user.run(argv, timeout=TIMEOUT))
    entry = by_pid(processes, target.pid)
    assert entry is not None, processes
    assert entry["readable"] is False and entry["own"] is False
    assert entry["user"] == "root"
    assert entry["version"] == "3.11"  # from the command's name, python3.11
    # Why, and the fix, as a client shows it beside the entry.
    assert "belongs to another user (uid 0)" in entry["why"] and "CAP_SYS_PTRACE" in entry["why"]
