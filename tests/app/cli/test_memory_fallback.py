"""`dapprof dump` and `record --nonblocking` where process_vm_readv is refused: run under
tests/support/deny_vm_readv.cpp, a seccomp filter making it fail with EPERM (as a container's
seccomp profile does) or ENOSYS (as under qemu-user), dapprof reads through /proc/PID/mem and
must see the same stacks of the fixture as without the filter, and say once that it switched."""
from __future__ import annotations

import errno
import json
import os
import re

import pytest

from conftest import FIXTURE, SHORT, check_raw, pythons, run

SWITCHED = "process_vm_readv fails with"
ERRNOS = {"EPERM": errno.EPERM, "ENOSYS": errno.ENOSYS}
# Old and new frame layouts, a static libpython, and a root's interpreter seen through
# /proc/PID/root.
NAMES = ["3.8", "3.12", "debian-3.11", "sid-3.15"]


def interpreters() -> list:
    out = []
    for name in NAMES:
        interp = pythons.find(name)
        out.append(pytest.param(interp, id=name) if interp else pytest.param(
            None, id=name, marks=pytest.mark.skip(reason=pythons.missing_reason(name))))
    return out


@pytest.fixture(scope="session")
def deny() -> str:
    path = os.environ.get("DAPPROF_DENY_VM_READV")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("set DAPPROF_DENY_VM_READV to the built deny_vm_readv launcher (ctest does)")
    return path


def denied_works(deny: str, errno_name: str) -> None:
    """The filter does refuse the call (a test of the test): a Python under it gets the errno."""
    probe = ("import ctypes, os\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "b = ctypes.create_string_buffer(8)\n"
             "iov = (ctypes.c_void_p * 2)(ctypes.addressof(b), 8)\n"
             "r = libc.process_vm_readv(os.getpid(), iov, 1, iov, 1, 0)\n"
             "print(r, ctypes.get_errno())\n")
    out = run([deny, errno_name, "/usr/bin/python3", "-c", probe])
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["-1", str(ERRNOS[errno_name])]


def stacks(doc: dict) -> dict[str, list]:
    """Each thread's (function, file) frames, innermost first."""
    return {t["name"]: [(f["function"], f["file"]) for f in t["frames"]] for t in doc["threads"]}


def dump(cmd: list[str], *args: str) -> tuple[dict, str]:
    """A dump (JSON) taken while the main thread is in leaf_spin, and dapprof's stderr."""
    for _ in range(10):
        out = run([*cmd, *args, "--json"])
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        main = stacks(doc).get("MainThread", [])
        if main and main[0][0] == "leaf_spin":
            return doc, out.stderr
    raise AssertionError(f"the main thread was never seen in leaf_spin: {doc}")


@pytest.mark.parametrize("errno_name", ["EPERM", "ENOSYS"])
@pytest.mark.parametrize("interp", interpreters())
def test_dump_reads_through_proc_mem(dapprof, deny, start_target, interp, errno_name):
    denied_works(deny, errno_name)
    target = start_target(python=interp.path)
    for mode in ([], ["--nonblocking"]):
        plain, plain_log = dump([dapprof, "dump", "--pid", str(target.pid)], *mode)
        got, log = dump([deny, errno_name, dapprof, "dump", "--pid", str(target.pid)], *mode)
        assert SWITCHED not in plain_log
        assert log.count(SWITCHED) == 1, log
        assert f'"{os.strerror(ERRNOS[errno_name])}"' in log, log
        assert got["python_version"] == plain["python_version"]
        assert stacks(got) == stacks(plain)
        main = stacks(got)["MainThread"]
        assert main == [(f, str(FIXTURE)) for f in
                        ["leaf_spin", "mittel_schicht_ü", "main", "<module>"]]
        assert stacks(got)["sleepy-worker"][0] == ("sleeper", str(FIXTURE))


def no_lines(counts: dict[str, int]) -> dict[str, int]:
    """Stacks whose frames lose their line numbers (the spinning leaf is on one of several),
    each with its share of samples."""
    merged: dict[str, int] = {}
    for stack, n in counts.items():
        key = re.sub(r":\d+\)", ")", stack)
        merged[key] = merged.get(key, 0) + n
    total = sum(merged.values())
    return {k: n / total for k, n in merged.items()}


def record(cmd: list[str], out_file) -> tuple[dict[str, int], str]:
    out = run([*cmd, "--duration", "1.5", "--format", "raw", "--nonblocking", "--idle",
               "--threads", "-o", str(out_file)])
    assert out.returncode == 0, out.stderr
    m = re.search(r"Samples: (\d+) Errors: (\d+)", out.stderr)
    assert m and int(m.group(1)) > 50, out.stderr
    return check_raw(out_file.read_text(encoding="utf-8")), out.stderr


@pytest.mark.parametrize("errno_name", ["EPERM", "ENOSYS"])
@pytest.mark.parametrize("interp", interpreters())
def test_record_nonblocking_reads_through_proc_mem(dapprof, deny, start_target, tmp_path, interp,
                                                   errno_name):
    target = start_target(python=interp.path)
    base = [dapprof, "record", "--pid", str(target.pid)]
    plain, plain_log = record(base, tmp_path / "plain.txt")
    got, log = record([deny, errno_name, *base], tmp_path / "denied.txt")
    assert SWITCHED not in plain_log
    assert log.count(SWITCHED) == 1, log
    # The same stacks, each of those seen in at least 5% of the samples (the rare ones, such as
    # the main thread caught between two calls, come and go from run to run).
    common = {k for k, share in no_lines(plain).items() if share >= 0.05}
    assert common == {k for k, share in no_lines(got).items() if share >= 0.05}
    spin = f"main ({SHORT});mittel_schicht_ü ({SHORT});leaf_spin ({SHORT})"
    sleep = f"sleeper ({SHORT})"
    assert any(k.endswith(spin) for k in common), common
    assert any(k.endswith(sleep) for k in common), common
