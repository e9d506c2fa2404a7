"""Errors a user can act on: clear message on stderr, non-zero exit status."""
from __future__ import annotations

import subprocess

import pytest

from conftest import DEBIAN_PYTHON, FIXTURE, run


@pytest.fixture
def sleeping_pid():
    proc = subprocess.Popen(["sleep", "60"])
    yield proc.pid
    proc.kill()
    proc.wait()


@pytest.fixture
def dead_pid():
    proc = subprocess.Popen(["true"])
    proc.wait()  # reaped: the PID is free (and not reused this soon)
    return proc.pid


@pytest.mark.parametrize("cmd", ["dump", "record"])
def test_not_a_python_process(dapprof, sleeping_pid, tmp_path, cmd):
    out = run([dapprof, cmd, "--pid", str(sleeping_pid), *(["-o", str(tmp_path / "x")]
                                                            if cmd == "record" else [])])
    assert out.returncode != 0
    assert f"process {sleeping_pid} (sleep) is not a CPython process" in out.stderr
    assert out.stderr.startswith("dapprof: error: ")


@pytest.mark.parametrize("cmd", ["dump", "record"])
def test_no_such_process(dapprof, dead_pid, tmp_path, cmd):
    out = run([dapprof, cmd, "--pid", str(dead_pid), *(["-o", str(tmp_path / "x")]
                                                        if cmd == "record" else [])])
    assert out.returncode != 0
    assert f"no process with PID {dead_pid}" in out.stderr


def test_permission_denied_keeps_the_samplers_advice(dapprof, target):
    """An unprivileged user cannot read a root-owned process: the sampler's explanation reaches
    the user unchanged."""
    out = run([dapprof, "dump", "--pid", str(target.pid)], user=65534, group=65534)
    assert out.returncode != 0
    assert out.stderr.startswith("dapprof: error: ")
    assert "permission" in out.stderr.lower() or "not permitted" in out.stderr.lower(), out.stderr


def test_spawned_program_that_is_not_python(dapprof, tmp_path):
    # (A program that stays non-Python is waited for: it may still exec python, like pyenv's
    # shims do. One that exits first ends the wait.)
    out = run([dapprof, "record", "-o", str(tmp_path / "x.svg"), "--", "sleep", "0.3"])
    assert out.returncode != 0
    assert "sleep exited with status 0 before it could be sampled" in out.stderr, out.stderr


def test_spawned_program_missing(dapprof, tmp_path):
    out = run([dapprof, "record", "-o", str(tmp_path / "x.svg"), "--", "no-such-program-here"])
    assert out.returncode != 0
    assert "cannot start no-such-program-here" in out.stderr


@pytest.mark.parametrize("existing", [False, True])
def test_a_failed_record_loses_no_file(dapprof, sleeping_pid, tmp_path, existing):
    """A record that ends before it has a profile (here: not a Python process) leaves a file
    that was at the output path as it was, and creates none where there was none."""
    output = tmp_path / "profile.svg"
    if existing:
        output.write_text("an earlier profile")
    out = run([dapprof, "record", "--pid", str(sleeping_pid), "-o", str(output)])
    assert out.returncode != 0 and "is not a CPython process" in out.stderr
    if existing:
        assert output.read_text() == "an earlier profile"
    else:
        assert not output.exists()


def test_unwritable_output(dapprof, target):
    out = run([dapprof, "record", "--pid", str(target.pid), "-o", "/nonexistent-dir/x.svg"])
    assert out.returncode != 0
    assert "cannot write '/nonexistent-dir/x.svg'" in out.stderr


@pytest.mark.parametrize("args,message", [
    ([], "--pid PID or -- PROGRAM ARGS"),
    (["--pid", "1", "--", DEBIAN_PYTHON, str(FIXTURE)], "excludes"),
    (["--pid", "1", "--format", "svg"], "svg not in"),
    (["--pid", "1", "--rate", "0"], "must be a positive number"),
    (["--pid", "1", "--duration", "-1"], "must be a positive number"),
    (["--pid", "nope"], "--pid"),
])
def test_bad_arguments(dapprof, args, message):
    out = run([dapprof, "record", *args])
    assert out.returncode != 0
    assert message in out.stderr, out.stderr


def test_dump_requires_pid(dapprof):
    out = run([dapprof, "dump"])
    assert out.returncode != 0
    assert "--pid is required" in out.stderr
